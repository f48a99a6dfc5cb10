"""Credentials for a table node on the central Mosquitto, and the node.toml that goes with them.

The node's MQTT username is its table id, so the shipped ACL patterns (%u) confine it to its
own topics. Passwords are hashed into Mosquitto's password file by mosquitto_passwd itself.
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
) -> NodeKit:
    """Make (or renew) a node's password and write what to copy onto its Pi (files 0600)."""
    if problem := table_id_problem(table):  # before anything is written: never a service's password
        raise CredentialError(problem)
    try:
        venue.table(table)
    except KeyError as e:
        raise CredentialError(e.args[0]) from None
    password = secrets.token_urlsafe(24)
    set_password(passwd_file, table, password)
    out_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    pw_out = out_dir / f"{table}.password"
    write_private(pw_out, password + "\n")
    cfg = node_config_for(
        venue, table, mqtt_host=mqtt_host, mqtt_port=mqtt_port, password_file=Path("/etc/lavos/mqtt-password"), tls=tls, ca_file=ca_file
    )
    cfg_out = out_dir / f"{table}.toml"
    write_private(cfg_out, dump_node_config(cfg))
    return NodeKit(table, pw_out, cfg_out)


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
