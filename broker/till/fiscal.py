"""eKasa: every sale registered once through the certified client (broker.adapters.ekasa), followed
until it is; a hand-written paragón when the client is down. Off by default.

Runs on the hub's writer (see broker.till); the calls to the client run on a thread of its own.

The states of a payment (`Payment.fiscal_state`, only these columns ever change here):
- "none": eKasa is off (the receipt is the non-fiscal one), or nothing to register (0 €);
- "pending": to be sent; "offline": the client stored it offline (isSuccessful null, an OKP),
  followed until it is sent (the law gives 96 h; an alert after 24 h);
- "registered": the eKasa system has it (fiscal_id: its receipt id);
- "failed": refused as invalid, with the reason for staff; a manager sends it again after fixing;
- "paragon": written by hand while the client was down (paragon_no, paragon_at), to be registered
  as a paragón once the client is back (the follow-up does it on its own).

Never twice: the payment's externalId ("lavos-<venue>-<id>") is asked about before every send
(`lookup`), so a send that timed out, an answer lost in a restart of the hub or of the client, or
a paragón recorded for a payment that got through after all, is found instead of sent again.
The follow-up thread only reads the store; what it learns goes back through the writer and
changes a row only if its state is still the one the thread saw.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.adapters.ekasa import (
    DEFAULT_URL,
    MAX_PARAGON_NUMBER,
    ClientStatus,
    EkasaClient,
    PortosClient,
    ReceiptRequest,
    Registration,
    Unreachable,
    Unsendable,
    items_of,
)
from broker.core.commands import Command, command, handles
from broker.core.ports import HallState
from broker.domain.floor import alert_kinds
from broker.domain.refusals import N_, Refusal
from broker.domain.till.receipt import lines_from_json
from broker.domain.venue import WEEKDAYS
from broker.domain.vouchers import is_fiscal
from broker.storage.after_commit import Effects, after_commit
from broker.storage.audit import record_audit
from broker.storage.models import Payment, Setting
from broker.till.events import FiscalChanged

log = logging.getLogger("lavos.hub")

SETTINGS_KEY = "ekasa"
FOLLOWED = ("pending", "offline", "paragon")  # the states the follow-up works on
UNREGISTERED = ("pending", "offline", "failed", "paragon")  # what staff are shown on /ekasa
_CODE = re.compile(r"^\d{0,20}$")


class FiscalRefusal(Refusal):
    pass


@dataclass(frozen=True)
class EkasaSettings:
    """The manager's eKasa settings (table `settings`, key "ekasa")."""

    enabled: bool = False
    url: str = DEFAULT_URL
    timeout_s: float = 10.0
    cash_register_code: str = ""  # the ORP code (kód pokladnice), when the client serves more than one

    @classmethod
    def from_json(cls, doc: dict[str, Any] | None) -> EkasaSettings:
        doc = doc or {}
        base = cls()
        return cls(
            enabled=bool(doc.get("enabled", base.enabled)),
            url=str(doc.get("url") or base.url),
            timeout_s=float(doc.get("timeout_s") or base.timeout_s),
            cash_register_code=str(doc.get("cash_register_code") or ""),
        )

    def validated(self) -> EkasaSettings:
        url = self.url.strip()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise FiscalRefusal(N_("The eKasa address must look like http://localhost:3010."))
        if not 1 <= self.timeout_s <= 60:
            raise FiscalRefusal(N_("The timeout must be between 1 and 60 seconds."))
        code = self.cash_register_code.strip()
        if not _CODE.match(code):
            raise FiscalRefusal(N_("The cash register code is digits only (e.g. 88812345678900001)."))
        return replace(self, url=url.rstrip("/"), cash_register_code=code)


@dataclass(frozen=True)
class FiscalHealth:
    """The follow-up's view of the client, for the page (memory only: it starts unknown)."""

    reachable: bool | None
    unreachable_since: datetime | None
    last_error: str | None


@dataclass(frozen=True)
class _Job:
    payment_id: int
    state: str
    external_id: str
    request: ReceiptRequest | None  # None: not sendable yet (a reversal whose original is not registered)
    stored_at: datetime | None  # when it went offline


