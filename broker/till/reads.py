"""The till's reads (`reads.till` on the dashboard): tabs and products, payments and receipts, the
business day and its close-out, eKasa. Every query runs in a read-only store session and returns frozen
values (broker.till.tab_views, payment_reads); store failures come out as broker.core.store_errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Annotated

from sqlalchemy import select

from broker.core.errors import NotFound, ServiceError
from broker.core.ports import HallState
from broker.core.store_errors import store_call
from broker.domain.json_shape import HIDDEN
from broker.domain.refusals import N_
from broker.domain.schedule import business_day
from broker.domain.till.receipt import Receipt
from broker.domain.till.zreport import ZReport
from broker.storage.models import BusinessDay, Game, Payment, Tab
from broker.till import Till, tab_views
from broker.till.closeout import DayOverview, DaySummary, build_report, summary_of
from broker.till.payment_reads import (
    JournalRow,
    PaymentView,
    TabPayView,
    payment_at_hand,
    payment_views,
    receipt_of,
    receipts_journal,
    tab_at_hand,
    tab_pay_view,
)
from broker.till.tabs import merged_tabs


@dataclass(frozen=True)
class EkasaSettingsView:
    enabled: bool
    url: str
    timeout_s: float
    cash_register_code: str


@dataclass(frozen=True)
class EkasaHealthView:
    enabled: bool
    reachable: bool | None  # None: not asked yet since the hub started
    unreachable_since: datetime | None
    last_error: str | None


@dataclass(frozen=True)
class FiscalReceiptView:
    payment_id: int
    receipt_no: int | None
    amount_cents: int
    method: str
    method_en: Annotated[str, HIDDEN]
    staff: str
    at: datetime
    table: str | None  # None: a walk-in tab
    state: str  # pending, offline, failed, paragon
    since: datetime  # pending since / offline since
    error: str | None
    okp: str | None
    paragon_no: str | None
    paragon_at: datetime | None
    reversal: bool


class TillReads:
    """Queries over the till's rows and parts; none of them writes."""

    def __init__(self, hall: HallState, till: Till) -> None:
        self._hall = hall
        self._store = hall.store
        self._till = till

    @store_call
    def products(self, *, active_only: bool = False) -> list[tab_views.ProductView]:
        """The product list by category and name (staff see the active ones), each with its sales of the last month."""
        with self._store.reader() as db:
            return tab_views.product_views(db, active_only=active_only, now=self._hall.clock())

    @store_call
    def tab(self, tab_id: int) -> tab_views.TabView:
        """A tab with its lines (its game's, its items voided ones included, merged tabs'), VAT, paid, owed; NotFound."""
        with self._store.reader() as db:
            row = db.get(Tab, tab_id)
            if row is None:
                raise NotFound(N_("There is no such tab."))
            return tab_views.tab_view(db, self._hall, row, self._hall.clock())

    @store_call
    def tab_of_game(self, game_id: int) -> int | None:
        with self._store.reader() as db:
            return tab_views.tab_of_game(db, game_id)

    @store_call
    def game_tab(self, game_id: int) -> int:
        """The tab of game `game_id` (what is put on the game goes there); NotFound: no such game."""
        with self._store.reader() as db:
            tab = tab_views.tab_of_game(db, game_id)
            if tab is None:
                if db.get(Game, game_id) is None:
                    raise NotFound(N_("There is no game no. %(game)d."), game=game_id)
                raise ServiceError(N_("Game no. %(game)d was settled before the till: it has no tab."), game=game_id)
            return tab

    @store_call
    def product_of_extra(self, code: str) -> tab_views.ProductView:
        """The product that stands for the venue file's extra `code` ("topping"); ServiceError: none does."""
        with self._store.reader() as db:
            product = tab_views.product_of_extra(db, code)
        if product is None:
            raise ServiceError(N_("There is no extra %(extra)s in the price list."), extra=code[:40])
        return product

    @store_call
    def game_items(self, game_ids: list[int]) -> dict[int, tuple[tab_views.TabItemView, ...]]:
        """What was put on each game's own tab (extras, drinks; voided ones included), by game."""
        with self._store.reader() as db:
            return tab_views.game_items(db, game_ids)

    @store_call
    def unpaid_tabs(self) -> list[tab_views.UnpaidTab]:
        """Tabs still to be paid (walk-ins, stopped games), oldest first."""
        with self._store.reader() as db:
            return tab_views.unpaid_tabs(db, self._hall, self._hall.clock())

    @store_call
    def tab_games(self, tab_id: int) -> tuple[int, ...]:
        """The games whose bills count on this tab: its own, and those of the tabs merged into it."""
        with self._store.reader() as db:
            tab = db.get(Tab, tab_id)
            return tuple(t.session_id for t in merged_tabs(db, tab) if t.session_id is not None) if tab else ()

    @store_call
    def mergeable_tabs(self) -> list[tab_views.UnpaidTab]:
        """Tabs that can be merged (open, nothing paid, not split), running games' included, oldest first."""
        with self._store.reader() as db:
            return tab_views.mergeable_tabs(db, self._hall, self._hall.clock())

    @store_call
    def shared_tabs(self) -> dict[int, tab_views.SharedTab]:
        """Bills still to be paid that other tabs are merged into, by the id of each of their tabs."""
        with self._store.reader() as db:
            return tab_views.shared_tabs(db, self._hall)

    @store_call
    def unpaid_by_table(self, only: str | None = None) -> dict[str, tab_views.UnpaidTab]:
        """Per free table (or just `only`), its last game's tab when unpaid (the floor card's badge)."""
        with self._store.reader() as db:
            return tab_views.unpaid_by_table(db, self._hall, self._hall.clock(), only)

    @store_call
    def day_tabs(self, day: date) -> list[tab_views.UnpaidTab]:
        """A business day's tabs, newest first, with what each owes."""
        with self._store.reader() as db:
            return tab_views.todays_tabs(db, self._hall, day, self._hall.clock())

    @store_call
    def tab_payments(self, tab_id: int) -> TabPayView | None:
        """A tab's bill, its split parts and its payments (the payment page); None: no such tab."""
        with self._store.reader() as db:
            return tab_pay_view(db, self._hall, tab_id)

    @store_call
    def payment(self, payment_id: int) -> PaymentView | None:
        with self._store.reader() as db:
            row = db.get(Payment, payment_id)
            return payment_views(db, self._hall, [row])[0] if row is not None else None

    @store_call
    def receipt_of(self, payment_id: int) -> Receipt | None:
        """The receipt of a payment or reversal, from its frozen lines (a reprint reads the same); None: no such payment."""
        with self._store.reader() as db:
            return receipt_of(db, self._hall, payment_id)

    @store_call
    def receipts_journal(self, day: date) -> list[JournalRow]:
        """The receipts counting on business day `day`, the newest first (the bills page's journal)."""
        with self._store.reader() as db:
            return receipts_journal(db, self._hall, day)

    @store_call
    def till_days(self) -> tuple[date, frozenset[date]]:
        """(the business day payments count on now, the days staff work with: CloseOut.days_at_hand)."""
        with self._store.reader() as db:
            now = self._hall.clock()
            return self._till.days.current_day(db, now), self._till.days.days_at_hand(db, now)

    @store_call
    def money_at_hand(self, *, tab: int | None = None, payment: int | None = None, game: int | None = None) -> bool:
        """Whether staff may read this tab, payment or game's tab (broker.till.payment_reads:
        unpaid, or on a day staff work with); if not, it is the manager's (day.history)."""
        with self._store.reader() as db:
            hand = self._till.days.days_at_hand(db, self._hall.clock())
            if game is not None:
                tab = tab_views.tab_of_game(db, game)
            if tab is not None and not tab_at_hand(db, tab, hand):
                return False
            return payment is None or payment_at_hand(db, payment, hand)

    @store_call
    def day_overview(self) -> DayOverview:
        """The business day staff work on now, its running Z report figures, earlier days left open."""
        now = self._hall.clock()
        days = self._till.days
        with self._store.reader() as db:
            day = days.current_day(db, now)
            unclosed = db.scalars(
                select(BusinessDay.day).where(BusinessDay.day < day, BusinessDay.closed_at.is_(None)).order_by(BusinessDay.day)
            ).all()
            last = db.scalar(select(BusinessDay).where(BusinessDay.closed_at.is_not(None)).order_by(BusinessDay.day.desc()).limit(1))
            return DayOverview(
                day,
                db.get(BusinessDay, day) is not None,
                build_report(db, self._hall, day, now),
                tuple(unclosed),
                summary_of(last) if last is not None else None,
                day <= business_day(now, self._hall.venue),
                days.days_at_hand(db, now),
            )

    @store_call
    def day_report(self, day: date) -> ZReport:
        """A closed day's frozen Z report, or an open day's figures now; NotFound for a day without a shift."""
        report = self._till.days.report(day)
        if report is None:
            raise NotFound(N_("There is no business day %(day)s: nobody opened it and no money was taken."), day=day.isoformat())
        return report

    @store_call
    def business_days(self, limit: int = 400) -> list[DaySummary]:
        """Business days with a shift, newest first, closed or not (a day nobody closed shows)."""
        with self._store.reader() as db:
            return [summary_of(r) for r in db.scalars(select(BusinessDay).order_by(BusinessDay.day.desc()).limit(limit))]

    @store_call
    def ekasa_settings(self) -> EkasaSettingsView:
        s = self._till.fiscal.settings
        return EkasaSettingsView(s.enabled, s.url, s.timeout_s, s.cash_register_code)

    def ekasa_health(self) -> EkasaHealthView:
        h = self._till.fiscal.health()
        return EkasaHealthView(self._till.fiscal.settings.enabled, h.reachable, h.unreachable_since, h.last_error)

    @store_call
    def ekasa_unregistered(self, limit: int = 500) -> list[FiscalReceiptView]:
        """Receipts not registered in eKasa yet (pending, offline, failed, paragón), oldest first."""
        from broker.storage.models import Payment, Tab
        from broker.till.fiscal import UNREGISTERED

        q = (
            select(Payment, Tab.table_id)
            .join(Tab, Tab.id == Payment.tab_id)
            .where(Payment.fiscal_state.in_(UNREGISTERED))
            .order_by(Payment.id)
            .limit(limit)
        )
        with self._store.reader() as db:
            out = []
            for p, table in db.execute(q).all():
                d = p.fiscal_detail or {}
                since = d.get("offline_since") or d.get("since")
                method = self._hall.venue.till.named(p.method)
                out.append(
                    FiscalReceiptView(
                        payment_id=p.id,
                        receipt_no=p.receipt_no,
                        amount_cents=p.amount_cents,
                        method=method.name if method else p.method,
                        method_en=(method.name_en or method.name) if method else p.method,
                        staff=p.staff,
                        at=p.at,
                        table=self._hall.tables[table].name if table in self._hall.tables else None,
                        state=p.fiscal_state,
                        since=datetime.fromisoformat(since) if since else p.at,
                        error=d.get("error"),
                        okp=d.get("okp"),
                        paragon_no=p.paragon_no,
                        paragon_at=p.paragon_at,
                        reversal=p.reverses_id is not None,
                    )
                )
            return out
