from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from broker.storage.engine import open_store

if TYPE_CHECKING:
    from broker.storage.engine import Store


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """The opened store on each backend (see db_url in tests/conftest.py)."""
    s = open_store(db_url)
    yield s
    s.close()
