"""The sender: delivers the hall's outbox to the central reporting hub, in order, and survives outages.

A thread of the hub (`lavos-outbox-sender`, docs/concurrency.md). It reads the oldest records
(a read-only query, any thread may), POSTs them to the centre over HTTPS with the hall's own
credential, and on the centre's acknowledgement ("applied up to seq N") asks the writer to delete
them (`OutboxDelivered`): the outbox is the hall's database, so only the writer changes it.

While the centre is away (no answer, a reset, a 5xx) it waits and tries again, doubling the wait
up to `retry_max_s`; the records stay where they are, so a restart of either side meanwhile loses
nothing: the next hub reads them from its database, the centre applies each (hall, seq) once and
acknowledges a copy it already has. A refusal of the credential (401/403) is logged and retried
like an outage: someone has to fix the setting, and the records must wait for them. So is a
conflict (409: the centre holds another record under one of these seqs, as after the hall's
database was restored from a backup), logged as an error at every try, since only people can
settle it and until then nothing more reaches the centre.

A record the centre refuses as not what a hall sends (400: its `refused` list names each such
record by seq, and why: as a message id with its params where the centre says so, for the page to
say in its language; or 400/413 to a batch of that one record) is set aside (`OutboxRefused`, on the
writer: kept in the outbox, alerted at the hall, and so at the centre) and the rest is sent again
at once: one bad record never holds up the ones after it. A 400 or 413 that names none of several
records sends them one at a time until past them, so the one is found. Only the centre's own
answer (JSON with a `detail`) sets anything aside: a proxy's error page is an outage, retried.
"""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import Callable
from typing import Any

import httpx
from sqlalchemy import select

from broker.core.part import Part
from broker.domain.refusals import Refusal, from_doc, plain
from broker.outbox.records import CentralSettings, OutboxDelivered, OutboxRefused
from broker.storage.engine import Store
from broker.storage.models import OutboxRecord

log = logging.getLogger("lavos.hub.outbox")

RECORDS_PATH = "/api/central/records"
IDLE_POLL_S = 5.0  # a look at the outbox even without a wake (a record of another process)
NOT_WHAT_A_HALL_SENDS = (400, 413)  # the centre's answers to records it will never take as they are


class CentreRefused(Exception):
    """The centre answered, but not with an acknowledgement."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RecordsNotTaken(Exception):
    """The centre refused records as not what a hall sends: `refused` names them (seq → why), or is empty when it named none."""

    def __init__(self, message: str, refused: dict[int, Refusal]) -> None:
        super().__init__(message)
        self.refused = refused


def _refusal(r: httpx.Response, records: list[dict[str, Any]]) -> RecordsNotTaken | None:
    """The centre's refusal of these records, or None when the answer is not the centre's own (a proxy's page)."""
    try:
        body = r.json()
    except ValueError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("detail"), str):
        return None
    seqs = {rec["seq"] for rec in records}
    named = body.get("refused")
    if not isinstance(named, list):
        named = []
    refused = {item["seq"]: _why(item, body["detail"]) for item in named if isinstance(item, dict) and item.get("seq") in seqs}
    if not refused and len(records) == 1:
        refused = {records[0]["seq"]: plain(body["detail"])}
    return RecordsNotTaken(f"{r.status_code} {body['detail'][:500]}", refused)


def _why(item: dict[str, Any], detail: str) -> Refusal:
    """Why the centre refused one record: its message id and params (a centre that sends them), else its English."""
    return from_doc(item.get("why")) or plain(str(item.get("detail") or detail)[:2000])


class OutboxSender(Part):
    def __init__(self, store: Store, hall_id: str, settings: CentralSettings, execute: Callable[[Any], Any]) -> None:
        self._store = store
        self._hall = hall_id
        self.settings = settings
        self._execute = execute
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lavos-outbox-sender", daemon=True)
        self.sent = 0  # records acknowledged, for tests and the log
        self.failures = 0
        self.retry_min_s = 0.2
        self.idle_poll_s = IDLE_POLL_S
        self.set_aside = 0  # records the centre refused, set aside
        self._one_by_one_upto = 0  # a refusal named none of a batch: send up to this seq one at a time
        # The centre's certificate must chain to its own CA when one is given (only that CA, not the
        # system's), else to a publicly trusted one; the host name is always checked.
        verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=str(settings.ca_file)) if settings.ca_file else True
        self._client = httpx.Client(
            base_url=settings.url.rstrip("/"),
            verify=verify,
            timeout=settings.timeout_s,
            headers={"Authorization": f"Bearer {settings.token}"},
        )

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def started(self) -> None:
        self.start()

    def stopping(self) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(10)
        self._client.close()

    def _batch(self) -> list[dict[str, Any]]:
        with self._store.reader() as db:
            waiting = select(OutboxRecord).where(OutboxRecord.refused_at.is_(None)).order_by(OutboxRecord.seq)
            rows = db.scalars(waiting.limit(self.settings.batch)).all()
            if rows and rows[0].seq <= self._one_by_one_upto:
                rows = rows[:1]
            return [{"seq": r.seq, "kind": r.kind, "ref": r.ref, "at": r.at.isoformat(), "data": r.record} for r in rows]

    def _post(self, records: list[dict[str, Any]]) -> int:
        r = self._client.post(RECORDS_PATH, json={"hall": self._hall, "records": records})
        if r.status_code in NOT_WHAT_A_HALL_SENDS and (refusal := _refusal(r, records)) is not None:
            raise refusal
        if r.status_code != 200:
            raise CentreRefused(f"{r.status_code} {r.text[:500]}", r.status_code)
        acked = r.json().get("acked")
        if not isinstance(acked, int):
            raise CentreRefused(f"no acknowledgement in {r.text[:200]!r}")
        return acked

    def _set_aside(self, e: RecordsNotTaken, records: list[dict[str, Any]]) -> None:
        if e.refused:
            log.error("the centre refused %d record(s) as not what a hall sends, set aside: %s", len(e.refused), e)
            self.set_aside += self._execute(OutboxRefused(refused=tuple(sorted(e.refused.items(), key=lambda r: r[0])), actor="system"))
        else:
            log.warning("the centre refused a batch without naming a record (%s): sending them one at a time", e)
            self._one_by_one_upto = records[-1]["seq"]

    def _run(self) -> None:
        wait = self.retry_min_s
        while not self._stop.is_set():
            try:
                records = self._batch()
                if not records:
                    self._wake.wait(self.idle_poll_s)
                    self._wake.clear()
                    continue
                try:
                    acked = self._post(records)
                except RecordsNotTaken as e:
                    self._set_aside(e, records)
                    continue  # the rest at once
                self._execute(OutboxDelivered(upto=acked, actor="system"))
                self.sent += sum(1 for r in records if r["seq"] <= acked)
                wait = self.retry_min_s
            except (httpx.HTTPError, CentreRefused, ValueError) as e:
                self.failures += 1
                if isinstance(e, CentreRefused) and e.status == 409:
                    log.error("the centre refuses the records as conflicting with what it holds (%s); trying again in %.1f s", e, wait)
                elif self.failures == 1 or wait >= self.settings.retry_max_s:
                    log.warning("the centre did not take the records (%s); trying again in %.1f s", e, wait)
                self._stop.wait(wait)
                wait = min(wait * 2, self.settings.retry_max_s)
            except Exception:
                log.exception("sending the records to the centre failed")
                self._stop.wait(wait)
                wait = min(wait * 2, self.settings.retry_max_s)
