"""The hall's outbox (broker.outbox.records): every committed money and game record is written with it,
numbered gap-free per hall; a rolled-back one never is; the centre's acknowledgement deletes them;
the bound alerts at 80 % and 100 % and never refuses money. On SQLite and PostgreSQL (db_url)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import func, select, update

from broker.core.alert_book import AckAlert
from broker.domain.floor import alert_kinds
from broker.domain.till.zreport import payment_from_json
from broker.floor.games import StartGame, StopGame
from broker.outbox.records import CentralSettings, ExportBlind, OutboxDelivered
from broker.storage.models import Alert, OutboxCounter, OutboxRecord, Payment, Tab
from broker.till.closeout import CloseDay
from broker.till.payments import PayTab, ReversePayment
from sim.mosquitto import free_port
from tests.support.hub import on_writer, started_hub
from tests.support.sqlite_template import migrated_sqlite
from tests.support.till_days import FakeClock, local

if TYPE_CHECKING:
    from pathlib import Path


def _nowhere(**kw: Any) -> CentralSettings:
    # A centre nobody listens at: the sender keeps trying, the records stay.
    return CentralSettings(url=f"http://127.0.0.1:{free_port()}", token="t", **kw)


def _outbox(hub: Any) -> list[OutboxRecord]:
    with hub.store.reader() as db:
        rows = db.scalars(select(OutboxRecord).order_by(OutboxRecord.seq)).all()
        db.expunge_all()
        return list(rows)


def _tab_of(hub: Any, game: int) -> int:
    with hub.store.reader() as db:
        result: int = db.scalar(select(Tab.id).where(Tab.session_id == game))
        return result


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(local(2026, 12, 4, 18))


def test_an_evening_writes_each_record_once_in_order_and_the_ack_deletes_them(db_url: str, clock: FakeClock) -> None:
    with started_hub(db_url, clock=clock, central=_nowhere(), watchdog=False) as hub:
        game = hub.execute(StartGame(table="pool-01", actor="jana"))
        clock.advance(minutes=90)
        hub.execute(StopGame(game=game, actor="jana"))
        tab = _tab_of(hub, game)
        paid = hub.execute(PayTab(tab=tab, method="cash", amount_cents=900, tendered_cents=1000, actor="jana"))
        back = hub.execute(ReversePayment(payment=paid.payment_id, reason="zlý stôl", actor="boss"))
        paid_again = hub.execute(PayTab(tab=tab, method="card", amount_cents=900, actor="jana"))
        clock.advance(minutes=30)
        report = hub.execute(CloseDay(day=clock().date(), counted_cents=0, actor="boss"))

        rows = _outbox(hub)
        assert [r.seq for r in rows] == list(range(1, len(rows) + 1))  # gap-free, from 1
        assert {r.hall for r in rows} == {"lavos"}
        assert [(r.kind, r.ref) for r in rows] == [
            ("game", f"game:{game}"),
            ("payment", f"payment:{paid.payment_id}"),
            ("payment", f"payment:{back.payment_id}"),
            ("payment", f"payment:{paid_again.payment_id}"),
            ("zreport", f"day:{report.day.isoformat()}"),
        ]
        payments = [payment_from_json(r.record) for r in rows if r.kind == "payment"]
        assert sum(p.amount_cents for p in payments) == report.total_cents == 900
        assert payments[1].reverses_id == paid.payment_id and rows[1].record["business_day"] == report.day.isoformat()
        assert rows[0].record["table_name"] == "Pool 1" and "member" not in str(rows[0].record)
        assert rows[-1].record["report"]["total_cents"] == 900

        assert hub.execute(OutboxDelivered(upto=3, actor="system")) == 3
        assert [r.seq for r in _outbox(hub)] == [4, 5]
        with hub.store.reader() as db:
            counter = db.get(OutboxCounter, "lavos")
            assert counter is not None
            assert counter.last_seq == 5 and counter.pending_bytes == sum(r.size for r in rows[3:])
        assert hub.execute(OutboxDelivered(upto=3, actor="system")) == 0  # the ack of a copy: nothing left to delete


def test_a_rolled_back_record_leaves_no_record_and_no_gap(db_url: str, clock: FakeClock) -> None:
    with started_hub(db_url, clock=clock, central=_nowhere(), watchdog=False) as hub:
        game = hub.execute(StartGame(table="pool-02", actor="jana"))
        clock.advance(minutes=60)
        hub.execute(StopGame(game=game, actor="jana"))

        def pay_then_fail(db: Any) -> None:
            db.add(
                Payment(tab_id=_tab_of(hub, game), method="cash", amount_cents=100, staff="jana", at=clock(), business_day=clock().date())
            )
            db.flush()
            raise RuntimeError("the till's transaction fails after the row")

        with pytest.raises(RuntimeError):
            on_writer(hub, pay_then_fail)
        hub.execute(PayTab(tab=_tab_of(hub, game), method="card", amount_cents=600, actor="jana"))
        assert [(r.seq, r.kind) for r in _outbox(hub)] == [(1, "game"), (2, "payment")]


def test_alerts_travel_when_opened_acked_and_closed_not_when_touched(db_url: str, clock: FakeClock) -> None:
    with started_hub(db_url, clock=clock, central=_nowhere(), watchdog=False) as hub:
        spec = alert_kinds.node_offline("pool-03")
        on_writer(hub, lambda db: hub._alerts.raise_alert(db, spec))
        clock.advance(seconds=5)
        on_writer(hub, lambda db: hub._alerts.raise_alert(db, spec))  # touched: count 2, not a record
        with hub.store.reader() as db:
            alert_id = db.scalar(select(Alert.id))
        assert alert_id is not None
        hub.execute(AckAlert(alert_id=alert_id, close=True, actor="jana"))
        rows = _outbox(hub)
        assert [r.kind for r in rows] == ["alert", "alert"]
        assert rows[0].record["closed_at"] is None and rows[1].record["closed_at"] is not None
        assert rows[1].record["message"].startswith("Pool 3")


def test_a_statement_that_hides_what_it_changed_is_refused(db_url: str, clock: FakeClock) -> None:
    with started_hub(db_url, clock=clock, central=_nowhere(), watchdog=False) as hub, pytest.raises(ExportBlind):
        on_writer(hub, lambda db: db.execute(update(Alert).values(severity="info")))


def test_the_bound_alerts_at_80_and_100_percent_and_the_money_is_still_taken(db_url: str, clock: FakeClock) -> None:
    with started_hub(db_url, clock=clock, central=_nowhere(soft_limit_bytes=10_000), watchdog=False) as hub:
        seen = []
        for _ in range(20):
            game = hub.execute(StartGame(table="pool-04", actor="jana"))
            clock.advance(minutes=10)
            hub.execute(StopGame(game=game, actor="jana"))
            hub.execute(PayTab(tab=_tab_of(hub, game), method="cash", amount_cents=100, tendered_cents=100, actor="jana"))
            with hub.store.reader() as db:
                a = db.scalar(select(Alert).where(Alert.kind == "central_backlog"))
                seen.append(a.severity if a else None)
        assert seen[0] is None and "warning" in seen and seen[-1] == "critical"  # past the bound: still paid
        with hub.store.reader() as db:
            assert (db.scalar(select(OutboxCounter.pending_bytes)) or 0) > 10_000
        assert [r.kind for r in _outbox(hub)].count("payment") == 20
        assert "alert" in [r.kind for r in _outbox(hub)]  # the centre hears of it too, once the link is back
        last = _outbox(hub)[-1].seq
        hub.execute(OutboxDelivered(upto=last, actor="system"))
        with hub.store.reader() as db:
            assert db.scalar(select(Alert.closed_at).where(Alert.kind == "central_backlog")) is not None


def test_without_a_centre_nothing_is_written(db_url: str, clock: FakeClock) -> None:
    with started_hub(db_url, clock=clock, watchdog=False) as hub:
        game = hub.execute(StartGame(table="pool-01", actor="jana"))
        hub.execute(StopGame(game=game, actor="jana"))
        assert _outbox(hub) == []


def test_the_bound_alerts_again_each_time_the_backlog_returns(tmp_path: Path, clock: FakeClock) -> None:
    """A second and a third outage are alerted like the first: the alert closes when the records are
    delivered and a new one opens when they pile up again, also after staff closed one by hand.
    (SQLite only: the alert's rules reach the database as the tests above show on both.)"""
    db = migrated_sqlite(tmp_path / "hall.db")
    with started_hub(db, clock=clock, central=_nowhere(soft_limit_bytes=3_000), watchdog=False) as hub:

        def pile_up_until(severity: str) -> Alert:
            for _ in range(40):
                game = hub.execute(StartGame(table="pool-05", actor="jana"))
                clock.advance(minutes=10)
                hub.execute(StopGame(game=game, actor="jana"))
                with hub.store.reader() as reader:
                    a = reader.scalar(select(Alert).where(Alert.kind == "central_backlog", Alert.closed_at.is_(None)))
                    if a is not None and a.severity == severity:
                        reader.expunge(a)
                        return a
            raise AssertionError(f"no open {severity} backlog alert")

        opened = []
        for _ in range(3):  # three outages, each over when the centre takes everything
            opened.append(pile_up_until("warning").id)
            hub.execute(OutboxDelivered(upto=_outbox(hub)[-1].seq, actor="system"))
        assert len(set(opened)) == 3  # a new alert each time, not the first one touched
        # Staff close it by hand while the link is still down: past the bound it opens again, critical.
        first = pile_up_until("warning")
        hub.execute(AckAlert(alert_id=first.id, close=True, actor="jana"))
        assert pile_up_until("critical").id != first.id
        with hub.store.reader() as reader:
            assert reader.scalar(select(func.count()).select_from(Alert).where(Alert.kind == "central_backlog")) == 5
