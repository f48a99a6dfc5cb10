"""Issue 4, must-show 2: a foosball goal without a check-in shows the alert on an already open page within 2 s.

Measured from the moment the goal beam is broken at the table (the simulated node's pin) to the
alert being visible in the page, so it includes the node's pulse filter, MQTT both ways, the
server's database commit, the SSE push and the page's fetch of the alert banner. Several rounds:
after each, the alert is closed, so the next goal opens a new one.
"""

from __future__ import annotations

import time

from tests.dashboard.browser.hall import goal
from tests.dashboard.browser.web import log_in, page_marker, wait_live
from tests.dashboard.conftest import STAFF

TABLE = "foos-01"
LIMIT_S = 2.0  # the limit: not loosened for a loaded machine
ROUNDS = 5


def test_goal_without_checkin_alerts_the_open_page_within_2s(lavos, nodes, tablet):
    log_in(tablet, lavos, STAFF, "/foosball")
    wait_live(tablet)
    loaded = page_marker(tablet)
    banner = tablet.locator("#alert-banner .alert.alert-loud", has_text="Futbal 1:")  # TABLE by its name
    panel = tablet.locator(f"#foos-{TABLE}.alert-loud")
    latencies = []
    for side in ["home", "away"] * (ROUNDS // 2) + ["home"] * (ROUNDS % 2):
        assert banner.count() == 0 and panel.count() == 0
        t0 = time.monotonic()
        goal(nodes, TABLE, side)
        banner.wait_for(timeout=LIMIT_S * 1000 * 5)  # wait past the limit, so a miss reports how late it was
        panel.wait_for(timeout=LIMIT_S * 1000 * 5)
        latencies.append(time.monotonic() - t0)
        alert_id = banner.get_attribute("data-alert-id")
        lavos.api("POST", f"/api/alerts/{alert_id}/ack", STAFF, json={"close": True})
        banner.wait_for(state="detached")
        panel.wait_for(state="detached")
    assert page_marker(tablet) == loaded, "the page reloaded: the alert did not arrive live"
    print(
        f"\nfoosball goal → alert visible on the open page: {', '.join(f'{s * 1000:.0f}' for s in latencies)} ms "
        f"(max {max(latencies) * 1000:.0f} ms, limit {LIMIT_S * 1000:.0f} ms)"
    )
    assert max(latencies) < LIMIT_S, f"goal → alert took {max(latencies):.2f} s (limit {LIMIT_S} s): {latencies}"
