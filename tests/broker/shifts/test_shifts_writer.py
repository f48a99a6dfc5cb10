"""Shifts on the hub's writer, on SQLite and PostgreSQL: clock in once, clock out, a correction as a
new row, the drawer counted at a shift change agreeing with the close-out, a race of two clock-ins."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from sqlalchemy import func, select

from broker.hall.facade import HubFacade, NotFound, ServiceError
from broker.shifts.shifts import ClockIn, ClockOut, CorrectShift, CountDrawer, RecordShift
from broker.storage.models import AuditEntry, DrawerCount, Shift
from broker.till.closeout import CloseDay, OpenDay
from tests.support.till_days import FakeClock, add_item, day_hub, line, local, pay, void_item, walk_in

DEC1 = date(2026, 12, 1)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(local(2026, 12, 1, 15, 30))


@pytest.fixture
def hall(db_url: str, clock: FakeClock) -> Iterator[tuple[Any, HubFacade]]:
    with day_hub(db_url, clock) as pair:
        yield pair


def _rows(hub: Any) -> tuple[Any, ...]:
    with hub.store.reader() as db:
        return (
            [(s.id, s.staff, s.started_at, s.ended_at, s.corrects_id, s.replaced_at) for s in db.scalars(select(Shift).order_by(Shift.id))],
            db.scalar(select(func.count()).select_from(DrawerCount)),
            db.scalar(select(func.count()).select_from(AuditEntry)),
        )


def test_clock_in_once_out_over_midnight_and_correct_with_history(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    hub, facade = hall
    first = facade.execute(ClockIn(staff="jana", actor="jana"))
    before = _rows(hub)
    with pytest.raises(ServiceError, match="already clocked in"):
        facade.execute(ClockIn(staff="jana", actor="jana"))
    with pytest.raises(ServiceError, match="not clocked in"):
        facade.execute(ClockOut(staff="peter", actor="peter"))
    assert _rows(hub) == before  # refused: nothing changed, nothing audited
    assert [s.staff for s in facade.reads.shifts.on_shift()] == ["jana"]
    clock.set(local(2026, 12, 2, 0, 45))
    assert facade.execute(ClockOut(staff="jana", actor="jana")) == first
    assert facade.reads.shifts.on_shift() == []
    (shift,) = facade.reads.shifts.shifts(DEC1, DEC1)
    assert (shift.day, shift.minutes, shift.running) == (DEC1, 9 * 60 + 15, False)
    # She came at 15:00, not 15:30: the manager corrects it; the old version stays, replaced.
    clock.set(local(2026, 12, 2, 12))
    before = _rows(hub)
    for start, end, reason in (
        (local(2026, 12, 2, 1), local(2026, 12, 2, 0, 45), "x"),  # ends before
        (local(2026, 12, 1, 15), local(2026, 12, 2, 0, 45), "  "),  # no reason
        (local(2026, 12, 1, 15), local(2026, 12, 3, 0, 45), "x"),  # future
    ):
        with pytest.raises(ServiceError):
            facade.execute(CorrectShift(shift=first, started_at=start, ended_at=end, reason=reason, actor="boss"))
    with pytest.raises(NotFound):
        facade.execute(CorrectShift(shift=999, started_at=local(2026, 12, 1, 15), ended_at=None, reason="x", actor="boss"))
    assert _rows(hub) == before
    new = facade.execute(
        CorrectShift(shift=first, started_at=local(2026, 12, 1, 15), ended_at=local(2026, 12, 2, 0, 45), reason="prišla skôr", actor="boss")
    )
    versions = facade.reads.shifts.versions(first)
    assert [(v.id, v.minutes, v.corrects_id, v.reason, v.replaced_at is not None) for v in versions] == [
        (new, 9 * 60 + 45, first, "prišla skôr", False),
        (first, 9 * 60 + 15, None, None, True),
    ]
    assert [s.id for s in facade.reads.shifts.shifts(DEC1, DEC1)] == [new]  # only the latest counts
    with pytest.raises(ServiceError, match="corrected meanwhile"):
        facade.execute(CorrectShift(shift=first, started_at=local(2026, 12, 1, 16), ended_at=None, reason="x", actor="boss"))
    # A second shift of hers may not overlap the first.
    clock.set(local(2026, 12, 2, 16))
    second = facade.execute(ClockIn(staff="jana", actor="jana"))
    with pytest.raises(ServiceError, match="another shift"):
        facade.execute(CorrectShift(shift=second, started_at=local(2026, 12, 2, 0), ended_at=None, reason="x", actor="boss"))
    # A running shift's start may be corrected: it keeps running (still her one open shift).
    facade.execute(CorrectShift(shift=second, started_at=local(2026, 12, 2, 15, 50), ended_at=None, reason="skôr", actor="boss"))
    assert [(s.staff, s.started_at) for s in facade.reads.shifts.on_shift()] == [("jana", local(2026, 12, 2, 15, 50))]
    with pytest.raises(ServiceError, match="already clocked in"):
        facade.execute(ClockIn(staff="jana", actor="jana"))


def test_two_clock_ins_at_once_make_exactly_one_shift(hall: tuple[Any, HubFacade]) -> None:
    hub, facade = hall
    barrier = threading.Barrier(2)
    results: list[object] = []

    def tap() -> None:
        barrier.wait()
        try:
            results.append(facade.execute(ClockIn(staff="jana", actor="jana")))
        except ServiceError as e:
            results.append(e)

    threads = [threading.Thread(target=tap) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(type(r).__name__ for r in results) == ["ServiceError", "int"]
    assert len(_rows(hub)[0]) == 1


def test_the_open_shift_index_holds_without_the_writer_check(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    """A second process (a standby) cannot give a person two open shifts: the database refuses."""
    hub, facade = hall
    facade.execute(ClockIn(staff="jana", actor="jana"))

    def second(db: Any) -> None:
        db.add(Shift(staff="jana", business_day=DEC1, started_at=clock(), made_at=clock(), made_by="x"))
        db.flush()

    from sqlalchemy.exc import IntegrityError

    from tests.support.hub import on_writer

    with pytest.raises(IntegrityError):
        on_writer(hub, second)


def test_drawer_counted_at_the_shift_change_agrees_with_the_close_out_and_the_z_report(
    hall: tuple[Any, HubFacade], clock: FakeClock
) -> None:
    hub, facade = hall
    with pytest.raises(ServiceError, match="not open yet"):
        facade.execute(CountDrawer(counted_cents=0, actor="jana"))
    facade.execute(OpenDay(float_cents=5000, actor="jana"))
    facade.execute(ClockIn(staff="jana", actor="jana"))
    clock.set(local(2026, 12, 1, 17))
    pay(hub, walk_in(hub), 1000, lines=[line("Pivo", 1000)], staff="jana")
    pay(hub, walk_in(hub), 600, method="card", lines=[line("Pivo", 600)], staff="jana")
    tab = walk_in(hub)
    void_item(hub, add_item(hub, tab, "Kofola", 180), "omyl", by="jana")
    clock.set(local(2026, 12, 1, 20))
    before = _rows(hub)
    for bad in (-1, 10_000_001, True):
        with pytest.raises(ServiceError, match="counted cash"):
            facade.execute(CountDrawer(counted_cents=bad, actor="jana"))
    assert _rows(hub) == before
    facade.execute(CountDrawer(counted_cents=5950, note="chýba 50 centov", actor="jana"))
    facade.execute(ClockOut(staff="jana", actor="jana"))
    facade.execute(ClockIn(staff="peter", actor="peter"))
    clock.set(local(2026, 12, 1, 22))
    pay(hub, walk_in(hub), 700, lines=[line("Pivo", 700)], staff="peter")
    day = facade.reads.shifts.day(DEC1)
    assert [(s.start_cents, s.expected_cents, s.counted_cents, s.difference_cents) for s in day.drawer] == [
        (5000, 6000, 5950, -50),
        (5950, 6650, None, None),  # peter starts from the count
    ]
    clock.set(local(2026, 12, 2, 1))
    z = facade.execute(CloseDay(day=DEC1, counted_cents=6660, open_tabs_ok=True, actor="peter"))
    day = facade.reads.shifts.day(DEC1)
    assert [(s.counted_cents, s.difference_cents, s.closing) for s in day.drawer] == [(5950, -50, False), (6660, 10, True)]
    assert sum(s.difference_cents or 0 for s in day.drawer) == z.variance_cents == -40
    assert [(r.staff, {m.method: m.cents for m in r.by_method}, r.voids_cents, r.minutes) for r in day.rows] == [
        ("jana", {"cash": 1000, "card": 600}, 180, 4 * 60 + 30),
        ("peter", {"cash": 700}, 0, 5 * 60),
    ]
    assert day.total_cents == day.z_total_cents == z.total_cents == 2300
    assert day.voids_cents == sum(v.amount_cents for v in z.voids)
    # The Z report's per-person section says the same.
    assert [(s.staff, {m.method: m.cents for m in s.by_method}, s.voids, s.voids_cents) for s in z.by_staff] == [
        ("jana", {"cash": 1000, "card": 600}, 1, 180),
        ("peter", {"cash": 700}, 0, 0),
    ]


def test_shifts_over_both_dst_nights_and_new_years_eve_count_real_hours_in_their_month(
    hall: tuple[Any, HubFacade], clock: FakeClock
) -> None:
    """Stored and read back (UTC on both databases): 20:00-06:00 is 9 h on the spring night, 11 h on
    the autumn one; the New Year's Eve shift is December's."""
    _hub, facade = hall
    for start, end in (
        (local(2026, 12, 31, 18), local(2027, 1, 1, 3)),
        (local(2027, 3, 27, 20), local(2027, 3, 28, 6)),
        (local(2027, 10, 30, 20), local(2027, 10, 31, 6)),
    ):
        clock.set(start)
        facade.execute(ClockIn(staff="jana", actor="jana"))
        clock.set(end)
        facade.execute(ClockOut(staff="jana", actor="jana"))
    hours = {
        (y, m): [(h.staff, h.shifts, h.minutes) for h in facade.reads.shifts.month_hours(y, m)]
        for y, m in ((2026, 12), (2027, 1), (2027, 3), (2027, 10))
    }
    assert hours == {(2026, 12): [("jana", 1, 9 * 60)], (2027, 1): [], (2027, 3): [("jana", 1, 9 * 60)], (2027, 10): [("jana", 1, 11 * 60)]}
    assert [s.day for s in facade.reads.shifts.shifts(date(2026, 12, 1), date(2027, 12, 31))] == [
        date(2027, 10, 30),
        date(2027, 3, 27),
        date(2026, 12, 31),
    ]


def test_a_manager_records_a_forgotten_shift_not_over_another_and_only_for_an_account(
    hall: tuple[Any, HubFacade], clock: FakeClock
) -> None:
    hub, facade = hall
    from broker.accounts.users import create_user, new_password
    from tests.support.hub import on_writer
    from tests.support.sqlite_template import CHEAP

    hashed = new_password("heslo-na-zmenu", CHEAP)
    on_writer(hub, lambda db: create_user(db, "jana", hashed, "staff", actor="test"))
    clock.set(local(2026, 12, 2, 12))
    facade.execute(ClockIn(staff="jana", actor="jana"))  # today's, running
    clock.set(local(2026, 12, 2, 14))
    before = _rows(hub)
    for staff, start, end, reason, says in (
        ("nikto", local(2026, 12, 1, 16), local(2026, 12, 1, 23), "zabudla", "no staff account"),
        ("jana", local(2026, 12, 2, 11), local(2026, 12, 2, 13), "zabudla", "another shift"),  # over the running one
        ("jana", local(2026, 12, 1, 16), local(2026, 12, 1, 23), " ", "Say why"),
    ):
        with pytest.raises(ServiceError, match=says):
            facade.execute(RecordShift(staff=staff, started_at=start, ended_at=end, reason=reason, actor="boss"))
    assert _rows(hub) == before
    new = facade.execute(
        RecordShift(staff="jana", started_at=local(2026, 12, 1, 16), ended_at=local(2026, 12, 1, 23), reason="zabudla", actor="boss")
    )
    (v,) = facade.reads.shifts.versions(new)
    assert (v.day, v.minutes, v.made_by, v.reason, v.running) == (DEC1, 7 * 60, "boss", "zabudla", False)
    assert [(h.staff, h.shifts) for h in facade.reads.shifts.month_hours(2026, 12)] == [("jana", 2)]
