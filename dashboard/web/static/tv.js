// The tournament's TV and the players' phones (templates/tv.html): no login, its own stream of
// this tournament's changes; on each, the board is fetched again and replaced. Fetches are
// numbered, and an answer older than the one shown is dropped. No inline script (CSP).
(function () {
  "use strict";
  var body = document.body, board = document.getElementById("board");
  var sent = 0, shown = 0, again = false, busy = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    var n = ++sent;
    fetch(body.dataset.board, { headers: { "X-Requested-With": "fetch" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) { if (n > shown) { shown = n; board.innerHTML = html; } })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  if (window.EventSource) {
    var es = new EventSource(body.dataset.events);
    es.onmessage = refresh;
    es.onopen = refresh;  // whatever changed before the stream opened
  }
  setInterval(refresh, 30000);  // the expected end moves with time alone
})();
