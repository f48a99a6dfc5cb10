"""Property (Hypothesis): whatever the eKasa client does in whatever order — answers, stores offline,
refuses, answers 500, times out after registering, goes down, restarts — every payment is
registered exactly once (counted on the simulator), none is lost, once it behaves again.

Through a real hub on SQLite and the simulator as a real HTTP server; few examples (each is seconds).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.till.fiscal import RetryEkasa, SaveEkasaSettings, external_id
from tests.support.ekasa_sim import EkasaSimulator
from tests.support.examples import few
from tests.support.hub import started_hub
from tests.support.sqlite_template import migrated_sqlite
from tests.support.waiting import wait_until
from tests.till.payment_stand_in import DRINK, fiscal, game_tab, pay

pytestmark = pytest.mark.slow

STEP = st.tuples(st.sampled_from(["success", "offline", "invalid", "error500", "slow", "down", "restart"]), st.integers(0, 2))


@settings(max_examples=few(6), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(STEP, min_size=2, max_size=5))
def test_every_payment_is_registered_exactly_once_whatever_the_client_does(steps: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = migrated_sqlite(Path(tmp) / "hub.db")
        sim = EkasaSimulator(Path(tmp)).start()
        sim.slow_s = 1.5
        try:
            with started_hub(url) as hub:
                f = hub.till.fiscal
                f.poll_s, f.backoff_s = 0.2, (0.2, 0.4)
                hub.execute(SaveEkasaSettings(enabled=True, url=sim.url, timeout_s=1.0, actor="boss"))
                tab = game_tab(hub)
                paid: list[int] = []
                for mode, n in steps:
                    if mode == "down":
                        sim.stop()
                    elif mode == "restart":
                        sim.restart()
                    else:
                        if not sim.running:
                            sim.start()
                        sim.mode = mode
                    paid += [pay(hub, tab, (DRINK,)) for _ in range(n)]
                    time.sleep(0.4)
                paid.append(pay(hub, tab, (DRINK,)))
                # It behaves again: up, answering, everything stored offline sent; refused ones sent again.
                if not sim.running:
                    sim.start()
                sim.mode = "success"
                sim.back_online()

                def settled() -> bool:
                    states = {p: fiscal(hub, p)[0] for p in paid}
                    for p, s in states.items():
                        if s == "failed":
                            hub.execute(RetryEkasa(payment=p, actor="boss"))
                        if s == "offline":
                            sim.back_online()
                    return set(states.values()) == {"registered"}

                wait_until(settled, 40, f"all registered after {steps}", interval=0.3)
                time.sleep(0.5)
                counts = sim.counts()
                assert {p: counts.get(external_id("lavos", p)) for p in paid} == dict.fromkeys(paid, 1), steps
        finally:
            sim.stop()
