"""The central service beside the MQTT broker: sessions, billing, alerts, metrics, storage."""
