"""Issue 6, bad input: every kind of config mistake, through the commands people really run.

Each case is a file (or flag) with one mistake, run as a real process: it must exit with 2 and
say, in its error, the file, the line and the key (or field, or flag) to fix. A mistake about a
key that is missing altogether has no line to point at; those cases name the file and the key.

What is reused rather than repeated: the venue mistakes are tests/devices/test_venue.py's own
table (BAD_VENUES, proven there at the library level), run here through `lavos server`; the
per-key node.toml checks live in tests/devices/test_nodeconfig.py and tests/edge/test_cli.py
(`lavos edge` in-process), and the first server flag mistakes in tests/dashboard/test_server_cli.py.
Here: the kinds of mistake those leave out, through both ways a Pi starts its agent, and the
member CSV through `lavos members import`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.devices.test_venue import BAD_VENUES, LAVOS_TEXT, line_of
from tests.support.cli import lavos
from tests.support.hub import REPO, VENUE
from tests.support.server import LAVOS
from tests.support.sqlite_template import migrated_sqlite

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto


EXIT_CONFIG = 2
NOWHERE = "mqtt://lavos-hub:x@127.0.0.1:1"  # the venue is read before the broker is looked for


def run(*args: str) -> tuple[int, str]:
    done = subprocess.run(list(args), cwd=REPO, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout + done.stderr


def in_process(*args: str) -> tuple[int, str]:
    done = lavos(*args)
    return done.returncode, done.stdout + done.stderr


def assert_points_at(out: str, path: Path, line: int | None, key: str, why: str) -> None:
    """One error line: `<file>:<line>: <key>...` (or `<file>: <key>...` when there is no line), saying why."""
    where = f"{path}:{line}: " if line else f"{path}: "
    hits = [x.removeprefix("error: ") for x in out.splitlines() if x.removeprefix("error: ").startswith(where)]
    assert any(key in h and why in h for h in hits), f"wanted {where}…{key}…{why} in:\n{out}"


# --- the venue file, through `lavos server --venue` ---------------------------------------------

# The remaining kinds of mistake, beside BAD_VENUES: (edit of lavos.toml, key, why, line or None)
MORE_VENUE_MISTAKES = {
    "TOML syntax": (('name = "Pool 3"', 'name = "Pool 3'), "not valid TOML", "", line_of("Pool 3")),
    "missing key": (('name = "ŠBK Lavos"\n', ""), "venue.name", "Field required", line_of("[venue]")),
    "no default hours": (("default = {", "mon = {"), "hours", "needs a 'default' entry", line_of("[hours]")),
    "negative price": (
        ("rate_cents_per_hour = 600", "rate_cents_per_hour = -600"),
        "tariffs[0].rate_cents_per_hour",
        "greater than or equal to",
        line_of("rate_cents_per_hour = 600"),
    ),
}
VENUE_CASES = {**{k: (edit, key, why, line) for k, (edit, key, why, line) in BAD_VENUES.items()}, **MORE_VENUE_MISTAKES}


@pytest.mark.parametrize("case", VENUE_CASES, ids=str)
def test_venue_mistakes_stop_lavos_server_naming_file_line_and_key(tmp_path: Path, case: Any) -> None:
    (old, new), key, why, line = VENUE_CASES[case]
    assert old in LAVOS_TEXT
    path = tmp_path / "venue.toml"
    path.write_text(LAVOS_TEXT.replace(old, new, 1), encoding="utf-8")
    code, out = run(*LAVOS, "server", "--venue", str(path), "--mqtt", NOWHERE, "--http", "127.0.0.1:0")
    assert code == EXIT_CONFIG, out
    assert_points_at(out, path, line, key, why)


def test_venue_not_utf8_or_missing_stops_lavos_server(tmp_path: Path) -> None:
    path = tmp_path / "venue.toml"
    path.write_bytes(LAVOS_TEXT.encode("cp1250"))  # a Windows editor's idea of Slovak
    first = next(n for n, text in enumerate(LAVOS_TEXT.splitlines(), 1) if not text.isascii())
    code, out = run(*LAVOS, "server", "--venue", str(path), "--mqtt", NOWHERE)
    assert code == EXIT_CONFIG and f"{path}:{first}: not UTF-8" in out, out
    code, out = run(*LAVOS, "server", "--venue", str(tmp_path / "nowhere.toml"), "--mqtt", NOWHERE)
    assert code == EXIT_CONFIG and f"{tmp_path / 'nowhere.toml'}: file not found" in out, out


# --- node.toml, through both ways a Pi starts its agent ----------------------------------------


def node_toml(top: str = "", tail: str = "", pockets: str = "5, 6, 13, 19, 26, 21") -> str:
    """A good node.toml with `top` among its top-level keys and `tail` after its [pins]."""
    return f'table = "pool-01"\nkind = "pool"\n{top}\n[pins]\npockets = [{pockets}]\n{tail}'


def line_in(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


GOOD_NODE = node_toml()
# (text, the text on the line the error must point at or None, key, why): kinds of mistake the
# per-key tables do not have.
NODE_MISTAKES = {
    "duplicate key": (node_toml(top='table = "pool-02"\n'), 'table = "pool-02"', "", "not valid TOML"),
    "section twice": (node_toml(tail="[pins]\nlight = 17\n"), "[pins]\nlight", "not valid TOML", "Cannot declare ('pins',) twice"),
    "list where number": (node_toml(tail="[mqtt]\nport = [1883]\n"), "port", "mqtt.port", "valid integer"),
    "number where text": (node_toml(tail="[mqtt]\nhost = 10\n"), "host", "mqtt.host", "valid string"),
    "boolean as text": (node_toml(tail='[mqtt]\ntls = "yes"\n'), "tls", "mqtt.tls", "valid boolean"),
    "pin out of range": (node_toml(pockets="5, 6, 13, 19, 26, 99"), "[pins]", "pins", "pocket pin 99 is not a BCM GPIO"),
    "misspelt section": (node_toml(tail='[mqqt]\nhost = "hub"\n'), "[mqqt]", "mqqt", "Extra inputs are not permitted"),
    "missing table id": (node_toml().replace('table = "pool-01"\n', ""), None, "table", "Field required"),
    "inline table, bad key": (node_toml(top="outbox = { max_mb = 10 }\n"), "outbox", "outbox.max_mb", "Extra inputs"),
}
AGENTS = {"lavos edge": [*LAVOS, "edge", "--config"], "python -m edge": [sys.executable, "-m", "edge", "--config"]}


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("case", NODE_MISTAKES, ids=str)
def test_node_toml_mistakes_stop_the_agent_naming_file_line_and_key(tmp_path: Path, case: Any, agent: Any) -> None:
    text, on_line, key, why = NODE_MISTAKES[case]
    path = tmp_path / "node.toml"
    path.write_text(text, encoding="utf-8")
    code, out = run(*AGENTS[agent], str(path))
    assert code == EXIT_CONFIG, out
    assert_points_at(out, path, line_in(text, on_line) if on_line else None, key, why)


@pytest.mark.parametrize("agent", AGENTS)
def test_node_toml_not_utf8_missing_or_a_directory_stops_the_agent(tmp_path: Path, agent: Any) -> None:
    path = tmp_path / "node.toml"
    text = node_toml(tail='[mqtt]\nhost = "sála"\n')
    path.write_bytes(text.encode("latin-1"))
    code, out = run(*AGENTS[agent], str(path))
    assert code == EXIT_CONFIG and f"{path}:{line_in(text, 'sála')}: not UTF-8" in out, out
    for wrong, says in ((tmp_path / "nope.toml", "file not found"), (tmp_path, "cannot read")):
        code, out = run(*AGENTS[agent], str(wrong))
        assert code == EXIT_CONFIG and f"{wrong}: {says}" in out, out


@pytest.mark.parametrize("agent", AGENTS)
def test_a_bad_log_level_is_a_clear_error_not_a_traceback(tmp_path: Path, agent: Any) -> None:
    path = tmp_path / "node.toml"
    path.write_text(GOOD_NODE, encoding="utf-8")
    code, out = run(*AGENTS[agent], str(path), "--log-level", "LOUD")
    assert code == EXIT_CONFIG and "--log-level 'LOUD' is not one of DEBUG, INFO" in out and "Traceback" not in out, out


# --- `lavos server` flags ------------------------------------------------------------------------

# (flags replacing the good ones, what the one error line must say): beside test_server_cli's table.
SERVER_FLAG_MISTAKES = {
    "MQTT port out of range": (
        ["--mqtt", "mqtt://lavos-hub@127.0.0.1:99999"],
        "MQTT URL 'mqtt://lavos-hub@127.0.0.1:99999' has an invalid port",
    ),
    "MQTT URL without host": (["--mqtt", "mqtt://"], "MQTT URL 'mqtt://' must look like"),
    "MQTT cafile without TLS": (["--mqtt", "mqtt://lavos-hub@127.0.0.1:1883?cafile=/etc/ca.crt"], "?cafile= needs TLS"),
    "MQTT password file missing": (["--mqtt-password-file", "{tmp}/nope.pw"], "cannot read the MQTT password file {tmp}/nope.pw"),
    "MQTT password file empty": (["--mqtt-password-file", "{tmp}/empty.pw"], "the MQTT password file {tmp}/empty.pw is empty"),
    "HTTP port not a number": (["--http", "127.0.0.1:http"], "--http '127.0.0.1:http' must be HOST:PORT"),
    "HTTP port out of range": (["--http", "0.0.0.0:70000"], "--http '0.0.0.0:70000' must be HOST:PORT"),
    "database in memory": (["--db", "sqlite://"], "names no file"),
    "database URL garbage": (["--db", "not a url"], "is not a URL"),
    "data dir under a file": (["--data-dir", "{tmp}/empty.pw/data"], "cannot create the data directory {tmp}/empty.pw/data"),
    "InfluxDB token file missing": (
        ["--influx", "http://127.0.0.1:8086", "--influx-token-file", "{tmp}/nope.token"],
        "cannot read the InfluxDB token file {tmp}/nope.token",
    ),
    "log level unknown": (["--log-level", "LOUD"], "--log-level 'LOUD' is not one of DEBUG, INFO, WARNING, ERROR"),
    "venue is a directory": (["--venue", "{tmp}"], "{tmp}: cannot read"),
}


@pytest.mark.parametrize("case", SERVER_FLAG_MISTAKES, ids=str)
def test_server_flag_mistakes_are_one_clear_line_and_exit_2(mosquitto: Mosquitto, tmp_path: Path, case: Any) -> None:
    (tmp_path / "empty.pw").write_text("\n")
    (tmp_path / "hub.pw").write_text("hub-secret\n")
    flags = {
        "--venue": str(VENUE),
        "--mqtt": f"mqtt://lavos-hub@127.0.0.1:{mosquitto.port}",
        "--mqtt-password-file": str(tmp_path / "hub.pw"),
        "--http": "127.0.0.1:0",
        "--data-dir": str(tmp_path / "data"),
    }
    args, says = SERVER_FLAG_MISTAKES[case]
    flags.update(dict(zip(args[::2], (a.replace("{tmp}", str(tmp_path)) for a in args[1::2]))))
    code, out = run(*LAVOS, "server", *[x for kv in flags.items() for x in kv])
    errors = [x for x in out.splitlines() if x.startswith("error:")]
    assert code == EXIT_CONFIG and len(errors) == 1 and "Traceback" not in out, out
    assert says.replace("{tmp}", str(tmp_path)) in errors[0], out


# --- the member CSV, through `lavos members import` ------------------------------------------------

HEADER = "name,kind,cards,fees_paid,active,note\n"
GOOD_ROW = "Ján Novák,individual,04a3f1c2,2026,yes,\n"
# (file body, line, field named, why): every line of a bad file is reported, and nothing is imported.
CSV_MISTAKES: dict[str, tuple[str | bytes, int, str, str]] = {
    "unknown kind": (HEADER + GOOD_ROW + "Eva Malá,boss,,,,\n", 3, "boss", "is not a membership type"),
    "fee year not a year": (HEADER + GOOD_ROW + "Eva Malá,individual,,dvadsať,,\n", 3, "fees_paid: dvadsať", "is not a year"),
    "fee year out of range": (HEADER + "Eva Malá,individual,,1850,,\n", 2, "The year 1850", "is outside"),
    "active not yes/no": (HEADER + "Eva Malá,individual,,,možno,\n", 2, "active: možno", "is not yes or no"),
    "card not hex": (HEADER + "Eva Malá,individual,kartička,,,\n", 2, "kartička", "is not a card number"),
    "card on two members": (HEADER + GOOD_ROW + "Eva Malá,individual,04a3f1c2,,,\n", 3, "Card 04a3f1c2", "is also on line 2"),
    "name twice": (HEADER + GOOD_ROW + GOOD_ROW.replace("04a3f1c2", ""), 3, "Ján Novák", "is already on line 2"),
    "a field too many": (HEADER + "Eva Malá,individual,,,,note,extra\n", 2, "7 fields", "the header has 6"),
    "no name column": ("kind,cards\nindividual,\n", 1, "There is no name column", "header"),
    "header in two languages": ("meno,kind\nEva Malá,individual\n", 1, "mixes Slovak and English column names (kind)", "one language"),
    "neither UTF-8 nor Windows-1250": (HEADER.encode() + GOOD_ROW.encode() + b"Eva Mal\x81,individual,,,,\n", 3, "Byte 0x81", "neither"),
    "unclosed quote": (HEADER + GOOD_ROW + '"Eva Malá,individual,,,,\n', 3, "not valid CSV", ""),
}


@pytest.mark.parametrize("case", CSV_MISTAKES, ids=str)
def test_member_csv_mistakes_name_file_line_and_field_and_import_nothing(tmp_path: Path, case: Any) -> None:
    body, line, field, why = CSV_MISTAKES[case]
    path = tmp_path / "clenovia.csv"
    path.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
    db = migrated_sqlite(tmp_path / "lavos.db")  # the hall's database, migrated once per process (copied): not migrated per case
    # In-process (tests/support/cli.py): the messages and exit codes are the command's own.
    code, out = in_process("members", "import", str(path), "--db", db)
    assert code == EXIT_CONFIG, out
    assert f"error: {path}: " in out and "nothing was imported" in out, out
    assert re.search(rf"^\s*line {line}: .*{re.escape(field)}.*{re.escape(why)}", out, re.M), out
    code, out = in_process("members", "export", "-", "--db", db)
    assert code == 0 and out.strip().splitlines()[1:] == [], out  # all or nothing: not even the good row
