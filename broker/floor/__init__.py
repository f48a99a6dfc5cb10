"""The floor: games, lights, tables (runtime, out of service, check-ins), ingest rules, the watchdog's timers, closing, the box watch, monitoring rules, Home Assistant."""
