"""`lavos members …` and `lavos db …`: the registry and the store (`lavos user …` is in broker.ops.cli_users)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from broker.ops.cli_ekasa import ekasa_app
from broker.ops.cli_home_assistant import ha_app
from broker.ops.cli_options import actor_name, actor_option, db_option, store_session
from broker.ops.cli_users import user_app
from devices.cli_support import fail
from devices.hub_address import HUB_HOST, MQTT_TLS_PORT, NODE_CA_FILE

members_app = typer.Typer(
    help="The member registry.\n\nExample: lavos members import deploy/members/lavos-members.csv", no_args_is_help=True
)
db_app = typer.Typer(
    help="The central database.\n\nExample: lavos db upgrade --db postgresql://lavos@localhost/lavos", no_args_is_help=True
)


@members_app.command("import")
def members_import(
    file: Path = typer.Argument(
        ...,
        help="CSV file: meno;typ;karty;zaplatené príspevky;aktívny;poznámka as `members export` writes it, "
        "or name,kind,cards,fees_paid,active,note (';' or ',' separated, UTF-8 or Windows-1250)",
    ),
    db: str | None = db_option,
    actor: str | None = actor_option,
) -> None:
    """Import members from a CSV file: all of it, or nothing if any line is wrong.

    Members are matched by name; re-importing the export changes nothing. Cards and paid
    years are added, never removed.

    Example: lavos members import deploy/members/lavos-members.csv
    """
    from broker.storage.members_csv import MemberImportError, import_members_csv

    try:
        data = file.read_bytes()
    except OSError as e:
        raise fail(f"cannot read {file}: {e.strerror}") from None
    with store_session(db) as s:
        try:
            report = import_members_csv(s, data, actor=actor_name(actor))
        except MemberImportError as e:
            raise fail(f"{file}: {e}") from None  # the errors say the line; which file, only this knows
    typer.echo(f"{file}: {report}")


@members_app.command("export")
def members_export(
    file: Path = typer.Argument(..., help="Where to write the CSV; - for standard output"),
    db: str | None = db_option,
    semicolon: bool = typer.Option(False, "--semicolon", hidden=True, help="Kept for old scripts: the file is always ';' separated"),
) -> None:
    """Export the member registry as the CSV Slovak Excel opens: ';' separated, UTF-8 with a BOM,
    Slovak column names and words (typ riadny/kolektívny/čestný, aktívny áno/nie); `members import` reads it back.

    Example: lavos members export members.csv
    """
    from broker.storage.members_csv import export_members_csv

    with store_session(db) as s:
        data = export_members_csv(s)
    if str(file) == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    from broker.storage.engine import create_private_file

    try:
        create_private_file(file)  # names, phone numbers and notes: owner-only, whatever the umask
        file.write_bytes(data)
    except OSError as e:
        raise fail(f"cannot write {file}: {e.strerror}") from None
    members = data.count(b"\n") - 1  # the header is not a member
    typer.echo(f"{file}: {members} member(s) written")


@db_app.command("upgrade")
def db_upgrade(db: str | None = db_option) -> None:
    """Bring the database schema to this version of Lavos (the server also does it on start).

    Example: lavos db upgrade --db postgresql://lavos@localhost/lavos
    """
    from broker.storage.migrate import head_revision

    with store_session(db):
        pass
    typer.echo(f"database schema at {head_revision()}")


broker_app = typer.Typer(
    help="The central MQTT broker (Mosquitto): node credentials.\n\nExample: lavos broker add-node pool-01",
    no_args_is_help=True,
)


@broker_app.command("add-node")
def broker_add_node(
    tables: list[str] = typer.Argument(None, help="Table ids from the venue file, e.g. pool-01 pool-02 (or --new)", show_default=False),
    new: bool = typer.Option(False, "--new", help="Every table of the venue that has no password in the password file yet"),
    venue: Path = typer.Option(Path("/etc/lavos/venue.toml"), help="Venue file"),
    passwd_file: Path = typer.Option(Path("/etc/mosquitto/lavos.passwd"), help="Mosquitto password file to add the node to"),
    out_dir: Path = typer.Option(Path("/etc/lavos/nodes"), help="Where to write <table>.toml, <table>.password (and ca.crt) for the Pi"),
    mqtt_host: str = typer.Option(HUB_HOST, help="This box's name as the Pis reach it (mDNS, set up by deploy/hub/install.sh)"),
    mqtt_port: int = typer.Option(MQTT_TLS_PORT, help="MQTT port (8883: TLS; 1883 only with --no-tls)"),
    tls: bool = typer.Option(True, "--tls/--no-tls", help="Nodes connect with TLS, checking the broker against the club's CA"),
    ca_file: Path = typer.Option(
        Path("/etc/lavos/ca.crt"), "--ca-file", help="The club's CA (deploy/hub/install.sh makes it): goes into the kit"
    ),
    node_host: str | None = typer.Option(
        None, help="The Pi's host name or address as this box reaches it over SSH, for fleet updates (default: lavos-<table>.local)"
    ),
    inventory: Path | None = typer.Option(
        None, help="The Ansible inventory of the nodes to add them to (default: OUT_DIR/inventory.json; deploy/ansible/README.md)"
    ),
) -> None:
    """Create (or renew) table nodes' MQTT passwords and write each node's kit: node.toml, its
    password and the club's CA; keep each node in the nodes' inventory.

    Copy the kit to the Pi and install it there (deploy/pi/install.sh --config T.toml
    --password-file T.password --ca-file ca.crt), then reload Mosquitto: systemctl reload mosquitto.
    The inventory is what deploy/ansible/update-nodes.yml updates every node with.

    Example: lavos broker add-node pool-01 pool-02
    """
    from broker.accounts.node_credentials import CredentialError, add_node, users_in
    from broker.domain.venue import load_venue
    from broker.ops.node_inventory import INVENTORY_NAME, keep_node, load_inventory
    from devices.tomlfile import ConfigError

    if bool(tables) == new:
        raise fail("name the tables (e.g. pool-01 pool-02) or give --new, not both")
    if node_host is not None and (new or len(tables) != 1):
        raise fail("--node-host names one table's Pi: give it with one table")
    if not tls and mqtt_port == MQTT_TLS_PORT:
        mqtt_port = 1883  # the plain listener's port, unless one was given
    inventory = inventory or out_dir / INVENTORY_NAME
    try:
        hosts = load_inventory(inventory)  # before any password changes: a file it cannot keep stops it first
        the_venue = load_venue(venue)
        if new:
            have = users_in(passwd_file)
            tables = [t.id for t in the_venue.tables if t.id not in have]
        kits, hosts_now = [], []
        for table in tables:
            kits.append(
                add_node(
                    the_venue,
                    table,
                    passwd_file,
                    out_dir,
                    mqtt_host=mqtt_host,
                    mqtt_port=mqtt_port,
                    tls=tls,
                    ca_file=NODE_CA_FILE,
                    ca_cert=ca_file,
                )
            )
            hosts_now.append(keep_node(inventory, hosts, table, node_host))
    except (ConfigError, CredentialError, OSError) as e:
        raise fail(str(e)) from None
    for kit, host in zip(kits, hosts_now, strict=True):
        typer.echo(
            f"{kit.table}: password in {passwd_file}; copy {kit.config_file} -> /etc/lavos/node.toml and "
            f"{kit.password_file} -> /etc/lavos/mqtt-password on the Pi{f', {kit.ca_file} -> /etc/lavos/ca.crt' if kit.ca_file else ''}"
        )
        typer.echo(f"{kit.table}: in {inventory} as {host} (fleet updates: deploy/ansible/update-nodes.yml)")
    if kits:
        typer.echo("then: systemctl reload mosquitto")
    else:
        typer.echo(f"every table of {venue} has a password in {passwd_file} already")


def _backup_db(db: str | None) -> str:
    from broker.storage.engine import default_db_url

    return db or default_db_url()


def _box_db(db: str | None) -> str | None:
    """A box's database: --db, else $LAVOS_DB (a PostgreSQL box: the units' drop-ins set it), else
    the SQLite file under the box's root (None)."""
    return db or os.environ.get("LAVOS_DB") or None


