/* The product grid on the table and tab pages (templates/_product_buttons.html): the most sold
   show first, the search finds any product by a part of its name (accents and case ignored:
   "boro" finds Borovička), "All products" shows the rest. No inline script (CSP). */
(function () {
  "use strict";
  function fold(text) {
    return String(text || "").normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  }
  document.querySelectorAll("[data-product-picker]").forEach(function (box) {
    var input = box.querySelector("[data-product-filter]");
    var grid = box.querySelector("[data-product-grid]");
    var all = box.querySelector("[data-product-all]");
    var none = box.querySelector("[data-product-none]");
    var cells = Array.prototype.slice.call(grid.querySelectorAll(".product-cell"));
    cells.forEach(function (c) { c.dataset.folded = fold(c.dataset.name); });
    function filter() {
      var q = fold(input.value.trim());
      grid.classList.toggle("searching", q !== "");
      var shown = 0;
      cells.forEach(function (c) {
        var hit = q === "" || c.dataset.folded.indexOf(q) !== -1;
        c.hidden = !hit;
        if (hit) shown += 1;
      });
      none.hidden = shown > 0;
    }
    input.addEventListener("input", filter);
    input.addEventListener("keydown", function (e) {
      // Enter puts the one product found on the tab, as a tap on it would.
      if (e.key !== "Enter") return;
      e.preventDefault();
      var found = cells.filter(function (c) { return !c.hidden; });
      if (input.value.trim() && found.length === 1) found[0].requestSubmit();
    });
    if (all) {
      all.addEventListener("click", function () {
        var open = grid.classList.toggle("all");
        all.setAttribute("aria-expanded", open ? "true" : "false");
      });
    }
  });
})();
