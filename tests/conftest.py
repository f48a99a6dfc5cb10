from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# gpiozero reads this when a device is made without an explicit pin factory.
os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hypothesis import settings

from sim.mosquitto import Mosquitto
from tests.support.examples import PROFILE_ENV, register_profiles
from tests.support.external import EXTERNAL, MARKERS, excludes_external, marks_for, refusing_external_processes, wholly_external
from tests.support.schedule import arrange, claim_worker_ports
from tests.support.sqlite_template import migrated_sqlite

if TYPE_CHECKING:
    from contextlib import _GeneratorContextManager, nullcontext


if TYPE_CHECKING:  # imported where used, as the fixtures do: only their names, for the annotations
    from tests.support.postgres import PostgresCluster
    from tests.support.victoria import VictoriaMetrics

# The time budget: the closing lines say the session's wall time, and past the CI limit it fails.
pytest_plugins = ["tests.support.budget"]

# Hypothesis: 50 examples a property by default ("ci"), HYPOTHESIS_PROFILE=deep for 500 (tests/support/examples.py).
register_profiles()
settings.load_profile(os.environ.get(PROFILE_ENV, "ci"))

# Under pytest-xdist each worker draws test ports from a slice of its own.
claim_worker_ports()

# Every table of the shipped venue file, so any test can run any of its nodes.
TABLES = [f"pool-{i:02d}" for i in range(1, 11)] + ["carom-01", "foos-01", "foos-02", "darts-01"]


TESTS = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under a `-m` that deselects every external test (`./run fast`), a directory or module whose
    every test is external (tests/support/external.py MODULES) is not collected: it would be
    imported only to be deselected. Otherwise pytest decides."""
    if excludes_external(config.option.markexpr) and wholly_external(collection_path, TESTS):
        return True
    return None


# First, before pytest-xdist's own hook reads the groups (and adds them to the test ids).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: Any, items: Any) -> None:
    """Mark each test by the processes it needs, and each of those `external` (tests/support/external.py);
    then group and order them for the xdist workers (tests/support/schedule.py)."""
    for item in items:
        params = getattr(item, "callspec", None)
        need = marks_for(item.nodeid, list(getattr(item, "fixturenames", ())), params.params if params else {})
        for marker in sorted(need):
            item.add_marker(marker)
        if any(item.get_closest_marker(m) for m in MARKERS):
            item.add_marker(EXTERNAL)
    arrange(config, items)


def _refusing_unless_external(item: Any) -> _GeneratorContextManager[None, None, None] | nullcontext[None]:
    if item.get_closest_marker(EXTERNAL):
        return contextlib.nullcontext()
    return refusing_external_processes(item.nodeid)


# A test outside `external` may start none of the programs behind the markers, in its fixtures'
# setup or its body: one that does is marked wrong and would break ./run fast. Not in teardown:
# that is where a broker or cluster a module or the session shared is stopped, after whichever
# test happened to run last.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: Any) -> Iterator[None]:
    with _refusing_unless_external(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Iterator[None]:
    with _refusing_unless_external(item):
        yield


@pytest.fixture(scope="module")
def mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    """A real Mosquitto started from the shipped config and ACL (sim/mosquitto.py); users: lavos-hub
    ("hub-secret"), lavos-monitor ("monitor-secret") and one per table (password "pw-<table>").
    One connection per login (client id = login): a second hub needs `mosquitto.hub_login(name)`."""
    broker = Mosquitto(tmp_path_factory.mktemp("mosquitto"), users={t: f"pw-{t}" for t in TABLES})
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """One throwaway PostgreSQL cluster for the whole test session (tests/support/postgres.py)."""
    from tests.support.postgres import PostgresCluster, find_bindir

    try:
        bindir = find_bindir()
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    cluster = PostgresCluster(bindir).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def postgres_template(postgres_cluster: PostgresCluster) -> str:
    """A database migrated to head once; each test's database is a copy of it."""
    from broker.storage.engine import open_store

    url = postgres_cluster.create_database()
    open_store(url).close()  # a template must have no open connections when copied
    return url.rsplit("/", 1)[1]


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, migrated database URL: once on a SQLite file, once on PostgreSQL."""
    if request.param == "sqlite":
        yield migrated_sqlite(tmp_path / "lavos.db")  # a copy of a file migrated once (tests/support/sqlite_template.py)
        return
    cluster = request.getfixturevalue("postgres_cluster")
    url = cluster.create_database(template=request.getfixturevalue("postgres_template"))
    yield url
    cluster.drop_database(url)


@pytest.fixture(scope="module")
def victoria(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VictoriaMetrics]:
    """A real VictoriaMetrics (Debian package) accepting InfluxDB writes; tests may stop() and start() it."""
    from tests.support.victoria import VictoriaMetrics

    vm = VictoriaMetrics(tmp_path_factory.mktemp("victoria")).start()
    yield vm
    vm.stop()
