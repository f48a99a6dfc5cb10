"""What the payment page, the receipt and the API read about a tab's payments, as frozen values.

Any thread: each function only reads the `db` it is given (HallReads opens a read-only session).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import date, datetime
from typing import Annotated

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.core.ports import HallState
from broker.domain.cash_rounding import NO_ROUNDING, cash_due
from broker.domain.floor import game_ops
from broker.domain.floor.game_log import ops_of
from broker.domain.json_shape import HIDDEN, derived, every_field_sent, json_name
from broker.domain.refusals import Name
from broker.domain.till.money import MoneyLine, TabStatus, VatRow
from broker.domain.till.receipt import Issuer, Receipt, lines_from_json, vat_from_json
from broker.storage.models import Game, Member, Payment, Tab
from broker.till.tabs import bill_of_tab, name_of

JOURNAL_MAX = 1000  # receipts of one business day on the journal page: a hall's busiest night is a few hundred


@every_field_sent
@dataclass(frozen=True)
class PaymentView:
    id: int
    tab_id: int
    part: int | None
    method: str
    method_name: str
    method_name_en: str
    cash: Annotated[bool, HIDDEN]  # the method is cash (the venue file's [till])
    amount_cents: int
    tendered_cents: int | None
    change_cents: int
    staff: str
    at: datetime
    business_day: date
    receipt_no: int | None
    reverses_id: int | None
    reverses_no: int | None  # a reversal: the receipt number it gives back
    reversed_by_no: int | None  # reversed: the receipt number of its reversal
    reason: str | None
    fiscal_state: str
    fiscal_id: str | None
    rounding_cents: Annotated[
        int, Field(description="Cash rounding to 0,05 €: handed over beyond amount_cents (outside the bill and VAT)")
    ] = 0  # broker.domain.cash_rounding
    repeated: bool = False  # the answer to a resent request_id: the payment the first attempt made


@dataclass(frozen=True)
class PartView:
    n: int
    amount_cents: int
    paid_cents: int
    cash_rounding: Annotated[int, HIDDEN] = NO_ROUNDING  # the venue's (the tab's JSON says it once)

    @derived
    def owed_cents(self) -> int:
        return self.amount_cents - self.paid_cents

    @derived
    def cash_owed_cents(self) -> int:
        """What owed_cents is in cash (rounded as the venue rounds cash)."""
        return cash_due(self.owed_cents, self.cash_rounding)


@every_field_sent
@dataclass(frozen=True)
class TabPayView:
    """A tab as the payment page shows it: what it owes and what was paid on it."""

    tab_id: int
    name: Name  # the JSON says the venue's own (Slovak) name
    table_id: Annotated[str | None, json_name("table")]
    game_id: Annotated[int | None, json_name("session_id")]
    status: TabStatus
    total_cents: int
    paid_cents: int
    owed_cents: int
    closed: bool  # no game on it runs any more
    merged_into: Annotated[int | None, HIDDEN]
    lines: Annotated[tuple[MoneyLine, ...], HIDDEN]  # the tab's own view has them (TabView)
    vat: tuple[VatRow, ...]
    parts: tuple[PartView, ...]
    payments: tuple[PaymentView, ...]
    settled_at: datetime | None
    # The venue's [till] cash_rounding.
    cash_rounding: Annotated[int, Field(description="The venue's rounding of cash in cents: 5 (to 0,05 €) or 1 (none)")] = NO_ROUNDING

    def cash_due(self, cents: int) -> int:
        """What `cents` against this tab is in cash (17,33 € → 17,35 € when the venue rounds cash)."""
        return cash_due(cents, self.cash_rounding)

    @derived
    def cash_owed_cents(self) -> int:
        """What owed_cents is in cash; by card it is owed_cents."""
        return self.cash_due(self.owed_cents)


def _method_names(hall: HallState, method: str) -> tuple[str, str, bool]:
    m = hall.venue.till.named(method)
    if m is None:  # a method since taken out of the venue file: its id, as it was recorded
        return method, method, False
    return m.name, m.name_en or m.name, m.cash


def payment_views(db: Db, hall: HallState, rows: list[Payment]) -> list[PaymentView]:
    ids = [p.id for p in rows]
    back = {p.reverses_id: p.receipt_no for p in db.scalars(select(Payment).where(Payment.reverses_id.in_(ids))).all()} if ids else {}
    orig_ids = [p.reverses_id for p in rows if p.reverses_id is not None]
    orig = {p.id: p.receipt_no for p in db.scalars(select(Payment).where(Payment.id.in_(orig_ids))).all()} if orig_ids else {}
    out = []
    for p in rows:
        name, name_en, cash = _method_names(hall, p.method)
        out.append(
            PaymentView(
                p.id,
                p.tab_id,
                p.part,
                p.method,
                name,
                name_en,
                cash,
                p.amount_cents,
                p.tendered_cents,
                p.change_cents,
                p.staff,
                p.at,
                p.business_day,
                p.receipt_no,
                p.reverses_id,
                orig.get(p.reverses_id) if p.reverses_id is not None else None,
                back.get(p.id),
                p.reason,
                p.fiscal_state,
                p.fiscal_id,
                p.rounding_cents,
            )
        )
    return out


def tab_pay_view(db: Db, hall: HallState, tab_id: int, now: datetime | None = None) -> TabPayView | None:
    tab = db.get(Tab, tab_id)
    if tab is None:
        return None
    bill = bill_of_tab(db, hall, tab_id, now)
    rows = list(db.scalars(select(Payment).where(Payment.tab_id == tab_id).order_by(Payment.id)).all())
    parts = tuple(
        PartView(
            int(p["n"]), int(p.get("amount_cents", 0)), sum(r.amount_cents for r in rows if r.part == p["n"]), hall.venue.till.cash_rounding
        )
        for p in (tab.split or {}).get("parts") or []
    )
    return TabPayView(
        tab.id,
        name_of(hall, tab, short=True),
        tab.table_id,
        tab.session_id,
        bill.status,
        bill.total_cents,
        bill.paid_cents,
        bill.owed_cents,
        bill.closed,
        tab.merged_into,
        bill.lines,
        bill.vat,
        parts,
        tuple(payment_views(db, hall, rows)),
        tab.settled_at,
        hall.venue.till.cash_rounding,
    )


def issuer(hall: HallState) -> Issuer:
    """The venue file's [operator]; an empty name or address falls back to the venue's own."""
    op = hall.venue.operator
    return Issuer(op.name or hall.venue.venue.name, op.address or hall.venue.venue.address, op.ico, op.dic, op.ic_dph)


def receipt_of(db: Db, hall: HallState, payment_id: int) -> Receipt | None:
    p = db.get(Payment, payment_id)
    if p is None:
        return None
    tab = db.get(Tab, p.tab_id)
    assert tab is not None
    name, name_en, _ = _method_names(hall, p.method)
    reverses = db.get(Payment, p.reverses_id) if p.reverses_id is not None else None
    table = _table_when(db, hall, tab, p.at)
    spec = hall.tables.get(table) if table else None
    return Receipt(
        payment_id=p.id,
        number=p.receipt_no or 0,
        issued_at=p.at,
        staff=p.staff,
        issuer=issuer(hall),
        lines=lines_from_json(p.lines),
        vat=vat_from_json(p.lines),
        total_cents=p.amount_cents,
        method=p.method,
        method_name=name,
        method_name_en=name_en,
        tendered_cents=p.tendered_cents,
        change_cents=p.change_cents,
        rounding_cents=p.rounding_cents,
        tab_id=p.tab_id,
        table_name=spec.name if spec else (tab.label or None),
        reverses_number=reverses.receipt_no if reverses is not None else None,
        fiscal_state=p.fiscal_state,
        fiscal_id=p.fiscal_id,
        reason=p.reason,
        part=p.part,
        paragon_no=p.paragon_no,
        table_name_en=(spec.name_en or spec.name) if spec else (tab.label or None),
    )


def _table_when(db: Db, hall: HallState, tab: Tab, at: datetime) -> str | None:
    """The table a receipt names: where the tab's game was when the payment was taken. A game moves
    its tab along (Till.game_moved), but a receipt is a record of its moment: one printed before the
    move still says the table it was printed at."""
    game = db.get(Game, tab.session_id) if tab.session_id is not None else None
    if game is None:
        return tab.table_id
    ops = [op for op in ops_of(game.ops) if op.at <= at]
    try:
        return game_ops.replay(ops, hall.venue).table if ops else tab.table_id
    except game_ops.GameError:  # a log the venue file no longer fits (a table taken out of it)
        return tab.table_id


def tab_at_hand(db: Db, tab_id: int, hand: frozenset[date]) -> bool:
    """Whether staff may read this tab (its lines, payments, receipts): it is still to be paid, or it
    or one of its payments counts on a day at hand (CloseOut.days_at_hand). Older money is the
    manager's, as the days' Z reports are. A tab that does not exist is "at hand": the read says 404."""
    tab = db.get(Tab, tab_id)
    if tab is None or tab.settled_at is None or tab.business_day in hand:
        return True
    days = db.scalars(select(Payment.business_day).where(Payment.tab_id == tab_id)).all()
    return any(d in hand for d in days)


def payment_at_hand(db: Db, payment_id: int, hand: frozenset[date]) -> bool:
    """Whether staff may read this payment or its receipt: it counts on a day at hand, or its tab does."""
    p = db.get(Payment, payment_id)
    return p is None or p.business_day in hand or tab_at_hand(db, p.tab_id, hand)


# -- the receipts journal (the bills page: a business day's receipts, to find one and reprint it) -----


@dataclass(frozen=True)
class JournalRow:
    """One receipt of the journal: a payment, or a reversal (negative), with what it was for."""

    payment_id: int
    receipt_no: int | None
    at: datetime
    tab_id: int
    name: Name  # the tab as staff call it ("Pool 3, hra č. 12", "Peter", "Bar 18:42")
    table_id: str | None  # None: a sale at the bar
    member: str | None  # the game's member, for the search
    part: int | None
    amount_cents: int
    method_name: str
    method_name_en: str
    change_cents: int
    staff: str
    reverses_no: int | None  # a reversal: the receipt it gives back
    reversed_by_no: int | None  # given back by that receipt

    @property
    def walk_in(self) -> bool:
        return self.table_id is None


def receipts_journal(db: Db, hall: HallState, day: date) -> list[JournalRow]:
    """The receipts that count on business day `day` (Payment.business_day: what its Z report
    adds up), the newest first; a sale at the bar paid in full is found here like a game."""
    rows = db.execute(
        select(Payment, Tab)
        .join(Tab, Tab.id == Payment.tab_id)
        .where(Payment.business_day == day)
        .order_by(Payment.id.desc())
        .limit(JOURNAL_MAX)
    ).all()
    ids = [p.id for p, _ in rows]
    back = dict(db.execute(select(Payment.reverses_id, Payment.receipt_no).where(Payment.reverses_id.in_(ids))).all()) if ids else {}
    orig_ids = [p.reverses_id for p, _ in rows if p.reverses_id is not None]
    orig = dict(db.execute(select(Payment.id, Payment.receipt_no).where(Payment.id.in_(orig_ids))).all()) if orig_ids else {}
    games = {t.session_id for _, t in rows if t.session_id is not None}
    members = (
        dict(db.execute(select(Game.id, Member.name).join(Member, Member.id == Game.member_id).where(Game.id.in_(games))).all())
        if games
        else {}
    )
    out = []
    for p, tab in rows:
        method, method_en, _ = _method_names(hall, p.method)
        out.append(
            JournalRow(
                p.id,
                p.receipt_no,
                p.at,
                tab.id,
                name_of(hall, tab),
                tab.table_id,
                members.get(tab.session_id) if tab.session_id is not None else None,
                p.part,
                p.amount_cents,
                method,
                method_en,
                p.change_cents,
                p.staff,
                orig.get(p.reverses_id) if p.reverses_id is not None else None,
                back.get(p.id),
            )
        )
    return out


def journal_matches(row: JournalRow, query: str, table: str = "") -> bool:
    """The journal's search: a receipt's number, or a part of the tab's name (a table, a game's
    number, a guest's name, "Bar 18:42") or of its game's member, accents and case ignored; `table`
    keeps one table's receipts ("bar": the sales at the bar)."""
    if (table == "bar" and row.table_id is not None) or (table not in ("", "bar") and row.table_id != table):
        return False
    q = _folded(query)
    if not q:
        return True
    if q.isdigit() and row.receipt_no == int(q):
        return True
    return any(q in _folded(text) for text in (row.name.name, str(row.name), row.member or ""))


def _folded(text: str) -> str:
    """Lower case without accents: "borovicka" finds "Borovička", "zadrazil" finds "Zadražil"."""
    return "".join(c for c in unicodedata.normalize("NFD", text.strip()) if not unicodedata.combining(c)).casefold()