root_option = typer.Option(Path("/"), "--root", help="The box's root (a scratch directory to try it out)", show_default=False)


def backup(
    file: Path | None = typer.Argument(None, help="Where to write the backup, e.g. /var/backups/lavos/lavos-2026-11-30.db"),
    db: str | None = db_option,
    force: bool = typer.Option(False, "--force", help="Replace FILE if it exists"),
    box: bool = typer.Option(
        False, "--box", help="The whole hub box into FILE (.tar.gz): database, /etc/lavos, Mosquitto's files, cookie secret"
    ),
    nightly: bool = typer.Option(
        False, "--nightly", help="What lavos-backup.timer runs: a box backup into /etc/lavos/backup.toml's dir, kept and copied off the box"
    ),
    root: Path = root_option,
) -> None:
    """Back up the database into FILE (or, with --box, the whole hub box); safe while lavos server runs.

    SQLite: a consistent copy made with SQLite's online backup (an ordinary SQLite file).
    PostgreSQL: pg_dump in custom format, with the URL's credentials (needs postgresql-client).
    --box: everything a freshly installed box needs to be this club again (lavos restore FILE).
    --nightly: as --box into the backup directory, keeps keep_days, copies them to copy_to
    (/etc/lavos/backup.toml) and writes the status the hub watches (exit 1 when it failed).

    Example: lavos backup /var/backups/lavos/lavos-$(date +%F).db
    """
    from broker.ops.backup import BackupError
    from broker.ops.backup import backup as run_backup
    from broker.ops.box import BoxLayout, backup_box
    from broker.ops.box import nightly as run_nightly

    layout = BoxLayout(root)
    if nightly:
        if file is not None or box:
            raise fail("--nightly writes where /etc/lavos/backup.toml says: give no FILE and no --box")
        status = run_nightly(layout, db_url=_box_db(db))
        if status.ok:
            typer.echo(
                f"backed up the box to {status.file} ({(status.bytes or 0) / 1e6:.1f} MB) in {status.seconds} s"
                + (f", copied to {status.copied_to}" if status.copied_to else "")
            )
            return
        typer.echo(f"error: the nightly backup failed: {status.error or status.copy_error}", err=True)
        raise typer.Exit(1)
    if file is None:
        raise fail("say where to write the backup: lavos backup FILE (or --nightly)")
    try:
        typer.echo(backup_box(layout, file, db_url=_box_db(db), force=force) if box else run_backup(_backup_db(db), file, force=force))
    except BackupError as e:
        raise fail(str(e)) from None


