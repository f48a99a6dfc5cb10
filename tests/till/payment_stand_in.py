"""A payment made the way helper m2's Payments.pay will make one, standing in for it until the merge.

Payments.pay does not exist on this branch yet: these helpers add a Payment row on the hub's
writer (a game's tab, frozen lines via broker.domain.till.receipt.lines_json, the next receipt number,
the business day from CloseOut.day_for) and call `hub.till.fiscal.payment_recorded(db, payment,
after)` in the payment's transaction after flush, then run the after-commit effects: the calls
Payments makes. Replace them with Payments.pay / reverse once m2's part is merged.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from broker.domain.till.receipt import ReceiptLine, lines_json
from broker.floor.games import StartGame
from broker.storage.after_commit import after_commit
from broker.storage.models import Payment, Tab

DRINK = ReceiptLine("Kofola 0,5 l", "Kofola 0.5 l", 2, 150, 300, 23, "drinks")
TIME = ReceiptLine("Pool, 60 min", "Pool, 60 min", 1, None, 600, 23, "table_time")


def game_tab(hub: Any, table: str = "pool-01") -> int:
    """Start a game on `table`; the id of its tab (opened in the start's transaction)."""
    session = hub.execute(StartGame(table=table, actor="jana"))
    with hub.store.reader() as db:
        result: int = db.scalar(select(Tab.id).where(Tab.session_id == session))
        return result


def _record(hub: Any, fields: Any) -> int:
    """On the writer: add the payment `fields(db)` describes and tell Fiscal in its transaction; the effects run after the commit."""

    def run() -> int:
        with hub.store.session() as db:
            now = hub.clock()
            p = Payment(
                at=now,
                business_day=hub.till.days.day_for(db, now),
                receipt_no=(db.scalar(select(func.max(Payment.receipt_no))) or 0) + 1,
                **fields(db),
            )
            db.add(p)
            db.flush()
            hub.till.fiscal.payment_recorded(db, p, after_commit(db))
            return p.id

    result: int = hub.run_on_writer(run)
    return result


def pay(
    hub: Any, tab_id: int, lines: Any = (TIME, DRINK), *, method: str = "cash", tendered: int | None = None, staff: str = "jana"
) -> int:
    """A payment of the lines' sum on the tab; its id."""
    amount = sum(x.amount_cents for x in lines)
    change = (tendered - amount) if tendered else 0
    return _record(
        hub,
        lambda db: dict(
            tab_id=tab_id,
            method=method,
            amount_cents=amount,
            tendered_cents=tendered,
            change_cents=change,
            staff=staff,
            lines=lines_json(lines),
        ),
    )


def reverse(hub: Any, payment_id: int, *, reason: str = "vrátené", staff: str = "boss") -> int:
    """A manager's reversal of a payment: the opposite sign, naming it; its id."""

    def fields(db: Any) -> dict[str, Any]:
        orig = db.get(Payment, payment_id)
        # The original's lines negated (lines_json refuses negative VAT today; m2 decides the shape).
        lines = {
            "lines": [
                {**x, "unit_cents": x["unit_cents"] and -x["unit_cents"], "amount_cents": -x["amount_cents"]} for x in orig.lines["lines"]
            ],
            "vat": [{**v, "gross_cents": -v["gross_cents"], "vat_cents": -v["vat_cents"]} for v in orig.lines["vat"]],
        }
        return dict(
            tab_id=orig.tab_id, method=orig.method, amount_cents=-orig.amount_cents, change_cents=0, staff=staff,
            reverses_id=orig.id, reason=reason, lines=lines,
        )  # fmt: skip

    return _record(hub, fields)


def fiscal(hub: Any, payment_id: int) -> tuple[str, str | None, dict[str, Any]]:
    with hub.store.reader() as db:
        p = db.get(Payment, payment_id)
        return p.fiscal_state, p.fiscal_id, dict(p.fiscal_detail or {})
