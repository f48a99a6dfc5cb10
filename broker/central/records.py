"""The centre applies a hall's records: each checked before anything is kept, each (hall, seq) once, each thing once.

A batch comes from one hall's sender (broker.outbox.sender) as
`{"hall": "lavos", "records": [{"seq": 1, "kind": "payment", "ref": "payment:12", "at": …, "data": {…}}]}`.

1. Every record is checked against the contract the hall built it by (broker.domain.central_records:
   its whole shape, the hall's money rules, text a database and a page can hold). A batch holding
   any record that is not what a hall sends is refused whole (RecordsRefused, 400), naming each such
   record's seq: the hall sets exactly those aside and sends the rest again, so one bad record never
   holds up the ones after it. Nothing of it is kept; the hall's row counts the refusal.
2. Each record is inserted into central_records ON CONFLICT (hall, seq) DO NOTHING; one that went in
   is applied by what it is, (hall, kind, key): a payment and a closed day are facts, kept once: the
   same again under a new seq is a copy, anything else under that key is refused as in 1 (a
   correction is a record of its own: a reversal is a payment with its own id). A game and an alert
   are states: the later record replaces the earlier.
3. A new payment adds itself to the hall's takings of its business day (central_takings, per payment
   method), in the same transaction, by the Z report's own function (broker.domain.till.zreport.z_report):
   the centre's pages read these sums, never the records, and the centre's day equals the hall's Z
   report to the cent.

All in one transaction, so a batch is applied whole or not at all. The answer is the highest seq the
centre now has of the batch: the hall deletes up to there. Two deliveries of the same batch at once
(a retry while the first is still in flight) meet at the hall's row lock and the unique key.

A copy is a copy only if it is the same record: a seq the centre holds with another record (the
hall's database restored from a backup numbers its new records again from the backup's last seq)
refuses the whole batch (CentralConflict, 409), so the hall keeps its records and both ends say why,
instead of the centre acknowledging new money as a copy of old and dropping it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from broker.central.accounts import CentralError
from broker.domain.central_records import (
    KINDS,
    MAX_KEY,
    AlertData,
    Checked,
    Data,
    GameData,
    PaymentData,
    RecordRefused,
    ZReportData,
    check_record,
    differences,
    same,
)
from broker.domain.refusals import N_, Refusal
from broker.domain.till.zreport import DayOpening, Method, z_report
from broker.storage.dialect import table_of, upsert_insert
from broker.storage.models import (
    CentralAlert,
    CentralDay,
    CentralGame,
    CentralHall,
    CentralPayment,
    CentralRecord,
    CentralTakings,
)
from broker.storage.types import utcnow

__all__ = ["KINDS", "MAX_BATCH", "Applied", "CentralConflict", "RecordsRefused", "apply_records"]

MAX_BATCH = 1000  # records a request; the sender sends 200


class CentralConflict(CentralError):
    """A record's (hall, seq) is taken at the centre by another record: nothing of the batch is applied."""

    def __init__(self, hall: str, seq: int, held: str, sent: str, last_seq: int) -> None:
        super().__init__(
            f"hall {hall}'s record {seq} is {sent!r}, but the centre holds {held!r} as {seq}: was the hall's database "
            f"restored from a backup? The centre holds this hall's records up to {last_seq}; nothing of this batch was applied"
        )
        self.last_seq = last_seq


class RecordsRefused(CentralError):
    """Records that are not what a hall sends (`refused`: their seq, None when the seq itself is no
    seq, and why): nothing of the batch is applied; the hall sets them aside and sends the rest."""

    def __init__(self, refused: list[tuple[int | None, Refusal]]) -> None:
        self.refused = refused
        said = "; ".join(f"record {seq}: {why}" if seq is not None else str(why) for seq, why in refused[:5])
        more = f" (and {len(refused) - 5} more)" if len(refused) > 5 else ""
        super().__init__(f"not what a hall sends, so nothing of this batch was applied: {said}{more}")

    def first(self) -> Refusal:
        """The first refused record and why, as the operator's page says it (in its language)."""
        seq, why = self.refused[0]
        if seq is None:
            return why
        if len(self.refused) == 1:
            return Refusal(N_("record %(seq)d: %(why)s"), seq=seq, why=why)
        return Refusal(N_("record %(seq)d: %(why)s (and %(more)d more of that batch)"), seq=seq, why=why, more=len(self.refused) - 1)


@dataclass(frozen=True)
class Applied:
    acked: int  # every seq up to this the centre has (the hall may delete them)
    applied: int  # records new in this batch that changed what the centre shows
    duplicates: int  # copies of records it had (under their seq, or of a payment or day it holds)


def _seq_of(record: object) -> int | None:
    seq = record.get("seq") if isinstance(record, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) and 1 <= seq <= MAX_KEY else None


