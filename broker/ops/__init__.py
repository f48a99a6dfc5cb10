"""Operator tasks: the `lavos` commands for the hub, backups, member CSV import/export."""
