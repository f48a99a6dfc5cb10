/* The bill page and the bill list: "?print=1" (the list's print link) opens the print dialog
   as soon as the bill is shown, so reprinting a bill is one tap from the list. */
(function () {
  "use strict";
  if (document.body.classList.contains("page-bill") && new URLSearchParams(location.search).get("print") === "1") {
    window.addEventListener("load", function () { window.print(); });
  }
})();
