"""Must-show 1: pulses on mock pins become exactly one `pocket` event each, through Mosquitto + ACL."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import TYPE_CHECKING

from edge import EdgeNode
from sim.pins import PulseScript, drive_pulses, timed_mock_factory
from tests.edge.nodes import POCKET_PINS, events, node_config
from tests.support.hub import link_of, outbox_of
from tests.support.mqtt import Collector
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


def test_each_pulse_is_one_pocket_event_with_its_pocket_index(mosquitto: Mosquitto, tmp_path: Path) -> None:
    hub = Collector(mosquitto.port)
    factory = timed_mock_factory()
    with EdgeNode(node_config(tmp_path, mosquitto.port), pin_factory=factory) as node:
        assert link_of(node).wait_connected(10)
        for count, pin in zip((1, 2, 3, 0, 1, 2), POCKET_PINS):
            drive_pulses(factory.pin(pin), count, PulseScript(duration_s=0.030, chatter_edges=0))
        wait_until(lambda: len(events(hub)) >= 9, what="9 pocket events")
        wait_until(lambda: outbox_of(node).depth == 0, what="outbox drained")
    got = events(hub)
    assert Counter(e.data.pocket for e in got) == {0: 1, 1: 2, 2: 3, 4: 1, 5: 2}
    assert all(29 <= e.data.pulse_ms <= 31 for e in got)
    assert [e.seq for e in got] == sorted(e.seq for e in got)
    hub.close()


def test_500_chattering_pulses_give_500_events_no_more(mosquitto: Mosquitto, tmp_path: Path) -> None:
    hub = Collector(mosquitto.port)
    factory = timed_mock_factory()
    script = PulseScript(duration_s=0.015, chatter_edges=2, chatter_s=(0.001, 0.003))
    per_pocket = [84, 84, 83, 83, 83, 83]  # 500, every pocket at once, as six threads
    with EdgeNode(node_config(tmp_path, mosquitto.port), pin_factory=factory) as node:
        assert link_of(node).wait_connected(10)
        drivers = [
            threading.Thread(target=drive_pulses, args=(factory.pin(pin), n, script), kwargs={"gap_s": 0.012, "seed": i})
            for i, (pin, n) in enumerate(zip(POCKET_PINS, per_pocket))
        ]
        for d in drivers:
            d.start()
        for d in drivers:
            d.join()
        wait_until(lambda: len(events(hub)) >= 500, timeout=60, what="500 pocket events")
        time.sleep(0.5)  # room for any extra event to show up (the merge gap is 5 ms)
        assert outbox_of(node).depth == 0
    got = events(hub)
    assert len(got) == 500
    assert Counter(e.data.pocket for e in got) == dict(enumerate(per_pocket))
    assert not events(hub, event_type="sensor_fault")
    assert len({(e.boot, e.seq) for e in got}) == 500
    hub.close()