def _check(records: Any) -> list[Checked]:
    if not isinstance(records, list) or not records:
        raise CentralError("records: a non-empty list")
    if len(records) > MAX_BATCH:
        raise CentralError(f"at most {MAX_BATCH} records a request")
    out: list[Checked] = []
    refused: list[tuple[int | None, Refusal]] = []
    for r in records:
        try:
            out.append(check_record(r))
        except RecordRefused as e:
            refused.append((_seq_of(r), e))
    if refused:
        raise RecordsRefused(refused)
    return sorted(out, key=lambda r: r.seq)


def apply_records(db: Session, hall: str, records: Any) -> Applied:
    """Apply a batch of `hall`'s records (the caller has checked the hall's credential): a few
    statements a batch, not a few a record (its records, the facts it names, those it adds)."""
    rows = _check(records)
    row = db.get(CentralHall, hall, with_for_update=True)
    if row is None:
        raise CentralError(f"no hall {hall!r} at the centre")
    table = table_of(CentralRecord)
    went_in = set(
        db.scalars(
            upsert_insert(db, table).on_conflict_do_nothing(index_elements=["hall", "seq"]).returning(table.c.seq),
            [{"hall": hall, "seq": r.seq, "kind": r.kind, "ref": r.ref, "at": r.at, "data": r.doc()} for r in rows],
        )
    )
    new: list[Checked] = []
    copies: list[Checked] = []
    for r in rows:  # the first of a seq sent twice in one batch is the one that went in
        (new if r.seq in went_in else copies).append(r)
        went_in.discard(r.seq)
    _same_as_held(db, hall, copies, row.last_seq)
    facts = _Facts(db, hall, [r.data for r in new])
    applied = 0
    refused: list[tuple[int | None, Refusal]] = []
    for r in new:
        outcome = facts.apply(r.data)
        if isinstance(outcome, Refusal):
            refused.append((r.seq, outcome))
        elif outcome:
            applied += 1
    if refused:
        raise RecordsRefused(refused)
    facts.insert()
    _add_takings(db, hall, facts.payments)
    if new:
        row.last_seq = max(row.last_seq, rows[-1].seq)
        row.received += len(new)
        row.last_record_at = utcnow()
    return Applied(acked=rows[-1].seq, applied=applied, duplicates=len(rows) - applied)


def _same_as_held(db: Session, hall: str, copies: list[Checked], last_seq: int) -> None:
    """Each copy is the record the centre holds under its seq, else CentralConflict (the batch rolls back)."""
    if not copies:
        return
    held = {
        seq: (kind, ref, data)
        for seq, kind, ref, data in db.execute(
            select(CentralRecord.seq, CentralRecord.kind, CentralRecord.ref, CentralRecord.data).where(
                CentralRecord.hall == hall, CentralRecord.seq.in_([r.seq for r in copies])
            )
        )
    }
    for r in copies:
        kind, ref, data = held[r.seq]
        if (kind, ref) != (r.kind, r.ref) or not same(r.data, data):
            raise CentralConflict(hall, r.seq, held=ref or kind, sent=r.ref or r.kind, last_seq=last_seq)


class _Facts:
    """The payments and closed days a batch names: those the centre holds (read once), those it adds."""

    def __init__(self, db: Session, hall: str, data: list[Data]) -> None:
        self.db, self.hall = db, hall
        ids = [d.id for d in data if isinstance(d, PaymentData)]
        days = [d.day for d in data if isinstance(d, ZReportData)]
        self.held_payments: dict[int, tuple[int, dict[str, Any]]] = {}
        if ids:
            for pid, cents, record in db.execute(
                select(CentralPayment.payment_id, CentralPayment.amount_cents, CentralPayment.record).where(
                    CentralPayment.hall == hall, CentralPayment.payment_id.in_(ids)
                )
            ):
                self.held_payments[pid] = (cents, record)
        self.held_days: dict[date, tuple[int, dict[str, Any]]] = {}
        if days:
            for day, total, report in db.execute(
                select(CentralDay.day, CentralDay.total_cents, CentralDay.report).where(CentralDay.hall == hall, CentralDay.day.in_(days))
            ):
                self.held_days[day] = (total, {"day": day.isoformat(), "report": report})
        self.payments: list[PaymentData] = []  # new in this batch
        self.days: list[ZReportData] = []

    def apply(self, data: Data) -> bool | Refusal:
        """One new record: True when it changed something, False for a copy of a fact the centre
        holds, or why it is refused (another record under a fact's key)."""
        if isinstance(data, PaymentData):
            if (held := self.held_payments.get(data.id)) is not None:
                return _fact(data, held[1])
            self.held_payments[data.id] = (data.amount_cents, data.model_dump(mode="json"))
            self.payments.append(data)
            return True
        if isinstance(data, ZReportData):
            total = int(data.report["total_cents"])
            if (kept := self.held_days.get(data.day)) is not None:
                return _fact(data, kept[1])
            self.held_days[data.day] = (total, data.model_dump(mode="json"))
            self.days.append(data)
            return True
        if isinstance(data, GameData):
            _upsert(self.db, CentralGame, ["hall", "game_id"], _game(self.hall, data))
            return True
        _upsert(self.db, CentralAlert, ["hall", "alert_id"], _alert(self.hall, data))
        return True

    def insert(self) -> None:
        if self.payments:
            self.db.execute(
                table_of(CentralPayment).insert(),
                [
                    {
                        "hall": self.hall,
                        "payment_id": p.id,
                        "business_day": p.business_day,
                        "amount_cents": p.amount_cents,
                        "record": self.held_payments[p.id][1],
                    }
                    for p in self.payments
                ],
            )
        if self.days:
            self.db.execute(
                table_of(CentralDay).insert(),
                [{"hall": self.hall, "day": d.day, "total_cents": self.held_days[d.day][0], "report": d.report} for d in self.days],
            )


