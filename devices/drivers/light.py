"""The table light: a relay on one GPIO output, switched on/off or blinked for a while.

Relay boards differ (many sold for the Pi switch on a low input), so polarity is explicit, and so
is the state at start-up: gpiozero would otherwise pick "off" and a wrongly wired active-low board
would light the table at every boot.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpiozero import DigitalOutputDevice

if TYPE_CHECKING:
    from gpiozero.pins import Factory, Pin  # gpiozero ships no types: both are Any to mypy


class LightRelay:
    """Switch or blink the table light. Thread-safe: commands, the button and timers all call it."""

    def __init__(
        self,
        pin: int | str,
        *,
        active_high: bool = False,
        initial_on: bool = False,
        blink_period_s: float = 1.0,
        pin_factory: Factory | None = None,
    ) -> None:
        self._device = DigitalOutputDevice(pin, active_high=active_high, initial_value=initial_on, pin_factory=pin_factory)
        self._half_period = blink_period_s / 2.0
        self._lock = threading.RLock()
        self._settle: threading.Timer | None = None
        self._on = initial_on
        self._blinking = False
        # Bumped by every switch: a settle timer that lost the race to a newer command does nothing.
        self._token = 0

    @property
    def on(self) -> bool:
        """The state the light is in, or will settle on when a blink ends."""
        return self._on

    @property
    def blinking(self) -> bool:
        return self._blinking

    @property
    def pin(self) -> Pin:
        return self._device.pin

    def set(self, on: bool) -> None:
        with self._lock:
            self._cancel_settle()
            self._on, self._blinking = on, False
            # on()/off() also stop a running blink thread
            self._device.on() if on else self._device.off()

    def toggle(self) -> bool:
        with self._lock:
            self.set(not self._on)
            return self._on

    def blink(self, seconds: float, then_on: bool, on_settle: Callable[[], None] | None = None) -> None:
        """Blink for `seconds` (a warning: time is nearly up), then settle on `then_on` and call `on_settle`."""
        with self._lock:
            self._cancel_settle()
            self._on, self._blinking = then_on, True
            self._device.blink(on_time=self._half_period, off_time=self._half_period, n=None, background=True)
            # Our own timer rather than blink(n=...): a blink ends off, and the settle state must be exact.
            self._settle = threading.Timer(seconds, self._settle_now, args=(self._token, then_on, on_settle))
            self._settle.daemon = True
            self._settle.start()

    def _settle_now(self, token: int, then_on: bool, on_settle: Callable[[], None] | None) -> None:
        with self._lock:
            if token != self._token:
                return
            self.set(then_on)
        if on_settle is not None:
            on_settle()

    def _cancel_settle(self) -> None:
        self._token += 1
        if self._settle is not None:
            self._settle.cancel()
            self._settle = None

    def close(self) -> None:
        with self._lock:
            self._cancel_settle()
            self._device.close()
