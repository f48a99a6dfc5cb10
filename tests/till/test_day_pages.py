"""The day's pages and API over a real hub (no MQTT needed): open with a float, close with the counted
cash, refusals in place with what was typed kept, a double tap, the exports Slovak Excel opens."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from fastapi.testclient import TestClient
from openpyxl import load_workbook
from sqlalchemy import func, select

from broker.accounts.users import issue_token
from broker.storage.models import AuditEntry, BusinessDay
from broker.till.closeout import CloseDay, OpenDay
from tests.dashboard.conftest import CHEAP, PASSWORD
from tests.support.hub import on_writer
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
        add_users(hub, {"jana": "staff", "boss": "manager"}, PASSWORD, CHEAP)
        yield hub


def _browser(hub: Any, who: str) -> Browser:
    b = Browser(bound_app(hub))
    b.login(who, PASSWORD)
    return b


def _state(hub: Any) -> Any:
    with hub.store.reader() as db:
        return (
            [(d.day, d.float_cents, d.closed_at, d.counted_cents) for d in db.scalars(select(BusinessDay))],
            db.scalar(select(func.count()).select_from(AuditEntry)),
        )


@sqlite_only
def test_open_close_and_print_on_the_pages_in_slovak(hall: Any, clock: FakeClock) -> None:
    jana = _browser(hall, "jana")
    page = jana.get("/day").text
    assert "Uzávierka" in page and "Otvoriť deň" in page
    before = _state(hall)
    r = jana.post("/day/open", {"float_eur": "-5"})
    assert r.status_code == 400 and "Zadajte počiatočný stav pokladne v eurách" in r.text and 'value="-5"' in r.text
    assert _state(hall) == before
    r = jana.post("/day/open", {"float_eur": "50,00"})
    assert r.status_code == 303
    page = jana.get("/day").text.replace("\u00a0", " ")
    assert "Deň 1. 12. 2026 je otvorený" in page and "Počiatočný stav pokladne" in page
    pay(hall, walk_in(hall), 430, lines=[line("Pivo", 430, vat=19)], tendered=500)
    pay(hall, walk_in(hall), 600, method="card", lines=[line("Čas", 600, category="table_time")])
    figures = jana.get("/day/figures").text.replace("\u00a0", " ")  # what the page re-fetches as money comes in
    assert 'id="z-blind"' in figures and "<html" not in figures  # a blind count: staff count before they see
    assert "z-expected" not in figures and "z-total" not in figures and "10,30" not in figures and "4,30" not in figures
    assert "z-expected" not in jana.get("/day").text and "z-expected" not in jana.get("/day/2026-12-01/report").text
    boss = _browser(hall, "boss").get("/day/figures").text.replace("\u00a0", " ")  # the manager sees both, any time
    assert 'id="z-expected">54,30 €' in boss and 'id="z-total">10,30 €' in boss and "Tržba (s DPH, zaplatené)" in boss
    clock.set(local(2026, 12, 2, 1, 30))
    for garbage in ("abc", "1,234", "-3", "9999999999"):
        r = jana.post("/day/close", {"day": "2026-12-01", "counted_eur": garbage})
        assert r.status_code == 400 and "Zadajte napočítanú hotovosť" in r.text and f'value="{garbage}"' in r.text
    assert _state(hall) == (before[0] + [(DEC1, 5000, None, None)], before[1] + 1)  # opened (audited), not closed
    r = jana.post("/day/close", {"day": "2026-12-01", "counted_eur": "54,00"})
    assert r.status_code == 303 and r.headers["location"] == "/day/2026-12-01/report"
    z = jana.get(r.headers["location"]).text.replace("\u00a0", " ")  # closed with the count: now both show
    assert "Denná uzávierka (Z-report)" in z and "Rozdiel" in z and 'id="z-variance">-0,30 €' in z and 'id="z-expected">54,30 €' in z
    # The double tap: the day is closed, its report is shown again, nothing changes.
    after = _state(hall)
    r = jana.post("/day/close", {"day": "2026-12-01", "counted_eur": "54,00"})
    assert r.status_code == 303 and r.headers["location"] == "/day/2026-12-01/report" and _state(hall) == after
    # Staff do not get the manager's list of days, nor its exports.
    assert jana.get("/days").status_code == 403 and jana.get("/days/2026-12-01.csv").status_code == 403


@sqlite_only
def test_exports_open_in_slovak_excel(hall: Any, clock: FakeClock) -> None:
    hall.execute(OpenDay(float_cents=1000, actor="jana"))
    pay(hall, walk_in(hall, "=HYPERLINK(1)"), 250, lines=[line("Kofola", 250, vat=19)])
    clock.set(local(2026, 12, 2, 1, 0))
    hall.execute(CloseDay(day=DEC1, counted_cents=1250, actor="jana"))
    boss = _browser(hall, "boss")
    assert "1. 12. 2026" in boss.get("/days").text.replace("\u00a0", " ")
    csv = boss.get("/days/2026-12-01.csv")
    assert csv.status_code == 200 and csv.content.startswith(b"\xef\xbb\xbf")
    text = csv.content.decode("utf-8-sig")
    assert ";" in text and "Pokladničná hotovosť;Hotovosť podľa systému;;;;12,50" in text and "\r\n" in text
    xlsx = boss.get("/days/2026-12-01.xlsx")
    sheet = load_workbook(io.BytesIO(xlsx.content)).active
    assert sheet.title == "Z-report" and any(row[0] == "Podľa sadzby DPH" for row in sheet.iter_rows(values_only=True))


def test_the_api_opens_and_closes_once(hall: Any, clock: FakeClock) -> None:
    add_users(hall, {"api": "staff", "api-boss": "manager"}, PASSWORD, CHEAP)
    token = on_writer(hall, lambda db: issue_token(db, "api", "tests", actor="test"))
    boss = {"Authorization": f"Bearer {on_writer(hall, lambda db: issue_token(db, 'api-boss', 'tests', actor='test'))}"}
    auth = {"Authorization": f"Bearer {token}"}
    with TestClient(bound_app(hall, pages=False)) as api:
        assert api.post("/api/days/current/open", json={"float_cents": -1}, headers=auth).status_code == 422
        assert api.post("/api/days/current/open", json={"float_cents": "50"}, headers=auth).status_code == 422
        now = api.post("/api/days/current/open", json={"float_cents": 5000}, headers=auth).json()
        assert now["day"] == "2026-12-01" and now["opened"] and now["report"]["float_cents"] == 5000
        assert api.post("/api/days/current/open", json={"float_cents": 5000}, headers=auth).status_code == 409
        pay(hall, walk_in(hall), 100, lines=[line("Pivo", 100, vat=19)])
        # A blind count: staff get neither the expected cash nor the takings of the open day; the manager both.
        blind = api.get("/api/days/current", headers=auth).json()["report"]
        assert blind["blind"] and blind["expected_cash_cents"] is None and blind["total_cents"] is None and blind["by_method"] is None
        assert api.get("/api/days/2026-12-01", headers=auth).json()["cash_cents"] is None
        seen = api.get("/api/days/current", headers=boss).json()["report"]
        assert not seen["blind"] and (seen["expected_cash_cents"], seen["total_cents"]) == (5100, 100)
        z = api.post("/api/days/2026-12-01/close", json={"counted_cents": 5200}, headers=auth).json()
        assert z["variance_cents"] == 100 and z["closed_by"] == "api"
        again = api.post("/api/days/2026-12-01/close", json={"counted_cents": 5200}, headers=auth)
        assert again.status_code == 409 and "already closed" in again.json()["detail"]
        assert api.get("/api/days/2026-12-01", headers=auth).json() == z  # the last closed day: staff may read it now
        assert api.get("/api/days", headers=auth).status_code == 403  # the list of days is the manager's


@sqlite_only
def test_the_z_reports_categories_say_their_amount_with_vat_as_gross_cents_and_net_cents_is_deprecated(hall: Any, clock: FakeClock) -> None:
    """Issue 29's independent check: the Z report's `by_category` rows carry `net_cents`, whose
    amounts include VAT (they sum to the takings; the VAT base is by rate). The right name,
    `gross_cents`, is there now; `net_cents` stays, the same amount, marked deprecated in the API's
    document (README, "The HTTP API")."""
    hall.execute(OpenDay(float_cents=0, actor="jana"))
    pay(hall, walk_in(hall), 1190, lines=[line("Pivo", 1190, vat=19)])  # 10,00 € + 1,90 € VAT
    with TestClient(bound_app(hall, pages=False)) as api:
        boss = {"Authorization": f"Bearer {on_writer(hall, lambda db: issue_token(db, 'boss', 'tests', actor='test'))}"}
        z = api.get("/api/days/current", headers=boss).json()["report"]
        assert z["by_category"] == [{"category": "drinks", "net_cents": 1190, "gross_cents": 1190}]
        assert z["by_vat"][0]["net_cents"] == 1000 and z["total_cents"] == sum(c["gross_cents"] for c in z["by_category"])
        schema = api.get("/openapi.json").json()["components"]["schemas"]["CategoryTotal"]
    assert schema["properties"]["net_cents"]["deprecated"] is True and "gross_cents" in schema["required"]
    assert "VAT included" in schema["properties"]["gross_cents"]["description"]
