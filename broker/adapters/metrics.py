"""Metrics to InfluxDB: line protocol, batched, and spooled to disk whatever InfluxDB cannot take.

Why not influxdb-client's batching WriteApi (checked in influxdb-client 1.50.0, the version we
pin against):
- its buffer is an unbounded in-memory Rx pipeline; a batch that still fails after the urllib3
  retries goes to `error_callback` and is gone unless the callback stores it, and while retries
  run (up to `max_retry_time`, 180 s by default) every batch behind it waits in memory;
- `WriteApi.flush()` is a no-op (`# TODO`, influxdata/influxdb-client-python#697), so there is
  no way to know that a point was written short of `close()`;
- the retry happens inside urllib3, so we cannot spool a failing batch *before* newer points
  overtake it, nor tell "InfluxDB refused this line" (stop retrying, dead-letter it) from
  "InfluxDB is down" (keep it, retry later) in one place;
- `WriteOptions`' default `write_scheduler` is a single thread pool created once at import and
  shared by every WriteApi in the process.
So we run our own small batch loop and use influxdb-client's SYNCHRONOUS WriteApi (retries off)
for each HTTP write: one request at a time, its outcome known, the ordering ours.

Flow: `write()` validates and encodes one point and appends it to a bounded in-memory queue
(a few microseconds; it never touches the network). One sender thread posts batches of up to
`batch_size` points, or whatever waited `flush_interval` seconds. Outcomes:
- 2xx: written.
- connection refused, timeout, 5xx, 429, and 401/403/404 (a wrong or missing token or bucket is an
  operator fix away; the data is fine): the batch goes to the disk spool (broker.adapters.metrics_spool) and the
  sender retries the spool's head with exponential backoff (honouring Retry-After). While the
  spool holds anything, new points are routed behind it, so nothing overtakes; when it is
  drained, points go straight from memory again.
- any other 4xx (400 bad line, 413 too large, 422): the data itself is at fault. The batch is
  bisected until the offending lines are isolated; those are appended to `dead-letter.lp` in the
  spool directory (with a `#` comment saying why), counted and logged, the rest is written.
If the memory queue fills (the sender is stuck in a slow request) the caller spills it to the
spool itself: a single SQLite transaction, milliseconds. Each point carries its sequence number,
so a batch that fails in flight is spooled *before* the newer points spilled meanwhile.

Guarantees: nothing is lost while the spool is within `max_spool_bytes`; beyond it the oldest
points are dropped, counted and logged (see broker.adapters.metrics_spool). Delivery is at least once: a
request that timed out after InfluxDB stored it is sent again, which InfluxDB absorbs (same
series, tags and timestamp overwrite the same point). A restart resumes from the spool; points
still in memory when the process is killed (at most `max_queue`, typically one flush interval)
are lost. InfluxDB is never the record of money: the database is.

The token is optional: VictoriaMetrics (the hub box's store) takes writes without one and ignores
one given. InfluxDB 2 answers a write without a token with 401; the writer then says, in its log
line and its `last_error`, that a token is missing and where it goes, and keeps the points.
"""

from __future__ import annotations

import contextlib
import logging
import math
import operator
import re
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import SupportsIndex, cast
from urllib.parse import urlsplit

from influxdb_client.client.exceptions import InfluxDBError
from influxdb_client.client.influxdb_client import InfluxDBClient
from influxdb_client.client.write_api import SYNCHRONOUS
from influxdb_client.domain.write_precision import WritePrecision
from influxdb_client.rest import ApiException

from broker.adapters.metrics_spool import Spool

log = logging.getLogger(__name__)

DEAD_LETTER_FILE = "dead-letter.lp"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_INT64 = (-(2**63), 2**63 - 1)
# Line protocol has no escape for a line break, and a backslash before an escaped character
# changes what the parser sees; neither belongs in a table id or a tariff name, so refuse them.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\\]")
_ESCAPE_MEASUREMENT = str.maketrans({",": r"\,", " ": r"\ "})
_ESCAPE_KEY = str.maketrans({",": r"\,", "=": r"\=", " ": r"\ "})
# InfluxDB reserves these; a point using them is refused (or silently mangled) by the server.
_RESERVED_KEYS = {"time", "_field", "_measurement", "_time", "_value", "_start", "_stop"}
# Statuses that say "not now" rather than "never": retry later, keep the data.
_RETRY_STATUSES = {401, 403, 404, 408, 429}


class InvalidPoint(ValueError):
    """A point that line protocol (or InfluxDB) cannot carry; raised by `write()`, never sent."""


