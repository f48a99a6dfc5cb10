"""The hub's pure rules: games, billing, tariffs, alert kinds, schedules, the venue file. No I/O library here."""
