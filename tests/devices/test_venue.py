"""The venue catalogue: ŠBK Lavos as shipped, and every kind of broken venue file."""

from __future__ import annotations

import re
from datetime import time
from pathlib import Path
from typing import Any

import pytest

from broker.domain.venue import load_venue
from devices.kinds import DEFAULT_POCKET_PINS, Kind
from devices.tomlfile import ConfigError

LAVOS = Path(__file__).resolve().parents[2] / "deploy" / "venues" / "lavos.toml"
LAVOS_TEXT = LAVOS.read_text(encoding="utf-8")


def test_lavos_has_exactly_the_clubs_tables() -> None:
    v = load_venue(LAVOS)
    tables = {t.id: t for t in v.tables}
    pools = [f"pool-{n:02d}" for n in range(1, 11)]
    assert list(tables) == [*pools, "carom-01", "foos-01", "foos-02", "darts-01"]
    assert [tables[p].size_ft for p in pools] == [9] * 8 + [8] * 2
    assert all(tables[p].kind is Kind.POOL and tables[p].pin_map.pockets == DEFAULT_POCKET_PINS for p in pools)
    assert tables["carom-01"].kind is Kind.CAROM and tables["carom-01"].pin_map.pockets == []
    for foos in ("foos-01", "foos-02"):
        assert tables[foos].kind is Kind.FOOSBALL
        assert None not in (tables[foos].pin_map.goal_home, tables[foos].pin_map.goal_away)
    assert tables["darts-01"].kind is Kind.DARTS


def test_lavos_prices_hours_and_timezone() -> None:
    v = load_venue(LAVOS)
    assert {t.id: t.rate_cents_per_hour for t in v.tariffs} == {"standard": 600, "club_card": 400, "training": 1500, "tournament": 0}
    assert [t.id for t in v.tariffs if t.tournament] == ["tournament"]
    assert v.tariff("club_card").requires_member
    hours = v.tariff("training").hours
    assert hours is not None and hours.open == time(15) and hours.close == time(19)
    for day in ("mon", "sun"):
        assert (v.hours_on(day).open, v.hours_on(day).close) == (time(16), time(0))
    assert v.venue.timezone == "Europe/Bratislava" and str(v.tz) == "Europe/Bratislava"
    assert {e.id: e.price_cents for e in v.extras} == {"topping": 60, "pizza_box": 40, "entry_member": 300, "entry_guest": 500}


def test_lookups_name_what_exists() -> None:
    v = load_venue(LAVOS)
    assert v.table("foos-02").name == "Futbal 2"
    with pytest.raises(KeyError, match=r"no table 'pool-11'.*pool-01"):
        v.table("pool-11")
    with pytest.raises(KeyError, match="no tariff 'happy'"):
        v.tariff("happy")


def line_of(needle: str, text: str = LAVOS_TEXT, after: str = "") -> int:
    """1-based line of the first `needle` after the first `after` in the venue file."""
    start = text.index(after)
    return text[: text.index(needle, start)].count("\n") + 1


def table_block(table_id: str) -> str:
    return f'[[tables]]\nid = "{table_id}"\n'


