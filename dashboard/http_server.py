"""How `lavos server`, `lavos central serve` and the demo run uvicorn: timeouts, a connection cap,
a quiet accept-error log, and TLS (the centre serves HTTPS itself).

Measured on uvicorn 0.54 (h11; httptools is not installed): a connection that has not finished
its request head has no timeout at all (`timeout_keep_alive` only runs between requests), so
1,100 half-sent requests held 1,100 descriptors for ever; at the open-file limit asyncio's
accept loop then logged "Too many open files" with a traceback once per backlog slot per second
(89 MB in 18 s here) and `/api/health` stopped answering. uvicorn's `limit_concurrency` does not
help: it counts idle connections too, and answers 503 only once a request head has arrived.

So every connection here (`GuardedH11`):
- must complete a request head within the head timeout (HEAD_TIMEOUT_S unless the server is told
  otherwise: `--head-timeout` / LAVOS_HEAD_TIMEOUT) of connecting or of its last answer, or it
  is closed (a keep-alive connection idle between requests still closes after KEEP_ALIVE_S);
- counts against a cap below the process's open-file limit: at the cap a new connection closes
  the one that has waited longest for its head, so a flood of idle sockets cannot lock out a
  real request; when every connection is busy with a request, the newcomer gets a 503.
A request body that stalls is dashboard.api.limits' business (408).

Over TLS (the centre) a connection reaches the protocol above only once its handshake is done, so
the handshake has a limit of its own (the head timeout instead of asyncio's 60 s), and so has the
closing handshake (TLS_SHUTDOWN_S instead of 30 s: a client that never answers a close_notify kept
its descriptor that long): `BoundedTlsLoop`. A connection closed for a late head or to make room is
aborted, not closed politely: it owes us a request, we owe it nothing, and a polite TLS close would
wait for the client that is not talking.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import heapq
import logging
import resource
import time
from pathlib import Path
from typing import Any, cast

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0  # a browser on the club's LAN sends its head in milliseconds
MAX_HEAD_TIMEOUT_S = 300.0  # beyond that the guard guards nothing
TLS_SHUTDOWN_S = 5.0
KEEP_ALIVE_S = 5  # uvicorn's default: browsers reuse a connection within that
MAX_CONNECTIONS = 1000  # a club has a dozen tablets and screens; each browser opens up to 6, and live pages hold one
# Descriptors kept for the rest: ~15 at rest (log, MQTT, SQLite's three files), up to 15 pooled
# database connections (45 on SQLite), the metrics spool.
FD_RESERVE = 64
# asyncio accepts up to `backlog` connections per wake-up, and a batch is seen by the protocol
# (and the cap applied) only a loop turn or two later, while the next batch is accepted; so a
# few batches must fit beside the cap. Each failed accept also logs and re-arms a retry timer,
# so a big backlog multiplies an accept error. 64 pending connections is plenty for a club.
BACKLOG = 64
ACCEPT_BATCHES = 4
ACCEPT_ERROR_EVERY_S = 60.0  # one "Too many open files" line a minute, with a count of the ones left out

log = logging.getLogger("lavos.http")
_RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"retry-after: 5\r\ncontent-length: 37\r\n\r\ntoo many connections; try again soon\n"
)


def connection_cap(nofile: int | None = None) -> int:
    """How many connections to keep open at once, below the open-file limit (systemd's default is 1024)."""
    soft = nofile if nofile is not None else resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(16, min(MAX_CONNECTIONS, soft - FD_RESERVE - ACCEPT_BATCHES * BACKLOG))


def raise_fd_limit() -> int:
    """Lift the soft open-file limit to the hard one, as Go and nginx do; returns the soft limit now.

    systemd starts services with soft 1024 (hard 512K); the unit sets LimitNOFILE, this covers a
    server started by hand or by another supervisor.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard and (hard == resource.RLIM_INFINITY or hard > soft):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):  # a hard limit the kernel will not grant (nr_open): keep the soft one
            pass
    return soft


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a request-head timeout and the connection cap (class attributes).

    The open connections of one server are a set on uvicorn's ServerState: uvicorn's own set
    keeps a closed connection until asyncio reports it lost, a loop turn or more later, and
    counting those would let a burst of new connections through while the closed ones linger.
    """

    head_timeout_s = HEAD_TIMEOUT_S
    max_connections = MAX_CONNECTIONS
    EVICT_TO = 0.9  # at the cap, close down to 90 %: one scan of the connections per many newcomers

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(cast(asyncio.Transport, transport))  # uvicorn's narrowing: it is given one
        self._head_timer: Any = None
        self._open: set[GuardedH11] = self.server_state.__dict__.setdefault("lavos_open", set())
        self._open.add(self)
        self._wait_head()
        if len(self._open) > self.max_connections:
            self._make_room()

    def _make_room(self) -> None:
        excess = len(self._open) - int(self.max_connections * self.EVICT_TO)
        idle = heapq.nsmallest(excess, (c for c in self._open if c is not self and c.waiting_for_head()), key=lambda c: c.waiting_since)
        if idle:
            _accept_errors.note("connection cap (%d) reached: closing the ones that waited longest for a request", self.max_connections)
            for c in idle:
                c.close(abort=True)
        else:
            _accept_errors.note("connection cap (%d) reached and every connection is busy: refusing new ones", self.max_connections)
            self.transport.write(_BUSY)
            self.close()

    def waiting_for_head(self) -> bool:
        """No request in flight: the client owes us a (complete) request head."""
        return self.cycle is None or self.cycle.response_complete

    def _wait_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self.waiting_since = time.monotonic()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timeout, self.cycle)

    def _head_timeout(self, cycle_then: object) -> None:
        # Still the same (finished) request as when the clock started: no new head arrived in time.
        if self.cycle is cycle_then and self.waiting_for_head():
            self.close(abort=True)

    def close(self, *, abort: bool = False) -> None:
        """Close the connection: after what was written has been sent, or with `abort` at once."""
        self._open.discard(self)
        if not self.transport.is_closing():
            if self.conn.our_state not in (h11.ERROR, h11.CLOSED, h11.MUST_CLOSE):
                with contextlib.suppress(h11.LocalProtocolError):
                    self.conn.send(h11.ConnectionClosed())
            if abort:
                self.transport.abort()
            else:
                self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.waiting_for_head():
            self._wait_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._open.discard(self)
        if self._head_timer is not None:
            self._head_timer.cancel()
        super().connection_lost(exc)


