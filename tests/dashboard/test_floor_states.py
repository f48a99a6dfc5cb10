"""The floor's one state rule (dashboard.web.floor.card_state) and the no-break spaces every page prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from broker.floor.games import StartGame, StopGame
from broker.floor.table_service import SetOutOfService

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from dashboard.web.floor import CardFacts
    from sim.mosquitto import Mosquitto


def _facts(**kw: Any) -> CardFacts:
    from dashboard.web.floor import CardFacts
    from devices.kinds import Kind

    base = dict(
        kind=Kind.POOL,
        online=True,
        light_on=False,
        game_state=None,
        prepaid_left_s=None,
        warn_s=300,
        alert_kinds=frozenset(),
        checked_in=False,
    )
    return CardFacts(**{**base, **kw})


@pytest.mark.parametrize(
    "facts, state",
    [
        (dict(), "free"),
        (dict(alert_kinds=frozenset({"play_without_session"})), "balls_no_game"),  # Pool 4 is not "free"
        (dict(kind="foosball", alert_kinds=frozenset({"foosball_no_member"})), "unguarded"),  # nor Futbal 2
        (dict(light_on=True), "light_no_game"),
        (dict(alert_kinds=frozenset({"light_without_session"})), "light_no_game"),
        (dict(game_state="running", alert_kinds=frozenset({"sensor_fault", "idle_session"})), "sensor_fault"),
        (dict(game_state="running", alert_kinds=frozenset({"open_after_closing"})), "after_closing"),
        (dict(game_state="running", alert_kinds=frozenset({"prepaid_expired"})), "prepaid_over"),
        (dict(game_state="paused", prepaid_left_s=10), "paused"),
        (dict(game_state="running", prepaid_left_s=200), "prepaid_ending"),
        (dict(game_state="running", alert_kinds=frozenset({"idle_session"})), "idle"),
        (dict(game_state="running", alert_kinds=frozenset({"card_refused"})), "playing"),
        (dict(kind="foosball", checked_in=True), "playing"),
        (dict(online=False, game_state="running", alert_kinds=frozenset({"foosball_no_member"})), "offline"),
        (dict(out_of_service=True, online=False, light_on=True), "out_of_service"),
        # Stopped a moment ago: the node's "on" is older than the hub's "off" (the dot shows it switching).
        (dict(light_on=True, light_switching_off=True), "free"),
        (dict(light_on=True, light_switching_off=True, alert_kinds=frozenset({"light_without_session"})), "light_no_game"),
    ],
)
def test_a_card_shows_its_worst_state(facts: Any, state: Any) -> None:
    from dashboard.web.floor import STATE_WORDS, card_state
    from devices.kinds import Kind

    if facts.get("kind") == "foosball":
        facts["kind"] = Kind.FOOSBALL
    assert card_state(_facts(**facts)) == state
    assert state in STATE_WORDS


def test_a_commanded_light_counts_over_the_nodes_report_only_for_a_moment() -> None:
    from broker.floor.light_commands import LightCommand
    from dashboard.web.floor import LIGHT_CONFIRM_S, light_switching

    off = LightCommand(on=False, sent_at=100.0)
    assert light_switching(off, reported=True, now=100.05) == pytest.approx(LIGHT_CONFIRM_S - 0.05)
    assert light_switching(off, reported=False, now=100.05) is None  # the node confirmed it
    assert light_switching(off, reported=True, now=100.0 + LIGHT_CONFIRM_S) is None  # too long: believe the node
    assert light_switching(None, reported=True, now=100.0) is None
    assert light_switching(off, reported=None, now=100.0) is None  # a node that never reported


def test_pages_print_money_and_dates_with_no_break_spaces() -> None:
    from markupsafe import Markup

    from dashboard.web.templating import _unbreakable

    assert (
        _unbreakable("Pool 1: Štandard, 1 234,56 €/h od 1. 12. 2026 18:05")
        == "Pool 1: Štandard, 1\u00a0234,56\u00a0€/h od 1.\u00a012.\u00a02026 18:05"
    )
    assert _unbreakable("1 Dec 2026, 18:05 · 16:00 h") == "1\u00a0Dec\u00a02026, 18:05 · 16:00\u00a0h"
    assert _unbreakable(Markup("<b>0,60 €</b>")) == Markup("<b>0,60\u00a0€</b>")
    assert _unbreakable(7) == 7


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_table_out_of_service_is_its_own_state_on_the_floor(service: Hub) -> None:
    """Taken out through the facade (as the table page and the API do), the floor card says so;
    back in service, it is free again."""
    from broker.hall.facade import HubFacade
    from dashboard.web.floor import FloorData, table_view

    hall = HubFacade(service)
    hall.execute(SetOutOfService(table="pool-03", out=True, reason="cleaning", actor="test"))
    states = {t.spec.id: t.state for room in FloorData(hall.reads).rooms() for t in room.tables}
    assert states["pool-03"] == "out_of_service"
    assert states["pool-04"] != "out_of_service"
    assert table_view(hall.reads, "pool-03").word == "Out of service"
    hall.execute(SetOutOfService(table="pool-03", out=False, actor="test"))
    assert table_view(hall.reads, "pool-03").state != "out_of_service"


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_stopped_table_is_free_with_its_light_switching_off_until_the_node_confirms(service: Hub, mosquitto: Mosquitto) -> None:
    """The hub commanded "off"; the node (here one that never obeys) still reports "on". For a
    moment the card believes the command: free, the dot switching, and a re-check asked for; after
    LIGHT_CONFIRM_S the node's word counts: lit without a game."""
    from broker.hall.facade import HubFacade
    from dashboard.web.floor import LIGHT_CONFIRM_S, table_view
    from tests.support.waiting import wait_until
    from tests.support.web import light, node_link, status

    hall = HubFacade(service)
    with node_link(mosquitto, "pool-01") as node:
        status(node, "pool-01", "online")
        sid = hall.execute(StartGame(table="pool-01", actor="test"))
        light(node, "pool-01", True, "command")  # it did as told at the start
        wait_until(lambda: table_view(hall.reads, "pool-01").light_on is True, what="the node reports its light on")
        hall.execute(StopGame(game=sid, actor="test"))
        t = table_view(hall.reads, "pool-01")
        assert (t.state, t.light_on) == ("free", True)
        assert t.light_confirm_s is not None and 0 < t.light_confirm_s <= LIGHT_CONFIRM_S
        wait_until(lambda: table_view(hall.reads, "pool-01").light_confirm_s is None, timeout=LIGHT_CONFIRM_S + 1, what="the wait is over")
        assert table_view(hall.reads, "pool-01").state == "light_no_game"
