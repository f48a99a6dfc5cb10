"""The payments counted on business days, as the revenue and the Z report read them (any thread: reads only).

broker.domain.till.revenue defines revenue over these records; the close-out (one day's Z report) and
the manager's reports (broker.reports.reports: a day or a month) both read them here, so both count the
same money. A part payment frozen before its lines said what they paid for (category "partial_payment"
without `categories`) is shared over its bill's categories as the bill is now: the best that is left.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.core.ports import HallState
from broker.domain.till.payment_rules import PARTIAL, part_lines
from broker.domain.till.receipt import ReceiptLine, lines_from_json
from broker.domain.till.revenue import PaymentRecord, by_category
from broker.storage.models import Payment, Tab
from broker.till.tabs import bill_of_tab


def tab_place(hall: HallState, tab: Tab | None) -> str:
    """Where a tab is, as the Z report names it: its table's name, or a walk-in tab's label."""
    if tab is None:
        return ""
    if tab.table_id and tab.table_id in hall.tables:
        return hall.tables[tab.table_id].name
    return tab.label or ""


def payment_records(db: Db, hall: HallState, first: date, last: date) -> list[PaymentRecord]:
    """Every payment (and reversal) counted on business days first..last, in the order taken."""
    rows = db.scalars(
        select(Payment).where(Payment.business_day >= first, Payment.business_day <= last).order_by(Payment.at, Payment.id)
    ).all()
    return records_of(db, hall, rows)


def records_of(db: Db, hall: HallState, rows: Sequence[Payment]) -> list[PaymentRecord]:
    """These payments rows as records, each as counted on its own business day (the revenue's and
    the Z report's; the records a hall sends its centre, broker.outbox.records, one by one)."""
    tabs = {t.id: t for t in db.scalars(select(Tab).where(Tab.id.in_({p.tab_id for p in rows})))} if rows else {}
    reversed_ids = {p.reverses_id for p in rows if p.reverses_id is not None}
    reversed_rows = {p.id: p for p in db.scalars(select(Payment).where(Payment.id.in_(reversed_ids)))} if reversed_ids else {}
    out = []
    for p in rows:
        tab = tabs.get(p.tab_id)
        original = reversed_rows.get(p.reverses_id) if p.reverses_id is not None else None
        # What earlier day it corrects: the day the reversed payment counted on, or the tab's day.
        earlier = original.business_day if original is not None else (tab.business_day if tab is not None else None)
        out.append(
            PaymentRecord(
                id=p.id,
                method=p.method,
                amount_cents=p.amount_cents,
                staff=p.staff,
                at=p.at,
                receipt_no=p.receipt_no,
                tab=tab_place(hall, tab),
                tab_id=p.tab_id,
                lines=_shared(db, hall, tab, p.part, lines_from_json(p.lines or {}, moves=True)),
                reverses_id=p.reverses_id,
                reverses_receipt_no=original.receipt_no if original is not None else None,
                reason=p.reason,
                corrects_day=earlier if earlier is not None and earlier < p.business_day else None,
                day=p.business_day,
                table=tab.table_id if tab is not None else None,
                rounding_cents=p.rounding_cents,
            )
        )
    return out


def _shared(db: Db, hall: HallState, tab: Tab | None, part: int | None, lines: tuple[ReceiptLine, ...]) -> tuple[ReceiptLine, ...]:
    """A part payment's lines with what they paid for; those frozen without it get the bill's categories now."""
    if tab is None or not any(x.category == PARTIAL and not x.categories for x in lines):
        return lines
    bill = _bill_lines(db, hall, tab, part)
    return tuple(
        replace(x, categories=by_category(x.amount_cents, x.vat_percent, bill)) if x.category == PARTIAL and not x.categories else x
        for x in lines
    )


def _bill_lines(db: Db, hall: HallState, tab: Tab, part: int | None) -> list[ReceiptLine]:
    for doc in (tab.split or {}).get("parts") or []:
        if part is not None and doc.get("n") == part:
            return part_lines(doc)
    return [
        ReceiptLine(x.description, x.description_en, x.quantity, x.unit_cents, x.amount_cents, x.vat_percent, x.category)
        for x in bill_of_tab(db, hall, tab.id).lines
    ]
