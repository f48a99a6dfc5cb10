"""The central store: models, opening (with migrations) and the few queries the hub shares."""
