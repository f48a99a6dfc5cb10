"""`lavos central`: the read-only web view and the records API of the central reporting hub (broker.central)."""
