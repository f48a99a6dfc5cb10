"""Which tests need a process outside this Python: the markers of the fast tier, and their guard.

A test is marked by what it starts: `mosquitto`, `postgres`, `victoria`, `chromium`, `bwrap`,
`systemd` (systemd-analyze), `ansible`, or
`lavos_process` (lavos itself, or a test's hub or agent, as a real OS process), and every one of
those also gets the umbrella `external`. `./run fast` (pytest -m "not external") runs the rest:
pure and in-process tests, which need no Debian package and start in seconds.

Marks come from three places, applied at collection (tests/conftest.py):
- the fixtures a test uses, directly or through other fixtures (FIXTURES);
- the `db_url` fixture's PostgreSQL run (its SQLite run stays in the fast tier);
- the modules that start such processes by hand (MODULES, keyed on the path under tests/).

The guard keeps that true: while a test without `external` runs (its fixtures' setup included), starting
one of those programs fails the test with the marker it lacks, instead of it hanging or failing
obscurely where, say, Mosquitto is not installed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

EXTERNAL = "external"
MARKERS = {
    "mosquitto": "starts a Mosquitto broker (Debian packages mosquitto, mosquitto-clients)",
    "postgres": "starts or uses a PostgreSQL cluster (Debian package postgresql)",
    "victoria": "starts VictoriaMetrics (Debian package victoria-metrics)",
    "chromium": "drives Chromium through Playwright",
    "lavos_process": "starts lavos (server, edge, demo, a CLI command) or a test's hub or agent as a real OS process",
    "bwrap": "runs a program in a unit's sandbox with bubblewrap (Debian package bubblewrap)",
    "systemd": "runs systemd-analyze (Debian package systemd)",
    "ansible": "runs ansible-playbook (Debian package ansible-core)",
}

# Fixture name -> marker, for the fixtures that start those processes (tests/conftest.py and
# tests/dashboard/browser/conftest.py); a test using one through another fixture counts too.
FIXTURES = {
    "mosquitto": "mosquitto",
    "postgres_cluster": "postgres",
    "postgres_template": "postgres",
    "victoria": "victoria",
    "chromium": "chromium",
}

# What starts such processes by hand: a directory ("dir/"), a module ("dir/test_x.py") or one
# test ("dir/test_x.py::test_y", every parametrisation of it), path under tests/.
_LAVOS, _MQTT, _PG = ("lavos_process",), ("mosquitto",), ("postgres",)
MODULES: dict[str, tuple[str, ...]] = {
    # The browser modules serve the hub in-process (tests/support/web.py served_lavos); one module
    # runs `lavos server` as a process (its `SERVER_PROCESS = True`).
    "dashboard/browser/": ("chromium", "mosquitto"),
    "dashboard/browser/test_harness.py": _LAVOS,
    "test_cli_help.py::test_the_installed_command_answers_help_as_a_process": _LAVOS,
    "test_packaging.py::test_the_agent_imports_without_the_hub_packages": _LAVOS,
    "test_packaging.py::test_the_nodes_commands_run_on_an_edge_only_install": _LAVOS,
    "test_packaging.py::test_the_hub_layers_are_left_out_and_a_hub_command_says_what_to_install": _LAVOS,
    "bench/test_staff_action.py": ("chromium", "lavos_process", "mosquitto"),
    "bench/test_halls_bench.py": _LAVOS + _MQTT,  # the centre and the halls' hubs in processes of their own
    "bench/test_failover_bench.py": _LAVOS + _MQTT + _PG,  # two lavos server processes on a PostgreSQL of its own
    "broker/storage/test_db.py::test_processes_starting_together_migrate_once": _PG,
    "broker/floor/test_hub_restart.py": _LAVOS,
    "broker/adapters/test_link_process.py": _LAVOS + _MQTT,  # starts a hub process by hand, and its own broker
    "test_bench_hub_ingest.py": _LAVOS + _MQTT,
    "broker/accounts/test_node_credentials.py": _MQTT,  # `lavos broker add-node` (in-process) runs mosquitto_passwd
    "dashboard/test_server_cli.py": _LAVOS,
    "deploy/test_backup.py::test_a_backup_of_the_other_backend_is_refused": _PG,
    "deploy/test_backup.py::test_cli_backup_and_restore": _LAVOS,
    "deploy/test_compose.py::test_the_lavos_command_uses_only_options_lavos_server_knows": _LAVOS,
    # install.sh runs the node's `lavos node-config` (through bash, which the guard cannot see into)
    "deploy/test_pi_install.py::test_node_toml_from_table_and_host_with_lavos_node_config": _LAVOS,
    "deploy/test_hub_install.py": _LAVOS + _MQTT,  # install.sh runs `lavos`; the restored box's Mosquitto
    "deploy/test_monitoring.py": ("victoria",),  # VictoriaMetrics with the shipped flags, and vmalert
    "deploy/test_tls.py::test_node_and_central_service_talk_over_tls": _MQTT,
    "deploy/test_tls.py::test_a_client_trusting_another_ca_is_refused": _MQTT,
    "devices/test_contract.py::test_lavos_schema_prints_json_schema_of_all_seven_topics": _LAVOS,
    "devices/test_nodeconfig.py::test_lavos_node_config_cli_output_loads_back": _LAVOS,
    "devices/test_nodeconfig.py::test_lavos_node_config_unknown_table_exits_2_naming_the_tables": _LAVOS,
    "devices/test_nodeconfig.py::test_lavos_node_config_bad_venue_exits_2": _LAVOS,
    "edge/test_cli.py::test_the_agent_runs_until_sigterm_without_a_broker": _LAVOS,
    "edge/test_commands.py": _MQTT,
    "edge/test_restart.py": _LAVOS + _MQTT,
    "faults/test_broker_outage.py": _MQTT,
    "faults/test_openapi_fuzz.py": _MQTT,  # its hub's broker (the fixture marks it too); listed so ./run fast skips importing schemathesis
    "central/test_two_halls.py": _MQTT,  # three brokers by hand (the hubs are in-process)
    "home_assistant/test_with_mosquitto.py::test_ha_announcing_itself_makes_the_hub_announce_again": _LAVOS,  # a link process
    # All but the member CSV's mistakes, which run `lavos members` in-process.
    "faults/test_config_mistakes.py::test_venue_mistakes_stop_lavos_server_naming_file_line_and_key": _LAVOS,
    "faults/test_config_mistakes.py::test_venue_not_utf8_or_missing_stops_lavos_server": _LAVOS,
    "faults/test_config_mistakes.py::test_node_toml_mistakes_stop_the_agent_naming_file_line_and_key": _LAVOS,
    "faults/test_config_mistakes.py::test_node_toml_not_utf8_missing_or_a_directory_stops_the_agent": _LAVOS,
    "faults/test_config_mistakes.py::test_a_bad_log_level_is_a_clear_error_not_a_traceback": _LAVOS,
    "faults/test_config_mistakes.py::test_server_flag_mistakes_are_one_clear_line_and_exit_2": _LAVOS,
    "faults/test_http_security.py": _LAVOS,
    "faults/test_hub_kill.py": _LAVOS,
    "faults/test_node_disk_full.py": _MQTT,
    "faults/test_node_kill.py": _LAVOS,
    "security/test_http_bodies.py": _LAVOS,
    "security/test_http_connections.py": _LAVOS,
    "security/test_lockout.py": _LAVOS,
    "security/test_mqtt_flood.py": _LAVOS + _MQTT,
    "security/test_mqtt_identity.py": _LAVOS,
    "security/test_node_files.py": _LAVOS + _MQTT,
    "security/test_node_input.py": (*_LAVOS, "victoria"),
    "security/test_password_path.py": _LAVOS,
    "security/test_reserved_ids.py::test_add_node_lavos_hub_exits_2_and_changes_no_password_file": _MQTT,
    "security/test_reserved_ids.py::test_add_node_refuses_a_venue_that_names_a_table_lavos_hub": _MQTT,
    "sim/test_demo.py": _LAVOS + _MQTT,
    "deploy/test_pi_gpio.py": ("bwrap", "lavos_process"),  # the agent in its unit's sandbox (tests/support/unit_sandbox.py)
    "deploy/test_units.py": ("systemd",),
    "deploy/test_update_nodes.py": ("ansible",),  # the hub in-process (the mosquitto fixture marks it)
    "sim/test_demo_till.py::test_a_short_demo_evening_pays_every_game_and_closes_the_day": _MQTT,
}

# The OS programs behind each marker, as the guard recognises them in a command line.
PROGRAMS = {
    "mosquitto": {"mosquitto", "mosquitto_passwd", "mosquitto_pub", "mosquitto_sub"},
    "postgres": {"initdb", "pg_ctl", "postgres", "psql", "pg_dump", "pg_restore", "pg_ctlcluster", "createdb"},
    "victoria": {"victoria-metrics", "vmalert"},
    "chromium": {"chromium", "chromium-browser", "chromium-headless-shell", "chrome", "headless_shell", "playwright.sh"},
    "bwrap": {"bwrap"},
    "systemd": {"systemd-analyze"},
    "ansible": {"ansible", "ansible-playbook", "ansible-inventory"},
}
LAVOS_PACKAGES = {"lavos_cli", "edge", "broker", "dashboard", "sim", "tests"}


def wholly_external(path: Path, tests: Path) -> bool:
    """True for a directory or module under `tests` that MODULES marks whole: every test in it is external."""
    try:
        rel = path.relative_to(tests).as_posix()
    except ValueError:
        return False
    if path.is_dir():
        rel += "/"
    return any(rel == key or (key.endswith("/") and rel.startswith(key)) for key in MODULES if "::" not in key)


def excludes_external(markexpr: str) -> bool:
    """True when `-m markexpr` deselects every test marked external, whatever its other markers
    (`./run fast`'s "not external and not slow"): then a module MODULES marks whole need not even
    be imported (tests/conftest.py pytest_ignore_collect), which spares each worker importing
    Playwright, schemathesis and the modules that only the full suite runs."""
    if not markexpr:
        return False
    from _pytest.mark.expression import Expression

    expr = Expression.compile(markexpr)
    others = sorted(set(expr.idents()) - {EXTERNAL})
    for bits in itertools.product((False, True), repeat=len(others)):
        on = {EXTERNAL} | {name for name, bit in zip(others, bits, strict=True) if bit}
        if expr.evaluate(lambda name, /, **kwargs: name in on):
            return False
    return True


def marks_for(nodeid: str, fixturenames: list[str], params: dict[str, object]) -> set[str]:
    """The markers a collected test needs (not counting the ones it carries already)."""
    need = {FIXTURES[f] for f in fixturenames if f in FIXTURES}
    if params.get("db_url") == "postgresql":
        need.add("postgres")
    path, _, name = nodeid.removeprefix("tests/").partition("::")
    test = f"{path}::{name.split('[', 1)[0]}"
    for key, markers in MODULES.items():
        if key in (path, test) or (key.endswith("/") and path.startswith(key)):
            need.update(markers)
    return need


def marker_for_command(args: Any, executable: Any = None) -> str | None:
    """The marker a subprocess command line needs, or None for an ordinary program."""
    if isinstance(args, (str, bytes, os.PathLike)):
        argv = [os.fsdecode(args)]
    else:
        argv = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in args]
    if not argv:
        return None
    if len(argv) == 1 and " " in argv[0]:  # a shell string
        argv = argv[0].split()
    if Path(argv[0]).name == "runuser" and "--" in argv:  # PostgreSQL as its own OS user
        argv = argv[argv.index("--") + 1 :]
    program = Path(os.fsdecode(executable) if executable else argv[0]).name
    for marker, names in PROGRAMS.items():
        if program in names:
            return marker
    if program == "node" and any("playwright" in a for a in argv):
        return "chromium"
    if program == "lavos":
        return "lavos_process"
    if program.startswith("python") or argv[0] == sys.executable:
        rest = argv[1:]
        if any("lavos_cli" in a for a in rest):
            return "lavos_process"
        if "-m" in rest and rest.index("-m") + 1 < len(rest) and rest[rest.index("-m") + 1].split(".")[0] in LAVOS_PACKAGES:
            return "lavos_process"
    return None


@contextlib.contextmanager
def refusing_external_processes(nodeid: str) -> Iterator[None]:
    """Within: subprocess.Popen (hence subprocess.run and asyncio's subprocesses) refuses the
    programs behind the markers, failing the test with the one it should carry."""
    real = subprocess.Popen

    class Guarded(subprocess.Popen[Any]):  # the real Popen (`real`): it is not replaced yet
        def __init__(self, args: Any, *a: Any, **kw: Any) -> None:
            marker = marker_for_command(args, kw.get("executable"))
            if marker is not None:
                pytest.fail(
                    f"{nodeid} starts {args!r}, which needs the `{marker}` marker ({MARKERS[marker]}); "
                    f"it is not marked, so ./run fast would run it: add the module to MODULES in "
                    f"tests/support/external.py (or use the fixture that starts it)",
                    pytrace=False,
                )
            super().__init__(args, *a, **kw)

    vars(subprocess)["Popen"] = Guarded  # (an assignment mypy refuses to a class)
    try:
        yield
    finally:
        vars(subprocess)["Popen"] = real
