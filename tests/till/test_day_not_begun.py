"""Issue 19, item 5: a business day that has not begun cannot be closed.

After the evening's close-out, what is paid later that night counts on the next day, but that day
begins only at the next day cut (06:00). Before, staff could close it at once, and the one after,
and the one after that: takings landed days ahead and the manager got a summary per close."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import TYPE_CHECKING, Any

import pytest
from fastapi.testclient import TestClient

from broker.accounts.users import issue_token
from broker.hall.facade import ServiceError
from broker.till.closeout import CloseDay
from tests.dashboard.conftest import CHEAP, PASSWORD
from tests.support.hub import on_writer
from tests.support.till_days import FakeClock, day_hub, local, pay, walk_in
from tests.support.web import Browser, add_users, bound_app
from tests.till.test_day_pages import _state

if TYPE_CHECKING:
    from broker.hall.facade import HubFacade


DEC1, DEC2 = date(2026, 12, 1), date(2026, 12, 2)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(local(2026, 12, 1, 23, 30))


@pytest.fixture
def hall(db_url: str, clock: FakeClock) -> Iterator[tuple[Any, HubFacade]]:
    with day_hub(db_url, clock) as pair:
        add_users(pair[0], {"jana": "staff"}, PASSWORD, CHEAP)
        yield pair


def test_the_day_after_a_close_out_closes_only_once_it_has_begun(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    hub, facade = hall
    facade.execute(CloseDay(day=DEC1, counted_cents=0, actor="jana"))
    clock.set(local(2026, 12, 2, 0, 15))
    pay(hub, walk_in(hub, "Bar"), 250)  # after the close: counts on 2 December
    before = _state(hub)
    for ahead in (DEC2, date(2026, 12, 3), date(2026, 12, 4)):
        with pytest.raises(ServiceError, match="has not begun yet"):
            facade.execute(CloseDay(day=ahead, counted_cents=250, actor="jana"))
        assert _state(hub) == before
    # The API refuses it too, in Slovak when asked, and the /day page offers no close form.
    token = on_writer(hub, lambda db: issue_token(db, "jana", "tests", actor="test"))
    with TestClient(bound_app(hub)) as api:
        r = api.post(
            f"/api/days/{DEC2.isoformat()}/close",
            json={"counted_cents": 250},
            headers={"Authorization": f"Bearer {token}", "Accept-Language": "sk"},
        )
        assert r.status_code == 409 and "ešte nezačal" in r.json()["detail"], r.text
    page = Browser(bound_app(hub))
    page.login("jana", PASSWORD)
    html = page.get("/day").text
    assert 'id="day-not-begun"' in html and 'id="close-day"' not in html and "začína o 6:00" in html
    assert _state(hub)[0] == before[0]  # no day closed or opened (the login and the token are audited)
    # From the day cut on, 2 December is the running day and closes with its 2,50 €.
    clock.set(local(2026, 12, 2, 6, 0))
    assert 'id="close-day"' in page.get("/day").text
    z = facade.execute(CloseDay(day=DEC2, counted_cents=250, actor="jana"))
    assert z.total_cents == 250
