// The tournament's TV and the players' phones (templates/tv.html): no login, its own stream of
// this tournament's changes; on each, the board is fetched again and replaced. Fetches are
// numbered, and an answer older than the one shown is dropped. On a TV the whole bracket is
// scaled to the box it has (the screen's right side), however many rounds it has. No inline
// script (CSP).
(function () {
  "use strict";
  var body = document.body, board = document.getElementById("board");
  var sent = 0, shown = 0, again = false, busy = false;
  // The bracket at its natural size, scaled down (never up) to fit its box; the box is only laid
  // out on a TV (tv.css), so on a phone the bracket keeps its size and scrolls.
  function fit() {
    var box = board.querySelector(".tv-fit"), rounds = board.querySelector(".tv-fit .tv-rounds");
    board.classList.toggle("no-bracket", !rounds);
    if (!box || !rounds) return;
    rounds.style.transform = "";
    if (!window.matchMedia("(min-width: 1200px)").matches) return;  // a phone: its own size, scrolling
    var s = Math.min(1, box.clientWidth / rounds.scrollWidth, box.clientHeight / rounds.scrollHeight);
    rounds.style.transform = "scale(" + s + ")";
    rounds.dataset.scale = s.toFixed(3);
  }
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    var n = ++sent;
    fetch(body.dataset.board, { headers: { "X-Requested-With": "fetch" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) { if (n > shown) { shown = n; board.innerHTML = html; fit(); } })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  if (window.EventSource) {
    var es = new EventSource(body.dataset.events);
    es.onmessage = refresh;
    es.onopen = refresh;  // whatever changed before the stream opened
  }
  setInterval(refresh, 30000);  // the expected end moves with time alone
  fit();
  window.addEventListener("resize", fit);
})();
