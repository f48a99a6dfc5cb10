"""Staff web UI and HTTP API over the hub."""
