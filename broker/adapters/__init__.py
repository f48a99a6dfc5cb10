"""The hub's I/O adapters: MQTT link, ingest loop, metrics, leadership."""
