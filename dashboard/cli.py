"""`lavos server`: the hub and its HTTP API in one process; on PostgreSQL, maybe the standby.

Two servers on one PostgreSQL: the one holding the hub lock (broker/adapters/leadership.py) is
the hub, the other serves a "standby" answer over HTTP, keeps no MQTT session and takes over when
it gets the lock. On SQLite there is one server and no lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

log = logging.getLogger("lavos.server")

SERVER_HELP = """Run the hub (sessions, lights, alerts, metrics) and the HTTP API.

The database schema is upgraded on start; a database from a newer Lavos is refused.
Without --influx, metrics are off. Stop with Ctrl-C or SIGTERM.

Example:

  lavos server --venue deploy/venues/lavos.toml --mqtt mqtt://lavos-hub@127.0.0.1:1883 --mqtt-password-file /etc/lavos/hub.pw --db postgresql://lavos@localhost/lavos --http 0.0.0.0:8080
"""
MQTT_CONNECT_WAIT_S = 5.0
EXIT_LOST_LEAD = 3  # the hub lock was lost (or taking over failed): systemd starts the process again
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")  # what logging and uvicorn both know


def fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


@dataclass(frozen=True)
class HttpAddress:
    host: str
    port: int

    @classmethod
    def parse(cls, value: str) -> HttpAddress:
        """HOST:PORT, [IPv6]:PORT or :PORT (all interfaces); port 0 picks a free one."""
        host, sep, port = value.rpartition(":")
        host = host.strip("[]") or "0.0.0.0"
        if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(f"--http {value!r} must be HOST:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080")
        return cls(host, int(port))

    def bind(self) -> socket.socket:
        """Bind now, so a taken port is a clear error before anything else starts."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP, not 0: asyncio turns TCP_NODELAY on only for sockets that say they are
        # TCP, and without it Nagle held every answer's last segment for the client's delayed
        # ACK: ~40 ms on every request, the whole of the API's latency (bench/auth.py).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as e:
            sock.close()
            raise ValueError(f"cannot listen on {self.host}:{self.port} ({e.strerror}); pick another --http address") from None
        sock.listen(128)
        return sock


def _read_secret(path: Path, what: str) -> str:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise fail(f"cannot read the {what} file {path}: {e}") from None
    if not lines or not lines[0].strip():
        raise fail(f"the {what} file {path} is empty; put it on the first line")
    return lines[0].strip()


def _check_reachable(host: str, port: int) -> None:
    # HubLink retries for 10 s before it gives up; a wrong host or port should say so at once.
    try:
        socket.create_connection((host, port), timeout=3).close()
    except OSError as e:
        raise fail(f"cannot reach the MQTT broker at {host}:{port} ({e.strerror or e}); start Mosquitto or fix --mqtt") from None


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _metrics(influx: str | None, token_file: Path | None, org: str, bucket: str, data_dir: Path):
    if influx is None:
        if token_file is not None:
            raise fail("--influx-token-file without --influx: give the InfluxDB URL too, e.g. --influx http://127.0.0.1:8086")
        log.info("metrics are off (no --influx given)")
        return None
    if token_file is None:
        raise fail("--influx needs --influx-token-file (a file holding the InfluxDB token)")
    token = _read_secret(token_file, "InfluxDB token")
    from broker.compose import metrics_writer

    try:
        writer = metrics_writer(influx, token, org, bucket, data_dir)
    except ValueError as e:
        raise fail(str(e)) from None
    log.info("metrics go to %s (org %s, bucket %s)", influx, org, bucket)
    return writer


