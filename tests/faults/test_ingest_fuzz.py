"""Issue 6, bad input: 10,000 generated MQTT messages against the ingest of a running service.

It must never crash, must count every rejection, and must stay responsive: a valid event sent
after the flood is applied at once, and the HTTP-free service still starts sessions.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy import func, select

from broker.domain.floor.reject_tally import KEPT_REASONS, UNKNOWN
from broker.floor.games import StartGame
from broker.storage.models import NodeRejectCount
from tests.support.hub import hub_link, running_service
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from hypothesis.strategies._internal.strategies import SearchStrategy

    from sim.mosquitto import Mosquitto


TABLES = ["pool-01", "pool-02", "foos-01", "nosuch-01"]
KINDS = ["status", "event/pocket", "event/goal", "event/card", "event/nope", "light/state", "telemetry", "session", "light/set"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def almost_valid_event() -> SearchStrategy[bytes]:
    """Envelopes that are right in most fields and wrong in one, where the bugs hide."""
    base = st.fixed_dictionaries(
        {
            "v": st.sampled_from([1, 1, 1, 2, "1", None]),
            "table": st.sampled_from(TABLES),
            "type": st.sampled_from(["pocket", "goal", "card", "sensor_fault", "weird"]),
            "boot": st.text(min_size=0, max_size=70),
            "seq": st.integers(min_value=-2, max_value=2**64) | st.text(max_size=3),
            "ts": st.sampled_from(["2026-11-30T18:00:00+00:00", "2026-11-30T18:00:00", "yesterday", 0]),
            "ts_synced": st.booleans() | st.none(),
            "data": json_values,
        }
    )
    return base.map(lambda d: json.dumps(d).encode())


payloads = st.one_of(
    st.binary(max_size=300),
    json_values.map(lambda v: json.dumps(v).encode()),
    almost_valid_event(),
    st.just(b"x" * 5000),
)
topics = st.one_of(
    st.builds(lambda t, k: f"lavos/v1/table/{t}/{k}", st.sampled_from(TABLES), st.sampled_from(KINDS)),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz/-0123456789", min_size=1, max_size=60).map(lambda s: "lavos/v1/table/" + s),
)
messages = st.lists(st.tuples(topics, payloads), min_size=100, max_size=100)


def test_ten_thousand_generated_messages_never_crash_the_ingest(mosquitto: Mosquitto, tmp_path: Path) -> None:
    with running_service(mosquitto, tmp_path / "hub.db") as svc:
        pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="fuzzer")
        pub.username_pw_set("lavos-hub", "hub-secret")
        pub.max_inflight_messages_set(1000)
        pub.connect("127.0.0.1", mosquitto.port)
        pub.loop_start()
        sent = 0

        # 100 batches of 100 whatever the Hypothesis profile: the ten thousand messages are the claim.
        # A batch is in flight at once (QoS 1, each acknowledged before the next batch), as a node's
        # outbox flushes after a reconnect; one at a time, the round trips took most of a minute.
        @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(messages)
        def flood(batch: Any) -> None:
            nonlocal sent
            infos = []
            for topic, payload in batch:
                if any(c in topic for c in "+#") or "//" in topic or topic.endswith("/"):
                    continue  # not publishable topic names; paho refuses them itself
                infos.append(pub.publish(topic, payload, qos=1))
            for info in infos:
                info.wait_for_publish(10)
            sent += len(infos)

        flood()
        # Our own light/set and session topics come back to us too: they are ignored, not rejected.
        wait_until(lambda: svc.inbox.empty() and svc.ingest.wait_idle(1), timeout=120, what="flood drained")
        handled = svc.handlers.rejected + svc.handlers.applied + svc.handlers.duplicates
        assert sent >= 9000 and handled <= sent
        with svc.store.reader() as db:
            counted = db.scalar(select(func.sum(NodeRejectCount.count)).where(NodeRejectCount.reason.not_in(KEPT_REASONS)))
            buckets = set(db.scalars(select(NodeRejectCount.table_id)))
        assert counted == svc.handlers.rejected > 0
        assert buckets <= {"pool-01", "pool-02", "foos-01", UNKNOWN}  # "nosuch-01" and garbage share one bucket
        assert svc.ingest._thread.is_alive() and hub_link(svc).stats.connected and hub_link(svc).stats.callback_errors == 0
        # still responsive: the next valid event is applied, not held behind the flood
        ev = {
            "v": 1,
            "table": "pool-02",
            "type": "pocket",
            "boot": "after-flood",
            "seq": 1,
            "ts": "2026-11-30T18:00:00+00:00",
            "ts_synced": False,
            "data": {"pocket": 3, "pulse_ms": 22.0},
        }
        before = svc.handlers.applied
        pub.publish("lavos/v1/table/pool-02/event/pocket", json.dumps(ev), qos=1)
        wait_until(lambda: svc.handlers.applied == before + 1, what="a valid event after the flood")
        assert svc.execute(StartGame(table="pool-01", actor="anna"))
        pub.loop_stop()
        pub.disconnect()
