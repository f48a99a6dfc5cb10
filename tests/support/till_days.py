"""For the close-out's tests: a hub on a fake clock (no MQTT), and the till's rows put in directly.

Tabs, items and payments are other parts' work (broker.till.tabs, .payments); the close-out
only reads them, so its tests insert them as the models say, on the hub's writer, a payment
counted on `CloseOut.day_for` exactly as the payments part does.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from broker.domain.till.receipt import ReceiptLine, lines_json
from broker.hall.facade import HubFacade
from broker.storage.models import Payment, Tab, TabItem
from tests.support.hub import started_hub

_receipts = itertools.count(1)


class FakeClock:
    def __init__(self, start: datetime) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, at: datetime) -> None:
        with self._lock:
            self._now = at

    def advance(self, **delta: float) -> datetime:
        with self._lock:
            self._now += timedelta(**delta)
            return self._now


def local(y: int, mo: int, d: int, h: int, mi: int = 0) -> datetime:
    """A Bratislava wall-clock time as aware UTC."""
    from zoneinfo import ZoneInfo

    return datetime(y, mo, d, h, mi, tzinfo=ZoneInfo("Europe/Bratislava")).astimezone(UTC)


@contextlib.contextmanager
def day_hub(db_url: str | Path, clock: FakeClock, venue: Any = None) -> Iterator[tuple[Any, HubFacade]]:
    """A started hub without MQTT (no node needed to bill a game), and its facade."""
    with started_hub(db_url, venue=venue, clock=clock, watchdog=False) as hub:
        yield hub, HubFacade(hub)


def line(desc: str, cents: int, *, vat: int = 23, category: str = "drinks", qty: int = 1) -> ReceiptLine:
    return ReceiptLine(desc, desc, qty, cents // qty if qty else None, cents, vat, category)


def walk_in(hub: Any, label: str = "Bar", actor: str = "jana") -> int:
    def run() -> int:
        now = hub.clock()
        with hub.store.session() as db:
            from broker.domain.schedule import business_day

            tab = Tab(table_id=None, label=label, opened_at=now, opened_by=actor, business_day=business_day(now, hub.venue))
            db.add(tab)
            db.flush()
            return tab.id

    result: int = hub.run_on_writer(run)
    return result


def tab_of_game(hub: Any, session_id: int) -> int:
    with hub.store.reader() as db:
        from sqlalchemy import select

        result: int = db.scalar(select(Tab.id).where(Tab.session_id == session_id))
        return result


def add_item(hub: Any, tab_id: int, name: str, unit_cents: int, qty: int = 1, *, vat: int = 19, category: str = "drinks") -> int:
    def run() -> int:
        with hub.store.session() as db:
            item = TabItem(
                tab_id=tab_id,
                name=name,
                name_en=name,
                category=category,
                unit_cents=unit_cents,
                vat_percent=vat,
                quantity=qty,
                added_at=hub.clock(),
                added_by="jana",
            )
            db.add(item)
            db.flush()
            return item.id

    result: int = hub.run_on_writer(run)
    return result


def void_item(hub: Any, item_id: int, reason: str, by: str = "jana") -> None:
    def run() -> None:
        with hub.store.session() as db:
            item = db.get(TabItem, item_id)
            item.voided_at, item.voided_by, item.void_reason = hub.clock(), by, reason

    hub.run_on_writer(run)


def pay(
    hub: Any,
    tab_id: int,
    amount_cents: int,
    *,
    method: str = "cash",
    staff: str = "jana",
    lines: list[ReceiptLine] | None = None,
    reverses: int | None = None,
    reason: str | None = None,
    tendered: int | None = None,
) -> tuple[int, Any]:
    """A payment (or with `reverses`, a reversal) as the payments part makes one: (id, business day)."""

    def run() -> tuple[int, Any]:
        now = hub.clock()
        with hub.store.session() as db:
            day = hub.till.days.day_for(db, now, actor=staff)
            if reverses is not None:
                original = db.get(Payment, reverses)
                frozen: dict[str, object] = {
                    "lines": [{**row, "amount_cents": -row["amount_cents"]} for row in original.lines.get("lines", [])],
                    "vat": [],
                }
            else:
                frozen = lines_json(lines if lines is not None else [line("Pivo", amount_cents)])
            change = (tendered - amount_cents) if tendered is not None else 0
            p = Payment(
                tab_id=tab_id,
                method=method,
                amount_cents=amount_cents,
                tendered_cents=tendered,
                change_cents=change,
                staff=staff,
                at=now,
                business_day=day,
                reverses_id=reverses,
                reason=reason,
                receipt_no=next(_receipts),
                lines=frozen,
            )
            db.add(p)
            db.flush()
            return p.id, day

    result: tuple[int, Any] = hub.run_on_writer(run)
    return result


def settle(hub: Any, tab_id: int) -> None:
    def run() -> None:
        with hub.store.session() as db:
            db.get(Tab, tab_id).settled_at = hub.clock()

    hub.run_on_writer(run)
