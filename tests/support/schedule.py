"""How the suite spreads over pytest-xdist workers (`./run test` and `./run fast` run `-n N --dist loadgroup`).

Two things, applied at collection (tests/conftest.py):
- **Groups.** A test whose fixtures include a module-scoped one that costs something to set up (a
  server process, a browser, a fuzzing app) runs on the same worker as the rest of its module, so
  that set-up happens once, as in a serial run; the module is then one unit of work. A module
  whose only module-scoped fixture is a Mosquitto (it starts in milliseconds) is spread freely.
- **Order.** The longest units start first, so the run does not end with one worker alone on a
  five-minute test: units are sorted by their known cost (KNOWN_S, measured here, seconds per
  test or per module), longest first; the rest keep their collection order. The scheduler is run
  with --no-loadscope-reorder, so xdist keeps this order.

Each worker also gets a slice of its own of the test ports (sim/mosquitto.py free_port), so two
workers never pick the same one.
"""

from __future__ import annotations

import os

import pytest

# Module-scoped fixtures cheap enough to set up again on another worker.
CHEAP_MODULE_FIXTURES = {"mosquitto"}

# What a module or a test takes here, in seconds, set-up included: from a full run's durations
# (`--junitxml`, -n 4 on a loaded machine) or a serial run of each directory on the loaded machine
# (4 December 2026): the order counts, not the figures. A grouped module costs its figure; a spread
# test its own figure, or its module's shared among its tests. A unit without a figure counts as
# free and is handed out last: a long one left out (the security modules with a server of their
# own were, 40-55 s each; the hub ingest bench took 80 s in one run) can end the run alone on one
# worker while the others idle.
KNOWN_S: dict[str, float] = {
    "tests/faults/test_openapi_fuzz.py": 160,  # a budget of ~1,800 requests (was 20 examples a case: 300)
    "tests/faults/test_failover.py": 160,
    "tests/faults/test_config_mistakes.py": 120,
    "tests/till/test_closeout.py": 130,
    "tests/till/test_payments_writer.py": 120,
    "tests/till/test_ekasa_follow_up.py": 120,
    "tests/till/test_tabs_api.py": 110,
    "tests/dashboard/browser/test_table_page.py": 100,
    "tests/faults/test_alert_recurrence.py": 70,
    "tests/security/test_node_input.py": 67,
    "tests/dashboard/browser/test_floor_live.py": 65,
    "tests/bench/test_staff_action.py": 65,  # one round, one goal and the till's four paths (tillpages)
    "tests/bench/test_failover_bench.py": 40,  # two lavos server processes and one takeover
    "tests/dashboard/browser/test_slovak_everywhere.py": 60,
    "tests/dashboard/browser/test_bills.py": 60,
    "tests/dashboard/browser/test_till_evening.py": 55,
    "tests/faults/test_ingest_fuzz.py": 55,
    "tests/security/test_password_path.py": 55,
    "tests/sim/test_demo.py": 55,
    "tests/dashboard/browser/test_notifications_page.py": 52,
    "tests/dashboard/test_pages_members.py": 50,
    "tests/faults/test_http_security.py": 48,
    "tests/deploy/test_remote_access.py": 48,
    "tests/deploy/test_monitoring.py": 16,  # VictoriaMetrics, an evening, every panel, vmalert through the hub
    "tests/dashboard/browser/test_access.py": 45,
    "tests/dashboard/test_api_garbage.py::test_every_route_refuses_garbage_with_a_4xx_and_changes_nothing": 45,
    "tests/dashboard/browser/test_ekasa_page.py": 43,
    "tests/dashboard/browser/test_pay.py": 50,
    "tests/dashboard/browser/test_phone.py": 62,
    "tests/dashboard/browser/test_screenshots.py": 40,
    "tests/security/test_lockout.py": 75,  # 77 s in a full run at -n 4, load 9-11 (7 December)
    "tests/broker/core/test_hub_concurrency.py": 40,
    "tests/dashboard/browser/test_bookings.py": 35,
    "tests/faults/test_broker_outage.py": 25,
    "tests/test_bench_hub_ingest.py": 40,
    "tests/deploy/test_backup.py": 39,
    "tests/deploy/test_hub_install.py": 30,  # three installs into scratch roots (lavos processes), a Mosquitto
    "tests/dashboard/browser/test_member_forms.py": 38,
    "tests/security/test_http_connections.py": 38,
    "tests/dashboard/browser/test_users_page.py": 37,
    "tests/security/test_http_bodies.py": 37,
    "tests/dashboard/browser/test_tabs.py": 55,
    "tests/dashboard/browser/test_day_closeout.py": 35,
    "tests/faults/test_influx_outage.py": 35,
    "tests/dashboard/test_server_cli.py": 35,
    "tests/dashboard/browser/test_harness.py": 33,
    "tests/dashboard/test_api_table_service.py": 33,
    "tests/home_assistant/test_with_mosquitto.py": 32,
    "tests/broker/adapters/test_link_process.py": 30,
    "tests/security/test_mqtt_flood.py": 30,
    "tests/security/test_node_files.py": 30,
    "tests/dashboard/test_pages_reports.py": 29,
    "tests/edge/test_restart.py": 29,
    "tests/dashboard/browser/test_bar_evening.py": 28,
    "tests/security/test_mqtt_identity.py": 27,
    "tests/edge/test_commands.py": 27,
    "tests/dashboard/browser/test_floor_fit.py": 26,
    "tests/security/test_roles.py": 25,
    "tests/dashboard/browser/": 25,
    "tests/dashboard/browser/test_floor_timers.py": 25,
    "tests/notify/test_push.py::test_receiver_down_past_the_late_threshold": 11,
    "tests/dashboard/browser/test_foosball_alert.py": 14,  # 3 goals (the timed rounds are bench/staff_action.py's)
    "tests/security/test_web_sessions.py": 17,
    "tests/faults/test_node_disk_full.py": 8,
    # Grouped modules that had no figure, so they were handed out last (7 December, -n 4, load 9-11):
    # two hubs, two brokers and the centre; the fleet's hub; the centre's server.
    "tests/central/test_two_halls.py": 34,
    "tests/deploy/test_update_nodes.py": 19,
    "tests/central/test_centre_server.py": 15,
    "tests/till/test_receipts_match_the_bill.py": 7,
    # Long units that had no figure (a full run, -n 4, load 7-11, 7 December, issue 32): the longest
    # of them sit at the end of the collection (tests/till, tests/tournaments), so they were handed
    # out last and a 25-28 s test could run alone while the other workers had nothing left.
    "tests/tournaments/test_tournament_hub.py::test_a_32_player_double_elimination_is_drawn_once_plays_62_matches_on_its_tables_and_lights_them": 28,
    "tests/tournaments/test_tournament_hub.py::test_a_corrected_first_round_result_asks_before_it_resets_a_later_match_and_moves_the_players": 9,
    "tests/tournaments/test_tournament_hub.py::test_the_grand_final_reset_is_played_when_the_losers_side_wins": 8,
    "tests/notify/test_push_kill.py": 26,
    "tests/till/test_ekasa_never_twice.py::test_every_payment_is_registered_exactly_once_whatever_the_client_does": 25,
    "tests/bench/test_floor_view.py": 18,
    "tests/faults/test_node_kill.py": 18,
    "tests/faults/test_postgres_restart.py": 14,
    "tests/sim/test_demo_till.py::test_a_short_demo_evening_pays_every_game_and_closes_the_day": 14,
    "tests/dashboard/test_web_auth.py::test_every_form_post_without_the_token_is_refused": 12,
    "tests/broker/floor/test_hub_restart.py": 11,
    "tests/security/test_staff_under_a_flood.py::test_under_sixteen_anonymous_basic_clients_staff_calls_get_no_503_and_only_the_writer_writes": 11,
    "tests/broker/adapters/test_metrics.py": 15,  # its VictoriaMetrics tests are one group
    "tests/dashboard/test_page_input.py::test_every_page_refuses_a_control_character_in_any_form_field_or_query_before_it_runs": 10,
    "tests/test_test_tiers.py::test_the_guard_holds_in_xdist_workers_too": 9,
    "tests/dashboard/test_web_floor.py::test_every_table_by_room_with_its_state_in_colour_and_word": 9,
    "tests/bench/test_halls_bench.py": 9,
    "tests/deploy/test_pi_install.py::test_node_toml_from_table_and_host_with_lavos_node_config": 8,
    "tests/deploy/test_pi_install.py::test_an_mfrc522_node_gets_its_reader_package_and_others_do_not": 8,
    "tests/central/test_outbox.py::test_the_bound_alerts_at_80_and_100_percent_and_the_money_is_still_taken": 8,
    "tests/central/test_record_shapes.py::test_any_json_as_any_record_is_taken_or_refused_never_an_error": 8,
    # The fast tier's longest (`./run fast --junitxml`, -n 2, load 7-9): none of them last either.
    "tests/sim/test_demo_tournament.py": 11,
    "tests/broker/domain/test_game_ops.py::test_paused_time_is_never_billed": 5,
    "tests/broker/domain/test_game_ops.py::test_billed_time_is_played_time_rounded_up_per_line": 4,
    "tests/test_no_speed_asserts.py::test_no_test_asserts_how_fast_something_happens": 4,
}
# Modules whose module-scoped fixture is cheap beside their length: spread, each worker sets it up.
SPREAD = {"tests/faults/test_openapi_fuzz.py"}


