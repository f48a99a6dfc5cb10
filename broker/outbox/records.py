"""The hall's records for the central reporting hub: written with the record, deleted on the centre's word.

Several halls report to one centre (docs/scaling.md, "several halls"). What the centre needs of a
hall is its committed money and game records: payments and reversals, closed days' Z reports,
stopped games, alerts. Each is written to the `outbox` table **in the transaction that makes it**,
so a record the hall has is a record the centre will get, and a rolled-back one never leaves.

One mechanism, in one place, for every handler: SQLAlchemy events on the hub's write sessions
(`Exporter.install`), no handler calls anything.
- `after_flush`: the rows of the exported models the ORM inserted or changed (a payment added, a
  game's state set to stopped, an alert acknowledged or closed);
- `do_orm_execute`: the two writes made with statements rather than the ORM (the day's close,
  guarded by `closed_at IS NULL`, and the alert upsert) must RETURN their primary key first, and
  the exporter reads it; one that does not is refused (ExportBlind), so a new such write cannot
  slip past the centre unnoticed;
- `before_commit`: those rows as records (`record_of`), numbered gap-free per hall
  (outbox_counter: the hub is the one writer, so a counter row is the gap-free sequence a
  database sequence is not), written in the same transaction.

Each record is built and checked by the contract the centre checks it by (broker.domain.central_records).
One that fails (a text the centre cannot keep, say) is written all the same, set aside at once
(`refused_at`), with the alert `central_refused`: the money it records is taken whatever the centre
will think of it. The sender (broker.outbox.sender) reads the others in order and delivers
them; `OutboxDelivered` deletes them once the centre acknowledged them, `OutboxRefused` sets aside
those the centre refused (with the same alert), both on the writer like every change. A record set
aside is kept (the manager's Modules page lists it and why) and never sent again, and never holds
up the records after it.

The bound: the outbox counts its bytes (outbox_counter.pending_bytes). At 80 % of
`CentralSettings.soft_limit_bytes` the alert `central_backlog` opens (warning); at 100 % it turns
critical. **Nothing is refused and nothing is dropped at 100 %**: the hall keeps taking money and
the outbox keeps growing past the bound, as the club's owner wants (a bar that stops taking money
because the internet is down loses more than any disk costs; a dropped record is a hole in the
centre's books forever). The default bound (256 MB) is months of an ordinary hall's records
(~1 kB each, a few hundred an evening), so the alert gives weeks to fix the link before the disk.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import delete, event, func, select
from sqlalchemy.orm import ORMExecuteState, Session, sessionmaker
from sqlalchemy.sql.dml import Insert, Update

from broker.core.commands import Command, command, handles
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.central_records import RecordRefused, check, payment_doc
from broker.domain.floor import alert_kinds
from broker.domain.refusals import MAX_DOC_CHARS, N_, Refusal, from_doc, plain, to_doc
from broker.storage.after_commit import after_commit
from broker.storage.models import Alert, BusinessDay, Game, OutboxCounter, OutboxRecord, Payment
from broker.till.takings import records_of

log = logging.getLogger("lavos.hub.outbox")

# What is exported: the table, and the kind its records have at the centre.
KIND_OF_TABLE = {"payments": "payment", "business_days": "zreport", "sessions": "game", "alerts": "alert"}
KINDS = tuple(KIND_OF_TABLE.values())
_MODELS: dict[type[Any], str] = {Payment: "payment", BusinessDay: "zreport", Game: "game", Alert: "alert"}
_TOUCHED = "lavos.outbox.touched"
_OPENED = "lavos.outbox.alerts_upserted"  # alerts touched by the upsert: exported only when opened by it
DEFAULT_SOFT_LIMIT = 256 * 1024 * 1024
WARN_AT = 0.8


class ExportBlind(AssertionError):
    """A statement changes an exported table without RETURNING its primary key: the centre would miss it."""


@dataclass(frozen=True)
class CentralSettings:
    """Where the hall's records go and how much may wait for the centre (`lavos server --central`)."""

    url: str  # the centre's base URL, e.g. https://central.example.org
    token: str  # the hall's own credential at the centre (`lavos central add-hall` prints it)
    ca_file: Path | None = None  # the centre's CA, when its certificate is not publicly trusted
    soft_limit_bytes: int = DEFAULT_SOFT_LIMIT
    batch: int = 200  # records a request
    retry_max_s: float = 30.0  # the longest wait between tries while the centre is away
    timeout_s: float = 10.0


