"""How many argon2 hashes may run at once in this process, and who gets the next free slot.

A flood of guesses from many addresses (each under its own throttle allowance) keeps every slot
busy; first come, first served would then make the staff wait behind the flood, and often give
up (503). A caller that has logged in to this account from this address before goes first: an
attacker at a new address can never be one, and learns nothing from it (only the owner's own
address has ever seen that account succeed there).
"""

from __future__ import annotations

import threading
import time


class HashSlots:
    def __init__(self, slots: int) -> None:
        self._free = slots
        self._cond = threading.Condition()
        self._waiting = 0
        self._first_waiting = 0

    def acquire(self, *, first: bool, timeout: float, max_waiting: int) -> bool:
        """Take a slot within `timeout` s; False if none came, or if `max_waiting` others already wait
        (a waiter holds a web worker thread). Callers with `first` go before the others and are
        never turned away for the queue's length."""
        deadline = time.monotonic() + timeout
        with self._cond:
            if not first and self._waiting >= max_waiting:
                return False
            self._waiting += 1
            self._first_waiting += first
            try:
                while not (self._free and (first or not self._first_waiting)):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.wait(left)
                self._free -= 1
                return True
            finally:
                self._waiting -= 1
                self._first_waiting -= first

    def release(self) -> None:
        with self._cond:
            self._free += 1
            self._cond.notify_all()
