"""Changing a bill (voiding an extra, a manager's correction) and the business day in the reports,
over the real hub on SQLite and PostgreSQL (`db_url`).

The rule (dashboard.access): staff void an extra while the game runs; once it is stopped the bill
is issued and only a manager voids or corrects it. Money is never deleted: a void is a new op.
"""

from __future__ import annotations

from sqlalchemy import select

from broker.storage.models import Game, GameOp
from tests.support.hub import on_writer

TOPPING = 60


def _ops(api, sid: int) -> list[GameOp]:
    def _write(db):
        rows = db.scalars(select(GameOp).where(GameOp.session_id == sid).order_by(GameOp.seq)).all()
        db.expunge_all()
        return list(rows)

    return on_writer(api.service, _write)


def _stored_total(api, sid: int) -> int | None:
    with api.service.store.reader() as db:
        row = db.get(Game, sid)
        assert row is not None
        return row.total_cents


def _game_with_toppings(api) -> tuple[int, int]:
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]
    api.clock.advance(minutes=30)
    s = api.ok("POST", f"/api/sessions/{sid}/extras", json={"extra": "topping", "quantity": 2})
    return sid, s["extras"][0]["op"]


def test_staff_void_an_extra_while_the_game_runs_and_it_is_reversed_not_deleted(api):
    sid, op = _game_with_toppings(api)
    s = api.ok("POST", f"/api/sessions/{sid}/void", json={"extra_op": op, "reason": "zadané dvakrát"})
    assert [(x["kind"], x["amount_cents"]) for x in s["bill"]["lines"]] == [("time", 300), ("extra", 2 * TOPPING), ("void", -2 * TOPPING)]
    assert s["bill"]["total_cents"] == 300 and s["extras"][0]["voided"] is True
    ops = _ops(api, sid)
    assert [o.kind for o in ops] == ["start", "extra", "void"]  # the extra's op is still there
    assert (ops[-1].actor, ops[-1].reason, ops[-1].data) == ("jana", "zadané dvakrát", {"extra_op": op})
    stopped = api.ok("POST", f"/api/sessions/{sid}/stop")
    assert stopped["bill"]["total_cents"] == 300 and _stored_total(api, sid) == 300


def test_after_the_bill_is_issued_only_a_manager_voids_and_corrects(api):
    sid, op = _game_with_toppings(api)
    api.ok("POST", f"/api/sessions/{sid}/stop")
    assert _stored_total(api, sid) == 300 + 2 * TOPPING
    before = len(_ops(api, sid))
    refused = api.refused("POST", f"/api/sessions/{sid}/void", 409, as_manager=False, json={"extra_op": op, "reason": "typed twice"})
    assert "already issued" in refused and "manager" in refused
    assert len(_ops(api, sid)) == before  # nothing appended
    s = api.ok("POST", f"/api/sessions/{sid}/void", as_manager=True, json={"extra_op": op, "reason": "typed twice"})
    assert s["state"] == "stopped" and s["bill"]["total_cents"] == 300 and _stored_total(api, sid) == 300
    # A correction on the issued bill (the hub refused it before: "not open").
    s = api.ok("POST", f"/api/sessions/{sid}/correction", as_manager=True, json={"amount_cents": -50, "reason": "stôl sa kýval"})
    assert s["bill"]["lines"][-1]["kind"] == "correction" and s["bill"]["total_cents"] == 250 and _stored_total(api, sid) == 250
    assert [(o.kind, o.actor) for o in _ops(api, sid)][-2:] == [("void", "boss"), ("correction", "boss")]
    assert api.refused("POST", f"/api/sessions/{sid}/correction", 403, as_manager=False, json={"amount_cents": -50, "reason": "nope"})
    # The report counts the issued bill as it is now: the voided toppings net out under extras.
    r = api.ok("GET", "/api/reports/revenue?from=2026-11-10", as_manager=True)
    assert r["total_cents"] == 250 and r["by_tariff"]["extras"] == 0 and r["by_tariff"]["adjustments"] == -50


def test_bad_voids_are_refused_and_change_nothing(api):
    sid, op = _game_with_toppings(api)
    before = len(_ops(api, sid))
    for blank in ("", "   "):  # the schema's own check
        assert "reason" in api.refused("POST", f"/api/sessions/{sid}/void", 422, json={"extra_op": op, "reason": blank})
    for reason in ("ab", "x" * 201):
        detail = api.refused("POST", f"/api/sessions/{sid}/void", 409, as_manager=False, json={"extra_op": op, "reason": reason})
        assert "reason" in detail or "characters" in detail
    assert "no such extra" in api.refused("POST", f"/api/sessions/{sid}/void", 409, json={"extra_op": 1, "reason": "the start"})
    assert "no such extra" in api.refused("POST", f"/api/sessions/{sid}/void", 409, json={"extra_op": 99, "reason": "no op"})
    assert "no game no. 4242" in api.refused("POST", "/api/sessions/4242/void", 404, json={"extra_op": 2, "reason": "nothing"})
    assert len(_ops(api, sid)) == before
    api.ok("POST", f"/api/sessions/{sid}/void", json={"extra_op": op, "reason": "typed twice"})
    assert "already voided" in api.refused("POST", f"/api/sessions/{sid}/void", 409, json={"extra_op": op, "reason": "again"})


def test_a_game_past_midnight_belongs_to_the_evening_it_started(api):
    # START is 18:00 in Bratislava on 10 November; this game runs 23:30 - 00:40.
    api.clock.advance(hours=5, minutes=30)
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]
    api.clock.advance(minutes=70)
    api.ok("POST", f"/api/sessions/{sid}/stop")
    evening = api.ok("GET", "/api/reports/revenue?from=2026-11-10&to=2026-11-11", as_manager=True)
    assert evening["by_day"] == {"2026-11-10": 700, "2026-11-11": 0}
    u = api.ok("GET", "/api/reports/utilisation?day=2026-11-10", as_manager=True)
    assert u["totals"]["pool-01"] == 70.0  # 30 minutes before midnight and 40 after, all on the evening
    hours = {h[11:16]: n for h, n in zip(u["hours"], u["tables"]["pool-01"])}
    assert (hours["23:00"], hours["00:00"]) == (30.0, 40.0)
    assert api.ok("GET", "/api/reports/utilisation?day=2026-11-11", as_manager=True)["totals"]["pool-01"] == 0
