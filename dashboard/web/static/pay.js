/* The payment page and the tab page: one submit for all the one-tap payment buttons of a page (a
   second tap, on any of them, does nothing; the server's one-time key would refuse to pay twice
   anyway). The full form: the cash fields only for cash, the quick "Received" buttons, the change
   worked out as staff type (the server works it out again and is the one that counts), the amount
   following the chosen split part, and one submit. The receipt page prints itself once when opened
   with ?print=1. */
(function () {
  "use strict";
  function cents(text) {
    var t = String(text || "").replace(/[\s\u00a0€]/g, "").replace(",", ".");
    if (!/^\d+(\.\d{1,2})?$/.test(t)) return null;
    var parts = t.split(".");
    return parseInt(parts[0], 10) * 100 + (parts[1] ? parseInt((parts[1] + "0").slice(0, 2), 10) : 0);
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
  var lang = document.body.getAttribute("data-lang");
  function money(c) { return lang === "en" ? "€" + euros(c).replace(",", ".") : euros(c) + "\u00a0€"; }
  function method() { return form.querySelector("input[name=method]:checked"); }
  function update() {
    var m = method();
    var isCash = m && m.getAttribute("data-cash") === "1";
    cash.classList.toggle("hidden", !isCash);
    tendered.disabled = !isCash;
    var a = cents(amount.value), t = cents(tendered.value);
    change.classList.remove("short");
    if (a === null || !tendered.value.trim()) { change.textContent = tendered.value.trim() ? change.getAttribute("data-none") : money(0); return; }
    if (t === null) { change.textContent = change.getAttribute("data-none"); return; }
    if (t < a) { change.textContent = change.getAttribute("data-short"); change.classList.add("short"); return; }
    change.textContent = money(t - a);
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
    tendered.value = v === "exact" ? amount.value : euros(parseInt(v, 10));
    update();
  });
  form.addEventListener("submit", function (e) {
    if (form.getAttribute("data-sent")) { e.preventDefault(); return; }
    form.setAttribute("data-sent", "1");
    document.getElementById("pay-submit").setAttribute("aria-disabled", "true");
  });
  update();
})();
