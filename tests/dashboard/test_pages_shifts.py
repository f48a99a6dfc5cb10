"""Shifts on the pages and the API (a real hub, no MQTT): a bartender clocks in from the top bar,
counts the drawer at the shift change, clocks out; the manager's shift report agrees with the Z
report, a correction keeps the history, the hours per month come as CSV for Slovak Excel. Bad
input is a clear Slovak 4xx and nothing changes; staff cannot end another's shift or see the report."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from broker.storage.models import AuditEntry, DrawerCount, Shift
from broker.till.closeout import CloseDay, OpenDay
from tests.dashboard.conftest import CHEAP, PASSWORD, basic
from tests.support.till_days import FakeClock, day_hub, line, local, pay, walk_in
from tests.support.web import Browser, add_users, bound_app

DEC1 = date(2026, 12, 1)
sqlite_only = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(local(2026, 12, 1, 16, 0))


@pytest.fixture
def hall(db_url: str, clock: FakeClock) -> Iterator[Any]:
    with day_hub(db_url, clock) as (hub, _facade):
        add_users(hub, {"jana": "staff", "peter": "staff", "boss": "manager"}, PASSWORD, CHEAP)
        yield hub


def _browser(hub: Any, who: str) -> Browser:
    b = Browser(bound_app(hub))
    b.login(who, PASSWORD)
    return b


def _state(hub: Any) -> Any:
    with hub.store.reader() as db:
        return (
            [(s.id, s.staff, s.started_at, s.ended_at, s.replaced_at) for s in db.scalars(select(Shift).order_by(Shift.id))],
            db.scalar(select(func.count()).select_from(DrawerCount)),
            db.scalar(select(func.count()).select_from(AuditEntry)),
        )


def _text(r: Any) -> str:
    return str(r.text).replace("\u00a0", " ")


@sqlite_only
def test_a_bartenders_evening_and_the_managers_report_in_slovak(hall: Any, clock: FakeClock) -> None:
    jana, peter, boss = _browser(hall, "jana"), _browser(hall, "peter"), _browser(hall, "boss")
    hall.execute(OpenDay(float_cents=5000, actor="jana"))
    page = _text(jana.get("/"))
    assert 'id="clock-in"' in page and "Začať zmenu" in page
    assert jana.post("/shift/in").status_code == 303
    page = _text(jana.get("/"))
    assert 'id="clock-in"' not in page and "Na zmene od 16:00" in page
    before = _state(hall)
    r = jana.post("/shift/in")
    assert r.status_code == 409 and "jana už je na zmene (od 1. 12. 2026 16:00); najprv zmenu ukončite." in _text(r)
    for garbage in ("abc", "-5", "1,234", "99999999"):
        r = jana.post("/shift/drawer", {"counted_eur": garbage})
        assert r.status_code == 400 and "Zadajte napočítanú hotovosť" in _text(r) and f'value="{garbage}"' in r.text
    assert _state(hall) == before
    clock.set(local(2026, 12, 1, 18))
    pay(hall, walk_in(hall), 1000, lines=[line("Pivo", 1000)], staff="jana")
    pay(hall, walk_in(hall), 450, method="card", lines=[line("Pivo", 450)], staff="jana")
    clock.set(local(2026, 12, 1, 20))
    r = jana.post("/shift/drawer", {"counted_eur": "59,50", "note": "chýba"})
    assert r.status_code == 303
    flash = _text(jana.get("/shift"))
    assert "Pokladnica spočítaná: 59,50 €, očakávané 60,00 €, rozdiel -0,50 €. Ďalšia zmena začína od 59,50 €." in flash
    assert jana.post("/shift/out").status_code == 303
    assert "odpracovali ste 4:00 h" in _text(jana.get("/shift"))
    # Peter takes over; staff see neither the report nor the hours, and cannot end his shift.
    peter.post("/shift/in")
    clock.set(local(2026, 12, 1, 22))
    pay(hall, walk_in(hall), 700, lines=[line("Pivo", 700)], staff="peter")
    before = _state(hall)
    for path in ("/shifts", "/shifts/1", "/shifts/hours.csv?month=2026-12"):
        assert jana.get(path).status_code == 403, path
    assert jana.post("/shifts/out", {"staff": "peter"}).status_code == 403
    assert jana.post("/shifts/1/correct", {"start": "2026-12-01T15:00", "end": "2026-12-01T20:00", "reason": "x"}).status_code == 403
    assert _state(hall) == before
    # The manager's report: the rows add up to the Z report's takings, the drawer starts from the count.
    page = _text(boss.get("/shifts"))
    assert "Prehľad zmien" in page and "Spolu (uzávierka dňa: 21,50 €)" in page and 'id="shift-total">21,50 €' in page
    assert "Hotovosť" in page and "Karta" in page and "prebieha" in page
    assert "59,50 €" in page and "-0,50 €" in page
    # A correction: bad input in Slovak, nothing changes; then a new version, the old in the history.
    jana_shift = _state(hall)[0][0][0]  # her first (and only) shift
    before = _state(hall)
    r = boss.post(f"/shifts/{jana_shift}/correct", {"start": "zajtra", "end": "", "reason": "x"})
    assert r.status_code == 400 and "zajtra" in _text(r)
    r = boss.post(f"/shifts/{jana_shift}/correct", {"start": "2026-12-01T15:30", "end": "2026-12-01T20:00", "reason": "  "})
    assert r.status_code == 409 and "Uveďte dôvod opravy zmeny" in _text(r)
    r = boss.post(f"/shifts/{jana_shift}/correct", {"start": "2026-12-01T21:00", "end": "2026-12-01T20:00", "reason": "x"})
    assert r.status_code == 409 and "Zmena musí skončiť až po svojom začiatku." in _text(r)
    assert boss.get("/shifts/999999").status_code == 404 and boss.get("/shifts/abc").status_code == 404
    assert _state(hall) == before
    r = boss.post(f"/shifts/{jana_shift}/correct", {"start": "2026-12-01T15:30", "end": "2026-12-01T20:00", "reason": "prišla skôr"})
    assert r.status_code == 303
    history = _text(boss.get(r.headers["location"]))
    assert history.count('class="shift-version') == 2 and "prišla skôr" in history and "nahradené" in history
    # A shift nobody clocked: recorded by the manager (garbage and an overlap refused in Slovak, nothing changed).
    before = _state(hall)
    r = boss.post("/shifts/record", {"staff": "peter", "start": "včera", "end": "2026-12-01T12:00", "reason": "x"})
    assert r.status_code == 400 and "včera" in _text(r) and 'value="včera"' in r.text
    r = boss.post("/shifts/record", {"staff": "jana", "start": "2026-12-01T19:00", "end": "2026-12-01T21:00", "reason": "x"})
    assert r.status_code == 409 and "jana má v tom čase inú zmenu" in _text(r)
    r = boss.post("/shifts/record", {"staff": "nikto", "start": "2026-12-01T10:00", "end": "2026-12-01T12:00", "reason": "x"})
    assert r.status_code == 409 and "Účet obsluhy nikto neexistuje." in _text(r)
    assert _state(hall) == before
    r = boss.post("/shifts/record", {"staff": "peter", "start": "2026-12-01T10:00", "end": "2026-12-01T12:00", "reason": "inventúra"})
    assert r.status_code == 303 and "inventúra" in _text(boss.get(r.headers["location"]))
    # The manager ends Peter's shift he forgot; the close-out agrees with the drawer's segments.
    clock.set(local(2026, 12, 2, 1))
    assert boss.post("/shifts/out", {"staff": "peter"}).status_code == 303
    hall.execute(CloseDay(day=DEC1, counted_cents=6650, open_tabs_ok=True, actor="boss"))
    page = _text(boss.get("/shifts?day=2026-12-01"))
    assert "Rozdiel pri uzávierke dňa: -0,50 €" in page
    z = _text(boss.get("/day/2026-12-01/report"))
    assert 'data-staff="jana"' in z and "· Karta" in z and "4,50 €" in z
    z_csv = boss.get("/days/2026-12-01.csv").content.decode("utf-8-sig")
    assert "Podľa obsluhy;jana · Karta;;;;4,50" in z_csv and "Podľa obsluhy;peter · Hotovosť;;;;7,00" in z_csv
    # The payroll's CSV: Slovak Excel's (BOM, ';', decimal comma).
    r = boss.get("/shifts/hours.csv?month=2026-12")
    assert r.status_code == 200 and r.content.startswith(b"\xef\xbb\xbf")
    rows = r.content.decode("utf-8-sig").splitlines()
    assert rows[0] == "Mesiac;Obsluha;Zmeny;Hodiny;Minúty"
    assert "2026-12;jana;1;4,50;270" in rows and "2026-12;peter;2;7,00;420" in rows
    assert boss.get("/shifts/hours.csv?month=2026-13").status_code == 400


def test_the_api_clock_in_once_staff_end_only_their_own_slovak_refusals(hall: Any, clock: FakeClock) -> None:
    with TestClient(bound_app(hall)) as api:
        jana, boss = basic("jana", PASSWORD), basic("boss", PASSWORD)
        r = api.post("/api/shifts/clock-in", headers=jana)
        assert r.status_code == 201 and r.json()["staff"] == "jana" and r.json()["running"] is True
        before = _state(hall)
        r = api.post("/api/shifts/clock-in", headers={**jana, "Accept-Language": "sk"})
        assert r.status_code == 409 and r.json()["detail"].startswith("jana už je na zmene")
        api.post("/api/shifts/clock-in", headers=boss)
        assert api.post("/api/shifts/clock-out", headers=jana, json={"staff": "boss"}).status_code == 403
        assert api.post("/api/shifts/drawer", headers=jana, json={"counted_cents": -1}).status_code == 422
        assert api.post("/api/shifts/drawer", headers=jana, json={"counted_cents": "5"}).status_code == 422
        assert api.get("/api/shifts/days/2026-12-01", headers=jana).status_code == 403
        r = api.post("/api/shifts/drawer", headers={**jana, "Accept-Language": "sk"}, json={"counted_cents": 100})
        assert r.status_code == 409 and "Deň ešte nie je otvorený" in r.json()["detail"]
        assert _state(hall)[0] == [*before[0], _state(hall)[0][-1]]  # only the manager's own clock-in
        clock.set(local(2026, 12, 1, 23))
        r = api.post("/api/shifts/clock-out", headers=boss, json={"staff": "jana"})
        assert r.status_code == 200 and r.json()["minutes"] == 7 * 60 and r.json()["ended_by"] == "boss"
        shift = r.json()["id"]
        r = api.post(
            f"/api/shifts/{shift}/correct",
            headers=boss,
            json={"started_at": "2026-12-01T16:00", "ended_at": "2026-12-01T15:00", "reason": "x"},
        )
        assert r.status_code == 409
        r = api.post(
            f"/api/shifts/{shift}/correct",
            headers=boss,
            json={"started_at": "2026-12-01T15:45", "ended_at": "2026-12-01T23:00", "reason": "skôr"},
        )
        assert r.status_code == 200 and [v["minutes"] for v in r.json()] == [435, 420]
        assert api.get("/api/shifts/hours?from=2026-12-01&to=2026-12-31", headers=boss).json() == [
            {"staff": "boss", "month": "2026-12", "shifts": 1, "minutes": 420},  # still running: up to now
            {"staff": "jana", "month": "2026-12", "shifts": 1, "minutes": 435},
        ]
        hall.execute(OpenDay(float_cents=2000, actor="jana"))
        r = api.post("/api/shifts/drawer", headers=jana, json={"counted_cents": 1990, "note": "mince"})
        assert r.status_code == 201 and (r.json()["expected_cents"], r.json()["difference_cents"]) == (2000, -10)
        assert [s["difference_cents"] for s in api.get("/api/shifts/days/2026-12-01", headers=boss).json()["drawer"]] == [-10, None]
