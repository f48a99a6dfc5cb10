"""The markers that make `./run fast` (tests/support/external.py): they name real tests, they read
command lines right, and an unmarked test that starts an external program fails instead of running."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.external import MODULES, excludes_external, marker_for_command, marks_for, refusing_external_processes, wholly_external
from tests.support.probe import run_probe

TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("key", sorted(MODULES))
def test_every_entry_names_a_directory_module_or_test_that_exists(key: Any) -> None:
    # A renamed module or test would silently lose its markers (the guard would then catch it, but late).
    path, _, test = key.partition("::")
    target = TESTS / path
    assert target.exists(), f"{key}: no {target}"
    if test:
        assert re.search(rf"^def {re.escape(test)}\(", target.read_text(), re.M), f"{key}: no test {test} in {path}"


@pytest.mark.parametrize(
    "argv, marker",
    [
        (["mosquitto", "-c", "m.conf"], "mosquitto"),
        (["/usr/sbin/mosquitto", "-c", "m.conf"], "mosquitto"),
        (["mosquitto_passwd", "-b", "passwd", "u", "p"], "mosquitto"),
        (["runuser", "-u", "postgres", "--", "/usr/lib/postgresql/15/bin/initdb", "-D", "d"], "postgres"),
        (["/usr/bin/victoria-metrics", "-httpListenAddr=127.0.0.1:1"], "victoria"),
        ([sys.executable, "-m", "lavos_cli", "server", "--help"], "lavos_process"),
        ([sys.executable, "-c", "from lavos_cli import app; app()", "server"], "lavos_process"),
        ([sys.executable, "-m", "tests.edge.agent_proc", "node.toml"], "lavos_process"),
        ([str(Path(sys.executable).with_name("lavos")), "schema"], "lavos_process"),
        ("mosquitto -c m.conf", "mosquitto"),
        (["openssl", "x509", "-in", "server.crt"], None),
        (["bash", "deploy/mosquitto/make-certs.sh"], None),
        ([sys.executable, "-c", "import edge"], None),
        ([sys.executable, "-m", "pip", "--version"], None),
    ],
)
def test_command_lines_are_read_as_the_process_they_start(argv: Any, marker: Any) -> None:
    assert marker_for_command(argv) == marker


@pytest.mark.parametrize(
    "markexpr, excluded",
    [
        ("not external and not slow", True),  # ./run fast
        ("not external", True),
        ("not (external or chromium)", True),
        ("not external or slow", False),  # a slow external test is selected
        ("not external or (slow and not chromium)", False),
        ("chromium", False),
        ("", False),  # no -m: everything
    ],
)
def test_a_marker_expression_deselects_every_external_test_or_not(markexpr: Any, excluded: Any) -> None:
    assert excludes_external(markexpr) is excluded


def test_only_what_modules_marks_whole_is_left_uncollected_by_the_fast_tier() -> None:
    # tests/conftest.py pytest_ignore_collect: these are not imported under ./run fast.
    assert wholly_external(TESTS / "dashboard" / "browser", TESTS)
    assert wholly_external(TESTS / "dashboard" / "browser" / "test_bills.py", TESTS)
    assert wholly_external(TESTS / "edge" / "test_restart.py", TESTS)
    # A module with only some tests in MODULES, or none, is collected (its other tests are fast).
    assert not wholly_external(TESTS / "deploy" / "test_backup.py", TESTS)
    assert not wholly_external(TESTS / "dashboard", TESTS)
    assert not wholly_external(TESTS / "broker" / "test_bookings.py", TESTS)
    assert not wholly_external(Path("/elsewhere/test_x.py"), TESTS)


def test_fixtures_and_the_postgresql_run_of_db_url_mark_a_test() -> None:
    assert marks_for("tests/x/test_a.py::test_b", ["service", "mosquitto", "tmp_path"], {}) == {"mosquitto"}
    assert marks_for("tests/x/test_a.py::test_b[postgresql]", ["db_url"], {"db_url": "postgresql"}) == {"postgres"}
    assert marks_for("tests/x/test_a.py::test_b[sqlite]", ["db_url"], {"db_url": "sqlite"}) == set()
    assert marks_for("tests/dashboard/browser/test_z.py::test_y", [], {}) >= {"chromium"}
    assert marks_for("tests/deploy/test_backup.py::test_cli_backup_and_restore", [], {}) == {"lavos_process"}
    assert marks_for("tests/deploy/test_backup.py::test_a_backup_is_private_whatever_the_umask", [], {}) == set()


def test_an_unmarked_test_that_starts_an_external_program_fails_naming_the_marker() -> None:
    before = subprocess.Popen  # (this test runs unmarked, so conftest's guard is already in place)
    with refusing_external_processes("tests/x.py::test_y"):
        with pytest.raises(pytest.fail.Exception, match=r"tests/x.py::test_y starts .*mosquitto.* needs the `mosquitto` marker"):
            subprocess.run(["mosquitto", "-h"], capture_output=True)
        assert subprocess.run(["true"]).returncode == 0  # an ordinary program still runs
    assert subprocess.Popen is before  # put back afterwards


GUARDED_PROBE = """
import subprocess
import pytest

def test_unmarked_starts_mosquitto():
    subprocess.run(["mosquitto", "-h"], capture_output=True)

@pytest.mark.mosquitto
@pytest.mark.external
def test_marked_may():
    try:
        subprocess.run(["mosquitto", "-h"], capture_output=True)
    except FileNotFoundError:
        pass  # ./run fast machines need not have Mosquitto: the guard let it through, which is the point

def test_ordinary_program():
    assert subprocess.run(["true"]).returncode == 0
"""


@pytest.mark.parametrize("args", [(), ("-n", "2", "--dist", "loadgroup")], ids=["serial", "xdist"])
def test_the_guard_holds_in_xdist_workers_too(tmp_path: Path, args: Any) -> None:
    """tests/conftest.py's guard, loaded as a plugin into a pytest of its own: an unmarked test that
    starts Mosquitto fails naming the marker, in a plain run and in each xdist worker alike."""
    done = run_probe(tmp_path, GUARDED_PROBE, "tests.conftest", *args)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout, done.stdout
    assert "test_unmarked_starts_mosquitto starts" in done.stdout and "needs the `mosquitto` marker" in done.stdout, done.stdout
