"""A simulated player: balls dropping into random pockets at a human pace."""

from __future__ import annotations

import random
import threading
import time

from sim.pins import PulseScript, TimedMockPin, drive_pulse


class Player:
    """Drives ball drops (10–60 ms pulses, 1–3 ms chatter) on the pocket pins until stopped."""

    def __init__(self, pocket_pins: list[TimedMockPin], *, pace_s: tuple[float, float] = (0.5, 3.0), seed: int | None = None) -> None:
        self._pins = pocket_pins
        self._pace = pace_s
        self._rng = random.Random(seed)
        self._stop = threading.Event()
        self.drops: list[int] = []
        self._thread = threading.Thread(target=self._run, name="sim-player", daemon=True)

    def start(self) -> "Player":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self._rng.uniform(*self._pace)):
            pocket = self._rng.randrange(len(self._pins))
            script = PulseScript(duration_s=self._rng.uniform(0.010, 0.060), chatter_edges=self._rng.randint(0, 2))
            drive_pulse(self._pins[pocket], time.monotonic(), script, self._rng)
            self.drops.append(pocket)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
