"""An IR break-beam at a pocket or a goal: each ball crossing it is one pulse.

Edges are timed by the pin factory's own clock (the ticks gpiozero hands to ``when_changed``; on
lgpio they are the kernel's edge timestamps), not by when Python got round to the callback, so a
busy CPU does not stretch or merge pulses. The pure :class:`devices.pulses.PulseFilter` turns the
edges into pulses and faults; a small timer thread calls its ``tick()`` at ``next_deadline()``, so
a pulse is reported within the merge gap after the ball has passed, with no further edge needed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from gpiozero import InputDevice

from devices.pulses import Fault, Pulse, PulseFilter

Output = Callable[[Pulse | Fault], None]


class BeamSensor:
    """One beam. `on_output` receives each Pulse and Fault, in time order, from one thread at a time.

    The receiver pulls its output low while the beam is interrupted, so by default the input has a
    pull-up and "low" means broken (`broken_when_low=False` for the opposite kind).
    """

    def __init__(
        self,
        pin: int | str,
        pulse_filter: PulseFilter,
        on_output: Output,
        *,
        broken_when_low: bool = True,
        pin_factory: Any = None,
    ) -> None:
        self._filter = pulse_filter
        self._on_output = on_output
        self._cond = threading.Condition()
        self._closed = False
        self._broken_when_low = broken_when_low
        self._device = InputDevice(pin, pull_up=broken_when_low, pin_factory=pin_factory)
        # gpiozero's device events (when_activated, when_deactivated) drop the edge's timestamp, so
        # the beam listens on the pin itself: `Pin.when_changed` is documented (gpiozero's "API -
        # Pins") to be called with the factory's ticks and the new state for the edges `Pin.edges`
        # selects, and every backend (lgpio, RPi.GPIO, the MockFactory) implements it. It used to
        # override DigitalInputDevice._pin_changed, a private method a release could rename silently.
        # gpiozero holds the callback weakly: a bound method of this sensor, which the node keeps.
        self._device.pin.bounce = None  # no stability filter (on lgpio it swallows pulses shorter than itself)
        self._device.pin.edges = "both"
        self._device.pin.when_changed = self._pin_changed
        self._factory = self._device.pin_factory
        self._epoch = self._factory.ticks()
        self._thread = threading.Thread(target=self._run, name=f"beam-{pin}", daemon=True)
        self._thread.start()

    @property
    def pin(self) -> Any:
        return self._device.pin

    @property
    def broken(self) -> bool:
        return self._filter.broken

    def now(self) -> float:
        """The filter's clock: seconds on the pin factory's clock since this sensor was made."""
        # gpiozero ships no types: its ticks_diff is Any, documented to return seconds as a float.
        seconds: float = self._factory.ticks_diff(self._factory.ticks(), self._epoch)
        return seconds

    def _pin_changed(self, ticks: Any, state: Any) -> None:
        # The receiver pulls its line low while the beam is broken (pull-up), or high for the other kind.
        self._edge(ticks, bool(state) != self._broken_when_low)

    def _edge(self, ticks: Any, broken: bool) -> None:
        t = self._factory.ticks_diff(ticks, self._epoch)
        with self._cond:
            if self._closed:
                return
            self._emit(self._filter.edge(t, broken))
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                deadline = self._filter.next_deadline()
                if deadline is None:
                    self._cond.wait()
                    continue
                now = self.now()
                if now < deadline:
                    self._cond.wait(deadline - now)
                    continue
                self._emit(self._filter.tick(now))

    def _emit(self, outputs: list[Pulse | Fault]) -> None:
        # Called with the lock held, so outputs of one beam never overtake each other.
        for item in outputs:
            self._on_output(item)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join(timeout=2)
        if not self._device.closed:
            self._device.pin.when_changed = None
        self._device.close()
