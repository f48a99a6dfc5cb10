"""The hub's pure rules: sessions, billing, tariffs, alert kinds, schedules, the venue file. No I/O library here."""
