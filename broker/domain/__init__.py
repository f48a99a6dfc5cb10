"""Pure rules of the hall (sessions, billing, tariffs, alert kinds, membership): no I/O library."""
