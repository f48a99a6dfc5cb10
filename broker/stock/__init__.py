"""The bar's stock (issue 32 §1): items, recipes, movements (sales, voids, deliveries, write-offs, stocktakes), low-stock alerts."""