def worker_ports(total: range, worker: str, count: int) -> range:
    """The slice of `total` that worker `gwN` of `count` draws its ports from."""
    index = int(worker.removeprefix("gw"))
    size = len(total) // count
    return range(total.start + index * size, total.start + (index + 1) * size)


def claim_worker_ports() -> None:
    """In an xdist worker: narrow free_port to this worker's slice, for it and every process it starts."""
    from sim.mosquitto import _TEST_PORTS, PORTS_ENV

    worker, count = os.environ.get("PYTEST_XDIST_WORKER"), os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if worker and count and PORTS_ENV not in os.environ:
        ports = worker_ports(_TEST_PORTS, worker, int(count))
        os.environ[PORTS_ENV] = f"{ports.start}-{ports.stop}"


def known_s(key: str) -> float | None:
    """The figure of the longest KNOWN_S prefix naming this test or module (or its directory)."""
    best, cost = -1, None
    for prefix, seconds in KNOWN_S.items():
        hit = key == prefix or key.startswith(prefix + "[") or (prefix.endswith("/") and key.startswith(prefix))
        if hit and len(prefix) > best:
            best, cost = len(prefix), seconds
    return cost


def group_of(item: pytest.Item) -> str | None:
    """The xdist group an item must share with its module, or None to spread it."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in info.names_closure:
        defs = info.name2fixturedefs.get(name, ())
        if name not in CHEAP_MODULE_FIXTURES and any(d.scope in ("module", "package", "class") for d in defs):
            module = item.nodeid.split("::", 1)[0]
            return None if module in SPREAD else module
    return None


def _name_the_group(item: pytest.Item, group: str) -> None:
    """Put the group in the test's id, as pytest-xdist's loadgroup reads it ("<nodeid>@<group>").

    pytest-xdist 3.8 does it by writing `item._nodeid`, which pytest 9.2 no longer reads (a node's
    id is the NodeId in `item._id`): its groups were silently ignored, and a module's tests went to
    several workers, each setting up the module's server again. This does what xdist means to.
    """
    from _pytest.nodeid import NodeId

    if "@" not in item.nodeid and hasattr(item, "_id"):
        item._id = NodeId.parse(f"{item.nodeid}@{group}")


def arrange(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each item's group and sort the units longest first (in place, stable)."""
    per_module: dict[str, int] = {}
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        per_module[module] = per_module.get(module, 0) + 1
    unit: dict[int, str] = {}
    cost: dict[str, float] = {}
    named = bool(getattr(config.option, "loadgroup", False))  # an xdist worker of a --dist loadgroup run
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        group = group_of(item)
        if group is not None:
            unit[id(item)] = group
            cost[group] = known_s(group) or 0.0
            item.add_marker(pytest.mark.xdist_group(group))
            if named:
                _name_the_group(item, group.removeprefix("tests/").removesuffix(".py"))
        else:
            unit[id(item)] = item.nodeid
            own = known_s(item.nodeid.split("[", 1)[0]) if "::" in item.nodeid else None
            if own is None or own == known_s(module):
                own = (known_s(module) or 0.0) / per_module[module]
            cost[item.nodeid] = own
    items.sort(key=lambda item: -cost[unit[id(item)]])
