"""Push notifications to staff."""
