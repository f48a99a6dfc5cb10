"""A hall's light latency, as staff feel it: the hub commands a table's light (the dashboard's switch,
`SwitchLight`) and the table's node answers with its light state. Used by the several-halls test of a
bad internet link (tests/central/test_two_halls.py) and its bench (bench/wan_link.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from broker.floor.table_service import SwitchLight
from devices import contract
from tests.support.mqtt import Collector

SETTLE_S = 1.0  # how long a light may take to show elsewhere before the probe switches again


class LightProbe:
    """Switches `table`'s light on and off through `hub`, and times each switch until the node's
    `light/state` saying so reaches the hall's broker (an observer there, as the hub hears it)."""

    def __init__(self, hub: Any, broker_port: int, table: str) -> None:
        self.hub = hub
        self.table = table
        self.observer = Collector(broker_port, topics=(contract.light_state_topic(table),))
        self.on = False
        self.latencies: list[float] = []  # seconds, every switch that arrived
        self.lost = 0  # switches whose light state did not arrive within the timeout

    def switch(self, timeout: float = 20.0) -> float | None:
        """Switch the light over; the seconds until the node said so, or None (counted as lost)
        if it has not within `timeout`."""
        on = not self.on
        seen = len(self.observer.all)
        started = time.monotonic()
        self.hub.execute(SwitchLight(table=self.table, on=on, actor="jana"))
        self.on = on
        deadline = started + timeout
        while time.monotonic() < deadline:
            for msg in self.observer.all[seen:]:
                if json.loads(msg.payload).get("on") is on:
                    took = msg.timestamp - started  # paho stamps a message with time.monotonic() as it reads it
                    self.latencies.append(took)
                    return took
            time.sleep(0.002)
        self.lost += 1
        return None

    def switch_until(self, done: Callable[[], object], timeout: float, what: str, *, settle_s: float = SETTLE_S) -> None:
        """Switch (every switch must arrive), and again, until `done()` is true within `settle_s`
        of a switch (what follows the hall's light elsewhere, the centre, lags it); fail after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            assert self.switch() is not None, f"a light switch on {self.table} never reached the table ({what})"
            if self.settled(done, settle_s):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")

    @staticmethod
    def settled(done: Callable[[], object], within_s: float) -> bool:
        """Whether `done()` comes true within `within_s` (looked at every 10 ms)."""
        end = time.monotonic() + within_s
        while not done():
            if time.monotonic() > end:
                return False
            time.sleep(0.01)
        return True

    def close(self) -> None:
        self.observer.close()
