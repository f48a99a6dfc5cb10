"""Turn raw beam edges into ball drops (pulses) and sensor faults.

Pure logic: no I/O, no threads, no clock reads. Every time is an explicit float in seconds on a
monotonic clock, supplied by the caller, so the filter is tested with exact timestamps (gpiozero's
MockFactory ignores ``bounce_time``, and on lgpio ``bounce_time`` swallows pulses shorter than
itself, so filtering cannot be left to gpiozero).

Rules, all decided from edge timestamps alone:

* **Merge.** A release followed by a re-break less than ``merge_gap_ms`` later is chatter: it
  belongs to the same pulse. A pulse is therefore only known to be over ``merge_gap_ms`` after its
  last release; ``tick()`` (or the next edge) emits it then. ``Pulse.start`` is the first break,
  ``Pulse.duration_ms`` runs from there to the final release.
* **Glitch.** A merged pulse shorter than ``min_pulse_ms`` is dropped.
* **Stuck.** A (merged) break lasting ``stuck_after_s`` yields ``Fault("stuck")`` at that moment;
  that break is never a pulse. When the beam clears (and stays clear for the merge gap),
  ``Fault("recovered")`` is emitted with ``at`` = the time it cleared.
* **Chatter storm.** More than ``chatter_max_edges`` edges within ``chatter_window_s`` yields
  ``Fault("chatter")`` at the edge that crossed the limit. The pulse in progress is discarded and
  no pulse is counted until one full ``chatter_window_s`` passes without any edge; then
  ``Fault("recovered")`` is emitted, ``at`` = last edge + window. A break still held at that moment
  began during the storm, so it is not counted either (it can still go stuck).
  A storm supersedes a stuck fault: one ``recovered`` ends both.
* **Duplicates** (the same state reported twice: the GPIO layer missed the edge between) are
  ignored: the beam is taken to have stayed in that state.
* **Out-of-order timestamps** (earlier than one already seen) are clamped to the latest time seen,
  so the state stays consistent; a duration can only be understated by the amount of disorder.
  Non-finite times are a caller bug and raise ``ValueError``.

Everything is emitted at a deterministic time, whatever the call pattern: the concatenated output
of ``edge()`` and ``tick()`` calls does not depend on how often, or whether, ``tick()`` is called
between edges (only on the final time the filter is advanced to).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Literal

FaultKind = Literal["stuck", "chatter", "recovered"]


@dataclass(frozen=True)
class Pulse:
    """One ball drop (or goal)."""

    start: float  # time the beam first broke (s)
    duration_ms: float  # from first break to final release, chatter merged


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    at: float


Output = list[Pulse | Fault]


@dataclass
class _Break:
    """The pulse being tracked: from its first break until it is finalised."""

    start: float
    # When the beam last went broken while we were watching it (stuck is counted from `start`,
    # but cannot be declared before we actually see the beam broken).
    watched_from: float
    released: float | None = None  # set while clear and inside the merge gap
    counted: bool = True  # False for a break that began during a chatter storm
    stuck: bool = False


class PulseFilter:
    def __init__(
        self,
        *,
        min_pulse_ms: float = 5.0,
        merge_gap_ms: float = 5.0,
        stuck_after_s: float = 10.0,
        chatter_window_s: float = 1.0,
        chatter_max_edges: int = 200,
    ) -> None:
        if min(min_pulse_ms, merge_gap_ms) < 0 or stuck_after_s <= 0 or chatter_window_s <= 0 or chatter_max_edges < 1:
            raise ValueError("pulse filter settings must be positive (min_pulse_ms and merge_gap_ms may be 0)")
        self._min_s = min_pulse_ms / 1000.0
        self._gap_s = merge_gap_ms / 1000.0
        self._stuck_s = float(stuck_after_s)
        self._window_s = float(chatter_window_s)
        self._max_edges = int(chatter_max_edges)

        self._now = -math.inf
        self._broken = False
        self._break: _Break | None = None
        # Outside a storm: times of recent edges (at most chatter_max_edges of them).
        self._recent: deque[float] = deque()
        # Inside a storm: the time of the latest edge (None = no storm).
        self._storm_last_edge: float | None = None

    # ------------------------------------------------------------------ public API

    @property
    def broken(self) -> bool:
        """The beam's state as last reported (True = broken)."""
        return self._broken

    def edge(self, t: float, broken: bool) -> Output:
        """Feed one raw edge (beam broken=True / clear=False); returns what it completes."""
        t = self._clamp(t)
        out = self._advance(t)
        if broken == self._broken:
            return out
        self._broken = broken
        if self._storm_last_edge is not None:
            self._storm_last_edge = t
            return out
        self._recent.append(t)
        while self._recent[0] <= t - self._window_s:
            self._recent.popleft()
        if len(self._recent) > self._max_edges:
            self._start_storm(t, out)
            return out
        b = self._break
        if broken:
            if b is not None and b.released is not None:
                b.released = None  # re-break inside the merge gap: same pulse
                b.watched_from = t
            else:
                self._break = _Break(start=t, watched_from=t)
        elif b is not None:
            b.released = t
        out.extend(self._advance(t))  # anything due exactly now (e.g. a zero merge gap)
        return out

    def tick(self, t: float) -> Output:
        """Advance time to ``t``: emit pulses whose merge gap has passed, detect stuck and calm."""
        return self._advance(self._clamp(t))

    def next_deadline(self) -> float | None:
        """The earliest time at which ``tick()`` could emit something, or None if nothing is pending."""
        if self._storm_last_edge is not None:
            return self._storm_last_edge + self._window_s
        b = self._break
        if b is None:
            return None
        if b.released is not None:
            return b.released + self._gap_s
        if b.stuck:
            return None
        return max(b.start + self._stuck_s, b.watched_from)

    # ------------------------------------------------------------------ internals

    def _clamp(self, t: float) -> float:
        if not math.isfinite(t):
            raise ValueError(f"edge time must be a finite number of seconds, got {t!r}")
        if t < self._now:
            return self._now
        self._now = t
        return t

    def _advance(self, now: float) -> Output:
        # Handle every deadline up to `now` in time order, so the result cannot depend on how
        # finely the caller slices time.
        out: Output = []
        while (due := self.next_deadline()) is not None and due <= now:
            if self._storm_last_edge is not None:
                self._end_storm(due, out)
            elif self._break is not None and self._break.released is not None:
                self._finish(self._break, out)
            else:
                assert self._break is not None
                self._break.stuck = True
                out.append(Fault("stuck", due))
        return out

    def _finish(self, b: _Break, out: Output) -> None:
        assert b.released is not None
        self._break = None
        if b.stuck:
            out.append(Fault("recovered", b.released))
        elif b.counted and b.released - b.start >= self._min_s:
            out.append(Pulse(b.start, (b.released - b.start) * 1000.0))

    def _start_storm(self, t: float, out: Output) -> None:
        self._storm_last_edge = t
        self._recent.clear()
        # Dropping the break also drops a stuck fault: the storm supersedes it, one "recovered" ends both.
        self._break = None
        out.append(Fault("chatter", t))

    def _end_storm(self, at: float, out: Output) -> None:
        last_edge = self._storm_last_edge
        assert last_edge is not None
        self._storm_last_edge = None
        out.append(Fault("recovered", at))
        if self._broken:
            self._break = _Break(start=last_edge, watched_from=at, counted=False)