def _name(kind: str, value: object, table: dict[int, str]) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidPoint(f"{kind} must be a non-empty string, got {value!r}")
    if _UNSAFE.search(value):
        raise InvalidPoint(f"{kind} {value!r} contains a control character or backslash")
    return value.translate(table)


def _key(kind: str, key: object) -> str:
    if isinstance(key, str) and (key in _RESERVED_KEYS or key.startswith("_")):
        raise InvalidPoint(f"{kind} {key!r} is reserved by InfluxDB")
    return _name(kind, key, _ESCAPE_KEY)


@lru_cache(maxsize=4096)
def _tag(key: str, value: str) -> str:
    # Cached: tags repeat endlessly (a dozen tables, six pockets), validation need not.
    return f"{_key('tag key', key)}={_name(f'tag {key!r} value', value, _ESCAPE_KEY)}"


def _field(key: str, value: object) -> str:
    if isinstance(value, bool):  # before int: bool is an int subclass
        encoded = "true" if value else "false"
    elif isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise InvalidPoint(f"field {key!r} = {value} does not fit a 64-bit integer")
        encoded = f"{value}i"
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidPoint(f"field {key!r} = {value} is not finite; InfluxDB cannot store it")
        encoded = repr(value)
    else:
        # Strings too: VictoriaMetrics turns them into 0 without a word.
        raise InvalidPoint(f"field {key!r} = {value!r}: only int, float and bool are allowed")
    return f"{_key('field key', key)}={encoded}"


def _integer(name: str, value: object) -> int:
    # Exactly an int: a float here would change the field's type in InfluxDB, which then refuses
    # every later point of the series (field type conflict).
    try:
        # Any object on purpose: operator.index is the check (TypeError unless it is an integer),
        # cheaper on this per-point path than an isinstance test of SupportsIndex first.
        return operator.index(cast("SupportsIndex", value))
    except TypeError:
        raise InvalidPoint(f"{name} must be an integer, got {value!r}") from None


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidPoint(f"{name} must be a number, got {value!r}")
    return float(value)


@lru_cache(maxsize=1024, typed=True)  # typed: a pocket of 1.0 or True is refused, not served 1's line
def _pocket_head(table: str, pocket: int) -> str:
    # A drop's line but its timestamp: a dozen tables times six pockets, built and checked once.
    return line_protocol("pocket", {"table": table, "pocket": str(_integer("pocket", pocket))}, {"count": 1}, _EPOCH).rsplit(" ", 1)[0]


def timestamp_ns(at: datetime) -> int:
    if not isinstance(at, datetime) or at.tzinfo is None or at.utcoffset() is None:
        raise InvalidPoint(f"timestamp must be a timezone-aware datetime, got {at!r}")
    return (at - _EPOCH) // _MICROSECOND * 1000  # integer arithmetic: no float rounding


def line_protocol(measurement: str, tags: dict[str, str], fields: dict[str, int | float | bool], at: datetime) -> str:
    """One point as a line-protocol line with a nanosecond timestamp; raises InvalidPoint."""
    if not fields:
        raise InvalidPoint(f"{measurement!r}: a point needs at least one field")
    head = _name("measurement", measurement, _ESCAPE_MEASUREMENT)
    tag_part = "".join("," + _tag(k, v) for k, v in sorted(tags.items()))
    field_part = ",".join(_field(k, v) for k, v in fields.items())
    return f"{head}{tag_part} {field_part} {timestamp_ns(at)}"