class OncePer(logging.Filter):
    """Lets one record of a kind through per `seconds`, saying how many it left out meanwhile.

    A kind is the logger and message template; `matches` picks the records it applies to (here:
    accept errors from running out of descriptors or memory), the rest pass untouched.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self._last: dict[tuple[str, str], float] = {}
        self._left_out: dict[tuple[str, str], int] = {}

    @staticmethod
    def matches(record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return (
            getattr(record, "resource_limit", False)
            or (isinstance(exc, OSError) and exc.errno in _RESOURCE_ERRNOS)
            # the accept retries those errors leave behind fail once the socket is closed at stop
            or (record.name == "asyncio" and "_start_serving" in str(record.msg))
        )

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.matches(record):
            return True
        key = (record.name, _kind(record))
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self.seconds:
            self._left_out[key] = self._left_out.get(key, 0) + 1
            return False
        self._last[key] = now
        left_out = self._left_out.pop(key, 0)
        if left_out:
            record.msg = f"{record.getMessage()} ({left_out} more like this in the last {now - cast(float, last):.0f} s not logged)"  # set: one was logged before
            record.args = None
        return True

    def note(self, msg: str, *args: object) -> None:
        log.warning(msg, *args, extra={"resource_limit": True})


def _kind(record: logging.LogRecord) -> str:
    """A record's kind: its template's first line up to a "(" (asyncio's failed-callback lines name
    the callback's handle with its time, different on every line)."""
    return str(record.msg).split("\n", 1)[0].split("(", 1)[0]


_accept_errors = OncePer(ACCEPT_ERROR_EVERY_S)


def quiet_accept_errors() -> None:
    """Install the filter where those lines come from (idempotent): asyncio's accept loop and ours."""
    for name in ("asyncio", log.name):
        logger = logging.getLogger(name)
        if _accept_errors not in logger.filters:
            logger.addFilter(_accept_errors)


class BoundedTlsLoop(asyncio.SelectorEventLoop):
    """asyncio's loop whose TLS servers give a client the head timeout for its handshake and
    TLS_SHUTDOWN_S for the closing one (uvicorn passes neither, so asyncio's 60 s and 30 s apply)."""

    handshake_timeout_s = HEAD_TIMEOUT_S

    async def create_server(self, *args: Any, **kwargs: Any) -> asyncio.Server:
        if kwargs.get("ssl") is not None:
            kwargs.setdefault("ssl_handshake_timeout", self.handshake_timeout_s)
            kwargs.setdefault("ssl_shutdown_timeout", TLS_SHUTDOWN_S)
        return await super().create_server(*args, **kwargs)


def head_timeout_problem(seconds: float) -> str | None:
    """Why `seconds` cannot be the head timeout (`--head-timeout`), or None."""
    if not 0 < seconds <= MAX_HEAD_TIMEOUT_S:  # (also refuses NaN)
        return f"--head-timeout {seconds:g}: give seconds above 0 and at most {MAX_HEAD_TIMEOUT_S:g}, e.g. {HEAD_TIMEOUT_S:g}"
    return None


def http_server(
    app: Any,
    *,
    log_level: str,
    access_log: bool,
    max_connections: int | None = None,
    tls: tuple[Path, Path] | None = None,
    head_timeout_s: float | None = None,
) -> uvicorn.Server:
    """The uvicorn server for `app`, guarded as above; run it with `.run(sockets=[sock])`.

    `tls`: (certificate, key) to serve HTTPS (`lavos central serve --tls-cert --tls-key`).
    `head_timeout_s`: the head (and TLS handshake) timeout, HEAD_TIMEOUT_S by default."""
    quiet_accept_errors()
    head = HEAD_TIMEOUT_S if head_timeout_s is None else head_timeout_s
    if problem := head_timeout_problem(head):
        raise ValueError(problem)
    cap = max_connections or connection_cap(raise_fd_limit())
    protocol = type("GuardedH11", (GuardedH11,), {"max_connections": cap, "head_timeout_s": head})
    loop = type("BoundedTlsLoop", (BoundedTlsLoop,), {"handshake_timeout_s": head})
    cert, key = tls or (None, None)
    config = uvicorn.Config(
        app,
        http=protocol,
        ws="none",
        # uvicorn calls `loop` as the loop factory; a name is imported, a class taken as given (as `http`).
        loop=loop,  # type: ignore[arg-type]  # a class (uvicorn calls it as the factory); its hint names only strings
        log_config=None,
        log_level=log_level.lower(),
        access_log=access_log,
        lifespan="off",
        timeout_keep_alive=KEEP_ALIVE_S,
        backlog=BACKLOG,
        ssl_certfile=str(cert) if cert else None,
        ssl_keyfile=str(key) if key else None,
    )
    return uvicorn.Server(config)
