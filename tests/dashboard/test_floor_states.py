"""The floor's one state rule (dashboard.web.floor.card_state) and the no-break spaces every page prints."""

from __future__ import annotations

import pytest


def _facts(**kw):  # type: ignore[no-untyped-def]
    from dashboard.web.floor import CardFacts
    from devices.kinds import Kind

    base = dict(
        kind=Kind.POOL,
        online=True,
        light_on=False,
        session_state=None,
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
        (dict(alert_kinds=frozenset({"play_without_session"})), "balls_no_session"),  # Pool 4 is not "free"
        (dict(kind="foosball", alert_kinds=frozenset({"foosball_no_member"})), "unguarded"),  # nor Futbal 2
        (dict(light_on=True), "light_no_session"),
        (dict(alert_kinds=frozenset({"light_without_session"})), "light_no_session"),
        (dict(session_state="running", alert_kinds=frozenset({"sensor_fault", "idle_session"})), "sensor_fault"),
        (dict(session_state="running", alert_kinds=frozenset({"open_after_closing"})), "after_closing"),
        (dict(session_state="running", alert_kinds=frozenset({"prepaid_expired"})), "prepaid_over"),
        (dict(session_state="paused", prepaid_left_s=10), "paused"),
        (dict(session_state="running", prepaid_left_s=200), "prepaid_ending"),
        (dict(session_state="running", alert_kinds=frozenset({"idle_session"})), "idle"),
        (dict(session_state="running", alert_kinds=frozenset({"card_refused"})), "playing"),
        (dict(kind="foosball", checked_in=True), "playing"),
        (dict(online=False, session_state="running", alert_kinds=frozenset({"foosball_no_member"})), "offline"),
        (dict(out_of_service=True, online=False, light_on=True), "out_of_service"),
    ],
)
def test_a_card_shows_its_worst_state(facts, state):
    from dashboard.web.floor import STATE_WORDS, card_state
    from devices.kinds import Kind

    if facts.get("kind") == "foosball":
        facts["kind"] = Kind.FOOSBALL
    assert card_state(_facts(**facts)) == state
    assert state in STATE_WORDS


def test_pages_print_money_and_dates_with_no_break_spaces():
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
def test_a_table_out_of_service_is_its_own_state_on_the_floor(service):
    """Taken out through the facade (as the table page and the API do), the floor card says so;
    back in service, it is free again."""
    from broker.hall.facade import HubFacade
    from dashboard.web.floor import FloorData, table_view

    hall = HubFacade(service)
    hall.set_out_of_service("pool-03", True, actor="test", reason="cleaning")
    states = {t.spec.id: t.state for room in FloorData(hall.reads).rooms() for t in room.tables}
    assert states["pool-03"] == "out_of_service"
    assert states["pool-04"] != "out_of_service"
    assert table_view(hall.reads, "pool-03").word == "Out of service"
    hall.set_out_of_service("pool-03", False, actor="test")
    assert table_view(hall.reads, "pool-03").state != "out_of_service"