def _check_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except (ValueError, TypeError, AttributeError) as exc:
        raise ValueError(f"metrics URL {url!r} is not a URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"metrics URL {url!r}: expected http://host:port or https://host:port")


def _open_spool(directory: Path, max_bytes: int) -> Spool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # SQLite opens a read-only file without complaint and fails on the first write, which
        # would be in the middle of an outage; find out now.
        probe = directory / ".write-probe"
        probe.write_bytes(b"")
        probe.unlink()
        return Spool(directory, max_bytes)
    except (OSError, sqlite3.Error) as exc:
        # ValueError like the other bad arguments, so a CLI reports it the same way.
        raise ValueError(f"metrics spool directory {str(directory)!r} is not usable: {exc}") from exc


def _is_rejection(exc: Exception) -> bool:
    """True when InfluxDB answered that the data itself is bad (retrying cannot help)."""
    status = getattr(exc, "status", None)
    return isinstance(exc, ApiException) and isinstance(status, int) and 400 <= status < 500 and status not in _RETRY_STATUSES


def _describe(exc: Exception) -> str:
    if isinstance(exc, ApiException):
        return f"HTTP {exc.status}: {exc.message}" if getattr(exc, "message", None) else f"HTTP {exc.status} {exc.reason}"
    return f"{type(exc).__name__}: {exc}"


class MetricsWriter:
    """Writes metrics points to InfluxDB (or anything speaking its /api/v2/write); see the module docstring."""

    def __init__(
        self,
        url: str,
        token: str | None,
        org: str,
        bucket: str,
        spool_dir: str | Path,
        max_spool_bytes: int = 64 * 1024 * 1024,
        *,
        batch_size: int = 1000,
        flush_interval: float = 1.0,
        max_queue: int = 10_000,
        timeout: float = 10.0,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        _check_url(url)
        if not bucket or not org:
            raise ValueError("metrics need a bucket and an org (VictoriaMetrics ignores them; InfluxDB does not)")
        for name, value in [
            ("max_spool_bytes", max_spool_bytes),
            ("batch_size", batch_size),
            ("max_queue", max_queue),
            ("flush_interval", flush_interval),
            ("timeout", timeout),
            ("retry_initial", retry_initial),
        ]:
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        self._bucket, self._org = bucket, org
        self._batch_size, self._flush_interval, self._max_queue = batch_size, flush_interval, max_queue
        self._timeout = timeout
        self._retry_initial, self._retry_max = retry_initial, max(retry_max, retry_initial)
        self._clock = clock
        self._dir = Path(spool_dir)
        self._spool = _open_spool(self._dir, max_spool_bytes)
        self._dead_letter_path = self._dir / DEAD_LETTER_FILE
        self._token_given = bool(token)
        # No token: no Authorization header at all (influxdb-client sends one only for a token; its
        # stubs say str, its code takes None: influxdb_client/client/_base.py).
        self._client = InfluxDBClient(url=url, token=cast(str, token or None), org=org, timeout=int(timeout * 1000))
        self._write_api = self._client.write_api(write_options=SYNCHRONOUS)

        self._cond = threading.Condition()
        self._queue: deque[str] = deque()
        self._next_seq = self._spool.last_seq + 1  # continue after what a previous run spooled
        self._oldest_at = 0.0
        self._inflight = 0
        self._sending = False  # a request is out (from memory or the spool): see _run
        self._flush_waiters = 0
        self._stopping = self._closed = False
        self._retry_at = 0.0
        self._backoff = 0.0
        self._failing = False
        self._last_error: str | None = None
        self._written = self._dropped = self._dead_lettered = self._failures = 0
        self._logged_at: dict[str, float] = {}
        if self._spool.count:
            log.info("metrics: resuming %d spooled points (%d bytes) from %s", self._spool.count, self._spool.bytes, self._spool.path)
        self._thread = threading.Thread(target=self._run, name="metrics-writer", daemon=True)
        self._thread.start()

    # ---- the caller's side -------------------------------------------------------------

    def write(self, measurement: str, tags: dict[str, str], fields: dict[str, int | float | bool], at: datetime) -> None:
        """Queue one point; raises InvalidPoint for data line protocol cannot carry, never for network trouble."""
        self._append([line_protocol(measurement, tags, fields, at)])

    def _append(self, lines: list[str]) -> None:
        with self._cond:
            if self._closed:
                raise RuntimeError("MetricsWriter is closed")
            for line in lines:
                if not self._queue:
                    self._oldest_at = self._clock()
                self._queue.append(line)
                self._next_seq += 1
                if len(self._queue) >= self._max_queue:
                    self._spill_locked()
                elif len(self._queue) == self._batch_size:
                    self._cond.notify_all()

    def pocket(self, table: str, pocket: int, at: datetime) -> None:
        self.pockets([(table, pocket, at)])

    def pockets(self, drops: list[tuple[str, int, datetime]]) -> None:
        """One point per ball drop (table, pocket, when), queued under one lock: the hub's ingest
        calls this once per batch, and a drop is the commonest point by far. Raises InvalidPoint
        (queueing none of them) if any drop cannot be a point."""
        self._append([f"{_pocket_head(table, pocket)} {timestamp_ns(at)}" for table, pocket, at in drops])

    def goal(self, table: str, side: str, at: datetime) -> None:
        self.write("goal", {"table": table, "side": side}, {"count": 1}, at)

    def session(self, table: str, tariff: str, minutes: int, amount_cents: int, at: datetime) -> None:
        """A game billed: its minutes and amount. Named, like every point method, after its
        measurement, which keeps the name dashboards read (docs/architecture.md, one word per thing)."""
        self.write(
            "session",
            {"table": table, "tariff": tariff},
            {"minutes": _integer("minutes", minutes), "amount_cents": _integer("amount_cents", amount_cents)},
            at,
        )

    def light(self, table: str, on: bool, at: datetime) -> None:
        self.write("light", {"table": table}, {"on": bool(on)}, at)

    def node(self, table: str, uptime_s: float, outbox: int, cpu_temp_c: float | None, reconnects: int, at: datetime) -> None:
        fields: dict[str, int | float | bool] = {
            "uptime_s": _real("uptime_s", uptime_s),
            "outbox": _integer("outbox", outbox),
            "reconnects": _integer("reconnects", reconnects),
        }
        if cpu_temp_c is not None:  # a node without a temperature sensor reports none
            fields["cpu_temp_c"] = _real("cpu_temp_c", cpu_temp_c)
        self.write("node", {"table": table}, fields, at)

    def alert(self, kind: str, at: datetime) -> None:
        self.write("alert", {"kind": kind}, {"count": 1}, at)

    def reject(self, table: str, reason: str, count: int, at: datetime) -> None:
        """`count` messages from `table` refused for `reason` (broker.domain.floor.reject_tally) in one ingest batch."""
        self.write("reject", {"table": table, "reason": reason}, {"count": _integer("count", count)}, at)

    def flush(self, timeout: float = 10.0) -> bool:
        """Send what is queued and spooled now, retrying once at once.

        True when all of it is written or dead-lettered; False when a write fails meanwhile
        (no use waiting out the backoff: the points are safe in the spool) or on timeout.
        """
        with self._cond:
            self._flush_waiters += 1
            self._retry_at = 0.0
            failures = self._failures
            self._cond.notify_all()
            try:
                self._cond.wait_for(lambda: self._drained() or self._failures > failures, timeout)
                return self._drained()
            finally:
                self._flush_waiters -= 1

    def close(self, timeout: float = 5.0) -> None:
        """Flush for up to `timeout` seconds, then stop; whatever is left is kept in the spool for the next start."""
        if self._closed:
            return
        self.flush(timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(self._timeout + 2)  # at most one request is in flight
        if self._thread.is_alive():
            log.error("metrics: sender did not stop; points in its last request may be lost")
        with self._cond:
            self._spill_locked()
            self._closed = True
        self._spool.close()
        self._client.close()

    def __enter__(self) -> MetricsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stats(self) -> dict[str, int | str | bool | None]:
        with self._cond:
            return {
                "written": self._written,  # points InfluxDB acknowledged
                "queued": len(self._queue) + self._inflight,  # in memory (incl. the request in flight)
                "spooled": self._spool.count,  # on disk, waiting
                "spool_bytes": self._spool.bytes,
                "dropped": self._dropped,  # oldest points dropped because the spool was full
                "dead_lettered": self._dead_lettered,  # refused by InfluxDB as bad data
                "failing": self._failing,
                "last_error": self._last_error,
            }

    # ---- shared, under self._cond ------------------------------------------------------

    def _drained(self) -> bool:
        return not self._queue and not self._inflight and not self._spool.count

    def _spill_locked(self) -> None:
        if not self._queue:
            return
        first = self._next_seq - len(self._queue)
        items = list(zip(range(first, self._next_seq), self._queue))
        self._queue.clear()
        self._spool_locked(items)

    def _spool_locked(self, items: list[tuple[int, str]]) -> None:
        try:
            dropped = self._spool.put(items)
        except (OSError, sqlite3.Error) as exc:
            # A full or broken disk: these points cannot be kept anywhere; say so, never raise to the caller.
            dropped = len(items)
            self._last_error = f"spool write failed: {exc}"
            log.error("metrics: cannot write the spool %s: %s", self._spool.path, exc)
        if dropped:
            self._dropped += dropped
            self._warn_now_and_then(
                "dropped", "metrics: spool full (%d bytes max), dropped the oldest points: %d so far", self._spool.max_bytes, self._dropped
            )

    def _warn_now_and_then(self, topic: str, message: str, *args: object) -> None:
        # An outage or a broken series repeats the same complaint thousands of times a minute;
        # one line a minute with the running count says as much.
        now = self._clock()
        if topic not in self._logged_at or now - self._logged_at[topic] >= 60:
            self._logged_at[topic] = now
            log.warning(message, *args)

    def _explain(self, error: Exception) -> str:
        said = _describe(error)
        if not self._token_given and getattr(error, "status", None) == 401:
            return (
                f"{said}: the server wants a token and this writer has none (InfluxDB 2 needs an API token "
                "allowed to write the bucket: lavos server --influx-token-file FILE; VictoriaMetrics needs none)"
            )
        return said

    # ---- the sender thread -------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                if not self._has_work():
                    self._cond.wait(self._idle_wait())
                    continue
                batch = self._take_locked()
                self._sending = True
            try:
                if batch is None:
                    self._send_spool_head()
                elif batch:
                    self._send_from_memory(batch)
            except Exception as exc:  # a bug or a broken spool must not kill the only sender
                log.exception("metrics: sender cycle failed")
                self._after_attempt(exc)
            finally:
                with self._cond:
                    self._inflight = 0
                    self._sending = False
                    self._cond.notify_all()

    def _memory_due(self, now: float) -> bool:
        return bool(self._queue) and (
            len(self._queue) >= self._batch_size or self._flush_waiters > 0 or now - self._oldest_at >= self._flush_interval
        )

    def _has_work(self) -> bool:
        now = self._clock()
        return (self._spool.count > 0 and now >= self._retry_at) or self._memory_due(now)

    def _idle_wait(self) -> float:
        # Bounded so an injected clock that jumps is noticed within a quarter second.
        now, waits = self._clock(), [0.25]
        if self._queue:
            waits.append(self._oldest_at + self._flush_interval - now)
        if self._spool.count:
            waits.append(self._retry_at - now)
        return max(0.005, min(waits))

    def _take_locked(self) -> list[tuple[int, str]] | None:
        """None: send the spool's head. A list: send these points from memory (may be empty: nothing to do)."""
        if self._spool.count:
            self._spill_locked()  # new points queue up behind the spool, never past it
            return None if self._clock() >= self._retry_at else []
        count = min(len(self._queue), self._batch_size)
        first = self._next_seq - len(self._queue)
        batch = [(first + i, self._queue.popleft()) for i in range(count)]
        self._inflight = count
        return batch

    def _send_spool_head(self) -> None:
        items = self._spool.head(self._batch_size)
        if not items:
            return
        settled, error = self._deliver([line for _, line in items])
        if settled:
            self._spool.remove_through(items[settled - 1][0])
        self._after_attempt(error)

    def _send_from_memory(self, items: list[tuple[int, str]]) -> None:
        settled, error = self._deliver([line for _, line in items])
        if error is not None:
            with self._cond:
                self._spool_locked(items[settled:])
        self._after_attempt(error)

    def _deliver(self, lines: list[str]) -> tuple[int, Exception | None]:
        """Write `lines` in order; returns how many are settled (written or dead-lettered) and the error that stopped the rest."""
        try:
            self._write_api.write(
                bucket=self._bucket, org=self._org, record="\n".join(lines), write_precision=cast(WritePrecision, WritePrecision.NS)
            )  # the class holds str constants
        except Exception as exc:  # noqa: BLE001 - the client raises urllib3, HTTP and its own errors; sorted below
            if not _is_rejection(exc):
                return 0, exc
            if len(lines) == 1:
                self._dead_letter(lines[0], exc)
                return 1, None
            # Bisect: a 400 names no line, and the good neighbours of a bad line must still arrive.
            mid = len(lines) // 2
            settled, error = self._deliver(lines[:mid])
            if error is not None:
                return settled, error
            settled, error = self._deliver(lines[mid:])
            return mid + settled, error
        with self._cond:
            self._written += len(lines)
        return len(lines), None

    def _dead_letter(self, line: str, exc: Exception) -> None:
        reason = " ".join(_describe(exc).split())[:300]
        with self._dead_letter_path.open("a", encoding="utf-8") as f:
            f.write(f"# {datetime.now(UTC).isoformat()} {reason}\n{line}\n")
        with self._cond:
            self._dead_lettered += 1
            self._warn_now_and_then(
                "dead-letter",
                "metrics: InfluxDB refused a point (%s), %d so far, kept in %s: %s",
                reason,
                self._dead_lettered,
                self._dead_letter_path,
                line[:200],
            )

    def _after_attempt(self, error: Exception | None) -> None:
        with self._cond:
            if error is None:
                if self._failing:
                    log.info("metrics: InfluxDB takes writes again; %d points still spooled", self._spool.count)
                self._failing, self._backoff, self._retry_at = False, 0.0, 0.0
                return
            self._backoff = min(self._retry_max, self._backoff * 2 if self._backoff else self._retry_initial)
            delay = self._backoff
            retry_after = getattr(error, "retry_after", None) if isinstance(error, InfluxDBError) else None
            if retry_after:
                with contextlib.suppress(ValueError):  # an HTTP date; our own backoff will do
                    delay = min(self._retry_max, max(delay, float(retry_after)))
            self._retry_at = self._clock() + delay
            self._failures += 1
            self._last_error = self._explain(error)
            if not self._failing:
                log.warning("metrics: write failed (%s); spooling to %s, retrying with backoff", self._last_error, self._spool.path)
            self._failing = True
