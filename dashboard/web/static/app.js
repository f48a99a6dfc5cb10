// Lavos dashboard: live updates (Server-Sent Events), the alert sound, member search.
// Plain JS, no build step, no third-party code; the pages work without it, only less live.
// Conventions (see dashboard/web/README.md):
//   data-live="topic other"  data-src="/url"   the element's content is re-fetched from data-src
//                                              when the server announces one of the topics
//   data-every="30"                            ...and also every 30 seconds (elapsed time, amounts)
//   data-table-card="pool-01" data-src="/url"  a floor card, replaced whole on that table's events
//   .timer[data-tick=up|down][data-elapsed|data-left]   seconds when drawn; ticks every second
//   data-moves-ms="1234" (a card, or any part with an id)  the amount drawn changes by itself then:
//                                              the card, or the part from a fresh copy of the page, is fetched again
//   details[data-room="main"]                  a room on the floor, folded per browser (localStorage)
//   form[data-confirm="text"]                  asks before submitting
// Whatever a live update redraws (a region, a card, a part of the page) goes through redraw():
// a form being edited in it (the focus in it, or a value typed and not yet sent) stays as it is,
// the fresh HTML is put around it.
(function () {
  "use strict";
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  var timers = new Map();
  document.documentElement.classList.add("js");

  function fetchHtml(url) {
    return fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } }).then(function (r) {
      if (r.redirected && new URL(r.url).pathname === "/login") { keepDrafts(); location.reload(); throw new Error("logged out"); }
      if (!r.ok) throw new Error(url + " → " + r.status);
      return r.text();
    });
  }

  // Coalesce bursts (a rack of drops is a dozen events in a second) without a delay up front:
  // the first event of a key fetches at once (a staff action shows on the other tablets as soon
  // as the server has it); events within the next AGAIN_MS make one more fetch when it is over,
  // and so on while they keep coming: at most one fetch per key per AGAIN_MS.
  var AGAIN_MS = 50;
  function later(key, fn) {
    var t = timers.get(key);
    if (t) { t.again = true; return; }
    t = { again: false };
    timers.set(key, t);
    fn();
    setTimeout(function quiet() {
      if (!t.again) { timers.delete(key); return; }
      t.again = false;
      fn();
      setTimeout(quiet, AGAIN_MS);
    }, AGAIN_MS);
  }

  // Fetches finish in any order: a region (the whole floor) asked for before a card changed may
  // arrive after that card's own fresh copy. Every fetch gets a number when it is sent, every
  // card and region remembers the number of the fetch it shows, and nothing older replaces
  // anything newer. (A fetch sent after an event was announced shows that event: the server
  // announces only what it has committed.)
  var issued = 0;
  function stampOf(el) { return parseInt(el.dataset.stamp || "0", 10); }
  function cardSelector(table) { return '[data-table-card="' + CSS.escape(table) + '"]'; }

  function fromHtml(html) {
    var t = document.createElement("template");
    t.innerHTML = html.trim();
    return t.content;
  }

  // --- what is being typed stays: one rule for every live redraw --------------------------
  // A form is being edited while the focus is in it, or while one of its fields holds a value that
  // was typed and not yet sent (not the value the page drew). A redraw keeps such a form as it is,
  // with its focus, caret and typed values, and puts the fresh HTML around it: the form, and each
  // element holding it, stay in the page and take the fresh attributes (a <details> keeps its
  // open/closed state); everything else is the fresh copy. A form is found in the fresh copy by
  // its id, else by its action (the n-th form with that action). One the fresh copy no longer has
  // (a match whose result another tablet entered) holds the redraw while the focus is in it, and
  // the region is fetched again when the focus leaves that form; left unfocused, it goes with the
  // redraw. A field outside any form counts as a form of its own (found by its id or name).
  var TYPED = /^(text|search|number|email|tel|url|date|time|datetime-local|month|week|password|checkbox|radio|range|color|select-one|select-multiple|textarea)$/;
  function changedField(f) {
    if (f.type === "checkbox" || f.type === "radio") return f.checked !== f.defaultChecked;
    if (f.type === "select-one" || f.type === "select-multiple") {
      var opts = Array.prototype.slice.call(f.options), any = opts.some(function (o) { return o.defaultSelected; });
      return opts.some(function (o, i) { return o.selected !== (o.defaultSelected || (!any && f.type === "select-one" && i === 0)); });
    }
    return f.value !== f.defaultValue;
  }
  // The forms (or lone fields) under root being edited: [{node, focused}], the focused one first.
  function editedIn(root) {
    var found = new Map(), active = document.activeElement;
    root.querySelectorAll("input, select, textarea").forEach(function (f) {
      if (!TYPED.test(f.type) || !changedField(f)) return;
      var unit = f.form && root.contains(f.form) ? f.form : f;
      found.set(unit, false);
    });
    if (active && active !== document.body && root.contains(active)) {
      var form = active.form || active.closest("form");
      if (form && root.contains(form)) found.set(form, true);
      else if (TYPED.test(active.type || "")) found.set(active, true);
    }
    var out = [];
    found.forEach(function (focused, node) { out[focused ? "unshift" : "push"]({ node: node, focused: focused }); });
    return out;
  }
  function twins(root, node) {
    var id = node.id, action = node.getAttribute("action"), name = node.getAttribute("name");
    return Array.prototype.filter.call(root.getElementsByTagName(node.tagName), function (x) {
      return id ? x.id === id : x.getAttribute("action") === action && x.getAttribute("name") === name;
    });
  }
  // Old element → fresh element for the unit and every element holding it up to the roots (added
  // to `pairs`), or false when the fresh copy has no place for it.
  function pairUp(unit, old, fresh, pairs, back) {
    var mine = twins(old, unit), theirs = twins(fresh, unit), twin = theirs[mine.indexOf(unit)];
    if (!twin) return false;
    var add = [];
    for (var a = unit, b = twin; a !== old; a = a.parentNode, b = b.parentNode) {
      if (!b || b === fresh || a.tagName !== b.tagName) return false;
      if ((pairs.has(a) && pairs.get(a) !== b) || (back.has(b) && back.get(b) !== a)) return false;
      add.push([a, b]);
    }
    if (b !== fresh) return false;
    // Kept in the order the fresh copy has them: what stays in place is never moved.
    function before(x, y) { return !!(x.compareDocumentPosition(y) & Node.DOCUMENT_POSITION_FOLLOWING); }
    var ok = add.every(function (ab) {
      for (var p = ab[0].previousElementSibling; p; p = p.previousElementSibling) if (pairs.has(p)) { if (!before(pairs.get(p), ab[1])) return false; break; }
      for (var n = ab[0].nextElementSibling; n; n = n.nextElementSibling) if (pairs.has(n)) { if (!before(ab[1], pairs.get(n))) return false; break; }
      return true;
    });
    if (ok) add.forEach(function (ab) { pairs.set(ab[0], ab[1]); back.set(ab[1], ab[0]); });
    return ok;
  }
  function takeAttributes(old, fresh) {
    var keepOpen = old.tagName === "DETAILS";
    Array.prototype.slice.call(old.attributes).forEach(function (a) {
      if (!fresh.hasAttribute(a.name) && !(keepOpen && a.name === "open")) old.removeAttribute(a.name);
    });
    Array.prototype.forEach.call(fresh.attributes, function (a) {
      if (!(keepOpen && a.name === "open") && old.getAttribute(a.name) !== a.value) old.setAttribute(a.name, a.value);
    });
  }
  function graft(old, fresh, pairs, back, kept) {
    takeAttributes(old, fresh);
    var want = Array.prototype.map.call(fresh.childNodes, function (c) { return back.get(c) || c; });
    want.forEach(function (n) { if (pairs.has(n) && !kept.has(n)) graft(n, pairs.get(n), pairs, back, kept); });
    var stay = new Set(want);
    Array.prototype.slice.call(old.childNodes).forEach(function (n) { if (!stay.has(n)) old.removeChild(n); });
    var at = old.firstChild;
    want.forEach(function (n) {
      if (n === at) at = at.nextSibling;
      else old.insertBefore(n, at);
    });
  }
  // A <details> a person opened or closed stays so across redraws: known by the nearest id around it
  // and its place among the <details> there.
  function foldKey(d, root) {
    var holder = d.parentElement && d.parentElement.closest("[id]");
    if (!holder || !root.contains(holder)) holder = root;
    return holder.id + "#" + Array.prototype.indexOf.call(holder.querySelectorAll("details"), d);
  }
  function folds(root) {
    var out = new Map();
    root.querySelectorAll("details").forEach(function (d) { out.set(foldKey(d, root), d.open); });
    return out;
  }
  // Puts `fresh` (an element made from the server's answer, the same kind as `el`) in `el`'s place:
  // `el` stays, with fresh's attributes and content, around what is being edited in it. False when
  // the redraw waits (the focus is in a form the fresh copy does not have): `again` fetches it anew
  // once the focus has left that form.
  var held = new Map();  // the form the focus is in → {element: what fetches it again} for when it leaves
  function redraw(el, fresh, again) {
    var pairs = new Map([[el, fresh]]), back = new Map([[fresh, el]]), kept = new Set(), wait = null;
    editedIn(el).forEach(function (u) {
      if (pairUp(u.node, el, fresh, pairs, back)) kept.add(u.node);
      else if (u.focused) wait = u.node;
    });
    if (wait) {
      el.setAttribute("data-held", "");  // (the next redraw takes it away with the fresh attributes)
      if (!held.has(wait)) held.set(wait, new Map());
      held.get(wait).set(el, again);
      return false;
    }
    var before = folds(el);
    graft(el, fresh, pairs, back, kept);
    el.querySelectorAll("details").forEach(function (d) {
      var open = before.get(foldKey(d, el));
      if (open !== undefined && d.open !== open && !kept.has(d)) d.open = open;
    });
    return true;
  }
  document.addEventListener("focusout", function () {
    setTimeout(function () {
      held.forEach(function (waiting, form) {
        if (form.isConnected && form.contains(document.activeElement)) return;
        held.delete(form);
        waiting.forEach(function (again) { again(); });
      });
    }, 0);
  });

  function refreshRegion(el) {
    if (!el.dataset.src) return;
    later(el, function () {
      var stamp = ++issued;
      fetchHtml(el.dataset.src).then(function (html) {
        if (!el.isConnected || stampOf(el) > stamp) return;
        var fresh = el.cloneNode(false);
        fresh.removeAttribute("data-held");
        fresh.appendChild(fromHtml(html));
        fresh.querySelectorAll("[data-table-card]").forEach(function (card) {
          var shown = el.querySelector(cardSelector(card.dataset.tableCard));
          if (shown && stampOf(shown) > stamp) card.replaceWith(shown.cloneNode(true));  // keep the newer picture
          else card.dataset.stamp = stamp;
        });
        fresh.dataset.stamp = stamp;
        if (!redraw(el, fresh, function () { refreshRegion(el); })) return;
        settled(el);
        if (el.id === "alert-banner") onBanner(el);
      }).catch(function () {});
    });
  }

  function refreshCard(table) {
    var first = document.querySelector(cardSelector(table));
    if (!first) return;
    var src = first.dataset.src;
    later("card:" + table, function () {
      var stamp = ++issued;
      fetchHtml(src).then(function (html) {
        var fresh = fromHtml(html).firstElementChild;
        if (!fresh) return;
        document.querySelectorAll(cardSelector(table)).forEach(function (el) {
          if (stampOf(el) > stamp) return;
          var card = fresh.cloneNode(true);
          card.dataset.stamp = stamp;
          if (redraw(el, card, function () { refreshCard(table); })) settled(el);
        });
      }).catch(function () {});
    });
  }

  function refreshTopic(topic) {
    document.querySelectorAll("[data-live]").forEach(function (el) {
      if (topic === "*" || el.dataset.live.split(/\s+/).indexOf(topic) >= 0) refreshRegion(el);
    });
  }

  // Cards that no re-fetched region contains (the card on a table's own page).
  function standaloneCards() {
    var seen = new Set();
    document.querySelectorAll("[data-table-card]").forEach(function (el) {
      var region = el.parentElement && el.parentElement.closest("[data-live][data-src]");
      if (!region) seen.add(el.dataset.tableCard);
    });
    return seen;
  }

  function refreshAll() {
    refreshTopic("*");
    standaloneCards().forEach(refreshCard);
  }

  // --- the hall's time and the browser's: the server gives durations in the hall's time (a
  // timer's seconds, when an amount moves); the hall's clock may run faster than real time (the
  // demo's --speed: <body data-clock-speed="20">). Here, and only here, one becomes the other. ---
  var SPEED = parseFloat(document.body.dataset.clockSpeed) || 1;
  function hallSeconds(realMs) { return realMs / 1000 * SPEED; }
  function realMs(hallMs) { return hallMs / SPEED; }

  // --- timers: elapsed time counts up, prepaid time down, every second, from the seconds the
  // server gave when it drew the card (data-elapsed / data-left); the server is the clock. ---
  function hms(s) {
    s = Math.max(0, Math.floor(s));
    var m = Math.floor(s / 60) % 60, sec = s % 60;
    return Math.floor(s / 3600) + ":" + (m < 10 ? "0" : "") + m + ":" + (sec < 10 ? "0" : "") + sec;
  }
  function tick() {
    var now = performance.now();
    document.querySelectorAll(".timer[data-tick]").forEach(function (el) {
      if (el._drawnAt === undefined) el._drawnAt = now;
      var gone = hallSeconds(now - el._drawnAt);
      var text = el.dataset.tick === "down" ? hms(parseInt(el.dataset.left, 10) - gone) : hms(parseFloat(el.dataset.elapsed) + gone);
      if (el.textContent !== text) el.textContent = text;
    });
  }
  function settled(root) {
    var now = performance.now();
    root.querySelectorAll(".timer[data-tick]").forEach(function (el) { el._drawnAt = now; });
    restoreFolds(root);
    recheckLater(root);
  }
  // A card drawn while its light is switching says when the node should have confirmed it
  // (data-recheck-ms), and a card of a running game when its amount changes by itself
  // (data-moves-ms, in the hall's milliseconds: the next started minute, a rate band; the server is the clock): look again
  // then, whether or not anything was announced (a carom table has no pockets to announce).
  function recheckLater(root) {
    var cards = root.matches && root.matches("[data-table-card]") ? [root] : [];
    root.querySelectorAll("[data-table-card]").forEach(function (el) { cards.push(el); });
    cards.forEach(function (el) {
      var wait = dueIn(el);
      if (wait === null) return;
      var table = el.dataset.tableCard, stamp = stampOf(el);
      setTimeout(function () {
        var shown = document.querySelector(cardSelector(table));
        if (shown && stampOf(shown) === stamp) refreshCard(table);
      }, wait);
    });
  }
  var MOVES_SLACK_MS = 250;  // fetch just after the change, never just before it
  function dueIn(el) {
    var waits = [];
    if (el.dataset.recheckMs) waits.push(parseInt(el.dataset.recheckMs, 10) || 2000);
    if (el.dataset.movesMs) waits.push(realMs(parseInt(el.dataset.movesMs, 10) || 0) + MOVES_SLACK_MS);
    return waits.length ? Math.min.apply(null, waits) : null;
  }

  // The same for the parts of a page that show a running game's amount outside a card (a tab's
  // lines and totals, the table page's tab button, the pay page): each has an id and
  // data-moves-ms; when the earliest is due, the page is fetched again and those parts taken
  // from it (forms and what is typed in them stay as they are).
  var movingTimer = null;
  function moving(root) {
    return Array.prototype.filter.call(root.querySelectorAll("[data-moves-ms][id]"), function (el) { return !el.matches("[data-table-card]"); });
  }
  function scheduleMoving() {
    clearTimeout(movingTimer);
    var waits = moving(document).map(dueIn);
    if (waits.length) movingTimer = setTimeout(refreshMoving, Math.min.apply(null, waits));
  }
  function refreshMoving() {
    var parts = moving(document);
    if (!parts.length) return;
    fetchHtml(location.href).then(function (html) {
      var fresh = new DOMParser().parseFromString(html, "text/html");
      parts.forEach(function (el) {
        var now = fresh.getElementById(el.id);
        if (now && el.isConnected) redraw(el, document.importNode(now, true), refreshMoving);
      });
      scheduleMoving();
    }).catch(function () { scheduleMoving(); });
  }

  // --- folds: rooms folded away stay folded in this browser (localStorage); the alert strip's
  // "+N more" stays open across its live refreshes while this page is open. ---
  var ROOMS_KEY = "lavos-rooms-folded";
  var alertsOpen = false;
  function foldedRooms() {
    try { return new Set(JSON.parse(localStorage.getItem(ROOMS_KEY) || "[]")); } catch (e) { return new Set(); }
  }
  function restoreFolds(root) {
    var folded = foldedRooms();
    root.querySelectorAll("details[data-room]").forEach(function (d) { d.open = !folded.has(d.dataset.room); });
    root.querySelectorAll("details.alert-more").forEach(function (d) { d.open = alertsOpen; });
  }
  document.addEventListener("toggle", function (e) {
    var d = e.target;
    if (!d.matches) return;
    if (d.matches("details[data-room]")) {
      var folded = foldedRooms();
      if (d.open) folded.delete(d.dataset.room); else folded.add(d.dataset.room);
      localStorage.setItem(ROOMS_KEY, JSON.stringify(Array.from(folded)));
    } else if (d.matches("details.alert-more")) {
      alertsOpen = d.open;
    }
  }, true);
  settled(document);
  scheduleMoving();
  setInterval(tick, 1000);
  // A tablet put away (a hidden tab's timers are slowed down by the browser) shows the hall as it
  // is the moment it is looked at again.
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") { refreshAll(); refreshMoving(); }
  });

  // --- phone menu ---
  var menuBtn = document.getElementById("menu-toggle"), topbar = document.getElementById("topbar");
  if (menuBtn && topbar) menuBtn.addEventListener("click", function () {
    var open = topbar.classList.toggle("menu-open");
    menuBtn.setAttribute("aria-expanded", open ? "true" : "false");
  });

  // --- the manager's "Správa" menu in the top bar: a tap opens it, a tap elsewhere or Esc closes it ---
  var moreBox = document.getElementById("nav-more"), moreBtn = document.getElementById("nav-more-toggle");
  function showMore(open) {
    moreBox.classList.toggle("open", open);
    moreBtn.setAttribute("aria-expanded", open ? "true" : "false");
  }
  if (moreBox && moreBtn) {
    moreBtn.addEventListener("click", function () { showMore(!moreBox.classList.contains("open")); });
    document.addEventListener("click", function (e) { if (!moreBox.contains(e.target)) showMore(false); });
    document.addEventListener("keydown", function (e) { if (e.key === "Escape") showMore(false); });
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
    es.onmessage = function (m) {
      var ev;
      try { ev = JSON.parse(m.data); } catch (e) { return; }
      if (ev.topic === "refresh") { refreshAll(); return; }
      if (ev.table) refreshCard(ev.table);
      refreshTopic(ev.topic);
    };
    // Whenever the stream opens (the first time too): whatever changed between the server
    // drawing this page and now was announced to nobody, so fetch everything once.
    es.onopen = function () { refreshAll(); };
  }
  connect();

  // Anything else that moves with time alone (a prepaid game's "ending soon", a node's last
  // report): each region with data-every, and every busy card outside such a region, at that
  // period. Amounts follow data-moves-ms (above), to the second.
  document.querySelectorAll("[data-every]").forEach(function (el) {
    var s = Math.max(5, parseInt(el.dataset.every, 10) || 30);
    setInterval(function () { refreshRegion(el); }, s * 1000);
  });
  setInterval(function () {
    standaloneCards().forEach(function (table) {
      var el = document.querySelector(cardSelector(table));
      if (el && el.classList.contains("busy")) refreshCard(table);
    });
  }, 30000);

  // --- forms -------------------------------------------------------------------------------
  document.addEventListener("click", function (e) {
    if (e.target.closest && e.target.closest("[data-print]")) window.print();
  });
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f.dataset && f.dataset.confirm && !confirm(f.dataset.confirm)) { e.preventDefault(); return; }
    if (f.method === "post" && location.pathname !== "/login") keepDrafts([f]);  // the login form keeps the draft it came for
  });

  // --- an ended login keeps the work ------------------------------------------------------
  // A login ends after 14 h or when a manager ends it; what was being typed must not go with it.
  // Whatever a form sent (or the page held when a background fetch met the login page) is kept in
  // this tab's sessionStorage; the server sends the visitor to log in and then back to the form's
  // page, where it is put back. Any other page that loads forgets it (the form went through).
  // Never a password, a file, nor a hidden field (one-time keys and the CSRF token are the new page's).
  var DRAFT_KEY = "lavos-draft";
  var KEPT = /^(text|search|number|email|tel|url|date|time|checkbox|radio|select-one|select-multiple|textarea)$/;
  function typedIn(form) {
    return Array.prototype.filter.call(form.elements, function (el) { return el.name && KEPT.test(el.type); }).map(function (el) {
      if (el.type === "checkbox" || el.type === "radio") return [el.name, el.value, el.checked];
      if (el.type === "select-multiple") return [el.name, Array.prototype.map.call(el.selectedOptions, function (o) { return o.value; }), true];
      return [el.name, el.value, true];
    });
  }
  function keepDrafts(forms) {
    var all = Array.prototype.slice.call(document.forms).filter(function (f) { return f.method === "post"; });
    var kept = (forms || all).map(function (f) {
      var same = all.filter(function (g) { return g.getAttribute("action") === f.getAttribute("action"); });
      return { action: f.getAttribute("action"), n: same.indexOf(f), fields: typedIn(f) };
    });
    try { sessionStorage.setItem(DRAFT_KEY, JSON.stringify({ path: location.pathname + location.search, forms: kept })); } catch (e) {}
  }
  function putBack(form, fields) {
    fields.forEach(function (x) {
      Array.prototype.forEach.call(form.elements, function (el) {
        if (el.name !== x[0] || !KEPT.test(el.type)) return;
        if (el.type === "checkbox" || el.type === "radio") { if (el.value === x[1]) el.checked = x[2]; }
        else if (el.type === "select-multiple") Array.prototype.forEach.call(el.options, function (o) { o.selected = x[1].indexOf(o.value) >= 0; });
        else el.value = x[1];
        el.dispatchEvent(new Event("input", { bubbles: true }));
        el.dispatchEvent(new Event("change", { bubbles: true }));
      });
    });
  }
  // Put back once every script of the page has set itself up (app.js runs first; table.js and the
  // like after it, before DOMContentLoaded): the input and change events put it back with then
  // reach them too, so what a script shows for a field follows the value restored (the prepaid
  // preset pressed for the minutes put back, a warning for a card put back).
  document.addEventListener("DOMContentLoaded", function restoreDrafts() {
    var raw = null;
    try { raw = sessionStorage.getItem(DRAFT_KEY); } catch (e) { return; }
    if (!raw || location.pathname === "/login") return;
    sessionStorage.removeItem(DRAFT_KEY);
    var draft, from = null;
    try { draft = JSON.parse(raw); from = document.referrer ? new URL(document.referrer).pathname : null; } catch (e) { return; }
    if (from !== "/login" || draft.path !== location.pathname + location.search) return;
    draft.forms.forEach(function (d) {
      var same = Array.prototype.filter.call(document.forms, function (f) { return f.getAttribute("action") === d.action; });
      var form = same[d.n] || same[0];
      if (form) putBack(form, d.fields);
    });
  });

})();
