"""The one door for writes from outside the hub: the dashboard (API routes and pages alike) and the demo.

Every method is one operation staff can do, done once here, so an API route and the page of the
same action call the same method. Hall state (sessions, alerts, foosball check-ins) is changed
by the hub itself (broker.hall.hub), which runs its effects (MQTT publishes, live pushes) after
the commit; the registry and the staff accounts, which have no memory state, are written here in
one transaction each. Store failures come out as broker.hall.store_errors, never sqlalchemy's.

Reads go through `reads` (broker.hall.read_models), which never writes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from datetime import date
from typing import Any, TypeVar

from sqlalchemy import exc as sa

from broker.accounts import users, web_sessions
from broker.accounts.auth_checks import check_password, reset_failures
from broker.accounts.staff import Staff, StaffSession, staff_of
from broker.adapters.receipt_printer import print_receipt
from broker.domain import sessions
from broker.domain.payment_rules import PaymentRefused
from broker.domain.refusals import N_
from broker.domain.split import SplitError
from broker.domain.zreport import ZReport
from broker.hall.hub import CardInUse, Hub, NotFound, ServiceError
from broker.hall.read_models import CheckinView, HallReads, MemberView, checkin_view, member_view
from broker.hall.store_errors import Conflict, StoreUnavailable, store_call
from broker.hall.table_service import OutOfService
from broker.hall.till.closeout import DayRefused
from broker.hall.till.payments import PaymentNotFound, Taken
from broker.hall.till.tabs import TabMissing, TabRefused
from broker.storage import members, members_csv
from broker.storage.errors import StoreError
from broker.storage.members import MemberError
from broker.storage.members_csv import ImportReport, MemberImportError
from broker.storage.models import MemberCard
from broker.storage.types import utcnow

log = logging.getLogger("lavos.hub")
T = TypeVar("T")

# The errors a caller of the facade or the read models may meet (besides the domain's own:
# MemberError, MemberImportError, users.UserError, users.AuthError, reports.ReportError).
__all__ = [
    "HubFacade",
    "ServiceError",
    "NotFound",
    "CardInUse",
    "Conflict",
    "StoreUnavailable",
    "MemberError",
    "MemberImportError",
    "Staff",
    "StaffSession",
]


@contextlib.contextmanager
def _payment_refusals() -> Iterator[None]:
    """The till's refusals as the hub's, which the pages and the API know (404 / 409)."""
    try:
        yield
    except PaymentNotFound as e:
        raise NotFound.like(e) from None
    except PaymentRefused as e:
        raise ServiceError.like(e) from None


class HubFacade:
    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self._store = hub.store
        self.reads = HallReads(hub)

    # -- sessions (the hub validates, appends the op, then drives the light) --------------------

    @store_call
    def start_session(
        self,
        table: str,
        *,
        actor: str,
        tariff: str | None = None,
        member_id: int | None = None,
        card_uid: str | None = None,
        prepaid_minutes: int | None = None,
    ) -> int:
        return self._hub.start_session(
            table, actor=actor, tariff=tariff, member_id=member_id, card_uid=card_uid, prepaid_minutes=prepaid_minutes
        )

    @store_call
    def stop_session(self, session_id: int, *, actor: str) -> sessions.SessionState:
        return self._hub.stop_session(session_id, actor=actor)

    @store_call
    def pause_session(self, session_id: int, *, actor: str) -> sessions.SessionState:
        return self._hub.pause_session(session_id, actor=actor)

    @store_call
    def resume_session(self, session_id: int, *, actor: str) -> sessions.SessionState:
        return self._hub.resume_session(session_id, actor=actor)

    @store_call
    def transfer_session(self, session_id: int, table: str, *, actor: str) -> sessions.SessionState:
        return self._hub.transfer_session(session_id, table, actor=actor)

    @store_call
    def extend_session(self, session_id: int, minutes: int, *, actor: str) -> sessions.SessionState:
        return self._hub.extend_session(session_id, minutes, actor=actor)

    @store_call
    def add_extra(self, session_id: int, extra_id: str, quantity: int, *, actor: str) -> sessions.SessionState:
        return self._hub.add_extra(session_id, extra_id, quantity, actor=actor)

    @store_call
    def correct_session(self, session_id: int, amount_cents: int, reason: str, *, actor: str) -> sessions.SessionState:
        return self._hub.correct_session(session_id, amount_cents, reason, actor=actor)

    @store_call
    def set_card(self, session_id: int, *, actor: str, member_id: int | None = None, card_uid: str | None = None) -> sessions.SessionState:
        return self._hub.set_card(session_id, actor=actor, member_id=member_id, card_uid=card_uid)

    # -- alerts and foosball (the hub owns the open-alert cache: never the database directly) ----

    @store_call
    def acknowledge_alert(self, alert_id: int, *, actor: str, close: bool = False) -> None:
        """Staff saw the alert (close=True also closes it); NotFound if there is no such alert."""
        self._hub.ack(alert_id, actor=actor, close=close)

    @store_call
    def foosball_checkin(self, table: str, member_id: int, *, actor: str) -> CheckinView:
        """Check a paid-up member in; the hub settles "foosball without a member" through its cache."""
        row, name = self._hub.foosball_checkin(table, member_id, actor=actor)
        return checkin_view(row, name, self._hub.venue)

    # -- the member registry (broker.storage.members audits each change) --------------------------------

    def _member(self, db, member_id: int) -> MemberView:
        try:
            return member_view(members.get_member(db, member_id))
        except MemberError:
            raise NotFound(N_("There is no member no. %(member_id)d: search by name to find the right one."), member_id=member_id) from None

    @store_call
    def add_member(self, name: str, *, actor: str, kind: str = "individual", note: str = "", active: bool = True) -> MemberView:
        with self._store.session() as db:
            return member_view(members.add_member(db, name, actor=actor, kind=kind, note=note, active=active))

    @store_call
    def edit_member(
        self,
        member_id: int,
        *,
        actor: str,
        name: str | None = None,
        kind: str | None = None,
        active: bool | None = None,
        note: str | None = None,
        reason: str | None = None,
    ) -> MemberView:
        with self._store.session() as db:
            self._member(db, member_id)
            return member_view(
                members.edit_member(db, member_id, actor=actor, name=name, kind=kind, active=active, note=note, reason=reason)
            )

    @store_call
    def record_fee(self, member_id: int, year: int, *, actor: str, amount_cents: int | None = None) -> MemberView:
        """A year's fee paid now (by the hub's clock)."""
        with self._store.session() as db:
            self._member(db, member_id)
            kwargs = {} if amount_cents is None else {"amount_cents": amount_cents}
            members.record_fee(db, member_id, year, actor=actor, paid_at=self._hub.clock(), **kwargs)
            db.flush()
            db.expire_all()
            return self._member(db, member_id)

    @store_call
    def assign_card(self, member_id: int, uid: str, *, actor: str) -> MemberView:
        with self._store.session() as db:
            self._member(db, member_id)
            members.assign_card(db, member_id, uid, actor=actor)
            db.flush()
            db.expire_all()
            return self._member(db, member_id)

    @store_call
    def remove_card(self, uid: str, *, actor: str, reason: str | None = None, member_id: int | None = None) -> None:
        """Take the card away; with `member_id`, only if it is that member's (else MemberError)."""
        card = members.normalize_uid(uid)
        with self._store.session() as db:
            if member_id is not None and card not in self._member(db, member_id).cards:
                raise MemberError(N_("Card %(card)s is not this member's."), card=card)
            if member_id is None and db.get(MemberCard, card) is None:
                raise NotFound(N_("Card %(card)s is not assigned to anyone."), card=card)
            members.remove_card(db, card, actor=actor, reason=reason)

    @store_call
    def import_members(self, data: bytes, *, actor: str) -> ImportReport:
        """A CSV file: all of it in one transaction, or nothing (MemberImportError with the lines)."""
        with self._store.session() as db:
            return members_csv.import_members_csv(db, data, actor=actor)

    # -- staff accounts (broker.accounts.users audits each change and ends sessions where it must) ---------

    @store_call
    def create_staff(self, username: str, password: str, role: str, *, actor: str, must_change: bool = False) -> Staff:
        with self._store.session() as db:
            if users.get_user(db, username) is not None:
                raise users.UserError(N_("The account %(username)s already exists; pick another name."), username=username)
            return staff_of(users.create_user(db, username, password, role, actor=actor, must_change=must_change))

    @store_call
    def set_staff_password(
        self, username: str, password: str, *, actor: str, must_change: bool = False, keep_session: int | None = None
    ) -> None:
        with self._store.session() as db:
            users.set_password(db, username, password, actor=actor, must_change=must_change, keep_session=keep_session)

    @store_call
    def set_staff_role(self, username: str, role: str, *, actor: str) -> None:
        with self._store.session() as db:
            users.set_role(db, username, role, actor=actor)

    @store_call
    def set_staff_active(self, username: str, active: bool, *, actor: str) -> None:
        with self._store.session() as db:
            users.set_active(db, username, active, actor=actor)

    @store_call
    def unlock_staff(self, username: str, *, actor: str) -> None:
        with self._store.session() as db:
            users.unlock(db, username, actor=actor)
        reset_failures(self._store, username)

    @store_call
    def revoke_token(self, username: str, token_id: int, *, actor: str) -> None:
        """NotFound unless `token_id` is one of `username`'s tokens."""
        with self._store.session() as db:
            if token_id not in {t.id for t in users.list_tokens(db, username)}:
                raise NotFound(N_("%(username)s has no token no. %(token)d."), username=username, token=token_id)
            users.revoke_token(db, token_id, actor=actor)

    @store_call
    def end_staff_session(self, username: str, session_pk: int, *, actor: str) -> None:
        """UserError if that dashboard session has already ended."""
        with self._store.session() as db:
            users.end_session(db, username, session_pk, actor=actor)

    @store_call
    def end_staff_sessions(self, username: str, *, actor: str) -> int:
        with self._store.session() as db:
            return users.end_sessions(db, username, actor=actor)

    # -- logging in (a failed attempt is committed even though it raises) -----------------------

    @store_call
    def check_login(self, username: str, password: str, *, client: str) -> Staff:
        """The staff member for this password; users.AuthError (Throttled, Busy: broker.accounts.auth_checks) otherwise."""
        return staff_of(check_password(self._store, username, password, client=client))

    @store_call
    def token_staff(self, token: str) -> Staff:
        """The staff member an API token stands for (noting when it was last used); users.AuthError otherwise."""
        now = utcnow()
        with self._store.reader() as db:  # a token is checked on every call: no write lock for it
            row, user = users.find_token(db, token)
            staff, touch, row_id = staff_of(user), users.token_touch_due(row, now), row.id
        if touch:
            with self._store.session() as db:
                users.touch_token(db, row_id, now)
        return staff

    @store_call
    def web_session(self, session_id: str) -> StaffSession | None:
        """The live dashboard session of this cookie id, noting it was seen (at most every few minutes)."""
        with self._store.reader() as db:
            found = web_sessions.live(db, session_id)
            if found is None:
                return None
            live, touch = StaffSession(found.row.id, staff_of(found.user)), found.touch_due
        if touch:
            try:
                with self._store.session() as db:
                    web_sessions.touch(db, live.pk)
            except (StoreError, sa.OperationalError) as e:  # last_seen is for the session list; a busy database must not refuse the page
                log.warning("could not note when session %d was last seen: %s", live.pk, e)
        return live

    @store_call
    def start_web_session(self, username: str, *, client: str, user_agent: str) -> tuple[str, StaffSession | None]:
        """A new dashboard session: (the id for the cookie, the session as web_session() sees it)."""
        with self._store.session() as db:
            session_id = web_sessions.start(db, username, client=client, user_agent=user_agent)
        return session_id, self.web_session(session_id)

    @store_call
    def log_out(self, username: str) -> None:
        """End every dashboard session of this user: a copy of the cookie is worth nothing after."""
        with self._store.session() as db:
            web_sessions.end_user_sessions(db, username, by=username, reason="logout")

    # -- the table itself (broker.hall.table_service: out of service, the light by hand, check-out) --

    @store_call
    def set_out_of_service(self, table: str, out: bool, *, actor: str, reason: str = "") -> OutOfService | None:
        """Out of service: no game starts or moves there, no check-in, its light kept off. Audited."""
        return self._hub.set_out_of_service(table, out, actor=actor, reason=reason)

    @store_call
    def switch_light(self, table: str, on: bool, *, actor: str) -> None:
        """The light by hand; on without a game raises "light without a game" like the table's button."""
        self._hub.switch_light(table, on, actor=actor)

    @store_call
    def foosball_checkout(self, table: str, member_id: int, *, actor: str) -> str:
        """End a member's check-in (a forgotten card); the member's name."""
        return self._hub.foosball_checkout(table, member_id, actor=actor)

    # -- bills: voiding an extra, on a running game or an issued bill ----------------------------

    @store_call
    def void_extra(self, session_id: int, extra_op: int, reason: str, *, actor: str, issued_ok: bool) -> sessions.SessionState:
        """Reverse the extra added by op number `extra_op`, with a reason (a negative line; nothing is deleted).

        `issued_ok`: whether the actor may change a bill already issued (the dashboard's access table says who)."""
        return self._hub.void_extra(session_id, extra_op, reason, actor=actor, issued_ok=issued_ok)

    # == the till (broker.hall.till): each part's writes in its own section below ==============

    # -- till: tabs and products (broker.hall.till.tabs) -------------------------------------

    def _tabs_call(self, fn: Callable[[], T]) -> T:
        """A call into the tabs part, its refusals as the hub's own (NotFound: 404, ServiceError: 409)."""
        try:
            return fn()
        except TabMissing as e:
            raise NotFound.like(e) from None
        except (TabRefused, SplitError) as e:
            raise ServiceError.like(e) from None

    @store_call
    def add_product(self, name: str, name_en: str, price_cents: int, vat_percent: int, category: str, *, actor: str) -> int:
        """A new product on the list (the manager's); its id."""
        return self._tabs_call(lambda: self._hub.till.tabs.add_product(name, name_en, price_cents, vat_percent, category, actor))

    @store_call
    def update_product(self, product_id: int, changes: dict[str, Any], *, actor: str) -> None:
        """Change a product (name, name_en, price_cents, vat_percent, category, active); tabs keep what they copied."""
        self._tabs_call(lambda: self._hub.till.tabs.update_product(product_id, changes, actor))

    @store_call
    def open_walk_in_tab(self, label: str, *, actor: str, form_key: str | None = None) -> int:
        """A tab with no table (a drink at the bar); its id."""
        return self._tabs_call(lambda: self._hub.till.tabs.open_walk_in(label, actor, form_key))

    @store_call
    def add_tab_item(self, tab_id: int, product_id: int, quantity: int, *, actor: str, form_key: str | None = None) -> int:
        """Put a product on a tab; a repeated form_key (a double tap) answers the first item's id."""
        return self._tabs_call(lambda: self._hub.till.tabs.add_item(tab_id, product_id, quantity, actor, form_key))

    @store_call
    def void_tab_item(self, tab_id: int, item_id: int, reason: str, *, actor: str, may_void_paid: bool) -> None:
        """Void an item with a reason; after a payment only with `may_void_paid` (the manager's tabs.void_paid)."""
        self._tabs_call(lambda: self._hub.till.tabs.void_item(tab_id, item_id, reason, actor, may_void_paid=may_void_paid))

    @store_call
    def merge_tabs(self, into_id: int, from_id: int, *, actor: str) -> None:
        """Put tab `from_id` onto `into_id`: one bill for both."""
        self._tabs_call(lambda: self._hub.till.tabs.merge(into_id, from_id, actor))

    @store_call
    def split_tab(
        self,
        tab_id: int,
        mode: str,
        *,
        actor: str,
        parts: int = 0,
        assignment: dict[str, int] | None = None,
        amounts: list[int] | None = None,
    ) -> dict[str, Any]:
        """Split a stopped, unpaid tab (broker.domain.split): equal N parts, by items or by amounts; the stored plan."""
        return self._tabs_call(
            lambda: self._hub.till.tabs.split(tab_id, mode, actor, parts=parts, assignment=assignment, amounts=amounts or ())
        )

    @store_call
    def cancel_split(self, tab_id: int, *, actor: str) -> None:
        self._tabs_call(lambda: self._hub.till.tabs.cancel_split(tab_id, actor))

    # -- till: payments, reversals, receipts (broker.hall.till.payments) ------------------------

    @store_call
    def pay(
        self,
        tab_id: int,
        method: str,
        amount_cents: int,
        *,
        actor: str,
        tendered_cents: int | None = None,
        part: int | None = None,
        request_id: str | None = None,
    ) -> Taken:
        """Take a payment for a tab (or its split part); a resent form (the same request_id) gets the same payment back."""
        with _payment_refusals():
            return self._hub.till.payments.pay(
                tab_id, method, amount_cents, staff=actor, tendered_cents=tendered_cents, part=part, request_id=request_id
            )

    @store_call
    def reverse_payment(self, payment_id: int, reason: str, *, actor: str, request_id: str | None = None) -> Taken:
        """Give a payment back with a reason (a manager's: the dashboard's access table); a new receipt of the opposite amount."""
        with _payment_refusals():
            return self._hub.till.payments.reverse(payment_id, reason, staff=actor, request_id=request_id)

    def print_receipt(self, payment_id: int) -> None:
        """Send the receipt to the venue's ESC/POS printer, on the caller's thread (never the writer);
        a printer that is not set up or does not answer raises a ServiceError saying so."""
        receipt = self.reads.receipt_of(payment_id)
        if receipt is None:
            raise NotFound(N_("There is no such payment."))
        with _payment_refusals():
            print_receipt(self._hub.venue.till.printer, receipt, self._hub.venue.tz)

    # -- till: the business day and its close-out (broker.hall.till.closeout) -------------------

    @store_call
    def open_day(self, float_cents: int, *, actor: str) -> date:
        """Open the current business day with the float in the drawer (cents); the day opened."""
        try:
            return self._hub.till.days.open_day(float_cents, actor=actor)
        except DayRefused as e:
            raise ServiceError.like(e) from None

    @store_call
    def close_day(self, day: date, counted_cents: int, *, actor: str, open_tabs_ok: bool = False) -> ZReport:
        """Close `day` with the counted cash: its Z report, frozen. Refused (ServiceError) when it is
        closed already, has not begun, or has unpaid tabs and `open_tabs_ok` is not given."""
        try:
            return self._hub.till.days.close_day(day, counted_cents, actor=actor, open_tabs_ok=open_tabs_ok)
        except DayRefused as e:
            raise ServiceError.like(e) from None

    # -- till: eKasa, paragóny, its settings (broker.hall.till.fiscal) ----------------------------

    # Refusals of broker.hall.till.fiscal come out as ServiceError, as the hub's own do.

    @store_call
    def ekasa_save_settings(
        self, *, enabled: bool, url: str, timeout_s: float, cash_register_code: str, actor: str
    ) -> object:  # broker.hall.till.fiscal.EkasaSettings
        """The manager's eKasa settings (off by default), audited; the follow-up uses them at once."""
        from broker.hall.till.fiscal import EkasaSettings, FiscalRefusal

        s = EkasaSettings(enabled=enabled, url=url, timeout_s=timeout_s, cash_register_code=cash_register_code)
        try:
            return self._hub.till.fiscal.save_settings(s, actor=actor)
        except FiscalRefusal as e:
            raise ServiceError.like(e) from None

    def ekasa_test_connection(self, *, url: str, timeout_s: float) -> object:  # broker.adapters.ekasa.ClientStatus
        """Ask the eKasa client at `url` how it is (on the caller's thread, not the writer's)."""
        from broker.hall.till.fiscal import EkasaSettings, FiscalRefusal

        try:
            return self._hub.till.fiscal.test_connection(EkasaSettings(url=url, timeout_s=timeout_s))
        except FiscalRefusal as e:
            raise ServiceError.like(e) from None

    @store_call
    def ekasa_record_paragon(self, payment_id: int, number: str, at, *, actor: str) -> None:
        """A hand-written paragón for a payment the client could not take; registered as one later. Audited."""
        from broker.hall.till.fiscal import FiscalRefusal

        try:
            self._hub.till.fiscal.record_paragon(payment_id, number, at, actor=actor)
        except FiscalRefusal as e:
            raise ServiceError.like(e) from None

    @store_call
    def ekasa_retry(self, payment_id: int, *, actor: str) -> None:
        """A manager sends a failed receipt again (after fixing the cause). Audited."""
        from broker.hall.till.fiscal import FiscalRefusal

        try:
            self._hub.till.fiscal.retry(payment_id, actor=actor)
        except FiscalRefusal as e:
            raise ServiceError.like(e) from None

    # -- notifications: push targets, a test message (broker.hall.notifications) -----------------

    # Refusals of broker.hall.notifications come out as ServiceError. URLs are secrets: passed in,
    # never returned (the reads give them masked).

    @store_call
    def notify_add_target(
        self, *, url: str, kinds: tuple[str, ...], min_severity: str, quiet_from: str, quiet_to: str, lang: str, label: str, actor: str
    ) -> str:
        """A new push target (audited without its URL); returns its id."""
        from broker.hall.notifications import NotifyRefusal, Target

        t = Target("", url, tuple(kinds), min_severity, quiet_from, quiet_to, lang, label)
        try:
            return self._hub.notifications.add_target(t, actor=actor).id
        except NotifyRefusal as e:
            raise ServiceError.like(e) from None

    @store_call
    def notify_update_target(
        self,
        target_id: str,
        *,
        url: str,
        kinds: tuple[str, ...],
        min_severity: str,
        quiet_from: str,
        quiet_to: str,
        lang: str,
        label: str,
        actor: str,
    ) -> None:
        """Change a target; an empty `url` keeps the stored one (the page never has it)."""
        from broker.hall.notifications import NotifyRefusal, Target

        t = Target(target_id, url, tuple(kinds), min_severity, quiet_from, quiet_to, lang, label)
        try:
            self._hub.notifications.update_target(t, actor=actor)
        except NotifyRefusal as e:
            raise ServiceError.like(e) from None

    @store_call
    def notify_remove_target(self, target_id: str, *, actor: str) -> None:
        from broker.hall.notifications import NotifyRefusal

        try:
            self._hub.notifications.remove_target(target_id, actor=actor)
        except NotifyRefusal as e:
            raise ServiceError.like(e) from None

    def notify_send_test(self, target_id: str) -> str | None:
        """Send a test message now (the caller's thread, not the writer's); None when delivered, else why not."""
        from broker.hall.notifications import NotifyRefusal

        try:
            return self._hub.notifications.send_test(target_id)
        except NotifyRefusal as e:
            raise ServiceError.like(e) from None
