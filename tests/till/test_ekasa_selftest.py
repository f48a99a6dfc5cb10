"""`lavos ekasa selftest` (broker.adapters.ekasa_selftest) against the simulator of Portos' API
(tests/support/ekasa_sim.py, a real HTTP server): when the client speaks the shapes the adapter
assumes it says so, and when it speaks another one (no look-up at the assumed path, a look-up that
answers a list, no paragón path) it says which step differs and shows the answer, exit status 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

from broker.adapters.ekasa_selftest import SHAPES, run_selftest
from broker.storage.engine import open_store
from broker.storage.models import Setting
from broker.till.fiscal import SETTINGS_KEY
from lavos_cli import app
from tests.support.ekasa_sim import EkasaSimulator
from tests.support.sqlite_template import migrated_sqlite

if TYPE_CHECKING:
    from pathlib import Path


LOOKUP, PARAGON = SHAPES


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[EkasaSimulator]:
    (tmp_path / "sim").mkdir()
    s = EkasaSimulator(tmp_path / "sim").start()
    yield s
    s.stop()


def selftest(sim: EkasaSimulator, **options: Any) -> tuple[str, int]:
    lines, status = run_selftest(sim.url, timeout_s=5, **options)
    return "\n".join(lines), status


def test_a_client_speaking_the_assumed_shapes(sim: EkasaSimulator) -> None:
    out, status = selftest(sim)
    assert status == 0, out
    assert "[ok] connectivity (documented): GET /api/v1/connectivity/status" in out
    assert "[ok] test receipt (documented): POST /api/v1/requests/receipts/cash_register" in out
    assert "[ok] look-up by externalId (ASSUMED)" in out and "[ok] look-up of an unknown externalId (ASSUMED)" in out
    assert "[ok] test paragón (ASSUMED): POST /api/v1/requests/receipts/paragon" in out
    assert f"  {LOOKUP}: as assumed" in out and f"  {PARAGON}: as assumed" in out
    assert "[not seen] stored offline" in out and "--offline" in out
    assert "Everything the client answered is what the adapter expects." in out
    # One test receipt and one test paragón, each once.
    assert sorted(sim.counts().values()) == [1, 1] and all(k.startswith("lavos-selftest-") for k in sim.counts())


def test_a_client_without_the_look_up_at_the_assumed_path_is_a_failure(sim: EkasaSimulator) -> None:
    sim.lookup = "missing"  # 404 to every look-up: the adapter would read "never registered" and send again
    out, status = selftest(sim)
    assert status == 1
    assert "[DIFFERS] look-up by externalId (ASSUMED)" in out
    assert "has no request it has just taken" in out and "Do not turn eKasa on" in out
    assert f"  {LOOKUP}: DIFFERENT" in out and f"  {PARAGON}: as assumed" in out
    assert "keep eKasa off" in out


def test_a_look_up_that_answers_another_shape_is_shown(sim: EkasaSimulator) -> None:
    sim.lookup = "list"
    out, status = selftest(sim)
    assert status == 1
    assert "[DIFFERS] look-up by externalId (ASSUMED)" in out and "about another request" in out
    assert 'answer:   {"items": [{"isSuccessful": true' in out  # what it said, for whoever fixes the adapter
    # A list for an unknown id is not "none": the hub could take another request for this one.
    assert "[DIFFERS] look-up of an unknown externalId (ASSUMED)" in out


def test_a_client_without_the_paragon_path(sim: EkasaSimulator) -> None:
    sim.paragon = False
    out, status = selftest(sim)
    assert status == 1
    assert "[DIFFERS] test paragón (ASSUMED): POST /api/v1/requests/receipts/paragon" in out and "HTTP 404" in out
    assert f"  {LOOKUP}: as assumed" in out and f"  {PARAGON}: DIFFERENT" in out
    assert selftest(sim, paragon=False)[1] == 0  # a club that never writes paragóny may skip it


def test_an_offline_answer_when_the_tills_internet_is_down(sim: EkasaSimulator) -> None:
    sim.mode = "offline"
    out, status = selftest(sim, offline=True)
    assert status == 0, out
    assert "state Down" in out and "stored offline, OKP " in out
    assert "[ok] stored offline (documented)" in out
    sim.mode = "success"
    out, status = selftest(sim, offline=True)  # asked for, not seen: the internet is still there
    assert status == 1 and "[DIFFERS] stored offline" in out and "unplug the till's internet" in out


def test_a_refused_receipt_and_a_client_that_does_not_answer(sim: EkasaSimulator) -> None:
    sim.mode = "invalid"
    out, status = selftest(sim)
    assert status == 1 and "[REFUSED] test receipt" in out and "Názov obsahuje nepovolené znaky" in out
    assert "[not seen] look-up by externalId" in out
    sim.stop()
    out, status = selftest(sim)
    assert status == 1 and "[DIFFERS] connectivity" in out and "no answer" in out


def test_the_command_asks_first_and_reads_the_saved_address(sim: EkasaSimulator, tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["ekasa", "selftest", "--url", sim.url], input="n\n")
    assert done.exit_code == 2 and sim.requests == []  # nothing sent without the yes
    db = migrated_sqlite(tmp_path / "lavos.db")
    store = open_store(db)
    try:
        with store.session() as s:  # as the manager saved it on /ekasa
            s.add(Setting(key=SETTINGS_KEY, value={"enabled": False, "url": sim.url, "timeout_s": 5}, updated_by="boss"))
    finally:
        store.close()
    done = runner.invoke(app, ["ekasa", "selftest", "--db", db], input="y\n")
    assert done.exit_code == 0, done.output
    assert f"eKasa selftest against {sim.url}" in done.output and "TEST mode" in done.output
    sim.lookup = "missing"
    assert runner.invoke(app, ["ekasa", "selftest", "--url", sim.url, "--yes"]).exit_code == 1
