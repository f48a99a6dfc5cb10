"""`lavos members …` and `lavos db …`: the registry and the store (`lavos user …` is in broker.ops.cli_users)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from broker.ops.cli_ekasa import ekasa_app
from broker.ops.cli_home_assistant import ha_app
from broker.ops.cli_options import actor_name, actor_option, db_option, store_session
from broker.ops.cli_users import user_app
from devices.cli_support import fail

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
    help="The central MQTT broker (Mosquitto): node credentials.\n\nExample: lavos broker add-node pool-01 --mqtt-host hub.local",
    no_args_is_help=True,
)


@broker_app.command("add-node")
def broker_add_node(
    table: str = typer.Argument(..., help="Table id from the venue file, e.g. pool-01"),
    venue: Path = typer.Option(Path("deploy/venues/lavos.toml"), help="Venue file"),
    passwd_file: Path = typer.Option(Path("/etc/mosquitto/lavos.passwd"), help="Mosquitto password file to add the node to"),
    out_dir: Path = typer.Option(Path("nodes"), help="Where to write <table>.toml and <table>.password for the Pi"),
    mqtt_host: str = typer.Option(..., help="Host name or address of this central box, as the Pis reach it"),
    mqtt_port: int = typer.Option(1883, help="MQTT port (8883 with --tls)"),
    tls: bool = typer.Option(False, help="Nodes connect with TLS (see deploy/mosquitto/make-certs.sh)"),
) -> None:
    """Create (or renew) a table node's MQTT password and write its node.toml.

    Copy both files to the Pi (/etc/lavos/node.toml and /etc/lavos/mqtt-password), then reload
    Mosquitto: systemctl reload mosquitto.

    Example: lavos broker add-node pool-01 --mqtt-host hub.local --out-dir /root/nodes
    """
    from broker.accounts.node_credentials import CredentialError, add_node
    from broker.domain.venue import load_venue
    from devices.tomlfile import ConfigError

    try:
        kit = add_node(
            load_venue(venue),
            table,
            passwd_file,
            out_dir,
            mqtt_host=mqtt_host,
            mqtt_port=mqtt_port,
            tls=tls,
            ca_file=Path("/etc/lavos/ca.crt") if tls else None,
        )
    except (ConfigError, CredentialError, OSError) as e:
        raise fail(str(e)) from None
    typer.echo(
        f"{table}: password in {passwd_file}; copy {kit.config_file} -> /etc/lavos/node.toml and "
        f"{kit.password_file} -> /etc/lavos/mqtt-password on the Pi; then: systemctl reload mosquitto"
    )


def _backup_db(db: str | None) -> str:
    from broker.storage.engine import default_db_url

    return db or default_db_url()


def backup(
    file: Path = typer.Argument(..., help="Where to write the backup, e.g. /var/backups/lavos/lavos-2026-11-30.db"),
    db: str | None = db_option,
    force: bool = typer.Option(False, "--force", help="Replace FILE if it exists"),
) -> None:
    """Back up the database into FILE; safe while lavos server runs.

    SQLite: a consistent copy made with SQLite's online backup (an ordinary SQLite file).
    PostgreSQL: pg_dump in custom format, with the URL's credentials (needs postgresql-client).

    Example: lavos backup /var/backups/lavos/lavos-$(date +%F).db
    """
    from broker.ops.backup import BackupError
    from broker.ops.backup import backup as run_backup

    try:
        typer.echo(run_backup(_backup_db(db), file, force=force))
    except BackupError as e:
        raise fail(str(e)) from None


def restore(
    file: Path = typer.Argument(..., help="A file made by lavos backup"),
    db: str | None = db_option,
    force: bool = typer.Option(False, "--force", help="Replace what the database holds now (back it up first)"),
) -> None:
    """Restore a backup made by lavos backup into the database, then upgrade its schema.

    A database that holds rows is refused without --force; a backup from a newer Lavos is
    refused. Stop lavos server first and start it after: it keeps open games in memory.

    Example: lavos restore /var/backups/lavos/lavos-2026-11-30.db --db sqlite:////var/lib/lavos/lavos.db
    """
    from broker.ops.backup import BackupError
    from broker.ops.backup import restore as run_restore

    try:
        typer.echo(run_restore(file, _backup_db(db), force=force))
    except BackupError as e:
        raise fail(str(e)) from None


def node_config(
    table: str = typer.Argument(..., help="Table id, e.g. pool-01"),
    venue: Path = typer.Option(Path("deploy/venues/lavos.toml"), help="Venue file"),
    mqtt_host: str = typer.Option("localhost", help="Host name of the central MQTT broker"),
    mqtt_port: int = typer.Option(1883, help="Broker port"),
    password_file: Path = typer.Option(Path("/etc/lavos/mqtt-password"), help="File holding the node's MQTT password"),
) -> None:
    """Print the node.toml for one table of a venue file.

    Example: lavos node-config pool-01 --mqtt-host hub.local > /etc/lavos/node.toml
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
    app.add_typer(members_app, name="members")
    app.add_typer(user_app, name="user")
    app.add_typer(db_app, name="db")
    app.add_typer(ha_app, name="ha")
    app.add_typer(ekasa_app, name="ekasa")
