"""`lavos server` as a process: become the hub at once or stand by, lead, fence, stop.

On SQLite there is one server (one file, one box) and no lock. Two servers on one PostgreSQL:
the one holding the hub lock (broker/adapters/leadership.py) is the hub, the other serves a
"standby" answer over HTTP, keeps no MQTT session and takes over when it gets the lock.

Fencing, twice over:
- every write transaction of a leading hub checks, just before its COMMIT and on its own
  connection, that the lock's PostgreSQL session still holds the lock
  (`Leadership.check_in`, set as `Store.before_commit`); a transaction that finds it gone rolls
  back and the process exits, so nothing is written by a hub that is no longer the hub, however
  the timing falls;
- between transactions, the lock is checked every half second and a check that cannot be made
  for 2.5 s counts as lost (the process exits before a new leader, which waits 3 s, touches MQTT).

The hub itself is built by broker.compose (the composition root of the hub); the web app on top
of it comes from the caller (`Web`: the dashboard's pages and API, its standby page, its HTTP
server), since the hub never imports the dashboard.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import typer

from devices.cli_support import fail

log = logging.getLogger("lavos.server")

MQTT_CONNECT_WAIT_S = 5.0
EXIT_LOST_LEAD = 3  # the hub lock was lost (or taking over failed): systemd starts the process again


class Switchable(Protocol):
    """The ASGI app a standby serves, into which the real dashboard is switched at the takeover."""

    app: Any


@dataclass(frozen=True)
class Web:
    """What the dashboard gives the server: its app over a hub, its standby app, its HTTP server."""

    app_for: Callable[[Any, Path, bool], Any]  # (hub, data dir, https cookies) -> ASGI app
    standby: Callable[[], Switchable]  # an app answering "standby" until `.app` is set
    http_server: Callable[[Any, str, bool], Any]  # (app, log level, access log) -> uvicorn.Server
    # Import what app_for needs ahead: a standby does it while it waits, so a takeover spends its
    # seconds on the hall's state, not on loading the dashboard (seconds on a loaded 2-core box).
    warm: Callable[[], None] = lambda: None


@dataclass
class HubPlan:
    """What `lavos server` was told, kept until this process becomes the hub (at once, or as a
    standby when it wins the hub lock): only then are the store, the hub and its MQTT session made."""

    venue: Any
    db_url: str
    mqtt_url: Any
    data_dir: Path
    https_cookies: bool
    log_level: str
    make_metrics: Callable[[], Any]
    web: Web
    link_process: bool = True  # the MQTT link in a child process (broker.adapters.link_process)
    home_assistant: bool = False  # MQTT discovery for Home Assistant (broker.floor.home_assistant)
    central: Any = None  # CentralSettings: the records go to the central reporting hub (broker.outbox.records)
    box: Any = None  # BoxSensors: the hub box watches its clock, backups and certificates (broker.floor.box_watch)
    closers: list[Callable[[], None]] = field(default_factory=list)
    _prepared: list[Any] | None = None  # the metrics writer made ahead (prepare_metrics), until a hub takes it

    def prepare_metrics(self) -> None:
        self._prepared = [self.make_metrics()]

    def _take_metrics(self) -> Any:
        if self._prepared is None:
            return self.make_metrics()
        return self._prepared.pop() if self._prepared else None

    def _close_unused_metrics(self) -> None:
        if self._prepared:
            writer = self._prepared.pop()
            if writer is not None:
                writer.close()

    def become_hub(self, lead: Any = None) -> Any:
        """Open the store (state from the database alone), build and start the hub; its web app.
        With `lead` (the hub lock, held), every write transaction checks it before committing."""
        from broker.adapters.heap import settle_heap
        from broker.compose import StoreError, build_hub, open_store

        try:
            store = open_store(self.db_url, venue=self.venue)
        except StoreError as e:
            raise fail(str(e)) from None
        if lead is not None:
            store.before_commit = lead.check_in
        self.closers.append(store.close)
        log.info("database %s (%s)", store.url, store.backend)
        hub = build_hub(
            self.venue,
            store,
            mqtt_url=self.mqtt_url,
            metrics=self._take_metrics(),
            link_process=self.link_process,
            home_assistant=self.home_assistant,
            data_dir=self.data_dir,
            central=self.central,
            box=self.box,
        )
        self.closers.append(hub.close)  # closes the metrics writer too
        # The dashboard first (its imports and FastAPI's routes: seconds of CPU on a loaded box),
        # then the hub's MQTT link and writer. Started the other way round, a backlog queued for
        # the hub's session drained while this ran in the same interpreter, the two taking turns
        # on its lock: a third of a bare subscriber's rate (bench/hub_ingest.py, issue 29).
        try:
            app = self.web.app_for(hub, self.data_dir, self.https_cookies)
        except (OSError, ValueError) as e:
            raise fail(f"cannot set up the dashboard's cookie secret: {e}") from None
        # This process is the hub from here to its end: what start-up built is never garbage, so
        # the collector stops walking it (a full collection cost 70-120 ms in a backlog drain).
        log.debug("garbage collector: %d start-up objects frozen", settle_heap())
        try:
            hub.start()
        except ConnectionError as e:
            raise fail(str(e)) from None
        _wait_connected(hub)
        return app

    def close(self) -> None:
        for close in reversed(self.closers):  # the hub before its store
            close()
        self.closers.clear()
        self._close_unused_metrics()

    def _run_http(self, app: Any, sock: socket.socket, role: str) -> Any:
        server = self.web.http_server(app, self.log_level, self.log_level.upper() == "DEBUG")
        host, port = sock.getsockname()[:2]
        log.info(
            "%s on http://%s:%s/ (API under /api, OpenAPI at /openapi.json); Ctrl-C to stop",
            role,
            host if ":" not in host else f"[{host}]",
            port,
        )
        return server

    def serve_now(self, sock: socket.socket, lead: Any = None) -> None:
        try:
            app = self.become_hub(lead)
            # uvicorn handles SIGINT/SIGTERM itself: it finishes the requests in flight, then returns
            # (and re-raises the signal, which the caller's handler turns into KeyboardInterrupt).
            self._run_http(app, sock, "dashboard").run(sockets=[sock])
        except KeyboardInterrupt:
            pass
        finally:
            self.close()
            log.info("stopped")

    def campaign_once(self, lead: Any) -> bool:
        from broker.adapters.leadership import LeadershipError

        try:
            won = lead.try_acquire()
        except LeadershipError as e:
            raise fail(f"cannot reach PostgreSQL for the hub lock: {e}") from None
        if won:
            self._lead(lead)
        return bool(won)

    def _lead(self, lead: Any) -> None:
        from broker.adapters.leadership import FENCE_GRACE_S

        lead.watch(fence)
        log.info(
            "this process holds the hub lock: it is the hub; connecting to MQTT in %.1f s "
            "(time for a previous hub that lost the lock to stop)",
            FENCE_GRACE_S,
        )
        time.sleep(FENCE_GRACE_S)

    def serve_standby(self, sock: socket.socket, lead: Any) -> None:
        """Answer HTTP as the standby (no database state, no MQTT) until the lock is ours, then
        become the hub in place: same socket, the real dashboard switched in."""
        app = self.web.standby()
        server = self._run_http(app, sock, "standby hub")
        stop = threading.Event()
        failed: list[str] = []

        def take_over() -> None:
            log.info("standby: another process holds the hub lock; asking every %g s", lead.poll_s)
            _warm(self.web)
            if not lead.campaign(stop):
                return
            try:
                self._lead(lead)
                if not stop.is_set():
                    app.app = self.become_hub(lead)
                    log.info("took over as the hub")
            except typer.Exit:
                failed.append("could not become the hub (see the error above)")
                server.should_exit = True
            except Exception as e:
                log.exception("could not become the hub")
                failed.append(str(e))
                server.should_exit = True

        campaigner = threading.Thread(target=take_over, name="hub-campaign", daemon=True)
        campaigner.start()
        try:
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            pass
        finally:
            stop.set()
            campaigner.join(10)
            self.close()
            log.info("stopped")
        if failed:
            raise typer.Exit(EXIT_LOST_LEAD)


def serve(
    plan: HubPlan, bind: Callable[[], AbstractContextManager[socket.socket]], check_mqtt: Callable[[], None], standby_poll: float
) -> None:
    """Run `lavos server` until Ctrl-C or SIGTERM: the hub at once on SQLite; on PostgreSQL the
    hub when this process gets the hub lock, else the standby until it does. `bind` binds the
    HTTP address (a taken port is a clear error before anything else starts)."""
    from broker.adapters.leadership import Leadership, needs_leadership

    if not needs_leadership(plan.db_url):
        check_mqtt()  # SQLite: one file on one box, so one process; nothing to lead
        with bind() as sock:
            plan.serve_now(sock)
        return
    plan.prepare_metrics()  # a standby says what is wrong with its metrics now, not at the takeover
    lead = Leadership(plan.db_url, poll_s=standby_poll)
    try:
        with bind() as sock:
            if plan.campaign_once(lead):
                plan.serve_now(sock, lead)
            else:
                plan.serve_standby(sock, lead)
    finally:
        lead.close()


def fence(reason: str) -> None:
    # Fencing: a hub that cannot show it holds the lock must not publish one more command, ack one
    # more message or keep the hub's MQTT session from the process that now holds it. Exiting at
    # once does all three (uncommitted work rolls back; un-acked messages stay at the broker for
    # the next hub); systemd (Restart=always) starts this box again, as the standby.
    log.critical("exiting (%d) so that only the holder of the hub lock acts as the hub", EXIT_LOST_LEAD)
    os._exit(EXIT_LOST_LEAD)


def _warm(web: Web) -> None:
    import broker.adapters.heap
    import broker.compose  # noqa: F401 - what become_hub imports, loaded while standing by

    web.warm()


def _wait_connected(hub: Any) -> None:
    stats = hub.link.stats
    deadline = time.monotonic() + MQTT_CONNECT_WAIT_S
    while not stats.connected and time.monotonic() < deadline:
        if stats.last_error:
            raise fail(f"the MQTT broker refused the hub's login ({stats.last_error}); check the user in --mqtt and --mqtt-password-file")
        time.sleep(0.05)
    if not stats.connected:
        log.warning("not connected to the MQTT broker yet; the hub keeps trying")