def server(
    venue: Path = typer.Option(..., "--venue", help="The venue file, e.g. deploy/venues/lavos.toml"),
    mqtt: str = typer.Option(..., "--mqtt", help="The broker, e.g. mqtt://lavos-hub@127.0.0.1:1883 (mqtts:// for TLS)"),
    mqtt_password_file: Path | None = typer.Option(None, "--mqtt-password-file", help="File holding the hub's MQTT password"),
    db: str | None = typer.Option(
        None, "--db", help="Database URL (default: $LAVOS_DB, else SQLite in the data directory)", show_default=False
    ),
    influx: str | None = typer.Option(None, "--influx", help="InfluxDB (or VictoriaMetrics) URL; without it metrics are off"),
    influx_token_file: Path | None = typer.Option(None, "--influx-token-file", help="File holding the InfluxDB token"),
    influx_org: str = typer.Option("lavos", "--influx-org"),
    influx_bucket: str = typer.Option("lavos", "--influx-bucket"),
    http: str = typer.Option("127.0.0.1:8080", "--http", help="Where the API listens, HOST:PORT"),
    data_dir: Path | None = typer.Option(
        None,
        "--data-dir",
        help="For the SQLite database and the metrics spool (default: $LAVOS_DATA_DIR, /var/lib/lavos or ~/.local/share/lavos)",
        show_default=False,
    ),
    log_level: str = typer.Option("INFO", "--log-level", help="DEBUG, INFO, WARNING or ERROR"),
    https_cookies: bool = typer.Option(
        False,
        "--https-cookies",
        help="Mark the dashboard's login cookie Secure (served over https; "
        "behind a TLS proxy that sends X-Forwarded-Proto this happens by itself)",
    ),
    standby_poll: float = typer.Option(
        1.0,
        "--standby-poll",
        help="On PostgreSQL: how often a standby asks for the hub lock, in seconds "
        "(two servers on one database: one is the hub, the other waits)",
    ),
    mqtt_in_thread: bool = typer.Option(
        False,
        "--mqtt-in-thread",
        help="Receive MQTT in a thread of the hub's process instead of a process of its own "
        "(which lets receiving and storing use two cores; on a one-core box this saves a process)",
    ),
    home_assistant: bool = typer.Option(
        False,
        "--home-assistant",
        help="Announce every table to Home Assistant by MQTT discovery (read-only: light, game, amount, node, "
        "ball drops; see deploy/home-assistant.md). Turning it off later removes nothing: `lavos ha clear` does",
    ),
) -> None:
    if log_level.upper() not in LOG_LEVELS:  # logging would raise a ValueError with a traceback
        raise fail(f"--log-level {log_level!r} is not one of {', '.join(LOG_LEVELS)}")
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(max(logging.WARNING, logging.getLogger().level))  # its INFO is plugin chatter
    signal.signal(signal.SIGTERM, _interrupt)  # stop as cleanly during start-up as Ctrl-C does
    from broker.adapters.hub_link import MqttUrl
    from broker.adapters.leadership import Leadership, needs_leadership
    from broker.compose import default_data_dir, default_db_url
    from broker.domain.venue import load_venue
    from devices.tomlfile import ConfigError

    try:
        address = HttpAddress.parse(http)
        mqtt_url = MqttUrl.parse(mqtt, mqtt_password_file)
        the_venue = load_venue(venue)
        if not standby_poll > 0:
            raise ValueError(f"--standby-poll {standby_poll:g}: give a number of seconds above 0, e.g. 1")
    except (ValueError, ConfigError) as e:
        raise fail(str(e)) from None
    data = data_dir or default_data_dir()
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise fail(f"cannot create the data directory {data} ({e.strerror}); pick another --data-dir") from None
    db_url = db or default_db_url(data_dir)
    hub = HubPlan(
        the_venue,
        db_url,
        mqtt_url,
        data,
        https_cookies,
        log_level,
        lambda: _metrics(influx, influx_token_file, influx_org, influx_bucket, data),
        link_process=not mqtt_in_thread,
        home_assistant=home_assistant,
    )
    if not needs_leadership(db_url):
        # SQLite: one file on one box, so one process; nothing to lead.
        _check_reachable(mqtt_url.host, mqtt_url.port)
        with _bound(address) as sock:
            hub.serve_now(sock)
        return
    hub.prepare_metrics()  # a standby says what is wrong with its metrics now, not at the takeover
    lead = Leadership(db_url, poll_s=standby_poll)
    try:
        with _bound(address) as sock:
            if hub.campaign_once(lead):
                hub.serve_now(sock)
            else:
                hub.serve_standby(sock, lead)
    finally:
        lead.close()


@contextlib.contextmanager
def _bound(address: HttpAddress):
    try:
        sock = address.bind()
    except ValueError as e:
        raise fail(str(e)) from None
    try:
        yield sock
    finally:
        sock.close()


