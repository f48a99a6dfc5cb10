// A tournament's pages (templates/tournament.html, tournament_match.html): a form sent from the
// page comes back to where it was (issue 29, item 33). The form's nearest element with an id (a
// match's row, a table's call, a player) is remembered with where it stood on the screen; when the
// redirect lands on the same page, that element is put back there (the rows above it may have
// changed), else the page scrolls back by as much as it was. A redirect's #anchor (the same row)
// is what a browser without this script gets. No inline script (CSP).
(function () {
  "use strict";
  var KEY = "lavos-tournament-place";

  document.addEventListener("submit", function (e) {
    var form = e.target;  // (after app.js's listener: a confirmation said no, nothing is sent)
    if (e.defaultPrevented || !form || (form.method || "").toLowerCase() !== "post") return;
    var anchor = form.closest("[id]");
    var place = { path: location.pathname, y: window.scrollY, id: anchor ? anchor.id : null, top: anchor ? anchor.getBoundingClientRect().top : 0 };
    try { sessionStorage.setItem(KEY, JSON.stringify(place)); } catch (err) {}
  });

  var raw = null;
  try { raw = sessionStorage.getItem(KEY); sessionStorage.removeItem(KEY); } catch (err) {}
  if (!raw) return;
  var place;
  try { place = JSON.parse(raw); } catch (err) { return; }
  if (!place || place.path !== location.pathname) return;  // another page: its #anchor says where
  function restore() {
    var el = place.id ? document.getElementById(place.id) : null;
    if (el) window.scrollBy(0, el.getBoundingClientRect().top - place.top);
    else window.scrollTo(0, place.y);
  }
  if (document.readyState === "complete") restore();
  else window.addEventListener("load", restore, { once: true });
})();
