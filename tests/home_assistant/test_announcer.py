"""broker.floor.home_assistant without a broker: what it publishes, when (a recording link stands in for MQTT)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from broker.domain.floor import home_assistant as ha
from broker.domain.venue import load_venue
from broker.floor.home_assistant import HomeAssistant
from devices import contract
from tests.support.hub import VENUE

V = load_venue(VENUE)


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes, bool]] = []

    def publish(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> None:
        self.sent.append((topic, payload, retain))


def summary_of(games: dict[str, int]) -> Callable[..., Any]:
    def summary(table: str) -> contract.SessionSummary | None:
        if table not in games:
            return None
        at = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
        return contract.SessionSummary(session_id="1", table=table, state="running", started_at=at, tariff="std", amount_cents=games[table])

    return summary


def test_announce_sends_every_config_retained_then_every_billed_tables_state() -> None:
    link, games = Recorder(), {"pool-02": 1250}
    h = HomeAssistant(V, link, summary_of(games), lambda fn: fn())
    h.announce()
    configs = [(t, p) for t, p, r in link.sent if t.endswith("/config")]
    assert [t for t, _ in configs] == [d.topic for d in ha.venue_discovery(V)]
    assert all(r for _, _, r in link.sent)  # everything retained: HA may start any time
    states = {t: p for t, p, _ in link.sent if t.startswith(f"{contract.ROOT}/ha/")}
    assert states[ha.ha_state_topic("pool-02")] == ha.ha_state(1250, "running")
    assert states[ha.ha_state_topic("pool-01")] == ha.ha_state(0, "free")
    assert ha.ha_state_topic("foos-01") not in states  # no game, no amount on foosball
    assert not any("/light/set" in t for t, _, _ in link.sent)


def test_the_minutes_tick_speaks_only_of_open_games() -> None:
    link, games = Recorder(), {"pool-07": 300}
    h = HomeAssistant(V, link, summary_of(games), lambda fn: fn())
    h._tick()
    assert link.sent == [(ha.ha_state_topic("pool-07"), ha.ha_state(300, "running"), True)]
    link.sent.clear()
    h.table_changed("darts-01")  # not billed: nothing
    assert link.sent == []