@command
class SaveEkasaSettings(Command[EkasaSettings]):
    """The manager's eKasa settings, checked (a URL the client can be at, a sane timeout), audited."""

    enabled: bool
    url: str = DEFAULT_URL
    timeout_s: float = 10.0
    cash_register_code: str = ""


@command
class RecordParagon(Command[None]):
    """A hand-written paragón (its number and time) for a payment eKasa could not take; registered as one later."""

    payment: int
    number: str
    at: datetime


@command
class RetryEkasa(Command[None]):
    """A manager sends a failed receipt to eKasa again (after fixing the cause)."""

    payment: int


def external_id(venue_id: str, payment_id: int) -> str:
    return f"lavos-{venue_id[:20]}-{payment_id}"


def parse_paragon_number(text: str) -> int:
    n = text.strip()
    if not n.isdigit() or not 1 <= int(n) <= MAX_PARAGON_NUMBER:
        raise FiscalRefusal(N_("The paragón number is the number printed on the paragón pad (digits only)."))
    return int(n)


class Fiscal:
    # Tuning (tests shorten them): how often offline receipts are asked about, the retry backoff,
    # and when staff are alerted.
    poll_s = 5.0
    backoff_s: tuple[float, ...] = (1.0, 2.0, 5.0, 15.0, 30.0, 60.0)
    unreachable_alert_after = timedelta(minutes=5)
    offline_alert_after = timedelta(hours=24)

    def __init__(
        self,
        hall: HallState,
        write: Callable[[Callable[[], Any]], Any],
        client_factory: Callable[[EkasaSettings], EkasaClient] | None = None,
    ) -> None:
        self.h = hall
        self._write = write
        self._client_factory = client_factory or (lambda s: PortosClient(s.url, timeout_s=s.timeout_s))
        self._settings = EkasaSettings()  # the writer's copy; the thread reads the reference
        self._client: tuple[EkasaSettings, EkasaClient] | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._retry_at: dict[int, tuple[float, int]] = {}  # payment id -> (monotonic time, attempts)
        self._health = FiscalHealth(None, None, None)
        self._alerted: set[str] = set()

    # -- the writer (called by Payments in the payment's transaction) ----------------------------

    def payment_recorded(self, db: Db, payment: Payment, after: Effects) -> None:
        """A payment (or a reversal) was just added in `db` (the writer, its transaction open, the
        payment flushed: it has its id and frozen lines). Off: it stays fiscal_state "none"."""
        if not self._settings.enabled or payment.amount_cents == 0:
            return
        if not is_fiscal(lines_from_json(payment.lines or {})):
            return  # credit sold or given back (a multi-purpose voucher): no supply, not sent (broker.domain.vouchers)
        if payment.voucher is not None and payment.reverses_id is not None:
            return  # a package's exchange given back: eKasa has no positive Voucher item (see README, "Members' money")
        if payment.reverses_id is not None:
            original = db.get(Payment, payment.reverses_id)
            if original is None or original.fiscal_state == "none":
                return  # the sale was never fiscal (eKasa was off then): nothing to refund there
        now = self.h.clock()
        payment.fiscal_state = "pending"
        payment.fiscal_updated_at = now
        payment.fiscal_detail = {"since": now.isoformat()}
        after.add(self._wake.set)

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        """After the hub's start: read the settings, then follow up whatever was left pending or offline."""
        with self.h.store.reader() as db:
            row = db.get(Setting, SETTINGS_KEY)
            self._settings = EkasaSettings.from_json(row.value if row else None)
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="ekasa-follow-up", daemon=True)
        self._thread.start()
        self._wake.set()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=self._settings.timeout_s + 5)
            self._thread = None
        if self._client is not None:
            _close(self._client[1])
            self._client = None

    @property
    def settings(self) -> EkasaSettings:
        return self._settings

    def health(self) -> FiscalHealth:
        return self._health

    # -- staff actions (the commands' handlers, on the writer) ----------------------------------

    @handles(SaveEkasaSettings)
    def save_settings(self, c: SaveEkasaSettings) -> EkasaSettings:
        """The manager's eKasa settings (off by default), audited; the follow-up uses them at once."""
        new = EkasaSettings(enabled=c.enabled, url=c.url, timeout_s=c.timeout_s, cash_register_code=c.cash_register_code).validated()
        actor = c.actor
        with self.h.store.session() as db:
            row = db.get(Setting, SETTINGS_KEY)
            before = EkasaSettings.from_json(row.value if row else None)
            if row is None:
                row = Setting(key=SETTINGS_KEY, value=asdict(new), updated_by=actor, updated_at=self.h.clock())
                db.add(row)
            else:
                row.value, row.updated_by, row.updated_at = asdict(new), actor, self.h.clock()
            record_audit(db, actor, "ekasa.settings", "settings:ekasa", {"before": asdict(before), "after": asdict(new)}, at=self.h.clock())
        self._settings = new
        self._retry_at.clear()
        self._wake.set()
        return new

    def test_connection(self, settings: EkasaSettings) -> ClientStatus:
        """Ask the client at these (unsaved) settings how it is; the caller's thread, never the writer's."""
        s = settings.validated()
        client = self._client_factory(s)
        try:
            return client.status()
        finally:
            _close(client)

    @handles(RecordParagon)
    def record_paragon(self, c: RecordParagon) -> None:
        """A hand-written paragón for a payment the client could not take: registered as one later."""
        payment_id, at, actor = c.payment, c.at, c.actor
        n = parse_paragon_number(c.number)
        if at > self.h.clock() + timedelta(minutes=5):
            raise FiscalRefusal(N_("The paragón's time is in the future."))
        with self.h.store.session() as db:
            p = self._payment(db, payment_id)
            if p.fiscal_state == "paragon" and p.paragon_no == str(n):
                return  # the same form again (a double tap): already recorded
            other = db.scalar(select(Payment).where(Payment.paragon_no == str(n), Payment.id != p.id).limit(1))
            if other is not None:
                raise FiscalRefusal(
                    N_("Paragón no. %(number)s is already recorded for receipt no. %(receipt)s."),
                    number=n,
                    receipt=other.receipt_no or other.id,
                )
            if p.fiscal_state not in ("pending", "failed"):
                raise FiscalRefusal(
                    N_("Receipt no. %(receipt)s needs no paragón: eKasa has it or will send it on its own."),
                    receipt=p.receipt_no or p.id,
                )
            if p.at - at > timedelta(hours=1) or at - p.at > timedelta(hours=96):
                raise FiscalRefusal(N_("The paragón's time must be near the time of the payment."))
            before = p.fiscal_state
            self._set(p, "paragon", paragon_number=n)
            p.paragon_no, p.paragon_at = str(n), at
            record_audit(db, actor, "ekasa.paragon", f"payment:{p.id}", {"paragon_no": n, "paragon_at": at.isoformat(), "was": before})
            after_commit(db).add(self._notify(p.id, "paragon"))
        self._retry_at.pop(payment_id, None)
        self._wake.set()

    @handles(RetryEkasa)
    def retry(self, c: RetryEkasa) -> None:
        """A manager sends a failed one again (after fixing what was wrong); audited."""
        with self.h.store.session() as db:
            p = self._payment(db, c.payment)
            if p.fiscal_state not in ("failed", "pending", "paragon"):
                raise FiscalRefusal(N_("Receipt no. %(receipt)s has nothing to send to eKasa."), receipt=p.receipt_no or p.id)
            was = p.fiscal_state
            self._set(p, "paragon" if p.paragon_no else "pending")
            record_audit(db, c.actor, "ekasa.retry", f"payment:{p.id}", {"was": was})
            after_commit(db).add(self._notify(p.id, p.fiscal_state))
        self._retry_at.pop(c.payment, None)
        self._wake.set()

    # -- the follow-up thread --------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.poll_s)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                self._pass()
            except Exception:
                log.exception("eKasa follow-up pass failed")

    def _pass(self) -> None:
        settings = self._settings
        if not settings.enabled:
            return
        client = self._client_for(settings)
        jobs = self._jobs(settings)
        due = [j for j in jobs if self._retry_at.get(j.payment_id, (0.0, 0))[0] <= time.monotonic()]
        if not due:
            if not jobs:
                self._reached(client.status().reachable, None)
            self._check_overdue(jobs)
            return
        for job in due:
            if self._stop.is_set() or self._settings is not settings:
                return
            try:
                result = self._follow(client, job)
            except Unreachable as e:
                self._attempt_failed(job, e)
                self._reached(False, e.why)
                break  # the client is away: the rest waits for the next pass
            except Unsendable as e:
                result = Registration("failed", error=str(e))
            self._reached(True, None)
            self._retry_at.pop(job.payment_id, None)
            if result is not None:
                self._write(functools.partial(self._apply, job, result))
        self._check_overdue(jobs)

    def _follow(self, client: EkasaClient, job: _Job) -> Registration | None:
        """Ask first; send only when the client says it does not have it. None: nothing new."""
        known = client.lookup(job.external_id)
        if known is not None:
            if known.outcome == "offline" and job.state == "offline":
                return None  # still waiting to be sent: keep following
            return known
        if job.request is None:
            return None
        if not job.request.items:
            return Registration("failed", error="the receipt's lines do not add up to the payment")
        return client.register(job.request)

    def _attempt_failed(self, job: _Job, e: Unreachable) -> None:
        _, attempts = self._retry_at.get(job.payment_id, (0.0, 0))
        delay = self.backoff_s[min(attempts, len(self.backoff_s) - 1)]
        self._retry_at[job.payment_id] = (time.monotonic() + delay, attempts + 1)
        log.warning("eKasa: payment %d not confirmed (%s); asking again in %.0f s", job.payment_id, e.why, delay)

    def _jobs(self, settings: EkasaSettings) -> list[_Job]:
        venue = self.h.venue
        with self.h.store.reader() as db:
            rows = db.scalars(select(Payment).where(Payment.fiscal_state.in_(FOLLOWED)).order_by(Payment.id)).all()
            return [self._job(db, p, settings, venue.venue.id) for p in rows]

    def _job(self, db: Db, p: Payment, settings: EkasaSettings, venue_id: str) -> _Job:
        stored = (p.fiscal_detail or {}).get("offline_since")
        ext = external_id(venue_id, p.id)
        refund_of = None
        if p.reverses_id is not None:
            original = db.get(Payment, p.reverses_id)
            ref = original and (original.fiscal_id or (original.fiscal_detail or {}).get("okp"))
            if not ref or original is None or original.fiscal_state not in ("registered", "offline"):
                return _Job(p.id, p.fiscal_state, ext, None, None)  # waits for its original
            refund_of = ref
        method = self.h.venue.till.named(p.method)
        name = method.name if method else p.method
        if p.tendered_cents and p.amount_cents > 0:
            payments: tuple[tuple[str, int], ...] = ((name, p.tendered_cents), ("Výdavok", -p.change_cents))
            if not p.change_cents:
                payments = ((name, p.tendered_cents),)
        else:
            payments = ((name, p.amount_cents + p.rounding_cents),)  # a reversal gives back the cash taken
        if p.voucher is not None:
            payments = ()  # a voucher's exchange: the voucher pays it, the receipt's total is 0
        try:
            items = items_of(lines_from_json(p.lines or {}), refund_of=refund_of, voucher=p.voucher)
        except Unsendable:
            items = ()
        if sum(i.price_cents for i in items) != (0 if p.voucher is not None else p.amount_cents):
            items = ()  # the frozen lines do not add up to the payment: refuse rather than register wrong
        request = ReceiptRequest(
            external_id=ext,
            items=items,
            payments=payments,
            cash_register_code=settings.cash_register_code,
            rounding_cents=p.rounding_cents,
            paragon_number=int(p.paragon_no) if p.fiscal_state == "paragon" and p.paragon_no else None,
            paragon_at=p.paragon_at,
        )
        return _Job(p.id, p.fiscal_state, ext, request, datetime.fromisoformat(stored) if stored else None)

    # -- results, back on the writer -------------------------------------------------------------

    def _apply(self, job: _Job, result: Registration) -> None:
        with self.h.store.session() as db:
            after = after_commit(db)
            p = db.get(Payment, job.payment_id)
            if p is None or p.fiscal_state != job.state:
                return  # staff changed it meanwhile (a paragón, a retry): the next pass sees the new state
            if result.outcome == "registered":
                self._set(p, "registered", receipt_id=result.receipt_id, okp=result.okp)
                p.fiscal_id = result.receipt_id
            elif result.outcome == "offline":
                self._set(p, "offline", okp=result.okp, offline_since=self.h.clock().isoformat())
            else:
                self._set(p, "failed", error=result.error, code=result.code)
                log.warning("eKasa refused payment %d: %s", p.id, result.error)
            after.add(self._notify(p.id, p.fiscal_state))

    def _set(self, p: Payment, state: str, **detail: Any) -> None:
        now = self.h.clock()
        kept = {k: v for k, v in (p.fiscal_detail or {}).items() if k in ("since", "okp", "offline_since")}
        p.fiscal_detail = {**kept, **{k: v for k, v in detail.items() if v is not None}, "state_at": now.isoformat()}
        p.fiscal_state = state
        p.fiscal_updated_at = now

    def _notify(self, payment_id: int, state: str) -> Callable[[], None]:
        return lambda: self.h.listeners.notify(FiscalChanged(payment=payment_id, state=state))

    @staticmethod
    def _payment(db: Db, payment_id: int) -> Payment:
        p = db.get(Payment, payment_id)
        if p is None:
            raise FiscalRefusal(N_("There is no such payment: reload the page."))
        return p

    # -- alerts: the client away during opening hours, a receipt offline too long -----------------

    def _reached(self, ok: bool, why: str | None) -> None:
        now = self.h.clock()
        h = self._health
        if ok:
            self._health = FiscalHealth(True, None, None)
            if h.reachable is False:
                self._settle(alert_kinds.ekasa_unreachable_key())
            return
        since = h.unreachable_since or now
        self._health = FiscalHealth(False, since, why)
        if now - since >= self.unreachable_alert_after and _open_at(self.h, now):
            minutes = int((now - since).total_seconds() // 60)
            self._raise(alert_kinds.ekasa_unreachable(minutes))

    def _check_overdue(self, jobs: list[_Job]) -> None:
        now = self.h.clock()
        late = [j for j in jobs if j.state == "offline" and j.stored_at and now - j.stored_at >= self.offline_alert_after]
        if late:
            hours = int(max(now - j.stored_at for j in late if j.stored_at).total_seconds() // 3600)
            self._raise(alert_kinds.ekasa_offline_overdue(len(late), hours))
        elif alert_kinds.ekasa_offline_overdue_key() in self._alerted:
            self._settle(alert_kinds.ekasa_offline_overdue_key())

    def _raise(self, spec: alert_kinds.AlertSpec) -> None:
        self._alerted.add(spec.cause_key)

        def run() -> None:
            with self.h.store.session() as db:
                self.h.alerts.raise_alert(db, spec)

        self._write(run)

    def _settle(self, key: str) -> None:
        self._alerted.discard(key)

        def run() -> None:
            with self.h.store.session() as db:
                self.h.alerts.settle(db, key, self.h.clock())

        self._write(run)

    def _client_for(self, settings: EkasaSettings) -> EkasaClient:
        if self._client is None or self._client[0] is not settings:
            if self._client is not None:
                _close(self._client[1])
            self._client = (settings, self._client_factory(settings))
        return self._client[1]


def _open_at(hall: HallState, at: datetime) -> bool:
    """Whether the hall is open at `at` (its opening hours; a close at or before the open is after midnight)."""
    local = at.astimezone(hall.venue.tz)
    for day in (local.date() - timedelta(days=1), local.date()):
        hours = hall.venue.hours_on(WEEKDAYS[day.weekday()])
        start = datetime.combine(day, hours.open, hall.venue.tz)
        end = datetime.combine(day + timedelta(days=1) if hours.close <= hours.open else day, hours.close, hall.venue.tz)
        if start <= local < end:
            return True
    return False


def _close(client: object) -> None:
    close = getattr(client, "close", None)
    if callable(close):
        close()
