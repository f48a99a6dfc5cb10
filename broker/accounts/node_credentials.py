"""Credentials for a table node on the central Mosquitto, and the node.toml that goes with them.

The node's MQTT username is its table id, so the shipped ACL patterns (%u) confine it to its
own topics. Passwords are hashed into Mosquitto's password file by mosquitto_passwd itself.

A kit is what goes onto the table's Pi: <table>.toml (node.toml: the box as the one name
lavos.local, port 8883, TLS with the club's CA), <table>.password and, for TLS, ca.crt: the CA
the broker's certificate is checked against (deploy/hub/install.sh makes it).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from broker.domain.venue import Venue
from devices.hub_address import NODE_CA_FILE, NODE_PASSWORD_FILE
from devices.nodeconfig import dump_node_config, node_config_for
from devices.service_accounts import table_id_problem

# Owner-only from the moment each file exists (mkstemp and umask), never chmod'ed afterwards:
# a password written first and restricted second is readable by anyone in between.
PRIVATE_UMASK = 0o077


class CredentialError(RuntimeError):
    pass


@dataclass(frozen=True)
class NodeKit:
    table: str
    password_file: Path
    config_file: Path
    ca_file: Path | None = None  # the club's CA in the kit (TLS), the same file for every table


def users_in(passwd_file: Path) -> set[str]:
    """The logins a Mosquitto password file holds (none when it does not exist yet)."""
    try:
        text = passwd_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return set()
    return {line.split(":", 1)[0] for line in text.splitlines() if ":" in line and not line.startswith("#")}


def set_password(passwd_file: Path, username: str, password: str) -> None:
    """Add or replace one user in a Mosquitto password file (created if missing)."""
    tool = shutil.which("mosquitto_passwd")
    if tool is None:
        raise CredentialError("mosquitto_passwd is missing: apt-get install mosquitto-clients")
    passwd_file.parent.mkdir(parents=True, exist_ok=True)
    if not passwd_file.exists():
        os.close(os.open(passwd_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    # mosquitto_passwd edits the file in place (owner and mode kept) but makes side files with
    # the caller's umask.
    done = subprocess.run([tool, "-b", str(passwd_file), username, password], capture_output=True, text=True, umask=PRIVATE_UMASK)
    if done.returncode != 0:
        raise CredentialError(f"mosquitto_passwd failed for {username}: {done.stderr.strip() or done.stdout.strip()}")


def add_node(
    venue: Venue,
    table: str,
    passwd_file: Path,
    out_dir: Path,
    *,
    mqtt_host: str,
    mqtt_port: int = 1883,
    tls: bool = False,
    ca_file: Path | None = None,
    ca_cert: Path | None = None,
) -> NodeKit:
    """Make (or renew) a node's password and write what to copy onto its Pi (files 0600; the CA 0644).

    `ca_file` is where node.toml tells the Pi its CA is; `ca_cert` the CA on this box, copied into
    the kit as ca.crt (with TLS the kit needs it: a node that cannot check the broker never connects)."""
    if problem := table_id_problem(table):  # before anything is written: never a service's password
        raise CredentialError(problem)
    try:
        venue.table(table)
    except KeyError as e:
        raise CredentialError(e.args[0]) from None
    ca_text = _read_ca(ca_cert) if tls and ca_cert is not None else None
    password = secrets.token_urlsafe(24)
    set_password(passwd_file, table, password)
    out_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    pw_out = out_dir / f"{table}.password"
    write_private(pw_out, password + "\n")
    cfg = node_config_for(
        venue,
        table,
        mqtt_host=mqtt_host,
        mqtt_port=mqtt_port,
        password_file=NODE_PASSWORD_FILE,
        tls=tls,
        ca_file=(ca_file or NODE_CA_FILE) if tls else None,
    )
    cfg_out = out_dir / f"{table}.toml"
    write_private(cfg_out, dump_node_config(cfg))
    ca_out = None
    if ca_text is not None:
        ca_out = out_dir / "ca.crt"
        write_private(ca_out, ca_text)
        ca_out.chmod(0o644)  # a certificate: public by nature, and every Pi gets the same one
    return NodeKit(table, pw_out, cfg_out, ca_out)


def _read_ca(ca_cert: Path) -> str:
    try:
        text = ca_cert.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as e:
        raise CredentialError(
            f"cannot read the club's CA {ca_cert} ({getattr(e, 'strerror', None) or e}): deploy/hub/install.sh makes it "
            "(or deploy/mosquitto/make-certs.sh); give its path with --ca-file, or --no-tls for a broker without TLS"
        ) from None
    if "BEGIN CERTIFICATE" not in text:
        raise CredentialError(f"{ca_cert} is not a PEM certificate: give the CA's ca.crt with --ca-file")
    return text


def write_private(path: Path, text: str) -> None:
    """Write `path` owner-only (0600) from its first byte; a renewal replaces it whole."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mkstemp opens 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
