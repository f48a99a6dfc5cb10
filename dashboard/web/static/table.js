// The table page (templates/table.html): member chip with a clear button, prepaid presets, the
// warning when a game would move to a table with another rate. No inline script (CSP).
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="csrf-token"]');
  var csrf = meta ? meta.content : "";

  // Choose a member by name: the JSON API with this page's login cookie; the choice is a chip.
  document.querySelectorAll("[data-member-pick]").forEach(function (box) {
    var input = box.querySelector("input[data-search]"), hidden = box.querySelector("input[name=member_id], input[name=member2_id]");
    var out = box.querySelector(".member-results"), chip = box.querySelector(".chip"), pending = null;
    var card = box.querySelector("input[name=card_uid]");
    var form = box.closest("form"), current = null;
    // The club rate before the start: a member (chosen, or a card typed) on a table without it, or
    // a member whose fee is not paid, is warned about now, not after the game has started.
    function warn(m) {
      var club = form && form.dataset.club;
      var noClub = form && form.querySelector("#club-warning"), unpaid = form && form.querySelector("#fee-warning");
      if (noClub) noClub.hidden = !(club === "0" && (m || (card && card.value.trim())));
      if (unpaid) unpaid.hidden = !(club === "1" && m && !m.fee_paid);
    }
    function choose(m) {
      hidden.value = m ? m.id : "";
      chip.querySelector(".chip-name").textContent = m ? m.name : "";
      chip.hidden = !m;
      out.innerHTML = "";
      input.value = "";
      if (m && card) card.value = "";  // a member or a card, not both
      current = m;
      warn(m);
    }
    if (card) card.addEventListener("input", function () { warn(current); });
    chip.querySelector(".chip-clear").addEventListener("click", function () { choose(null); input.focus(); });
    input.addEventListener("input", function () {
      clearTimeout(pending);
      var q = input.value.trim();
      if (q.length < 2) { out.innerHTML = ""; return; }
      pending = setTimeout(function () {
        fetch("/api/members?limit=8&q=" + encodeURIComponent(q), { credentials: "same-origin", headers: { "X-CSRF-Token": csrf } })
          .then(function (r) { return r.ok ? r.json() : []; })
          .then(function (members) {
            out.innerHTML = "";
            members.forEach(function (m) {
              var b = document.createElement("button");
              b.type = "button";
              b.className = "btn";
              b.textContent = m.name + (m.fee_paid ? " ✓" : " ✗");
              b.addEventListener("click", function () { choose(m); });
              out.appendChild(b);
            });
          }).catch(function () {});
      }, 200);
    });
  });

  // Prepaid presets fill the minutes field; typing there unpresses them.
  document.querySelectorAll(".presets").forEach(function (group) {
    var field = group.querySelector("input[name=prepaid_minutes]");
    var buttons = group.querySelectorAll(".preset");
    function press(value) {
      buttons.forEach(function (b) { b.setAttribute("aria-pressed", b.dataset.minutes === value ? "true" : "false"); });
    }
    buttons.forEach(function (b) {
      b.addEventListener("click", function () { field.value = b.dataset.minutes; press(b.dataset.minutes); });
    });
    field.addEventListener("input", function () { press(field.value.trim()); });
  });

  // Moving a game: say before the move when the target table runs it at another rate.
  document.querySelectorAll("select[data-rate-warning]").forEach(function (select) {
    var note = document.querySelector(select.dataset.rateWarning);
    select.addEventListener("change", function () {
      var opt = select.options[select.selectedIndex];
      note.hidden = !(opt && opt.dataset.differs);
    });
  });
})();
