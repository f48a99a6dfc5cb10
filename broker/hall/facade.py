"""The one door from outside the hub: the dashboard (API routes and pages alike) and the demo.

Every change is a command (broker.core.commands) handed to `execute`, which the hub's one writer
runs; an API route and the page of the same action build the same command. The rest is what is
neither a change of the hall nor a read: checking a password (argon2 on the caller's thread,
then the one write it may need as a command), looking up a login or a token (noting, as a
command, when it was last used), printing a receipt, asking the eKasa client or a push target
whether it answers. Store failures come out as broker.core.store_errors, never sqlalchemy's.

Reads go through `reads` (broker.hall.read_models), which never writes.
"""

from __future__ import annotations

import logging
from typing import TypeVar

from broker.accounts import logins, users
from broker.accounts.auth_checks import check_password
from broker.accounts.staff import Staff, StaffLogin, staff_of
from broker.adapters.ekasa import ClientStatus
from broker.adapters.receipt_printer import print_receipt
from broker.core.commands import Command
from broker.core.errors import CardInUse, NotFound, ServiceError
from broker.core.store_errors import Conflict, StoreUnavailable, store_call, translated
from broker.domain.refusals import N_
from broker.domain.till.payment_rules import PaymentRefused
from broker.hall.hub import Hub
from broker.hall.read_models import HallReads
from broker.notify.notifications import NotifyRefusal
from broker.people.logins import StartLogin, StoreRehash, TouchLogin, TouchToken
from broker.storage.members import MemberError
from broker.storage.members_csv import MemberImportError
from broker.storage.types import utcnow
from broker.till.fiscal import EkasaSettings, FiscalRefusal

log = logging.getLogger("lavos.hub")
R = TypeVar("R")

# The errors a caller of the facade or the read models may meet (besides the domain's own:
# MemberError, MemberImportError, users.UserError, users.AuthError, reports.ReportError).
__all__ = [
    "CardInUse",
    "Conflict",
    "HubFacade",
    "MemberError",
    "MemberImportError",
    "NotFound",
    "ServiceError",
    "Staff",
    "StaffLogin",
    "StoreUnavailable",
]


class HubFacade:
    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self._store = hub.store
        self.reads = HallReads(hub)

    def execute(self, cmd: Command[R]) -> R:
        """Run a command on the hub's writer: what its handler answers, or its refusal."""
        with translated():
            return self._hub.execute(cmd)

    # -- logging in (a failed attempt is counted in memory; the check itself writes nothing) ------

    @store_call
    def check_login(self, username: str, password: str, *, client: str) -> Staff:
        """The staff member for this password; users.AuthError (Throttled, Busy: broker.accounts.auth_checks) otherwise."""
        user = check_password(
            self._store, username, password, client=client, store_rehash=self._store_rehash, hasher=self._hub.password_hasher
        )
        return staff_of(user)

    def _store_rehash(self, username: str, old_hash: str, new_hash: str) -> bool:
        return self._hub.execute(StoreRehash(username=username, old_hash=old_hash, new_hash=new_hash, actor=username))

    @store_call
    def token_staff(self, token: str) -> Staff:
        """The staff member an API token stands for (noting when it was last used); users.AuthError otherwise."""
        now = utcnow()
        with self._store.reader() as db:  # a token is checked on every call: no write lock for it
            row, user = users.find_token(db, token)
            staff, touch, row_id = staff_of(user), users.token_touch_due(row, now), row.id
        if touch:  # bookkeeping: the call goes on without it (a busy writer or database must not refuse it)
            self._hub.execute_soon(TouchToken(token_id=row_id, at=now, actor=staff.username))
        return staff

    @store_call
    def live_login(self, login_id: str) -> StaffLogin | None:
        """The live dashboard login of this cookie id, noting it was seen (at most every minute)."""
        with self._store.reader() as db:
            found = logins.live(db, login_id)
            if found is None:
                return None
            live, touch = StaffLogin(found.row.id, staff_of(found.user)), found.touch_due
        if touch:  # last_seen is for the list of logins: the page goes on without it
            self._hub.execute_soon(TouchLogin(login=live.pk, actor=live.staff.username))
        return live

    @store_call
    def start_login(self, username: str, *, client: str, user_agent: str) -> tuple[str, StaffLogin | None]:
        """A new dashboard login: (the id for the cookie, the login as live_login() sees it)."""
        login_id = self._hub.execute(StartLogin(client=client, user_agent=user_agent, actor=username))
        return login_id, self.live_login(login_id)

    # -- what talks to a device, on the caller's thread (never the writer) -----------------------

    def print_receipt(self, payment_id: int) -> None:
        """Send the receipt to the venue's ESC/POS printer; a printer that is not set up or does not
        answer raises a ServiceError saying so."""
        receipt = self.reads.till.receipt_of(payment_id)
        if receipt is None:
            raise NotFound(N_("There is no such payment."))
        try:
            print_receipt(self._hub.venue.till.printer, receipt, self._hub.venue.tz)
        except PaymentRefused as e:
            raise ServiceError.like(e) from None

    def ekasa_test_connection(self, *, url: str, timeout_s: float) -> ClientStatus:
        """Ask the eKasa client at `url` how it is."""
        try:
            return self._hub.till.fiscal.test_connection(EkasaSettings(url=url, timeout_s=timeout_s))
        except FiscalRefusal as e:
            raise ServiceError.like(e) from None

    def notify_send_test(self, target_id: str) -> str | None:
        """Send a test message now; None when delivered, else why not."""
        try:
            return self._hub.notifications.send_test(target_id)
        except NotifyRefusal as e:
            raise ServiceError.like(e) from None
