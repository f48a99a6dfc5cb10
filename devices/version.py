"""The software version a node reports in its birth and the hub shows beside its own.

One source: the `version` of pyproject.toml, as the installed package's metadata says it (a Pi
and the hub box install the same source: deploy/ansible/update-nodes.yml).
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "lavos-table-control"


@cache
def software_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"
