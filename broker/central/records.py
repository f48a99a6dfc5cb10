"""The centre applies a hall's records once: (hall, seq) is unique, a copy is acknowledged and ignored.

A batch comes from one hall's sender (broker.hall.outbox_sender) as
`{"hall": "lavos", "records": [{"seq": 1, "kind": "payment", "ref": "payment:12", "at": …, "data": {…}}]}`.
Each record is inserted into central_records ON CONFLICT (hall, seq) DO NOTHING; only one that went
in is applied to the read models (an upsert by the hall's own id: a payment, a closed day, a game,
an alert), all in one transaction, so a batch is applied whole or not at all. The answer is the
highest seq the centre now has of the batch: the hall deletes up to there. Two deliveries of the
same batch at once (a retry while the first is still in flight) meet at the unique key: the
second waits for the first's commit, then finds every row there.

A copy is a copy only if it is the same record: a seq the centre holds with another record (the
hall's database restored from a backup numbers its new records again from the backup's last seq)
refuses the whole batch (CentralConflict, 409), so the hall keeps its records and both ends say why,
instead of the centre acknowledging new money as a copy of old and dropping it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from broker.central.accounts import CentralError
from broker.storage.dialect import table_of, upsert_insert
from broker.storage.models import CentralAlert, CentralDay, CentralGame, CentralHall, CentralPayment, CentralRecord
from broker.storage.types import utcnow

KINDS = ("payment", "zreport", "game", "alert")
MAX_BATCH = 1000  # records a request; the sender sends 200


class CentralConflict(CentralError):
    """A record's (hall, seq) is taken at the centre by another record: nothing of the batch is applied."""

    def __init__(self, hall: str, seq: int, held: str, sent: str, last_seq: int) -> None:
        super().__init__(
            f"hall {hall}'s record {seq} is {sent!r}, but the centre holds {held!r} as {seq}: was the hall's database "
            f"restored from a backup? The centre holds this hall's records up to {last_seq}; nothing of this batch was applied"
        )
        self.last_seq = last_seq


@dataclass(frozen=True)
class Applied:
    acked: int  # every seq up to this the centre has (the hall may delete them)
    applied: int  # records new in this batch
    duplicates: int  # copies of records it had


