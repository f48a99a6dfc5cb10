// Lavos dashboard: live updates (Server-Sent Events), the alert sound, member search.
// Plain JS, no build step, no third-party code; the pages work without it, only less live.
// Conventions (see dashboard/web/README.md):
//   data-live="topic other"  data-src="/url"   the element's content is re-fetched from data-src
//                                              when the server announces one of the topics
//   data-every="30"                            ...and also every 30 seconds (elapsed time, amounts)
//   data-table-card="pool-01" data-src="/url"  a floor card, replaced whole on that table's events
//   form[data-confirm="text"]                  asks before submitting
(function () {
  "use strict";
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  var timers = new Map();

  function fetchHtml(url) {
    return fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } }).then(function (r) {
      if (r.redirected && new URL(r.url).pathname === "/login") { location.reload(); throw new Error("logged out"); }
      if (!r.ok) throw new Error(url + " → " + r.status);
      return r.text();
    });
  }

  // Coalesce bursts (a rack of drops is a dozen events in a second) into one fetch per element.
  function later(el, fn) {
    if (timers.has(el)) return;
    timers.set(el, setTimeout(function () { timers.delete(el); fn(); }, 120));
  }

  function refreshRegion(el) {
    later(el, function () {
      fetchHtml(el.dataset.src).then(function (html) {
        el.innerHTML = html;
        if (el.id === "alert-banner") onBanner(el);
      }).catch(function () {});
    });
  }

  function refreshCard(table) {
    document.querySelectorAll('[data-table-card="' + CSS.escape(table) + '"]').forEach(function (el) {
      later(el, function () {
        fetchHtml(el.dataset.src).then(function (html) {
          var t = document.createElement("template");
          t.innerHTML = html.trim();
          if (t.content.firstElementChild && el.isConnected) el.replaceWith(t.content.firstElementChild);
        }).catch(function () {});
      });
    });
  }

  function refreshTopic(topic) {
    document.querySelectorAll("[data-live]").forEach(function (el) {
      if (topic === "*" || el.dataset.live.split(/\s+/).indexOf(topic) >= 0) refreshRegion(el);
    });
  }

  function refreshAllCards() {
    var seen = new Set();
    document.querySelectorAll("[data-table-card]").forEach(function (el) { seen.add(el.dataset.tableCard); });
    seen.forEach(refreshCard);
  }

  // --- sound ---------------------------------------------------------------------------
  var audio = null;
  var muted = localStorage.getItem("lavos-muted") === "1";
  function ctx() {
    if (!audio && (window.AudioContext || window.webkitAudioContext)) audio = new (window.AudioContext || window.webkitAudioContext)();
    if (audio && audio.state === "suspended") audio.resume();
    return audio;
  }
  // Browsers allow sound only after the page has been touched once; the first tap unlocks it.
  document.addEventListener("pointerdown", function () { ctx(); }, { once: true });

  function beep(loud) {
    if (muted) return;
    var a = ctx();
    if (!a) return;
    var n = loud ? 3 : 1;
    for (var i = 0; i < n; i++) {
      var osc = a.createOscillator(), gain = a.createGain(), t = a.currentTime + i * 0.35;
      osc.type = loud ? "square" : "sine";
      osc.frequency.value = loud ? 1320 : 880;
      gain.gain.setValueAtTime(0.0001, t);
      gain.gain.exponentialRampToValueAtTime(loud ? 0.9 : 0.3, t + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.28);
      osc.connect(gain).connect(a.destination);
      osc.start(t);
      osc.stop(t + 0.3);
    }
  }

  var muteBtn = document.getElementById("mute");
  function showMute() {
    if (!muteBtn) return;
    muteBtn.setAttribute("aria-pressed", muted ? "true" : "false");
    muteBtn.textContent = muted ? muteBtn.dataset.off : muteBtn.dataset.on;
  }
  if (muteBtn) muteBtn.addEventListener("click", function () {
    muted = !muted;
    localStorage.setItem("lavos-muted", muted ? "1" : "0");
    showMute();
  });
  showMute();

  // A new alert in the banner beeps once; an unacknowledged loud one (foosball without a
  // member) keeps beeping until somebody taps "acknowledge".
  var known = null;
  function ids(el, attr) {
    var list = el.querySelector(".alert-list");
    return new Set(((list && list.getAttribute(attr)) || "").split(/\s+/).filter(Boolean));
  }
  function onBanner(el) {
    var now = ids(el, "data-ids"), loud = ids(el, "data-loud"), fresh = false, freshLoud = false;
    now.forEach(function (id) { if (known && !known.has(id)) { fresh = true; if (loud.has(id)) freshLoud = true; } });
    known = now;
    if (fresh) beep(freshLoud);
    document.body.classList.toggle("has-loud-alert", loud.size > 0);
  }
  var banner = document.getElementById("alert-banner");
  if (banner) onBanner(banner);
  setInterval(function () { if (document.body.classList.contains("has-loud-alert")) beep(true); }, 4000);

  // --- live updates ------------------------------------------------------------------------
  function connect() {
    if (!window.EventSource) return;
    var es = new EventSource("/events");
    var broken = false;
    es.onmessage = function (m) {
      var ev;
      try { ev = JSON.parse(m.data); } catch (e) { return; }
      if (ev.topic === "refresh") { refreshAllCards(); refreshTopic("*"); return; }
      if (ev.table) refreshCard(ev.table);
      refreshTopic(ev.topic);
    };
    es.onerror = function () { broken = true; };
    // After a reconnect we may have missed events: fetch everything once.
    es.onopen = function () { if (broken) { broken = false; refreshAllCards(); refreshTopic("*"); } };
  }
  connect();

  document.querySelectorAll("[data-every]").forEach(function (el) {
    var s = Math.max(5, parseInt(el.dataset.every, 10) || 30);
    setInterval(function () { refreshRegion(el); }, s * 1000);
  });

  // --- forms -------------------------------------------------------------------------------
  document.addEventListener("click", function (e) {
    if (e.target.closest && e.target.closest("[data-print]")) window.print();
  });
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f.dataset && f.dataset.confirm && !confirm(f.dataset.confirm)) e.preventDefault();
  });

  // Member search for starting a session: the JSON API, with this page's cookie session.
  document.querySelectorAll("[data-member-search]").forEach(function (box) {
    var input = box.querySelector("input[type=search]"), hidden = box.querySelector("input[name=member_id]");
    var out = box.querySelector(".member-results"), chosen = box.querySelector(".chosen"), pending = null;
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
              b.addEventListener("click", function () {
                hidden.value = m.id;
                chosen.textContent = m.name;
                out.innerHTML = "";
                input.value = "";
              });
              out.appendChild(b);
            });
          }).catch(function () {});
      }, 200);
    });
  });
})();
