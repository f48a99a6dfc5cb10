"""The manager's reports (read-only)."""
