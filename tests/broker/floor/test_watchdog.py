"""Time-driven rules with a fake clock: prepaid warning and expiry, closing time, idle tables.

The hub is real (real Mosquitto, real SQLite); only its clock is ours, and the watchdog's
round is called directly instead of waiting for its thread.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.floor.games import MoveGame, PauseGame, ResumeGame, StartGame, StopGame
from broker.storage.foosball import checkin
from broker.storage.members import add_member
from broker.storage.models import Alert, FoosballCheckin
from tests.support.hub import on_writer, running_service
from tests.support.mqtt import Collector
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from broker.hall.hub import Hub
    from sim.mosquitto import Mosquitto


class FakeClock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at

    def advance(self, **kw: Any) -> None:
        self.at += timedelta(**kw)


# 18:00 local (Europe/Bratislava, UTC+1 in winter): the club is open.
EVENING = datetime(2026, 11, 30, 17, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(EVENING)


@pytest.fixture
def svc(mosquitto: Mosquitto, tmp_path: Path, clock: FakeClock) -> Iterator[Hub]:
    with running_service(mosquitto, tmp_path / "hub.db", clock=clock) as s:
        s.watchdog.stop()  # rounds are driven by the test
        yield s


@pytest.fixture
def wire(mosquitto: Mosquitto) -> Iterator[Collector]:
    c = Collector(mosquitto.port, topics=("lavos/v1/table/+/light/set",))
    yield c
    c.close()


def commands(wire: Any, table: Any) -> list[Any]:
    return [json.loads(m.payload) for m in wire.matching(lambda m: m.topic == f"lavos/v1/table/{table}/light/set")]


def last(wire: Any, table: Any) -> dict[str, Any]:
    sent = commands(wire, table)
    return sent[-1] if sent else {}


def alerts(svc: Any, kind: Any) -> Any:
    with svc.store.reader() as db:
        return db.scalars(select(Alert).where(Alert.kind == kind, Alert.closed_at.is_(None))).all()


def test_prepaid_warns_then_stops_and_switches_off(svc: Hub, wire: Collector, clock: FakeClock) -> None:
    sid = svc.execute(StartGame(table="pool-03", prepaid_minutes=30, actor="anna"))
    clock.advance(minutes=24)
    svc.watchdog.tick()
    assert not any(c.get("blink_s") for c in commands(wire, "pool-03"))
    clock.advance(minutes=1, seconds=1)  # 4:59 left, inside the 5-minute warning
    svc.watchdog.tick()
    wait_until(lambda: any(c.get("blink_s") for c in commands(wire, "pool-03")), what="warning blink")
    blink = next(c for c in commands(wire, "pool-03") if c.get("blink_s"))
    assert blink["on"] is True  # blink, then stay on: the players still have time
    svc.watchdog.tick()
    assert len([c for c in commands(wire, "pool-03") if c.get("blink_s")]) == 1  # warned once
    clock.advance(minutes=5)
    svc.watchdog.tick()
    assert "pool-03" not in svc.open
    wait_until(lambda: last(wire, "pool-03").get("on") is False and last(wire, "pool-03").get("blink_s") is None)
    row, state = svc.game_state(sid)
    assert state.state == "stopped" and row.total_cents == 300  # 30 prepaid minutes at 6 €/h


def test_closing_time_blinks_lit_tables_and_never_cuts_a_session(svc: Hub, wire: Collector, clock: FakeClock) -> None:
    clock.at = datetime(2026, 11, 30, 22, 0, tzinfo=UTC)  # 23:00 local
    svc.execute(StartGame(table="pool-04", actor="anna"))
    clock.at = datetime(2026, 11, 30, 22, 52, tzinfo=UTC)  # 8 min before 00:00 local
    svc.watchdog.tick()
    wait_until(lambda: any(c.get("blink_s") for c in commands(wire, "pool-04")), what="closing blink")
    clock.at = datetime(2026, 11, 30, 23, 0, 30, tzinfo=UTC)  # just after closing
    svc.watchdog.tick()
    assert "pool-04" in svc.open  # not cut
    assert [a.table_id for a in alerts(svc, "open_after_closing")] == ["pool-04"]
    svc.watchdog.tick()
    assert alerts(svc, "open_after_closing")[0].count == 1


def test_idle_session_alerts_after_20_minutes_without_a_drop(svc: Hub, clock: FakeClock) -> None:
    svc.execute(StartGame(table="pool-08", actor="anna"))
    svc.execute(StartGame(table="carom-01", actor="anna"))  # carom has no pockets: never "idle"
    clock.advance(minutes=19)
    svc.watchdog.tick()
    assert not alerts(svc, "idle_session")
    clock.advance(minutes=2)
    svc.watchdog.tick()
    assert [a.table_id for a in alerts(svc, "idle_session")] == ["pool-08"]


def test_paused_session_light_follows_config(svc: Hub, wire: Collector, clock: FakeClock) -> None:
    sid = svc.execute(StartGame(table="pool-09", actor="anna"))
    clock.advance(minutes=10)
    svc.execute(PauseGame(game=sid, actor="anna"))
    wait_until(lambda: last(wire, "pool-09").get("on") is False, what="light off on pause")
    clock.advance(minutes=10)
    svc.execute(ResumeGame(game=sid, actor="anna"))
    wait_until(lambda: last(wire, "pool-09").get("on") is True, what="light on on resume")
    clock.advance(minutes=10)
    state = svc.execute(StopGame(game=sid, actor="anna"))
    assert svc.bill_of(state).total_cents == 200  # 20 played minutes, the pause is free


def test_transfer_moves_the_light(svc: Hub, wire: Collector, clock: FakeClock) -> None:
    sid = svc.execute(StartGame(table="pool-01", actor="anna"))
    clock.advance(minutes=30)
    svc.execute(MoveGame(game=sid, to_table="pool-05", actor="anna"))
    wait_until(lambda: last(wire, "pool-01").get("on") is False and last(wire, "pool-05").get("on") is True)
    with pytest.raises(Exception, match="busy"):
        other = svc.execute(StartGame(table="pool-02", actor="anna"))
        svc.execute(MoveGame(game=other, to_table="pool-05", actor="anna"))


def test_foosball_checkin_expires(svc: Hub, clock: FakeClock) -> None:
    def _write(db: Any) -> None:
        m = add_member(db, "Ambra Tomáš", actor="test")
        checkin(db, "foos-02", m.id, clock(), "staff")

    on_writer(svc, _write)
    clock.advance(minutes=svc.venue.billing.foosball_checkin_min + 1)
    svc.watchdog.tick()
    with svc.store.reader() as db:
        assert db.scalars(select(FoosballCheckin)).one().ended_at is not None
