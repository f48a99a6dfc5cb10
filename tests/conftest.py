from __future__ import annotations

import os

import pytest

# gpiozero reads this when a device is made without an explicit pin factory.
os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")

from broker.mosquitto import Mosquitto  # noqa: E402

TABLES = ["pool-01", "pool-02", "carom-01", "foos-01", "foos-02", "darts-01"]


@pytest.fixture(scope="module")
def mosquitto(tmp_path_factory):
    """A real Mosquitto with the deploy ACL; users: lavos-hub and one per table (password = "pw-<table>")."""
    broker = Mosquitto(tmp_path_factory.mktemp("mosquitto"), users={t: f"pw-{t}" for t in TABLES})
    broker.start()
    yield broker
    broker.stop()
