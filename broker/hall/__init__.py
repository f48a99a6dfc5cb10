"""The live hall: the hub's owned state, the one writer that changes it, its timers and ingest rules."""
