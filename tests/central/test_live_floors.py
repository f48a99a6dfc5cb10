"""The centre's live floors (broker.central.live.Floors), fed as its subscriber feeds them: each hall's
tables by the names its layout gives, every table's module (one never heard of too), and a bound on
what a hall's bridge login can make the centre keep, whatever ids it makes up."""

from __future__ import annotations

import json

from broker.central.live import MAX_HALLS, MAX_TABLES, Floors
from broker.domain.venue_layout import VENUE_TOPIC, venue_layout
from tests.support.centre import hall_venue


def _status(hall: str, table: str, state: str) -> tuple[str, bytes]:
    return f"hall/{hall}/lavos/v1/table/{table}/status", json.dumps({"state": state}).encode()


def test_a_halls_tables_are_its_layouts_in_order_with_each_module_even_one_never_heard_of() -> None:
    floors = Floors()
    floors.apply(f"hall/a/{VENUE_TOPIC}", venue_layout(hall_venue("a")))
    floors.apply(*_status("a", "pool-02", "online"))
    floors.apply(*_status("a", "pool-03", "offline"))
    floors.apply(*_status("a", "pool-99", "online"))  # reports, but not in the layout (a stale node kit)
    live = floors.hall("a")
    rows = live.rows()
    assert [name.name for name, _ in rows[:3]] == ["Pool 1", "Pool 2", "Pool 3"]
    assert [t.online for _, t in rows[:3]] == [None, True, False]  # pool-01: never heard of
    assert rows[-1][0].name == "pool-99" and rows[-1][1].online is True  # by its id, after the hall's own
    assert live.modules() == (2, len(hall_venue("a").tables) + 1)
    karambol = next(name for name, _ in rows if name.id == "carom-01")
    assert (karambol.name, karambol.name_en) == ("Karambol", "Carom")


def test_made_up_ids_cannot_grow_the_centres_memory_without_end() -> None:
    floors = Floors()
    for n in range(MAX_TABLES + 50):
        floors.apply(*_status("a", f"t-{n}", "online"))
    assert len(floors.hall("a").tables) == MAX_TABLES
    floors.apply(*_status("a", "t-0", "offline"))  # a table it keeps still changes
    assert floors.hall("a").tables["t-0"].online is False
    for n in range(MAX_HALLS + 5):
        floors.apply(*_status(f"h-{n}", "pool-01", "online"))
    assert floors.hall(f"h-{MAX_HALLS + 4}").tables == {}
    huge = {"tables": [{"id": f"t-{n}", "name": "x" * 1000} for n in range(MAX_TABLES * 3)]}
    floors.apply(f"hall/a/{VENUE_TOPIC}", json.dumps(huge).encode())
    layout = floors.hall("a").layout
    assert len(layout) == MAX_TABLES and max(len(t.name) for t in layout) <= 64
