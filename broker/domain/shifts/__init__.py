"""The staff's shifts and the cash drawer counted at a shift change: pure rules (broker.shifts is the part)."""
