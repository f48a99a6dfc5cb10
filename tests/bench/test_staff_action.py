"""bench/staff_action.py keeps running end to end, cheaply (one round, no warm-up): every action's
card turns true on the other tablet and the live stream's part of the way is seen; a foosball goal
without a check-in reaches the other tablet's banner; the till's four paths from the floor end on
a receipt within their taps (cash at the bar 3, stop and pay 4). Times are not asserted here: the
machine is shared; the bench itself prints them against its targets.

One round of the actions (the first pair of tables: every action once), not two or three: the
figures more rounds add are not asserted here (`python -m bench.staff_action` runs ten for them).
Most of the bench's set-up (accounts, the server, the nodes, Chromium) is paid once for both parts."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

from bench.staff_action import ACTIONS, TILL_PATHS, report, report_goals, report_till, run

if TYPE_CHECKING:
    from pathlib import Path


def test_the_staff_action_bench_sees_each_action_arrive_on_the_other_tablet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = run(1, tmp_path, warm_up=False, goal_rounds=1, till_rounds=1)
    samples, base, till = done.samples, done.base, done.till
    assert [s.action for s in samples] == list(ACTIONS)
    assert len(base.total) == 4
    for s in samples:
        assert s.total > 0 and s.post > 0, s
        assert not math.isnan(s.push), s  # the live stream told B
        assert math.isnan(s.fetch) == math.isnan(s.dom), s  # a fetch made the card (or the push carried it)
    assert [t.path for t in till] == list(TILL_PATHS)
    assert [t.taps for t in till] == [4, 4, 3, 3]  # the stop's confirmation is a tap too
    assert all(ms > 0 for t in till for _, ms in t.steps)
    assert len(done.goals) == 1 and done.goals[0] > 0
    report(samples, base)
    report_goals(done.goals)
    report_till(till)
    out = capsys.readouterr().out
    assert "baseline: API fetch → push on B" in out and "ratio to baseline" in out
    assert "goal → alert in the banner" in out
    assert "stop and pay, cash with change" in out and "each step, tap → page shown" in out
