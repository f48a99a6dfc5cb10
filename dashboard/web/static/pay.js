/* The payment page and the tab page: one submit for all the one-tap payment buttons of a page (a
   second tap, on any of them, does nothing; the server's one-time key would refuse to pay twice
   anyway). The full form: the cash fields only for cash, the quick "Received" buttons, the cash to
   pay rounded as the venue rounds cash, the change worked out as staff type (the server works it
   out again and is the one that counts), the amount following the chosen split part, and one
   submit. The receipt page prints itself once when opened with ?print=1. */
(function () {
  "use strict";
  // An amount as broker.domain.euros.parse_euros reads it ("12,50", "12.5", "1 234,50 €"; "1.234" or
  // "12 50" could mean two amounts: none); the server reads it again and is the one that counts.
  function cents(text) {
    var m = /^(€ ?)?([0-9]{1,3}(?: [0-9]{3})+|[0-9]+)(?:[.,]([0-9]{1,2}))?( ?€)?$/.exec(String(text || "").trim().replace(/\s+/g, " "));
    if (!m || (m[1] && m[4])) return null;
    return parseInt(m[2].replace(/ /g, ""), 10) * 100 + (m[3] ? parseInt((m[3] + "0").slice(0, 2), 10) : 0);
  }
  function euros(c) {
    return Math.floor(c / 100) + "," + String(c % 100).padStart(2, "0");
  }
  if (document.body.classList.contains("page-receipt") && new URLSearchParams(location.search).get("print") === "1") {
    window.addEventListener("load", function () { window.print(); });
  }
  var quick = document.querySelectorAll(".quick-pay form");
  quick.forEach(function (f) {
    f.addEventListener("submit", function (e) {
      if (document.body.getAttribute("data-paying")) { e.preventDefault(); return; }
      document.body.setAttribute("data-paying", "1");
      quick.forEach(function (other) { other.querySelector("button").setAttribute("aria-disabled", "true"); });
    });
  });
  var form = document.getElementById("pay-form");
  if (!form) return;
  var amount = document.getElementById("pay-amount");
  var tendered = document.getElementById("pay-tendered");
  var cash = document.getElementById("pay-cash");
  var change = document.getElementById("pay-change");
  var dueOut = document.getElementById("pay-cash-due");
  var roundingOut = document.getElementById("pay-rounding");
  var step = parseInt(form.getAttribute("data-rounding") || "1", 10);
  // Cash rounded to `step` cents: mirrors broker.domain.cash_rounding.cash_due (the server's counts).
  function cashDue(c) {
    if (step <= 1 || c <= 0) return c;
    var rest = c % step, r = c - rest + (2 * rest >= step ? step : 0);
    return r || step;
  }
  var lang = document.body.getAttribute("data-lang");
  function money(c) { return lang === "en" ? "€" + euros(c).replace(",", ".") : euros(c) + "\u00a0€"; }
  function method() { return form.querySelector("input[name=method]:checked"); }
  function update() {
    var m = method();
    var isCash = m && m.getAttribute("data-cash") === "1";
    cash.classList.toggle("hidden", !isCash);
    tendered.disabled = !isCash;
    var a = cents(amount.value), t = cents(tendered.value);
    var due = a === null ? null : cashDue(a);
    if (dueOut) {
      dueOut.textContent = due === null ? dueOut.getAttribute("data-none") : money(due);
      roundingOut.textContent = due === null || due === a ? "" : "(" + roundingOut.getAttribute("data-label") + " " + (due > a ? "+" : "-") + money(Math.abs(due - a)) + ")";
    }
    change.classList.remove("short");
    if (a === null || !tendered.value.trim()) { change.textContent = tendered.value.trim() ? change.getAttribute("data-none") : money(0); return; }
    if (t === null) { change.textContent = change.getAttribute("data-none"); return; }
    if (t < due) { change.textContent = change.getAttribute("data-short"); change.classList.add("short"); return; }
    change.textContent = money(t - due);
  }
  form.addEventListener("change", function (e) {
    if (e.target.name === "part" && e.target.checked) amount.value = euros(parseInt(e.target.getAttribute("data-owed"), 10));
    update();
  });
  form.addEventListener("input", update);
  form.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("[data-tendered]");
    if (!b) return;
    var v = b.getAttribute("data-tendered");
    var a = cents(amount.value);
    tendered.value = v === "exact" ? (a === null ? amount.value : euros(cashDue(a))) : euros(parseInt(v, 10));
    update();
  });
  form.addEventListener("submit", function (e) {
    if (form.getAttribute("data-sent")) { e.preventDefault(); return; }
    form.setAttribute("data-sent", "1");
    document.getElementById("pay-submit").setAttribute("aria-disabled", "true");
  });
  update();
})();
