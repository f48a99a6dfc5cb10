"""Mock GPIO pins whose edges carry the times we choose.

gpiozero's MockPin stamps an edge with the moment Python drives it; on a busy two-core machine a
1 ms sleep may take 20, so chatter scripted "1 ms apart" could arrive as separate pulses. A
TimedMockPin stamps each edge with a time given by the script instead, on the same monotonic
clock as MockFactory.ticks(), so pulses and chatter are exactly as scripted however loaded the
machine is. It is still gpiozero's real MockPin machinery underneath (callbacks run in the driving
thread).
"""

from __future__ import annotations

import random
import time
from collections import deque
from dataclasses import dataclass

from gpiozero.pins.mock import MockFactory, MockPin

# gpiozero's MockPin keeps every edge it ever saw (for assert_states); a demo evening drives
# thousands per table, which grew the demo's memory for as long as it played (found by
# bench/soak.py). A bound of 1,000 per pin was never reached in an evening, so this is small:
# the last few pulses, chatter included, are all a test could want.
STATES_KEPT = 32


class TimedMockPin(MockPin):  # type: ignore[misc]  # gpiozero ships no types: MockPin is Any
    _stamp: float | None = None
    states: deque[tuple[float, bool]]  # MockPin's list of (time, state), kept bounded here

    def clear_states(self) -> None:
        super().clear_states()
        self.states = deque(self.states, maxlen=STATES_KEPT)

    def _change_state(self, value: bool) -> bool:
        changed: bool = super()._change_state(value)
        if changed and self._stamp is not None:
            self._last_change = self._stamp
        return changed

    def drive_at(self, t: float, high: bool) -> None:
        """Drive the pin high or low as if the edge happened at monotonic time `t`."""
        self._stamp = t
        try:
            self.drive_high() if high else self.drive_low()
        finally:
            self._stamp = None


def timed_mock_factory() -> MockFactory:
    return MockFactory(pin_class=TimedMockPin)


@dataclass(frozen=True)
class PulseScript:
    """A ball drop as edges: break at 0, release after `duration_s`; chatter edges around both."""

    duration_s: float = 0.025
    chatter_edges: int = 2  # extra release/re-break pairs at each end
    chatter_s: tuple[float, float] = (0.001, 0.003)

    def edges(self, start: float, rng: random.Random) -> list[tuple[float, bool]]:
        """(time, broken) pairs in time order."""
        lo, hi = self.chatter_s
        out = [(start, True)]
        t = start
        for _ in range(self.chatter_edges):  # bouncing into the beam
            t += rng.uniform(lo, hi) / 2
            out.append((t, False))
            t += rng.uniform(lo, hi) / 2
            out.append((t, True))
        end = start + self.duration_s
        out.append((end, False))
        t = end
        for _ in range(self.chatter_edges):  # bouncing out of it
            t += rng.uniform(lo, hi) / 2
            out.append((t, True))
            t += rng.uniform(lo, hi) / 2
            out.append((t, False))
        return out

    def span_s(self) -> float:
        return self.duration_s + self.chatter_edges * self.chatter_s[1]


def drive_pulse(pin: TimedMockPin, start: float, script: PulseScript, rng: random.Random, *, broken_when_low: bool = True) -> float:
    """Drive one scripted pulse on a beam pin; returns the time of its last edge."""
    t = start
    for t, broken in script.edges(start, rng):
        pin.drive_at(t, high=(broken != broken_when_low))
    return t


def drive_pulses(pin: TimedMockPin, count: int, script: PulseScript = PulseScript(), *, gap_s: float = 0.02, seed: int = 1) -> None:
    """Drive `count` pulses back to back, keeping the scripted time close to the real clock.

    Edge times run at most a little ahead of time.monotonic(), so the beam's timer thread (which
    waits on the real clock) emits each pulse shortly after it is scripted to end.
    """
    rng = random.Random(seed)
    t = time.monotonic()
    for _ in range(count):
        t = max(t, time.monotonic())
        last = drive_pulse(pin, t, script, rng)
        t = last + gap_s
        ahead = t - time.monotonic()
        if ahead > 0.2:
            time.sleep(ahead - 0.2)
