"""The live hall: the hub that owns hall state, the facade every write goes through, and the read models."""
