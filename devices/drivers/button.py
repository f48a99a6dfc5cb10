"""The table's push button: a local light switch that works with or without the network."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpiozero import Button

if TYPE_CHECKING:
    from gpiozero.pins import Factory, Pin  # gpiozero ships no types: both are Any to mypy


class PushButton:
    """Calls `on_press` once per press.

    Contacts bounce for a few ms; presses closer than `min_interval_s` are one press. This is our
    own guard, not gpiozero's bounce_time (ignored by MockFactory, a stability filter on lgpio).
    """

    def __init__(
        self, pin: int | str, on_press: Callable[[], None], *, min_interval_s: float = 0.25, pin_factory: Factory | None = None
    ) -> None:
        self._on_press = on_press
        self._min_interval_s = min_interval_s
        self._last = -float("inf")
        self._lock = threading.Lock()
        self._device = Button(pin, pull_up=True, bounce_time=None, pin_factory=pin_factory)
        self._device.when_pressed = self._pressed

    @property
    def pin(self) -> Pin:
        return self._device.pin

    def _pressed(self, _device: Button | None = None) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._last < self._min_interval_s:
                return
            self._last = now
        self._on_press()

    def close(self) -> None:
        self._device.close()
