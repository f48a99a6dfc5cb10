"""The Ansible inventory of a hall's table nodes, kept by `lavos broker add-node`.

deploy/ansible/update-nodes.yml updates every node from the hub box with it. One host per table
node, in the group `lavos_nodes`: its name is the table id, `ansible_host` the Pi's address as
the hub box reaches it over SSH, `lavos_table` the table. JSON (which Ansible's YAML inventory
reads as it is), so the hub needs no YAML library; anything an installer adds by hand (a host's
`ansible_user`, the group's `vars`) is kept when a node is added again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from broker.accounts.node_credentials import CredentialError, write_private

INVENTORY_NAME = "inventory.json"
GROUP = "lavos_nodes"
# Raspberry Pi OS has no default account any more: the Imager asks for one (deploy/pi/README.md uses pi).
DEFAULT_VARS = {"ansible_user": "pi", "ansible_python_interpreter": "/usr/bin/python3"}


def default_node_host(table: str) -> str:
    """The name deploy/pi/README.md gives a table's Pi in the Imager, as mDNS announces it."""
    return f"lavos-{table}.local"


def load_inventory(path: Path) -> dict[str, Any]:
    """The inventory as it is (a new one if there is none yet); CredentialError if it cannot be kept."""
    if not path.exists():
        return {"all": {"children": {GROUP: {"hosts": {}, "vars": dict(DEFAULT_VARS)}}}}
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))  # what the file holds (json.loads is Any)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CredentialError(f"{path}: not an inventory this command can keep ({e}); fix it or move it away") from None
    group = data.get("all", {}).get("children", {}).get(GROUP) if isinstance(data, dict) else None
    if group is not None and not isinstance(group, dict):
        raise CredentialError(f"{path}: all.children.{GROUP} is not a group; fix it or move it away")
    return data


def keep_node(path: Path, data: dict[str, Any], table: str, host: str | None) -> str:
    """Add or update `table`'s host (other settings kept) and write the file; returns its ansible_host."""
    group = data.setdefault("all", {}).setdefault("children", {}).setdefault(GROUP, {})
    hosts = group.get("hosts") or {}
    group["hosts"] = hosts
    found = hosts.get(table)
    entry: dict[str, Any] = found if isinstance(found, dict) else {}
    entry["ansible_host"] = host or entry.get("ansible_host") or default_node_host(table)
    entry["lavos_table"] = table
    hosts[table] = entry
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_private(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return str(entry["ansible_host"])
