"""`lavos ha clear` removes what the hub announced, and refuses the hub's own login."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from typer.testing import CliRunner

from broker.domain.floor import home_assistant as ha
from broker.domain.venue import load_venue
from lavos_cli import app
from tests.support.hub import VENUE
from tests.support.mqtt import Collector
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


V = load_venue(VENUE)


def retained(broker: Any) -> dict[str, bytes]:
    """What HA's login finds retained (the hub's logins may write homeassistant/#, not read it)."""
    if "lavos-homeassistant" not in broker.users:
        broker.add_user("lavos-homeassistant", "ha-secret")
        broker._wait_login("lavos-homeassistant", "ha-secret")
    c = Collector(broker.port, "lavos-homeassistant", "ha-secret", topics=("homeassistant/#", f"{ha.ha_state_topic('+')}"))
    try:
        time.sleep(0.5)  # retained messages come at once after the subscription; wait for all of them
        return {m.topic: bytes(m.payload) for m in c.all if m.retain}
    finally:
        c.close()


def test_clear_empties_every_retained_topic_of_the_hub(mosquitto: Mosquitto, tmp_path: Path) -> None:
    user, password = mosquitto.hub_login("lavos-hub-4")
    announcer = Collector(mosquitto.port, topics=("homeassistant/status",))
    try:
        for d in ha.venue_discovery(V):
            announcer.publish(d.topic, d.payload(), retain=True)
        announcer.publish(ha.ha_state_topic("pool-01"), ha.ha_state(0, "free"), retain=True)
    finally:
        announcer.close()
    wait_until(lambda: len(retained(mosquitto)) == len(ha.venue_discovery(V)) + 1, what="announced")
    pw = tmp_path / "pw"
    pw.write_text(password + "\n")
    result = CliRunner().invoke(
        app, ["ha", "clear", "--venue", str(VENUE), "--mqtt", f"mqtt://{user}@127.0.0.1:{mosquitto.port}", "--mqtt-password-file", str(pw)]
    )
    assert result.exit_code == 0, result.output
    assert "cleared" in result.output
    assert retained(mosquitto) == {}


def test_clear_refuses_the_hubs_own_login(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ha", "clear", "--venue", str(VENUE), "--mqtt", "mqtt://lavos-hub:x@127.0.0.1:1"])
    assert result.exit_code == 2
    assert "lavos-hub-4" in result.output


def test_lavos_server_offers_home_assistant_off_by_default() -> None:
    import inspect

    from dashboard.cli import server

    result = CliRunner().invoke(app, ["server", "--help"])
    assert "--home-assistant" in result.output
    assert inspect.signature(server).parameters["home_assistant"].default.default is False
