"""Members' money over the JSON API, on SQLite and PostgreSQL: 50 uses of the last euro sent at once
(exactly one wins), bad input refused in Slovak with nothing changed, and who may do what."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from broker.hall.hub import Hub
from broker.storage.models import Payment, Tab, TabItem, WalletEntry
from tests.dashboard.conftest import Api, FakeClock, add_users, bearer, sqlite_only
from tests.support.hub import on_writer, started_hub
from tests.support.web import bound_app

SK = {"Accept-Language": "sk"}


@pytest.fixture
def api(db_url: str) -> Iterator[Api]:
    clock = FakeClock()
    with started_hub(db_url, clock=clock, watchdog=False) as hub:
        staff, manager = add_users(hub)
        with TestClient(bound_app(hub)) as client:  # the pages mounted: refusals in Slovak
            yield Api(client, hub, clock, bearer(staff), bearer(manager))


def _member(api: Api, name: str = "Kováč Ján") -> int:
    member: int = api.ok("POST", "/api/members", 201, as_manager=True, json={"name": name})["id"]
    return member


def _bar_tabs(hub: Hub, n: int, cents: int = 100) -> list[int]:
    """`n` walk-in tabs owing `cents` each (a drink), made on the writer in one go."""

    def make(db: Any) -> list[int]:
        from broker.till.business_days import open_day

        ids = []
        for k in range(n):
            tab = Tab(label=f"Bar {k}", opened_by="jana", business_day=open_day(db, hub.venue, hub.clock()))
            db.add(tab)
            db.flush()
            db.add(
                TabItem(
                    tab_id=tab.id, name="Kofola", name_en="Kofola", category="drinks", unit_cents=cents, vat_percent=19, added_by="jana"
                )
            )
            ids.append(tab.id)
        return ids

    result: list[int] = on_writer(hub, make)
    return result


def _counts(hub: Hub) -> tuple[int, int, int]:
    with hub.store.reader() as db:
        return (
            db.scalar(select(func.count()).select_from(WalletEntry)) or 0,
            db.scalar(select(func.count()).select_from(Payment)) or 0,
            db.scalar(select(func.coalesce(func.sum(WalletEntry.cents), 0))) or 0,
        )


def test_fifty_uses_of_the_last_euro_at_once_exactly_one_wins(api: Api) -> None:
    member = _member(api)
    api.ok("POST", f"/api/members/{member}/wallet/top-ups", 201, json={"amount_cents": 100, "method": "cash"})
    tabs = _bar_tabs(api.service, 50)

    def use(tab: int) -> tuple[int, str]:
        r = api.client.post(
            f"/api/tabs/{tab}/payments/credit", headers={**api.staff, **SK}, json={"member_id": member, "amount_cents": 100}
        )
        return r.status_code, r.json().get("detail", "")

    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(use, tabs))
    assert sorted(code for code, _ in answers) == [201] + [409] * 49
    assert all("má 0,00\u00a0€ kreditu" in detail for code, detail in answers if code == 409), answers[:3]
    assert api.ok("GET", f"/api/members/{member}/wallet")["balance_cents"] == 0
    with api.service.store.reader() as db:
        uses = db.scalars(select(WalletEntry).where(WalletEntry.kind == "use")).all()
        credit = db.scalars(select(Payment).where(Payment.method == "credit")).all()
    assert len(uses) == 1 and [p.amount_cents for p in credit] == [100] and uses[0].payment_id == credit[0].id


@sqlite_only  # the SQL of both backends: tests/broker/wallet/test_wallet_writer.py
def test_bad_input_is_refused_in_slovak_and_changes_nothing(api: Api) -> None:
    member = _member(api)
    api.ok("POST", f"/api/members/{member}/wallet/top-ups", 201, json={"amount_cents": 500, "method": "card", "request_id": "topup-0001"})
    again = api.client.post(
        f"/api/members/{member}/wallet/top-ups", headers=api.staff, json={"amount_cents": 500, "method": "card", "request_id": "topup-0001"}
    )
    assert again.status_code == 200 and again.json()["repeated"]  # a resent form: the same top-up
    (tab,) = _bar_tabs(api.service, 1, 700)
    before = _counts(api.service)
    cases: list[tuple[str, str, dict[str, Any], int, str]] = [
        ("POST", f"/api/members/{member}/wallet/top-ups", {"amount_cents": 0, "method": "cash"}, 409, "celých centoch"),
        ("POST", f"/api/members/{member}/wallet/top-ups", {"amount_cents": 500, "method": "bitcoin"}, 409, "nie je spôsob platby"),
        ("POST", "/api/members/999/wallet/top-ups", {"amount_cents": 500, "method": "cash"}, 404, "Taký člen"),
        ("POST", f"/api/tabs/{tab}/payments/credit", {"member_id": member, "amount_cents": 700}, 409, "kreditu"),
        ("POST", f"/api/tabs/{tab}/payments/credit", {"member_id": member, "amount_cents": 500, "expect_owed_cents": 600}, 409, "zmenil"),
        ("POST", f"/api/tabs/{tab}/payments/package", {"package_id": 77}, 404, "balík"),
        (
            "POST",
            f"/api/members/{member}/wallet/packages",
            {"kind": "hours", "quantity": 0, "price_cents": 100, "method": "cash"},
            409,
            "celé číslo",
        ),
        ("POST", f"/api/members/{member}/wallet/refunds", {"amount_cents": 900, "method": "cash", "reason": "odchod"}, 409, "kreditu"),
        ("POST", f"/api/members/{member}/wallet/refunds", {"amount_cents": 100, "method": "cash", "reason": "ab"}, 409, "Povedzte prečo"),
    ]
    for method, path, body, status, words in cases:
        r = api.client.request(method, path, headers={**api.manager, **SK}, json=body)
        assert r.status_code == status and words in r.json()["detail"], (path, body, r.status_code, r.text)
    for body in ({"amount_cents": "5", "method": "cash"}, {"amount_cents": 5}, {"amount_cents": 5, "method": "cash", "x": 1}):
        assert api.client.post(f"/api/members/{member}/wallet/top-ups", headers=api.staff, json=body).status_code == 422
    # A refund and a reversal are the manager's.
    api.refused(
        "POST",
        f"/api/members/{member}/wallet/refunds",
        403,
        as_manager=False,
        json={"amount_cents": 100, "method": "cash", "reason": "odchod"},
    )
    api.refused("POST", "/api/wallet/entries/1/reverse", 403, as_manager=False, json={"reason": "omyl"})
    assert _counts(api.service) == before


@sqlite_only
def test_a_member_pays_from_credit_and_the_rest_by_card_and_the_manager_gives_the_rest_back(api: Api) -> None:
    member = _member(api)
    api.ok("POST", f"/api/members/{member}/wallet/top-ups", 201, json={"amount_cents": 500, "method": "cash", "tendered_cents": 1000})
    (tab,) = _bar_tabs(api.service, 1, 700)
    api.ok("POST", f"/api/tabs/{tab}/payments/credit", 201, json={"member_id": member, "amount_cents": 400})
    api.ok("POST", f"/api/tabs/{tab}/payments", 201, json={"method": "card", "amount_cents": 300})
    assert api.ok("GET", f"/api/tabs/{tab}/payments")["status"] == "paid"
    api.ok(
        "POST",
        f"/api/members/{member}/wallet/refunds",
        201,
        as_manager=True,
        json={"amount_cents": 100, "method": "cash", "reason": "odchádza"},
    )
    w = api.ok("GET", f"/api/members/{member}/wallet")
    assert w["balance_cents"] == 0 and [h["kind"] for h in w["history"]] == ["refund", "use", "topup"]