def _when(value: Any) -> datetime | None:
    """An aware ISO time, or None (absent, not a time, or without its zone: the hall sends UTC)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return None
    return at if at.tzinfo is not None else None


def _check(records: Any) -> list[dict[str, Any]]:
    if not isinstance(records, list) or not records:
        raise CentralError("records: a non-empty list")
    if len(records) > MAX_BATCH:
        raise CentralError(f"at most {MAX_BATCH} records a request")
    out = []
    for n, r in enumerate(records):
        if not isinstance(r, dict):
            raise CentralError(f"record {n}: an object")
        seq, kind, data = r.get("seq"), r.get("kind"), r.get("data")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            raise CentralError(f"record {n}: seq must be a positive whole number")
        if kind not in KINDS:
            raise CentralError(f"record {n}: kind must be one of {', '.join(KINDS)}")
        if not isinstance(data, dict):
            raise CentralError(f"record {n}: data must be an object")
        if _when(r.get("at")) is None:
            raise CentralError(f"record {n}: at must be an ISO time")
        out.append(r)
    return sorted(out, key=lambda r: r["seq"])


def apply_records(db: Session, hall: str, records: Any) -> Applied:
    """Apply a batch of `hall`'s records (the caller has checked the hall's credential)."""
    rows = _check(records)
    if db.get(CentralHall, hall, with_for_update=True) is None:
        raise CentralError(f"no hall {hall!r} at the centre")
    table = table_of(CentralRecord)
    applied = 0
    copies: list[dict[str, Any]] = []
    try:
        for r in rows:
            new = db.execute(
                upsert_insert(db, table)
                .values(hall=hall, seq=r["seq"], kind=r["kind"], ref=str(r.get("ref", ""))[:64], at=_when(r["at"]), data=r["data"])
                .on_conflict_do_nothing(index_elements=["hall", "seq"])
                .returning(table.c.id)
            ).first()
            if new is None:
                copies.append(r)
                continue
            _APPLY[r["kind"]](db, hall, r["data"])
            applied += 1
    except (KeyError, TypeError, ValueError) as e:
        raise CentralError(f"a record's data is not what a hall sends: {e}") from None
    row = db.get(CentralHall, hall)
    assert row is not None
    _same_as_held(db, hall, copies, row.last_seq)
    if applied:
        row.last_seq = max(row.last_seq, rows[-1]["seq"])
        row.last_record_at = utcnow()
    return Applied(acked=rows[-1]["seq"], applied=applied, duplicates=len(rows) - applied)


def _same_as_held(db: Session, hall: str, copies: list[dict[str, Any]], last_seq: int) -> None:
    """Each copy is the record the centre holds under its seq, else CentralConflict (the batch rolls back)."""
    if not copies:
        return
    held = {
        seq: (kind, ref, data)
        for seq, kind, ref, data in db.execute(
            select(CentralRecord.seq, CentralRecord.kind, CentralRecord.ref, CentralRecord.data).where(
                CentralRecord.hall == hall, CentralRecord.seq.in_([r["seq"] for r in copies])
            )
        )
    }
    for r in copies:
        kind, ref, data = held[r["seq"]]
        if (kind, ref, data) != (r["kind"], str(r.get("ref", ""))[:64], r["data"]):
            raise CentralConflict(hall, r["seq"], held=ref or kind, sent=str(r.get("ref", "")) or r["kind"], last_seq=last_seq)


def _upsert(db: Session, model: Any, keys: list[str], values: dict[str, Any]) -> None:
    table = table_of(model)
    update = {k: v for k, v in values.items() if k not in keys}
    db.execute(upsert_insert(db, table).values(**values).on_conflict_do_update(index_elements=keys, set_=update))


def _payment(db: Session, hall: str, d: dict[str, Any]) -> None:
    values = {
        "hall": hall,
        "payment_id": int(d["id"]),
        "business_day": date.fromisoformat(d["business_day"]),
        "amount_cents": int(d["amount_cents"]),
        "record": d,
    }
    _upsert(db, CentralPayment, ["hall", "payment_id"], values)


def _zreport(db: Session, hall: str, d: dict[str, Any]) -> None:
    report = d["report"]
    values = {"hall": hall, "day": date.fromisoformat(d["day"]), "total_cents": int(report["total_cents"]), "report": report}
    _upsert(db, CentralDay, ["hall", "day"], values)


def _game(db: Session, hall: str, d: dict[str, Any]) -> None:
    started = _when(d["started_at"])
    if started is None:
        raise ValueError("a game without its start")
    values = {
        "hall": hall,
        "game_id": int(d["id"]),
        "table_id": str(d["table"]),
        "table_name": str(d.get("table_name") or d["table"]),
        "started_at": started,
        "stopped_at": _when(d.get("stopped_at")),
        "total_cents": d.get("total_cents"),
    }
    _upsert(db, CentralGame, ["hall", "game_id"], values)


def _alert(db: Session, hall: str, d: dict[str, Any]) -> None:
    opened = _when(d["opened_at"])
    if opened is None:
        raise ValueError("an alert without its opening")
    values = {
        "hall": hall,
        "alert_id": int(d["id"]),
        "kind": str(d["kind"]),
        "table_id": d.get("table"),
        "severity": str(d.get("severity", "warning")),
        "message": str(d.get("message", "")),
        "message_en": str(d.get("message_en", "")),
        "opened_at": opened,
        "acked_at": _when(d.get("acked_at")),
        "closed_at": _when(d.get("closed_at")),
    }
    _upsert(db, CentralAlert, ["hall", "alert_id"], values)


_APPLY = {"payment": _payment, "zreport": _zreport, "game": _game, "alert": _alert}
