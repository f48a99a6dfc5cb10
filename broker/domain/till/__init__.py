"""The till's pure rules: money lines, receipts, splits, payments, the Z report, revenue, tab names."""
