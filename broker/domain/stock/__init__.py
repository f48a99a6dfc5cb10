"""The bar's stock rules (issue 32 §1): quantities in thousandths of a unit, purchase values in cents."""
