from __future__ import annotations

import pytest

from broker.storage.engine import open_store


@pytest.fixture
def store(db_url):
    """The opened store on each backend (see db_url in tests/conftest.py)."""
    s = open_store(db_url)
    yield s
    s.close()
