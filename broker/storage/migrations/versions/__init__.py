"""One module per schema revision; the server applies them on start."""