def _fact(sent: PaymentData | ZReportData, kept: dict[str, Any]) -> bool | Refusal:
    """False for a copy of the fact the centre keeps; else why it is refused, naming what differs."""
    if same(sent, kept):
        return False
    changes = differences(kept, sent)
    if isinstance(sent, PaymentData):
        return RecordRefused(
            N_(
                "payment %(id)d is held with other content (what differs, held → sent: %(changes)s): what was taken is not "
                "changed after; a correction is a record of its own (a reversal)"
            ),
            id=sent.id,
            changes=changes,
        )
    return RecordRefused(
        N_(
            "the Z report of %(day)s is held with other content (what differs, held → sent: %(changes)s): a closed day is not "
            "changed after; a correction is a record of its own (a reversal)"
        ),
        day=sent.day.isoformat(),
        changes=changes,
    )


def _upsert(db: Session, model: Any, keys: list[str], values: dict[str, Any]) -> None:
    table = table_of(model)
    update = {k: v for k, v in values.items() if k not in keys}
    db.execute(upsert_insert(db, table).values(**values).on_conflict_do_update(index_elements=keys, set_=update))


def _game(hall: str, d: GameData) -> dict[str, Any]:
    return {
        "hall": hall,
        "game_id": d.id,
        "table_id": d.table,
        "table_name": d.table_name or d.table,
        "started_at": d.started_at,
        "stopped_at": d.stopped_at,
        "total_cents": d.total_cents,
    }


def _alert(hall: str, d: AlertData) -> dict[str, Any]:
    return {
        "hall": hall,
        "alert_id": d.id,
        "kind": d.kind,
        "table_id": d.table,
        "severity": d.severity,
        "message": d.message,
        "message_en": d.message_en,
        "opened_at": d.opened_at,
        "acked_at": d.acked_at,
        "closed_at": d.closed_at,
    }


LESS_CREDIT_SOLD, LESS_PACKAGE_TIME = "less:credit_sale", "less:package"  # the takings' rows of voucher money


def _add_takings(db: Session, hall: str, payments: list[PaymentData]) -> None:
    """Add the new payments to their days' takings per method, by the Z report's own function:
    its by_method of these payments is what they add to the day's (each total is a sum)."""
    by_day: dict[date, list[PaymentData]] = defaultdict(list)
    for p in payments:
        by_day[p.business_day].append(p)
    table = table_of(CentralTakings)
    now = utcnow()
    for day, pays in sorted(by_day.items()):
        methods = {p.method: Method(p.method, p.method_name, p.method_name_en, p.cash) for p in reversed(pays)}
        z = z_report(
            DayOpening(day, None, "", 0), [p.record() for p in pays], methods.values(), made_at=now, fallback_vat=pays[0].fallback_vat
        )
        rows = [(m.method, m.name, m.name_en, m.cash, m.count, m.payments_cents, m.reversals_cents) for m in z.by_method]
        # Money taken that is not revenue (vouchers, zákon o DPH § 9a: credit sold, table time from
        # packages) as rows of their own, negative, so a day's rows sum to its revenue, the hall's Z report's.
        rows += [
            (method, name, name_en, False, 0, -cents, 0)
            for method, name, name_en, cents in (
                (LESS_CREDIT_SOLD, "Mínus predaný kredit", "Less: credit sold", z.voucher_sales_cents),
                (LESS_PACKAGE_TIME, "Mínus čas z balíkov", "Less: table time from packages", z.package_redeemed_cents),
            )
            if cents
        ]
        for method, name, name_en, cash, count, payments_cents, reversals_cents in rows:
            insert = upsert_insert(db, table).values(
                hall=hall,
                day=day,
                method=method,
                name=name,
                name_en=name_en,
                cash=cash,
                count=count,
                payments_cents=payments_cents,
                reversals_cents=reversals_cents,
            )
            db.execute(
                insert.on_conflict_do_update(
                    index_elements=["hall", "day", "method"],
                    set_={
                        "name": insert.excluded.name,
                        "name_en": insert.excluded.name_en,
                        "cash": insert.excluded.cash,
                        "count": table.c.count + insert.excluded.count,
                        "payments_cents": table.c.payments_cents + insert.excluded.payments_cents,
                        "reversals_cents": table.c.reversals_cents + insert.excluded.reversals_cents,
                    },
                )
            )
