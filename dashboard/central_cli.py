"""`lavos central …`: the central reporting hub of several halls (broker.central; docs/scaling.md),
and each hall's bridge to it.

    lavos central add-hall petrzalka --name "Lavos Petržalka" --db postgresql://lavos@db/central
    lavos central add-user eva --role operator --db ...
    lavos central serve --db postgresql://lavos@db/central --mqtt mqtt://lavos-central@127.0.0.1:1883 \\
        --mqtt-password-file /etc/lavos/central-mqtt-password --http 0.0.0.0:8443 --tls-cert ... --tls-key ...
    lavos central bridge --centre 'mqtts://petrzalka@central.example.org:8883?cafile=/etc/lavos/central-ca.crt' \\
        --centre-password-file /etc/lavos/bridge-centre-password --mqtt-password-file /etc/lavos/bridge-password   # at a hall
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from dashboard.cli import checked_head_timeout, head_timeout_option
from devices.cli_support import configure_logging, fail, log_level_problem

if TYPE_CHECKING:
    from broker.compose import Store

central_app = typer.Typer(
    help="The central reporting hub of several halls: records in, a read-only view out (PostgreSQL only).\n\n"
    "Example: lavos central serve --db postgresql://lavos@localhost/central --mqtt mqtt://lavos-central@127.0.0.1:1883",
    no_args_is_help=True,
)
DB_HELP = "The centre's PostgreSQL database, e.g. postgresql://lavos@localhost/central"
log = logging.getLogger("lavos.central")


def open_central_store(db: str) -> Store:
    """The centre's store: PostgreSQL only (many halls write at once; the read models need its upserts under load)."""
    from broker.compose import StoreError, open_store

    if not db.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        raise fail(f"--db {db}: the centre runs on PostgreSQL only, e.g. postgresql://lavos@localhost/central")
    try:
        return open_store(db)
    except StoreError as e:
        raise fail(str(e)) from None


@central_app.command("add-hall")
def add_hall(
    hall: str = typer.Argument(..., help="The hall's venue id ([venue] id in its venue file), e.g. petrzalka"),
    name: str = typer.Option("", "--name", help="How the centre's pages name it, e.g. Lavos Petržalka"),
    db: str = typer.Option(..., "--db", help=DB_HELP),
) -> None:
    """Register a hall (or give it a new credential): prints the credential, once; put it in the
    hall's --central-token-file. The old credential stops working at once.

    Example: lavos central add-hall petrzalka --name "Lavos Petržalka" --db postgresql://lavos@localhost/central
    """
    from broker.central.accounts import CentralError
    from broker.central.accounts import add_hall as add

    store = open_central_store(db)
    try:
        with store.session() as s:
            token = add(s, hall, name)
    except CentralError as e:
        raise fail(str(e)) from None
    finally:
        store.close()
    typer.echo(token)


@central_app.command("add-user")
def add_user(
    username: str = typer.Argument(...),
    role: str = typer.Option(..., "--role", help="operator (every hall) or hall_manager (one hall)"),
    hall: str | None = typer.Option(None, "--hall", help="The hall a hall_manager sees"),
    password_file: Path | None = typer.Option(None, "--password-file", help="File with the password; without it one is made and printed"),
    db: str = typer.Option(..., "--db", help=DB_HELP),
) -> None:
    """Add a person to the centre (or change their password, role or hall: every page login they have ends).

    Example: lavos central add-user eva --role hall_manager --hall petrzalka --db postgresql://lavos@localhost/central
    """
    from broker.central.accounts import CentralError
    from broker.central.accounts import add_user as add

    password = password_file.read_text().strip() if password_file else secrets.token_urlsafe(12)
    store = open_central_store(db)
    try:
        with store.session() as s:
            add(s, username, password, role, hall)
    except CentralError as e:
        raise fail(str(e)) from None
    finally:
        store.close()
    typer.echo(f"{username}: {role}{' of ' + hall if hall else ''}" + ("" if password_file else f"; password {password}"))


