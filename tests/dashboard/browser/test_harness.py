"""The parts the browser tests stand on are real and connected: server process, broker, nodes, Chromium."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.dashboard.browser.conftest import NODE_TABLES
from tests.dashboard.conftest import MANAGER
from tests.support.matching import some

if TYPE_CHECKING:
    from edge.agent import EdgeNode
    from tests.support.server import LavosServer


# This module's server is `lavos server` as a real process (the others serve the same app in the
# test's process), its accounts made by `lavos user add`, as at a club (the others copy them in).
SERVER_PROCESS = True
ACCOUNTS_BY_CLI = True


def test_server_process_sees_the_simulated_nodes_and_chromium_reaches_it(
    lavos: LavosServer, nodes: dict[str, tuple[EdgeNode, Any]], tablet: Any
) -> None:
    assert some(lavos.proc).poll() is None
    online = {n["table"] for n in lavos.api("GET", "/api/nodes", MANAGER) if n["online"]}
    assert online == set(NODE_TABLES)
    response = tablet.goto(lavos.base_url + "/api/health")
    assert response.status == 200 and '"mqtt":true' in tablet.content()
