"""The agent that runs on each table's Raspberry Pi."""
