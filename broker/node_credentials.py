"""Credentials for a table node on the central Mosquitto, and the node.toml that goes with them.

The node's MQTT username is its table id, so the shipped ACL patterns (%u) confine it to its
own topics. Passwords are hashed into Mosquitto's password file by mosquitto_passwd itself.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from devices.nodeconfig import dump_node_config, node_config_for
from devices.venue import Venue


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
        passwd_file.touch(mode=0o600)
    done = subprocess.run([tool, "-b", str(passwd_file), username, password], capture_output=True, text=True)
    if done.returncode != 0:
        raise CredentialError(f"mosquitto_passwd failed for {username}: {done.stderr.strip() or done.stdout.strip()}")


def add_node(venue: Venue, table: str, passwd_file: Path, out_dir: Path, *, mqtt_host: str, mqtt_port: int = 1883,
             tls: bool = False, ca_file: Path | None = None) -> NodeKit:
    """Make (or renew) a node's password and write what to copy onto its Pi."""
    try:
        venue.table(table)
    except KeyError as e:
        raise CredentialError(e.args[0]) from None
    password = secrets.token_urlsafe(24)
    set_password(passwd_file, table, password)
    out_dir.mkdir(parents=True, exist_ok=True)
    pw_out = out_dir / f"{table}.password"
    pw_out.write_text(password + "\n")
    pw_out.chmod(0o600)
    cfg = node_config_for(venue, table, mqtt_host=mqtt_host, mqtt_port=mqtt_port,
                          password_file=Path("/etc/lavos/mqtt-password"), tls=tls, ca_file=ca_file)
    cfg_out = out_dir / f"{table}.toml"
    cfg_out.write_text(dump_node_config(cfg))
    return NodeKit(table, pw_out, cfg_out)
