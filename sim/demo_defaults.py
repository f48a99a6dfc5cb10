"""The demo's defaults that `lavos demo --help` shows, apart from sim.demo so the help imports none of the hall."""

from __future__ import annotations

DEFAULT_HTTP = "127.0.0.1:8080"
MAX_SPEED = 60.0  # beyond it a table's drops come closer than its pulses are long