def hub_web_app(service, *, data_dir: Path | None = None, https_cookies: bool = False):
    """The dashboard (pages and API) over a hub, as `lavos server` serves it (the demo too)."""
    from dashboard.api import create_app
    from dashboard.web import mount_web

    return mount_web(create_app(service), service, data_dir=data_dir, https_cookies=https_cookies)


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
    link_process: bool = True  # the MQTT link in a child process (broker.adapters.link_process)
    home_assistant: bool = False  # MQTT discovery for Home Assistant (broker.hall.home_assistant)
    closers: list[Callable[[], None]] = field(default_factory=list)
    _prepared: list[Any] | None = None  # the metrics writer made ahead (prepare_metrics), until a hub takes it

    def prepare_metrics(self) -> None:
        self._prepared = [self.make_metrics()]

    def _take_metrics(self) -> Any:
        if self._prepared is None:
            return self.make_metrics()
        writer = self._prepared.pop() if self._prepared else None
        return writer

    def _close_unused_metrics(self) -> None:
        if self._prepared:
            writer = self._prepared.pop()
            if writer is not None:
                writer.close()

    def become_hub(self):
        """Open the store (state from the database alone), build and start the hub; its web app."""
        from broker.compose import StoreError, build_hub, open_store, settle_heap

        try:
            store = open_store(self.db_url)
        except StoreError as e:
            raise fail(str(e)) from None
        self.closers.append(store.close)
        log.info("database %s (%s)", store.url, store.backend)
        service = build_hub(
            self.venue,
            store,
            mqtt_url=self.mqtt_url,
            metrics=self._take_metrics(),
            link_process=self.link_process,
            home_assistant=self.home_assistant,
            data_dir=self.data_dir,
        )
        self.closers.append(service.close)  # closes the metrics writer too
        try:
            service.start()
        except ConnectionError as e:
            raise fail(str(e)) from None
        _wait_connected(service)
        try:
            app = hub_web_app(service, data_dir=self.data_dir, https_cookies=self.https_cookies)
        except (OSError, ValueError) as e:
            raise fail(f"cannot set up the dashboard's cookie secret: {e}") from None
        # This process is the hub from here to its end: what start-up built is never garbage, so
        # the collector stops walking it (a full collection cost 70-120 ms in a backlog drain).
        log.debug("garbage collector: %d start-up objects frozen", settle_heap())
        return app

    def close(self) -> None:
        for close in reversed(self.closers):  # the hub before its store
            close()
        self.closers.clear()
        self._close_unused_metrics()

    def _run_http(self, app, sock: socket.socket, role: str):
        from dashboard.http_server import http_server

        server = http_server(app, log_level=self.log_level, access_log=self.log_level.upper() == "DEBUG")
        host, port = sock.getsockname()[:2]
        log.info(
            "%s on http://%s:%s/ (API under /api, OpenAPI at /openapi.json); Ctrl-C to stop",
            role,
            host if ":" not in host else f"[{host}]",
            port,
        )
        return server

    def serve_now(self, sock: socket.socket) -> None:
        try:
            app = self.become_hub()
            # uvicorn handles SIGINT/SIGTERM itself: it finishes the requests in flight, then returns
            # (and re-raises the signal, which _interrupt turns into KeyboardInterrupt).
            self._run_http(app, sock, "dashboard").run(sockets=[sock])
        except KeyboardInterrupt:
            pass
        finally:
            self.close()
            log.info("stopped")

    def campaign_once(self, lead) -> bool:
        from broker.adapters.leadership import LeadershipError

        try:
            won = lead.try_acquire()
        except LeadershipError as e:
            raise fail(f"cannot reach PostgreSQL for the hub lock: {e}") from None
        if won:
            self._lead(lead)
        return won

    def _lead(self, lead) -> None:
        from broker.adapters.leadership import FENCE_GRACE_S

        lead.watch(_fence)
        log.info(
            "this process holds the hub lock: it is the hub; connecting to MQTT in %.1f s "
            "(time for a previous hub that lost the lock to stop)",
            FENCE_GRACE_S,
        )
        time.sleep(FENCE_GRACE_S)

    def serve_standby(self, sock: socket.socket, lead) -> None:
        """Answer HTTP as the standby (no database state, no MQTT) until the lock is ours, then
        become the hub in place: same socket, the real dashboard switched in."""
        from dashboard.web.standby import SwitchableApp, standby_app

        app = SwitchableApp(standby_app)
        server = self._run_http(app, sock, "standby hub")
        stop = threading.Event()
        failed: list[str] = []

        def take_over() -> None:
            log.info("standby: another process holds the hub lock; asking every %g s", lead.poll_s)
            if not lead.campaign(stop):
                return
            try:
                self._lead(lead)
                if not stop.is_set():
                    app.app = self.become_hub()
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


def _fence(reason: str) -> None:
    # Fencing: a hub that cannot show it holds the lock must not publish one more command, ack one
    # more message or keep the hub's MQTT session from the process that now holds it. Exiting at
    # once does all three (uncommitted work rolls back; un-acked messages stay at the broker for
    # the next hub); systemd (Restart=always) starts this box again, as the standby.
    logging.getLogger("lavos.server").critical("exiting (%d) so that only the holder of the hub lock acts as the hub", EXIT_LOST_LEAD)
    os._exit(EXIT_LOST_LEAD)


def _wait_connected(service) -> None:
    stats = service.link.stats
    deadline = time.monotonic() + MQTT_CONNECT_WAIT_S
    while not stats.connected and time.monotonic() < deadline:
        if stats.last_error:
            raise fail(f"the MQTT broker refused the hub's login ({stats.last_error}); check the user in --mqtt and --mqtt-password-file")
        time.sleep(0.05)
    if not stats.connected:
        log.warning("not connected to the MQTT broker yet; the hub keeps trying")


def register(app: typer.Typer) -> None:
    app.command("server", help=SERVER_HELP)(server)
