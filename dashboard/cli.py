"""`lavos server`: its options, and the dashboard's part of the process (its app over the hub, its
standby page, its HTTP server). The process's life (leading, fencing, standing by, stopping) is
the hub's own: broker/ops/server.py.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import signal
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from devices.cli_support import configure_logging, fail, log_level_problem

if TYPE_CHECKING:  # imported where used: `lavos --help` stays quick
    from collections.abc import Iterator

    import uvicorn
    from fastapi import FastAPI

    from broker.compose import BoxSensors, CentralSettings
    from broker.hall.hub import Hub
    from dashboard.web.standby import SwitchableApp

log = logging.getLogger("lavos.server")

SERVER_HELP = """Run the hub (games, lights, alerts, metrics) and the HTTP API.

The database schema is upgraded on start; a database from a newer Lavos is refused.
Without --influx, metrics are off. Stop with Ctrl-C or SIGTERM.

Example:

  lavos server --venue deploy/venues/lavos.toml --mqtt mqtt://lavos-hub@127.0.0.1:1883 --mqtt-password-file /etc/lavos/hub.pw --db postgresql://lavos@localhost/lavos --http 0.0.0.0:8080
"""


HEAD_TIMEOUT_ENV = "LAVOS_HEAD_TIMEOUT"


def head_timeout_option() -> Any:
    """`--head-timeout` (or $LAVOS_HEAD_TIMEOUT), as `lavos server` and `lavos central serve` take it
    (dashboard/http_server.py: the seconds a connection has for its request head)."""
    return typer.Option(
        None,
        "--head-timeout",
        envvar=HEAD_TIMEOUT_ENV,
        help="Seconds a client has to send a request's head (over TLS, its handshake too) before the connection is closed; default 10",
        show_default=False,
    )


def checked_head_timeout(seconds: float | None) -> float | None:
    """`--head-timeout` as given, or the usage error saying what is wrong with it."""
    if seconds is None:
        return None
    from dashboard.http_server import head_timeout_problem

    if problem := head_timeout_problem(seconds):
        raise fail(problem)
    return seconds


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


def _metrics(influx: str | None, token_file: Path | None, org: str, bucket: str, data_dir: Path) -> Any:
    if influx is None:
        if token_file is not None:
            raise fail("--influx-token-file without --influx: give the InfluxDB URL too, e.g. --influx http://127.0.0.1:8086")
        log.info("metrics are off (no --influx given)")
        return None
    # VictoriaMetrics (the hub box's store) takes writes without a token; InfluxDB 2 refuses them,
    # which the writer then says in its log line (broker/adapters/metrics.py).
    token = _read_secret(token_file, "InfluxDB token") if token_file is not None else None
    from broker.compose import metrics_writer

    try:
        writer = metrics_writer(influx, token, org, bucket, data_dir)
    except ValueError as e:
        raise fail(str(e)) from None
    log.info("metrics go to %s (org %s, bucket %s, %s)", influx, org, bucket, "with a token" if token else "no token")
    return writer


def server(
    venue: Path = typer.Option(..., "--venue", help="The venue file, e.g. deploy/venues/lavos.toml"),
    mqtt: str = typer.Option(..., "--mqtt", help="The broker, e.g. mqtt://lavos-hub@127.0.0.1:1883 (mqtts:// for TLS)"),
    mqtt_password_file: Path | None = typer.Option(None, "--mqtt-password-file", help="File holding the hub's MQTT password"),
    db: str | None = typer.Option(
        None, "--db", help="Database URL (default: $LAVOS_DB, else SQLite in the data directory)", show_default=False
    ),
    influx: str | None = typer.Option(None, "--influx", help="InfluxDB (or VictoriaMetrics) URL; without it metrics are off"),
    influx_token_file: Path | None = typer.Option(
        None, "--influx-token-file", help="File holding the InfluxDB 2 token (VictoriaMetrics needs none)"
    ),
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
    central: str | None = typer.Option(
        None,
        "--central",
        help="The central reporting hub's URL (several halls, docs/scaling.md): every payment, Z report, game and alert "
        "is sent there; also publishes the name-free game state its bridge forwards",
    ),
    central_token_file: Path | None = typer.Option(None, "--central-token-file", help="File holding this hall's credential at the centre"),
    central_ca_file: Path | None = typer.Option(None, "--central-ca-file", help="The centre's CA certificate (a private CA)"),
    central_limit_mb: int = typer.Option(
        256, "--central-limit-mb", help="Records waiting for the centre: alert at 80 %, critical at 100 %"
    ),
    clock_check: str = typer.Option(
        "off",
        "--clock-check",
        help="Watch the billing clock (a hub box's unit does): ntp = alert on every tablet and mark the games while the clock "
        "has not been synchronised since boot, and on a jump; ntp-or-rtc = a clock set from a battery RTC at boot counts as right",
    ),
    backup_status: Path | None = typer.Option(
        None, "--backup-status", help="The nightly backup's status file (lavos backup --nightly): alert when it failed or is missing"
    ),
    watch_cert: list[Path] = typer.Option(
        [], "--watch-cert", help="A TLS certificate whose end to watch (alert and push 30 days before); may be repeated"
    ),
    head_timeout: float | None = head_timeout_option(),
) -> None:
    if problem := log_level_problem(log_level):  # logging would raise a ValueError with a traceback
        raise fail(problem)
    configure_logging(log_level)
    logging.getLogger("alembic").setLevel(max(logging.WARNING, logging.getLogger().level))  # its INFO is plugin chatter
    signal.signal(signal.SIGTERM, _interrupt)  # stop as cleanly during start-up as Ctrl-C does
    from broker.adapters.hub_link import MqttUrl
    from broker.domain.venue import load_venue
    from devices.tomlfile import ConfigError

    try:
        address = HttpAddress.parse(http)
        mqtt_url = MqttUrl.parse(mqtt, mqtt_password_file)
        the_venue = load_venue(venue)
        if not standby_poll > 0:
            raise ValueError(f"--standby-poll {standby_poll:g}: give a number of seconds above 0, e.g. 1")
        central_settings = _central_settings(central, central_token_file, central_ca_file, central_limit_mb)
        box = _box_sensors(clock_check, backup_status, watch_cert)
    except (ValueError, ConfigError) as e:
        raise fail(str(e)) from None
    head_timeout = checked_head_timeout(head_timeout)
    # The hub's modules only now: a mistake in the flags or the venue is refused before they load
    # (1.5 CPU-s of imports; a misconfigured service said so in 6 s on a loaded 2-core box, now 2).
    from broker.compose import default_data_dir, default_db_url
    from broker.ops.server import HubPlan, Web, serve

    data = data_dir or default_data_dir()
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise fail(f"cannot create the data directory {data} ({e.strerror}); pick another --data-dir") from None
    db_url = db or default_db_url(data_dir)
    web = Web(
        app_for=_app_for, standby=_standby_app, http_server=functools.partial(_http_server, head_timeout_s=head_timeout), warm=_warm_web
    )
    plan = HubPlan(
        the_venue,
        db_url,
        mqtt_url,
        data,
        https_cookies,
        log_level,
        lambda: _metrics(influx, influx_token_file, influx_org, influx_bucket, data),
        web,
        link_process=not mqtt_in_thread,
        # The centre's floor reads the name-free game state (lavos/v1/ha/<t>/state) its bridge forwards.
        home_assistant=home_assistant or central_settings is not None,
        central=central_settings,
        box=box,
    )
    serve(plan, lambda: _bound(address), lambda: _check_reachable(mqtt_url.host, mqtt_url.port), standby_poll)


def _central_settings(url: str | None, token_file: Path | None, ca_file: Path | None, limit_mb: int) -> CentralSettings | None:
    """--central and its files as CentralSettings, or None; ValueError says what is wrong."""
    if url is None:
        if token_file or ca_file:
            raise ValueError("--central-token-file and --central-ca-file need --central URL")
        return None
    if not url.startswith(("https://", "http://")):
        raise ValueError(f"--central {url}: give the centre's URL, e.g. https://central.example.org")
    if token_file is None:
        raise ValueError("--central needs --central-token-file (the credential `lavos central add-hall` printed)")
    try:
        token = token_file.read_text().strip()
    except OSError as e:
        raise ValueError(f"cannot read {token_file}: {e.strerror}") from None
    if not token:
        raise ValueError(f"{token_file} is empty: put the hall's credential in it")
    if ca_file is not None and not ca_file.is_file():
        raise ValueError(f"--central-ca-file {ca_file}: no such file")
    if limit_mb < 1:
        raise ValueError("--central-limit-mb: at least 1")
    from broker.compose import CentralSettings

    return CentralSettings(url=url, token=token, ca_file=ca_file, soft_limit_bytes=limit_mb * 1024 * 1024)


def _box_sensors(clock_check: str, backup_status: Path | None, certificates: list[Path]) -> BoxSensors | None:
    """What the hub box watches of itself (broker.floor.box_watch), or None when nothing."""
    from broker.adapters.box_sensors import BoxSensors
    from broker.adapters.box_sensors import clock_check as sync_test

    synchronised = sync_test(clock_check)  # ValueError names the choices
    if synchronised is None and backup_status is None and not certificates:
        return None
    return BoxSensors(synchronised=synchronised, backup_status=backup_status, certificates=tuple(certificates))


@contextlib.contextmanager
def _bound(address: HttpAddress) -> Iterator[socket.socket]:
    try:
        sock = address.bind()
    except ValueError as e:
        raise fail(str(e)) from None
    try:
        yield sock
    finally:
        sock.close()


def hub_web_app(core: Hub, *, data_dir: Path | None = None, https_cookies: bool = False) -> FastAPI:
    """The dashboard (pages and API) over a hub, as `lavos server` serves it (the demo too)."""
    from dashboard.api import create_app
    from dashboard.web import mount_web

    return mount_web(create_app(core), core, data_dir=data_dir, https_cookies=https_cookies)


def _standby_app() -> SwitchableApp:
    from dashboard.web.standby import SwitchableApp, standby_app

    return SwitchableApp(standby_app)


def _http_server(app: Any, log_level: str, access_log: bool, *, head_timeout_s: float | None = None) -> uvicorn.Server:
    from dashboard.http_server import http_server

    return http_server(app, log_level=log_level, access_log=access_log, head_timeout_s=head_timeout_s)


def _warm_web() -> None:
    import dashboard.api
    import dashboard.web  # noqa: F401 - loaded by a standby before it may have to take over


def _app_for(hub: Hub, data_dir: Path, https_cookies: bool) -> FastAPI:
    return hub_web_app(hub, data_dir=data_dir, https_cookies=https_cookies)


def register(app: typer.Typer) -> None:
    app.command("server", help=SERVER_HELP)(server)
    from dashboard.central_cli import central_app

    app.add_typer(central_app, name="central")
