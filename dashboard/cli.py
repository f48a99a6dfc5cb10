"""`lavos server`: the central service and its HTTP API in one process."""

from __future__ import annotations

import logging
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import typer

log = logging.getLogger("lavos.server")

SERVER_HELP = """Run the central service (sessions, lights, alerts, metrics) and the HTTP API.

The database schema is upgraded on start; a database from a newer Lavos is refused.
Without --influx, metrics are off. Stop with Ctrl-C or SIGTERM.

Example:

  lavos server --venue deploy/venues/lavos.toml --mqtt mqtt://lavos-hub@127.0.0.1:1883 --mqtt-password-file /etc/lavos/hub.pw --db postgresql://lavos@localhost/lavos --http 0.0.0.0:8080
"""
MQTT_CONNECT_WAIT_S = 5.0
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")  # what logging and uvicorn both know


def fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


@dataclass(frozen=True)
class HttpAddress:
    host: str
    port: int

    @classmethod
    def parse(cls, value: str) -> "HttpAddress":
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


def _metrics(influx: str | None, token_file: Path | None, org: str, bucket: str, data_dir: Path):  # type: ignore[no-untyped-def]
    if influx is None:
        if token_file is not None:
            raise fail("--influx-token-file without --influx: give the InfluxDB URL too, e.g. --influx http://127.0.0.1:8086")
        log.info("metrics are off (no --influx given)")
        return None
    if token_file is None:
        raise fail("--influx needs --influx-token-file (a file holding the InfluxDB token)")
    token = _read_secret(token_file, "InfluxDB token")
    from broker.metrics import MetricsWriter

    try:
        writer = MetricsWriter(influx, token, org, bucket, data_dir / "metrics-spool")
    except ValueError as e:
        raise fail(str(e)) from None
    log.info("metrics go to %s (org %s, bucket %s)", influx, org, bucket)
    return writer


def server(
    venue: Path = typer.Option(..., "--venue", help="The venue file, e.g. deploy/venues/lavos.toml"),
    mqtt: str = typer.Option(..., "--mqtt", help="The broker, e.g. mqtt://lavos-hub@127.0.0.1:1883 (mqtts:// for TLS)"),
    mqtt_password_file: Path | None = typer.Option(None, "--mqtt-password-file", help="File holding the hub's MQTT password"),
    db: str | None = typer.Option(None, "--db", help="Database URL (default: $LAVOS_DB, else SQLite in the data directory)", show_default=False),
    influx: str | None = typer.Option(None, "--influx", help="InfluxDB (or VictoriaMetrics) URL; without it metrics are off"),
    influx_token_file: Path | None = typer.Option(None, "--influx-token-file", help="File holding the InfluxDB token"),
    influx_org: str = typer.Option("lavos", "--influx-org"),
    influx_bucket: str = typer.Option("lavos", "--influx-bucket"),
    http: str = typer.Option("127.0.0.1:8080", "--http", help="Where the API listens, HOST:PORT"),
    data_dir: Path | None = typer.Option(None, "--data-dir", help="For the SQLite database and the metrics spool (default: $LAVOS_DATA_DIR, /var/lib/lavos or ~/.local/share/lavos)", show_default=False),
    log_level: str = typer.Option("INFO", "--log-level", help="DEBUG, INFO, WARNING or ERROR"),
    https_cookies: bool = typer.Option(False, "--https-cookies", help="Mark the dashboard's login cookie Secure (served over https; "
                                       "behind a TLS proxy that sends X-Forwarded-Proto this happens by itself)"),
) -> None:
    if log_level.upper() not in LOG_LEVELS:  # logging would raise a ValueError with a traceback
        raise fail(f"--log-level {log_level!r} is not one of {', '.join(LOG_LEVELS)}")
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(max(logging.WARNING, logging.getLogger().level))  # its INFO is plugin chatter
    signal.signal(signal.SIGTERM, _interrupt)  # stop as cleanly during start-up as Ctrl-C does
    from broker.db.engine import default_data_dir, default_db_url, open_store
    from broker.db.errors import StoreError
    from broker.hub_link import MqttUrl
    from devices.tomlfile import ConfigError
    from broker.domain.venue import load_venue

    try:
        address = HttpAddress.parse(http)
        mqtt_url = MqttUrl.parse(mqtt, mqtt_password_file)
        the_venue = load_venue(venue)
    except (ValueError, ConfigError) as e:
        raise fail(str(e)) from None
    data = data_dir or default_data_dir()
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise fail(f"cannot create the data directory {data} ({e.strerror}); pick another --data-dir") from None
    _check_reachable(mqtt_url.host, mqtt_url.port)
    try:
        sock = address.bind()
    except ValueError as e:
        raise fail(str(e)) from None
    try:
        store = open_store(db or default_db_url(data_dir))
    except StoreError as e:
        sock.close()
        raise fail(str(e)) from None
    log.info("database %s (%s)", store.url, store.backend)
    try:
        _serve(the_venue, store, mqtt_url, sock, address, _metrics(influx, influx_token_file, influx_org, influx_bucket, data), log_level,
               data, https_cookies)
    finally:
        store.close()
        sock.close()


def _serve(venue, store, mqtt_url, sock, address, metrics, log_level: str, data_dir: Path, https_cookies: bool) -> None:  # type: ignore[no-untyped-def]
    from broker.service import CentralService
    from dashboard.api import create_app
    from dashboard.http_server import http_server
    from dashboard.web import mount_web

    service = CentralService(venue, store, mqtt_url=mqtt_url, metrics=metrics)
    try:
        try:
            service.start()
        except ConnectionError as e:
            raise fail(str(e)) from None
        _wait_connected(service)
        try:
            app = mount_web(create_app(service), service, data_dir=data_dir, https_cookies=https_cookies)
        except (OSError, ValueError) as e:
            raise fail(f"cannot set up the dashboard's cookie secret: {e}") from None
        server = http_server(app, log_level=log_level, access_log=log_level.upper() == "DEBUG")
        host, port = sock.getsockname()[:2]
        log.info("dashboard on http://%s:%s/ (API under /api, OpenAPI at /openapi.json); Ctrl-C to stop", host if ":" not in host else f"[{host}]", port)
        # uvicorn handles SIGINT/SIGTERM itself: it finishes the requests in flight, then returns
        # (and re-raises the signal, which _interrupt turns into KeyboardInterrupt).
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        service.close()
        log.info("stopped")


def _wait_connected(service) -> None:  # type: ignore[no-untyped-def]
    stats = service.link.stats
    deadline = time.monotonic() + MQTT_CONNECT_WAIT_S
    while not stats.connected and time.monotonic() < deadline:
        if stats.last_error:
            raise fail(f"the MQTT broker refused the hub's login ({stats.last_error}); check the user in --mqtt and --mqtt-password-file")
        time.sleep(0.05)
    if not stats.connected:
        log.warning("not connected to the MQTT broker yet; the service keeps trying")


def register(app: typer.Typer) -> None:
    app.command("server", help=SERVER_HELP)(server)