# Each case: an edit of lavos.toml, the key the error must name, the line it must point at.
BAD_VENUES = {
    "unknown key": (
        ('timezone = "Europe/Bratislava"', 'timezone = "Europe/Bratislava"\ncolour = "red"'),
        "venue.colour",
        "Extra inputs are not permitted",
        line_of("timezone") + 1,
    ),
    "wrong type": (
        ("rate_cents_per_hour = 600", 'rate_cents_per_hour = "600"'),
        "tariffs[0].rate_cents_per_hour",
        "valid integer",
        line_of("rate_cents_per_hour = 600"),
    ),
    "float where int": (
        ('id = "pool-09"\nkind = "pool"\nname = "Pool 9"\nsize_ft = 8', 'id = "pool-09"\nkind = "pool"\nname = "Pool 9"\nsize_ft = 8.5'),
        "tables[8].size_ft",
        "valid integer",
        line_of("size_ft = 8"),
    ),
    "bad time": (
        ('open = "16:00"', 'open = "25:00"'),
        "hours.default.open",
        "'25:00' is not a time of day as HH:MM",
        line_of('open = "16:00"'),
    ),
    "unknown timezone": (
        ('timezone = "Europe/Bratislava"', 'timezone = "Europe/Lavos"'),
        "venue.timezone",
        "unknown timezone 'Europe/Lavos'",
        line_of("timezone"),
    ),
    "duplicate table id": (
        ('id = "pool-02"', 'id = "pool-01"'),
        "tables[1].id",
        "table id pool-01 is listed more than once",
        line_of('id = "pool-02"'),
    ),
    "table in unknown room": (
        (
            table_block("pool-03") + 'kind = "pool"\nname = "Pool 3"\nsize_ft = 9\nroom = "main"',
            table_block("pool-03") + 'kind = "pool"\nname = "Pool 3"\nsize_ft = 9\nroom = "cellar"',
        ),
        "tables[2].room",
        "table pool-03 is in room 'cellar', which is not among rooms",
        line_of('room = "main"', after='id = "pool-03"'),
    ),
    "pool with 5 pocket pins": (
        (table_block("pool-04"), table_block("pool-04") + "pins = { pockets = [5, 6, 13, 19, 26] }\n"),
        "tables[3].pins.pockets",
        "a pool table has 6 pockets, pins.pockets lists 5",
        line_of('id = "pool-04"') + 1,
    ),
    "pin used twice": (
        (table_block("pool-04"), table_block("pool-04") + "pins = { pockets = [5, 6, 13, 19, 26, 17] }\n"),
        "tables[3].pins",
        "GPIO 17 assigned to more than one input/output",
        line_of('id = "pool-04"') + 1,
    ),
    "foosball without goal pins": (
        (table_block("foos-02"), table_block("foos-02") + "pins = { goal_home = 5 }\n"),
        "tables[12].pins",
        "a foosball table needs pins.goal_home and pins.goal_away",
        line_of('id = "foos-02"') + 1,
    ),
    "carom with pockets": (
        (table_block("carom-01"), table_block("carom-01") + "pins = { pockets = [5, 6, 13, 19, 26, 21] }\n"),
        "tables[10].pins.pockets",
        "a carom table has no pockets",
        line_of('id = "carom-01"') + 1,
    ),
    "undefined tariff": (
        ('default_tariff = "standard"', 'default_tariff = "happy"'),
        "billing.default_tariff",
        "tariff 'happy' is referenced but not defined",
        line_of("default_tariff"),
    ),
}


@pytest.mark.parametrize("case", BAD_VENUES, ids=str)
def test_bad_venue_names_file_line_and_key(tmp_path: Path, case: Any) -> None:
    (old, new), key, why, line = BAD_VENUES[case]
    assert LAVOS_TEXT.count(old) >= 1
    path = tmp_path / "venue.toml"
    path.write_text(LAVOS_TEXT.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_venue(path)
    message = str(err.value)
    where = f"{path}:{line}: " if line else f"{path}: "
    assert message.startswith(f"{where}{key}" if key else where), message
    assert why in message


def test_toml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "venue.toml"
    path.write_text(LAVOS_TEXT.replace('name = "Pool 3"', 'name = "Pool 3'), encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:{line_of('Pool 3')}: not valid TOML"):
        load_venue(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nowhere\.toml: file not found"):
        load_venue(tmp_path / "nowhere.toml")


def test_file_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "venue.toml"
    path.write_bytes(LAVOS_TEXT.encode("cp1250"))  # a Windows editor's idea of Slovak
    first = next(n for n, text in enumerate(LAVOS_TEXT.splitlines(), 1) if not text.isascii())
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:{first}: not UTF-8"):
        load_venue(path)


def test_minimal_venue_gets_default_pins_and_billing(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(
        '[venue]\nid = "tiny"\nname = "Tiny"\n[hours]\ndefault = { open = "10:00", close = "22:00" }\n'
        '[[rooms]]\nid = "r"\nname = "R"\n[[tables]]\nid = "pool-01"\nkind = "pool"\nname = "P"\nroom = "r"\n',
        encoding="utf-8",
    )
    v = load_venue(path)
    assert v.table("pool-01").pin_map.pockets == DEFAULT_POCKET_PINS
    assert v.billing.unit_s == 60 and v.tariffs == []


def test_hours_need_a_default_or_every_day(tmp_path: Path) -> None:
    path = tmp_path / "venue.toml"
    path.write_text(LAVOS_TEXT.replace("default = {", "mon = {"), encoding="utf-8")
    with pytest.raises(ConfigError, match="hours needs a 'default' entry or one for every weekday"):
        load_venue(path)
