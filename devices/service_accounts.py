"""MQTT logins that belong to services, not tables: the one rule that keeps them apart.

A node's MQTT username is its table id (the ACL's %u patterns), so a table named like a service
account would have `lavos broker add-node` replace that account's password and ship its rights
(the hub reads and writes everything) in a node kit. Every service account is named
``lavos-...``: the hub (lavos-hub, lavos-hub-2, ...), lavos-monitor, and any added
later (tests/security/test_reserved_ids.py checks that the shipped ACL names no other user). So a
prefix, not a list, is the rule: nothing to keep in step when an account is added.
"""

from __future__ import annotations

SERVICE_ACCOUNT_PREFIX = "lavos-"


def is_service_account(name: str) -> bool:
    return name.startswith(SERVICE_ACCOUNT_PREFIX)


def table_id_problem(table_id: str) -> str | None:
    """Why `table_id` cannot be a table (its MQTT login), or None when it can."""
    if is_service_account(table_id):
        return (
            f"table id {table_id!r} is reserved: MQTT logins starting with {SERVICE_ACCOUNT_PREFIX!r} are "
            "service accounts (lavos-hub, lavos-monitor, ...), and a node logs in as its table id; rename the table"
        )
    return None
