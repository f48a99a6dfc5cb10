"""A darts table's "use today" runs from the day cut to the next: after midnight is still tonight."""

from __future__ import annotations

from typing import Any

import pytest

from broker.floor.table_service import SetOutOfService
from dashboard.web.table_page import use_today
from tests.support.till_days import FakeClock, day_hub, local


@pytest.mark.parametrize(
    "at, when",
    [
        (local(2026, 12, 1, 23, 50), "before midnight"),
        (local(2026, 12, 2, 0, 30), "after midnight"),  # calendar midnight to midnight hid this one
        (local(2026, 12, 31, 23, 59), "New Year's Eve"),
        (local(2027, 3, 28, 3, 30), "the spring DST night, after the change"),
    ],
)
def test_the_use_log_holds_tonights_use_after_midnight_too(db_url: str, at: Any, when: Any) -> None:
    clock = FakeClock(at)
    with day_hub(db_url, clock) as (_hub, facade):
        facade.execute(SetOutOfService(table="darts-01", out=True, reason="hroty", actor="jana"))
        clock.advance(minutes=5)
        facade.execute(SetOutOfService(table="darts-01", out=False, actor="jana"))
        used = use_today(facade.reads, "darts-01")
        assert [u.what for u in used] == ["table.in_service", "table.out_of_service"], (when, used)
        clock.advance(hours=7)  # past the 06:00 cut: a new business day, nothing yet
        assert use_today(facade.reads, "darts-01") == [], when
