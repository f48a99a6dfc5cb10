"""A game's extras on its tab (put and voided through the game's API routes), a manager's correction,
and the business day in the reports, over the real hub on SQLite and PostgreSQL (`db_url`).

The rule (broker.till.tabs): an extra is an item on the game's tab, voided by the tab's rule:
staff before any payment on the tab, a manager after. The game's bill and op log hold table time
(and corrections) only. Money is never deleted: a void keeps the item, struck through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from broker.hall.read_models import HallReads
from broker.storage.models import Game, GameOp, TabItem
from broker.till.payments import PayTab
from tests.support.hub import on_writer

if TYPE_CHECKING:
    from tests.dashboard.conftest import Api


TOPPING = 60


def _ops(api: Any, sid: int) -> list[GameOp]:
    def _write(db: Any) -> list[Any]:
        rows = db.scalars(select(GameOp).where(GameOp.session_id == sid).order_by(GameOp.seq)).all()
        db.expunge_all()
        return list(rows)

    return on_writer(api.service, _write)


def _stored_total(api: Any, sid: int) -> int | None:
    with api.service.store.reader() as db:
        row = db.get(Game, sid)
        assert row is not None
        result: int | None = row.total_cents
        return result


def _game_with_toppings(api: Any) -> tuple[int, int]:
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]
    api.clock.advance(minutes=30)
    s = api.ok("POST", f"/api/sessions/{sid}/extras", json={"extra": "topping", "quantity": 2})
    return sid, s["extras"][0]["item"]


def test_an_extra_is_an_item_of_the_games_tab_with_its_products_vat_and_the_op_log_keeps_table_time(api: Api) -> None:
    sid, _item = _game_with_toppings(api)
    s = api.ok("GET", f"/api/sessions/{sid}")
    (extra,) = s["extras"]
    topping = HallReads(api.service).till.product_of_extra("topping")
    assert (extra["extra"], extra["product"], extra["vat_percent"], extra["category"]) == (
        "topping",
        topping.id,
        topping.vat_percent,
        topping.category,
    )
    assert [x["kind"] for x in s["bill"]["lines"]] == ["time"] and s["bill"]["total_cents"] == 300
    assert [o.kind for o in _ops(api, sid)] == ["start"]  # the op log: table time only
    tab = HallReads(api.service).till.tab(HallReads(api.service).till.game_tab(sid))
    assert tab.total_cents == 300 + 2 * TOPPING
    assert {line.category for line in tab.bill.lines} == {"table_time", topping.category}  # not booked as table time


def test_staff_void_an_extra_on_the_tab_and_it_stays_there_struck_through(api: Api) -> None:
    sid, item = _game_with_toppings(api)
    s = api.ok("POST", f"/api/sessions/{sid}/void", json={"item": item, "reason": "zadané dvakrát"})
    assert s["extras"][0]["voided"] is True and s["bill"]["total_cents"] == 300
    with api.service.store.reader() as db:
        row = db.get(TabItem, item)
        assert row is not None and (row.voided_by, row.void_reason) == ("jana", "zadané dvakrát")
    assert [o.kind for o in _ops(api, sid)] == ["start"]
    stopped = api.ok("POST", f"/api/sessions/{sid}/stop")
    assert stopped["bill"]["total_cents"] == 300 and _stored_total(api, sid) == 300
    assert HallReads(api.service).till.tab(HallReads(api.service).till.game_tab(sid)).total_cents == 300


def test_once_the_tab_has_a_payment_only_a_manager_voids_an_extra(api: Api) -> None:
    sid, item = _game_with_toppings(api)
    api.ok("POST", f"/api/sessions/{sid}/stop")
    assert _stored_total(api, sid) == 300  # the game's bill: its table time
    tab = HallReads(api.service).till.game_tab(sid)
    api.service.execute(PayTab(tab=tab, method="card", amount_cents=100, request_id="part-payment-1", actor="jana"))
    refused = api.refused("POST", f"/api/sessions/{sid}/void", 409, as_manager=False, json={"item": item, "reason": "typed twice"})
    assert "only a manager" in refused
    s = api.ok("POST", f"/api/sessions/{sid}/void", as_manager=True, json={"item": item, "reason": "typed twice"})
    assert s["extras"][0]["voided"] is True and HallReads(api.service).till.tab(tab).owed_cents == 200
    # A correction on the issued bill, the manager's.
    s = api.ok("POST", f"/api/sessions/{sid}/correction", as_manager=True, json={"amount_cents": -50, "reason": "stôl sa kýval"})
    assert s["bill"]["lines"][-1]["kind"] == "correction" and s["bill"]["total_cents"] == 250 and _stored_total(api, sid) == 250
    assert [(o.kind, o.actor) for o in _ops(api, sid)][-1] == ("correction", "boss")
    assert api.refused("POST", f"/api/sessions/{sid}/correction", 403, as_manager=False, json={"amount_cents": -50, "reason": "nope"})


def test_bad_voids_are_refused_and_change_nothing(api: Api) -> None:
    sid, item = _game_with_toppings(api)
    other = api.ok("POST", "/api/sessions", 201, json={"table": "pool-02"})["id"]
    for blank in ("", "   "):  # the schema's own check
        assert "reason" in api.refused("POST", f"/api/sessions/{sid}/void", 422, json={"item": item, "reason": blank})
    assert "Write why" in api.refused("POST", f"/api/sessions/{sid}/void", 409, as_manager=False, json={"item": item, "reason": "ab"})
    assert "no such item" in api.refused("POST", f"/api/sessions/{other}/void", 404, json={"item": item, "reason": "another game"})
    assert "no such item" in api.refused("POST", f"/api/sessions/{sid}/void", 404, json={"item": 99999, "reason": "no item"})
    assert "no game no. 4242" in api.refused("POST", "/api/sessions/4242/void", 404, json={"item": item, "reason": "nothing"})
    assert "extra_op" in api.refused("POST", f"/api/sessions/{sid}/void", 422, json={"extra_op": 2, "reason": "the old field"})
    assert api.ok("GET", f"/api/sessions/{sid}")["extras"][0]["voided"] is False
    api.ok("POST", f"/api/sessions/{sid}/void", json={"item": item, "reason": "typed twice"})
    assert "voided already" in api.refused("POST", f"/api/sessions/{sid}/void", 409, json={"item": item, "reason": "again"})


def test_a_game_past_midnight_belongs_to_the_evening_it_started(api: Api) -> None:
    # START is 18:00 in Bratislava on 10 November; this game runs 23:30 - 00:40.
    api.clock.advance(hours=5, minutes=30)
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]
    api.clock.advance(minutes=70)
    api.ok("POST", f"/api/sessions/{sid}/stop")
    tab = api.ok("GET", f"/api/sessions/{sid}/tab")["id"]
    api.ok("POST", f"/api/tabs/{tab}/payments", 201, json={"method": "card", "amount_cents": 700})  # paid at 00:40
    evening = api.ok("GET", "/api/reports/revenue?from=2026-11-10&to=2026-11-11", as_manager=True)
    assert evening["by_day"] == {"2026-11-10": 700, "2026-11-11": 0} and evening["table_time"]["total_cents"] == 700
    u = api.ok("GET", "/api/reports/utilisation?day=2026-11-10", as_manager=True)
    assert u["totals"]["pool-01"] == 70.0  # 30 minutes before midnight and 40 after, all on the evening
    hours = {h[11:16]: n for h, n in zip(u["hours"], u["tables"]["pool-01"])}
    assert (hours["23:00"], hours["00:00"]) == (30.0, 40.0)
    assert api.ok("GET", "/api/reports/utilisation?day=2026-11-11", as_manager=True)["totals"]["pool-01"] == 0