@central_app.command("serve")
def serve(
    db: str = typer.Option(..., "--db", help=DB_HELP),
    mqtt: str | None = typer.Option(
        None, "--mqtt", help="The centre's broker, where the halls' bridges write: mqtt://lavos-central@host:1883"
    ),
    mqtt_password_file: Path | None = typer.Option(None, "--mqtt-password-file"),
    http: str = typer.Option("127.0.0.1:8090", "--http", help="HOST:PORT"),
    tls_cert: Path | None = typer.Option(
        None, "--tls-cert", help="HTTPS: the certificate (the halls send records only over HTTPS in production)"
    ),
    tls_key: Path | None = typer.Option(None, "--tls-key"),
    secret_file: Path | None = typer.Option(None, "--secret-file", help="The cookie secret (made there if missing)"),
    log_level: str = typer.Option("INFO", "--log-level"),
    head_timeout: float | None = head_timeout_option(),
) -> None:
    """Serve the central view and the records API.

    Example: lavos central serve --db postgresql://lavos@localhost/central --mqtt mqtt://lavos-central@127.0.0.1:1883 \\
    --mqtt-password-file /etc/lavos/central-mqtt-password --http 0.0.0.0:8443 --tls-cert /etc/lavos/central.crt --tls-key /etc/lavos/central.key
    """
    configure_logging(log_level)
    from broker.adapters.hub_link import MqttUrl
    from dashboard.cli import HttpAddress

    try:
        address = HttpAddress.parse(http)
        mqtt_url = MqttUrl.parse(mqtt, mqtt_password_file) if mqtt else None
    except ValueError as e:
        raise fail(str(e)) from None
    if (tls_cert is None) != (tls_key is None):
        raise fail("--tls-cert and --tls-key go together")
    head_timeout = checked_head_timeout(head_timeout)
    for path in (tls_cert, tls_key):
        if path is not None and not path.is_file():
            raise fail(f"{path}: no such file")
    from broker.central.live import Floors, LiveSubscriber
    from broker.central.service import Central
    from dashboard.http_server import http_server
    from dashboard.web.central.app import build_central_app

    try:
        sock = address.bind()
    except ValueError as e:
        raise fail(str(e)) from None
    store = open_central_store(db)
    floors = Floors(store)
    live = None
    if mqtt_url is not None:
        live = LiveSubscriber(mqtt_url.host, mqtt_url.port, mqtt_url.username or "lavos-central", mqtt_url.password or "", floors)
        live.start()
    secret = _secret(secret_file)
    app = build_central_app(Central(store, floors), secret=secret, https_cookies=tls_cert is not None)
    # The hall's server (dashboard/http_server.py): a head timeout, a connection cap below the
    # open-file limit, a bounded TLS handshake, one accept-error line a minute.
    tls = (tls_cert, tls_key) if tls_cert is not None and tls_key is not None else None
    server = http_server(app, log_level=log_level, access_log=log_level.upper() == "DEBUG", tls=tls, head_timeout_s=head_timeout)
    log.info("the centre on %s://%s:%s/", "https" if tls else "http", address.host, address.port)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        if live is not None:
            live.close()
        store.close()


@central_app.command("bridge")
def bridge(
    centre: str = typer.Option(
        ...,
        "--centre",
        help="The centre's broker, logged in as this hall (its venue id): mqtts://petrzalka@central.example.org:8883?cafile=/etc/lavos/central-ca.crt",
    ),
    centre_password_file: Path = typer.Option(..., "--centre-password-file", help="The password the centre made for this hall's login"),
    mqtt: str = typer.Option(
        "mqtt://lavos-bridge@127.0.0.1:1883", "--mqtt", help="The hall's broker, as the bridge's read-only login (deploy/mosquitto/acl)"
    ),
    mqtt_password_file: Path | None = typer.Option(None, "--mqtt-password-file", help="lavos-bridge's password on the hall's broker"),
    keepalive: int = typer.Option(
        30, "--keepalive", min=2, help="Seconds between pings on a quiet link; a silent path is given up after twice that"
    ),
    retry_max: float = typer.Option(
        30.0, "--retry-max", min=1.0, help="The longest wait, in seconds, between two attempts to reach the centre"
    ),
    log_level: str = typer.Option("INFO", "--log-level"),
) -> None:
    """Run at each hall: forward its live state (node status, lights, the name-free game state, the
    hub's status, the layout) to the centre's broker, and nothing back. Its own process, apart from
    the hall's broker, so a bad internet link never reaches the tables (docs/scaling.md).

    Example: lavos central bridge --centre 'mqtts://petrzalka@central.example.org:8883?cafile=/etc/lavos/central-ca.crt' \\
    --centre-password-file /etc/lavos/bridge-centre-password --mqtt-password-file /etc/lavos/bridge-password
    """
    if problem := log_level_problem(log_level):
        raise fail(problem)
    configure_logging(log_level)
    from broker.adapters.centre_bridge import CentreBridge
    from broker.adapters.hub_link import MqttUrl

    try:
        centre_url = MqttUrl.parse(centre, centre_password_file)
        hall_url = MqttUrl.parse(mqtt, mqtt_password_file)
        link = CentreBridge(hall_url, centre_url, keepalive_s=keepalive, retry_s=(min(1.0, retry_max), retry_max))
    except ValueError as e:
        raise fail(str(e)) from None
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    log.info("bridging hall %s to %s:%s", link.hall_id, centre_url.host, centre_url.port)
    link.start()
    try:
        stop.wait()
    finally:
        link.close()
        log.info("stopped")


def _secret(path: Path | None) -> str:
    if path is None:
        return secrets.token_urlsafe(32)  # logins end with the process
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # owner-only whatever the umask
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(32))
    return path.read_text().strip()