def restore(
    file: Path = typer.Argument(..., help="A file made by lavos backup (a database, or a whole box: --box, --nightly)"),
    db: str | None = db_option,
    force: bool = typer.Option(False, "--force", help="Replace what the database holds now (back it up first)"),
    root: Path = root_option,
) -> None:
    """Restore a backup made by lavos backup into the database, then upgrade its schema; a box
    backup also puts the box's files back (/etc/lavos, Mosquitto's files, the cookie secret).

    A database that holds rows is refused without --force; a backup from a newer Lavos is
    refused. Stop lavos server first and start it after: it keeps open games in memory.
    On a new box: deploy/hub/install.sh --restore FILE does the install and this at once.

    Example: lavos restore /var/backups/lavos/lavos-2026-11-30.db --db sqlite:////var/lib/lavos/lavos.db
    """
    from broker.ops.backup import BackupError
    from broker.ops.backup import restore as run_restore
    from broker.ops.box import BoxLayout, is_box_backup, restore_box

    try:
        if is_box_backup(file):
            typer.echo(restore_box(file, BoxLayout(root), db_url=_box_db(db), force=force))
        else:
            typer.echo(run_restore(file, _backup_db(db), force=force))
    except BackupError as e:
        raise fail(str(e)) from None


box_app = typer.Typer(help="The hub box (deploy/hub/install.sh).\n\nExample: lavos box setup --manager jana", no_args_is_help=True)


@box_app.command("setup")
def box_setup(
    manager: str | None = typer.Option(
        None, "--manager", help="The first manager's login, made with a one-time password if no manager exists"
    ),
    root: Path = root_option,
) -> None:
    """What deploy/hub/install.sh needs Lavos for: the hub's MQTT login (/etc/lavos/hub-password),
    a kit for every venue table without a password (/etc/lavos/nodes) and the fleet's inventory,
    the first manager, vmalert's API token (/etc/lavos/vmalert-token).
    Idempotent: what is there stays; exit 0, and the last line says whether anything changed.

    Example: lavos box setup --manager jana
    """
    from broker.accounts.node_credentials import CredentialError
    from broker.accounts.users import UserError
    from broker.ops.box import BoxLayout, SetupError, setup
    from broker.storage.errors import StoreError
    from devices.tomlfile import ConfigError

    try:
        changed = setup(BoxLayout(root), manager=manager, db_url=_box_db(None), say=typer.echo)
    except (ConfigError, CredentialError, StoreError, UserError, SetupError, OSError) as e:
        raise fail(str(e)) from None
    typer.echo("box: changed" if changed else "box: unchanged")


def node_config(
    table: str = typer.Argument(..., help="Table id, e.g. pool-01"),
    venue: Path = typer.Option(Path("deploy/venues/lavos.toml"), help="Venue file"),
    mqtt_host: str = typer.Option("localhost", help=f"Host name of the central MQTT broker (a hub box: {HUB_HOST})"),
    mqtt_port: int = typer.Option(1883, help="Broker port"),
    password_file: Path = typer.Option(Path("/etc/lavos/mqtt-password"), help="File holding the node's MQTT password"),
) -> None:
    """Print the node.toml for one table of a venue file.

    Example: lavos node-config pool-01 --mqtt-host lavos.local > /etc/lavos/node.toml
    """
    from broker.domain.venue import load_venue
    from devices.nodeconfig import dump_node_config, node_config_for
    from devices.tomlfile import ConfigError

    try:
        v = load_venue(venue)
        cfg = node_config_for(v, table, mqtt_host=mqtt_host, mqtt_port=mqtt_port, password_file=password_file)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except KeyError as exc:
        typer.echo(f"error: {exc.args[0]}", err=True)
        raise typer.Exit(2) from None
    typer.echo(dump_node_config(cfg), nl=False)


def register(app: typer.Typer) -> None:
    app.command("node-config")(node_config)
    app.command("backup")(backup)
    app.command("restore")(restore)
    app.add_typer(broker_app, name="broker")
    app.add_typer(box_app, name="box")
    app.add_typer(members_app, name="members")
    app.add_typer(user_app, name="user")
    app.add_typer(db_app, name="db")
    app.add_typer(ha_app, name="ha")
    app.add_typer(ekasa_app, name="ekasa")