@command
class OutboxDelivered(Command[int]):
    """The centre acknowledged every record up to `upto`: delete them (the sender's, after each batch); answers how many."""

    upto: int


@command
class OutboxRefused(Command[int]):
    """The centre refused these records as not what a hall sends ((seq, why) each): set them aside, kept and alerted; answers how many."""

    refused: tuple[tuple[int, Refusal], ...]


@dataclass(frozen=True)
class RefusedRecord:
    """A record set aside: the centre will never get it unless people act (the manager's Modules page)."""

    seq: int
    kind: str
    ref: str
    at: datetime
    refused_at: datetime
    reason: str  # in English (the log's words)
    why: Refusal  # the same, as the page says it in its language


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@dataclass
class _Touched:
    rows: dict[str, set[Any]] = field(default_factory=lambda: {k: set() for k in KINDS})
    upserted_alerts: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return any(self.rows.values())


class Outbox(Part):
    """The hall's outbox: its command (always, so the hub's handlers are complete) and, with a
    centre configured, the exporter's session events."""

    def __init__(self, hall: HallState, settings: CentralSettings | None = None) -> None:
        self.h = hall
        self.hall_id = hall.venue.venue.id
        self.settings = settings
        self.wake: Callable[[], None] = lambda: None  # the sender's: records are waiting
        self._installed: sessionmaker[Session] | None = None

    # -- the exporter --------------------------------------------------------------------

    def install(self) -> None:
        """Export from now on: every write transaction of the store writes its records here."""
        if self._installed is not None:
            return
        factory = self.h.store.sessions
        event.listen(factory, "after_flush", self._after_flush)
        event.listen(factory, "do_orm_execute", self._on_execute)
        event.listen(factory, "before_commit", self._before_commit)
        self._installed = factory

    def stopped(self) -> None:
        self.uninstall()

    def uninstall(self) -> None:
        factory, self._installed = self._installed, None
        if factory is not None:
            event.remove(factory, "after_flush", self._after_flush)
            event.remove(factory, "do_orm_execute", self._on_execute)
            event.remove(factory, "before_commit", self._before_commit)

    @staticmethod
    def _touched(db: Session) -> _Touched:
        found: _Touched | None = db.info.get(_TOUCHED)
        if found is None:
            found = db.info[_TOUCHED] = _Touched()
        return found

    def _after_flush(self, db: Session, _ctx: object) -> None:
        # In after_flush, new and dirty still name what this flush wrote (and have their ids).
        touched = self._touched(db)
        for obj in db.new:
            if (kind := _MODELS.get(type(obj))) is not None:
                touched.rows[kind].add(_pk(obj))
        for obj in db.dirty:
            # A payment's money never changes after it is taken (only its fiscal state): sent once.
            if (kind := _MODELS.get(type(obj))) not in (None, "payment") and db.is_modified(obj):
                touched.rows[kind].add(_pk(obj))

    def _on_execute(self, state: ORMExecuteState) -> Any:
        stmt = state.statement
        if not isinstance(stmt, Insert | Update):
            return None
        kind = KIND_OF_TABLE.get(getattr(stmt.table, "name", ""))
        if kind is None:
            return None
        # SQLAlchemy has no public "does it return anything" for a DML statement.
        if not stmt._returning:
            raise ExportBlind(
                f"a statement writes {stmt.table} without RETURNING its primary key, so its record would never reach the centre"
            )
        frozen = state.invoke_statement().freeze()
        touched = self._touched(state.session)
        keys = {row[0] for row in frozen().all()}
        touched.rows[kind] |= keys
        if kind == "alert":
            touched.upserted_alerts |= keys
        return frozen()

    def _before_commit(self, db: Session) -> None:
        db.flush()  # what is still pending is touched now, not after we looked
        records: list[tuple[str, str, dict[str, Any]]] = []
        # Writing the records may raise an alert (the bound), which is a record too: round again.
        while touched := db.info.pop(_TOUCHED, None):
            records += self._records(db, touched)
            if records:
                self._write(db, records)
                records = []
            db.flush()

    def _records(self, db: Session, touched: _Touched) -> list[tuple[str, str, dict[str, Any]]]:
        out: list[tuple[str, str, dict[str, Any]]] = []
        if ids := touched.rows["payment"]:
            rows = db.scalars(select(Payment).where(Payment.id.in_(ids)).order_by(Payment.id)).all()
            for row, rec in zip(rows, records_of(db, self.h, rows), strict=True):
                m = self.h.venue.till.named(row.method)  # the venue's methods and the wallet's
                doc = payment_doc(
                    rec,
                    business_day=row.business_day,
                    method_name=m.name if m else row.method,
                    method_name_en=(m.name_en or m.name) if m else row.method,
                    cash=bool(m.cash) if m else False,
                    fallback_vat=self.h.venue.billing.vat_percent,  # what the hall's Z report assumes for unassigned money
                )
                out.append(("payment", f"payment:{row.id}", doc))
        for day in sorted(touched.rows["zreport"]):
            d = db.get(BusinessDay, day, populate_existing=True)
            if d is not None and d.closed_at is not None and d.report:
                out.append(("zreport", f"day:{day.isoformat()}", {"day": day.isoformat(), "report": d.report}))
        for game_id in sorted(touched.rows["game"]):
            g = db.get(Game, game_id)
            if g is not None and g.state == "stopped":
                spec = self.h.tables.get(g.table_id)
                doc = {
                    "id": g.id,
                    "table": g.table_id,
                    "table_name": spec.name if spec else g.table_id,
                    "started_at": _iso(g.started_at),
                    "stopped_at": _iso(g.stopped_at),
                    "total_cents": g.total_cents,
                }  # no member: the centre needs takings and tables, not who played
                out.append(("game", f"game:{g.id}", doc))
        for alert_id in sorted(touched.rows["alert"]):
            a = db.get(Alert, alert_id, populate_existing=True)
            if a is None:
                continue
            # The upsert also only touches an open alert (a count): the centre needs opening, ack and close.
            if alert_id in touched.upserted_alerts and a.last_seen_at != a.opened_at:
                continue
            doc = {
                "id": a.id,
                "kind": a.kind,
                "table": a.table_id,
                "severity": a.severity,
                "message": a.message,
                "message_en": a.message_en,
                "opened_at": _iso(a.opened_at),
                "acked_at": _iso(a.acked_at),
                "closed_at": _iso(a.closed_at),
            }
            out.append(("alert", f"alert:{a.id}", doc))
        return out

    def _write(self, db: Session, records: Iterable[tuple[str, str, dict[str, Any]]]) -> None:
        counter = db.get(OutboxCounter, self.hall_id)
        if counter is None:
            counter = OutboxCounter(hall=self.hall_id, last_seq=0, pending_bytes=0)
            db.add(counter)
        before = counter.pending_bytes
        now = self.h.clock()
        for kind, ref, doc in records:
            counter.last_seq += 1
            size = len(json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode())
            counter.pending_bytes += size
            row = OutboxRecord(seq=counter.last_seq, hall=self.hall_id, kind=kind, ref=ref, at=now, record=doc, size=size)
            if (why := _refusal(kind, doc)) is not None:  # the centre would refuse it: set aside now, the money taken all the same
                _set_aside(row, now, Refusal(N_("the hall's own check: %(why)s"), why=why))
                log.error("record %s (%s) is not what the centre takes, set aside: %s", row.seq, ref, why)
                self.h.alerts.raise_alert(db, alert_kinds.central_refused(row.seq, ref))
            db.add(row)
        self._bound(db, before, counter.pending_bytes)
        after_commit(db).add(self.wake)

    def _bound(self, db: Session, before: int, after: int) -> None:
        """Alert when the waiting bytes cross 80 % of the bound, and again (critical) at 100 %."""
        limit = self.settings.soft_limit_bytes if self.settings else DEFAULT_SOFT_LIMIT
        for level, full in ((limit, True), (int(limit * WARN_AT), False)):
            if before < level <= after:
                spec = alert_kinds.central_backlog(after * 100 // limit, after // 1_000_000, full)
                self.h.alerts.raise_alert(db, spec)
                return

    # -- the centre's acknowledgement ----------------------------------------------------

    @handles(OutboxDelivered)
    def delivered(self, c: OutboxDelivered) -> int:
        with self.h.store.session() as db:
            counter = db.get(OutboxCounter, self.hall_id)
            if counter is None:
                return 0
            done = (OutboxRecord.seq <= c.upto, OutboxRecord.refused_at.is_(None))  # one set aside is kept
            n, size = db.execute(select(func.count(), func.coalesce(func.sum(OutboxRecord.size), 0)).where(*done)).one()
            if not n:
                return 0
            db.execute(delete(OutboxRecord).where(*done))
            counter.pending_bytes = max(0, counter.pending_bytes - int(size))
            limit = self.settings.soft_limit_bytes if self.settings else DEFAULT_SOFT_LIMIT
            if counter.pending_bytes < limit * WARN_AT:
                self.h.alerts.settle(db, alert_kinds.central_backlog_key(), self.h.clock())
        return int(n)

    @handles(OutboxRefused)
    def refused(self, c: OutboxRefused) -> int:
        why = dict(c.refused)
        with self.h.store.session() as db:
            rows = db.scalars(
                select(OutboxRecord).where(OutboxRecord.seq.in_(list(why)), OutboxRecord.refused_at.is_(None)).order_by(OutboxRecord.seq)
            ).all()
            now = self.h.clock()
            for row in rows:
                _set_aside(row, now, why[row.seq])
                log.error("the centre refused record %s (%s), set aside: %s", row.seq, row.ref, row.refused_reason)
                self.h.alerts.raise_alert(db, alert_kinds.central_refused(row.seq, row.ref))
            return len(rows)


def _set_aside(row: OutboxRecord, now: datetime, why: Refusal) -> None:
    """Keep `row` aside with why: in English (the log's words) and as the page says it (refusals.to_doc)."""
    row.refused_at, row.refused_reason = now, str(why)[:2000]
    doc = to_doc(why)
    row.refused_why = doc if len(json.dumps(doc)) <= MAX_DOC_CHARS else None


def refused_records(db: Session, limit: int = 200) -> list[RefusedRecord]:
    """The records set aside, newest first."""
    rows = db.scalars(select(OutboxRecord).where(OutboxRecord.refused_at.is_not(None)).order_by(OutboxRecord.seq.desc()).limit(limit))
    return [
        RefusedRecord(r.seq, r.kind, r.ref, r.at, r.refused_at, r.refused_reason or "", _why(r)) for r in rows if r.refused_at is not None
    ]


def _why(row: OutboxRecord) -> Refusal:
    return (from_doc(row.refused_why) if row.refused_why is not None else None) or plain(row.refused_reason or "")


def _refusal(kind: str, doc: dict[str, Any]) -> Refusal | None:
    """Why the centre would refuse this record, or None. Never raises: the record's money is being
    committed, and a check that fails for a reason of its own must not take the till down with it."""
    try:
        check(kind, doc)
    except RecordRefused as e:
        return e
    except Exception as e:
        log.exception("checking record %s failed", kind)
        return Refusal(N_("the check failed: %(error)s"), error=type(e).__name__)
    return None


def _pk(obj: Any) -> Any:
    if isinstance(obj, BusinessDay):
        return obj.day
    return obj.id
