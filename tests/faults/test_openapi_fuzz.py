"""Issue 6, bad input: schemathesis against the HTTP API's own OpenAPI document.

The app is the one `lavos server` serves (API plus pages, `mount_web`), over a real
Hub on SQLite and a real Mosquitto, called as a manager with a bearer token, so
every operation gets past authentication and its input reaches the route. For every operation
schemathesis generates valid and invalid requests; each answer must be no 5xx, a status code
the document lists for that operation, the documented content type, and a body that validates
against the documented response schema (the error bodies included).

Left out: schemathesis' "schema-valid request rejected" check. The API refuses, on purpose, more
than JSON Schema can say: control characters and lone surrogates in text, 2015.0 for an integer
(strict bodies), a card UID that is not hex, a range that ends before it starts, a name already
taken. Those answers are 400/422 with a documented body, which the other checks do verify.

Dates and times (OpenAPI `format: date` / `date-time`, every one of them read by the hall's parser,
dashboard.api.dates) are drawn half from the edges that once answered 500 or are easy to get wrong
(years 1 and 9999, far offsets, the spring night's missing hour and the autumn night's double one,
the ends of the hall's range) and half from anywhere: the registered formats below.

A 200 body is the read model's own view (a frozen dataclass that pydantic describes in the
document: broker/domain/json_shape.py), so a success is checked field by field against it, as
every refusal is against the ErrorOut model.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import TYPE_CHECKING, Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi import unregister_string_format
from schemathesis.specs.openapi.checks import positive_data_acceptance

from broker.accounts.auth_checks import reset_client
from broker.accounts.users import issue_token
from broker.floor.games import StartGame
from dashboard.api.app import api_routes
from tests.dashboard.conftest import CHEAP, MANAGER, PASSWORD, FakeClock, bearer
from tests.support.examples import few
from tests.support.hub import on_writer, running_service
from tests.support.web import add_users, web_app

if TYPE_CHECKING:
    from schemathesis.specs.openapi.schemas import OpenApiSchema

    from broker.storage.engine import Store
    from sim.mosquitto import Mosquitto


# A budget of requests, not of examples per operation: 34 operations took ~90 s here with 20
# examples each; bookings, tournaments and the till's pages made them 98 (180 cases with both
# modes) and the module 300 s of a worker's time. So ~1,800 requests in all, shared out (10 a case
# now), however many operations come; HYPOTHESIS_PROFILE=deep multiplies it (few()). Set here, not
# in the decorator: derandomize seeds each operation's examples from check()'s source, so its text
# stays as it was and the examples stay the same from run to run.
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
REQUESTS = 1800
# An operation without any input (GET /api/tables) has no invalid request to generate.
CASES = sorted(
    {
        (m, p, mode)
        for m, p, r in api_routes()
        for mode in MODES
        if mode is GenerationMode.POSITIVE
        or r.dependant.path_params
        or r.dependant.query_params
        or r.dependant.body_params
        or r.openapi_extra
    }
)
MAX_EXAMPLES = few(max(5, REQUESTS // len(CASES)))


# The hub's clock is 10 November 2026 (FakeClock): the hall's range is 2016-01-01 .. 2028-12-31.
EDGE_DAYS = ["0001-01-01", "9999-12-30", "9999-12-31", "1970-01-01", "2015-12-31", "2016-01-01", "2026-11-10", "2028-12-31", "2029-01-01"]
EDGE_TIMES = [
    "0001-01-01T00:00:00+14:00",
    "0001-01-01T00:00:00",
    "9999-12-31T23:59:00+00:00",
    "9999-12-31T23:00:00-12:00",
    "2027-03-28T02:30:00",  # the spring night skips it at the hall
    "2027-03-28T02:30:00+01:00",  # ... but with its offset it is a real moment
    "2026-10-25T02:30:00",  # the autumn night has it twice
    "2026-11-10T20:00:00",
    "2026-11-10T20:00:00+01:00",
    "2028-12-31T23:30:00-01:00",  # 2029-01-01 at the hall
]
DATE_FORMATS = {
    "date": st.one_of(st.sampled_from(EDGE_DAYS), st.dates().map(date.isoformat)),
    "date-time": st.one_of(
        st.sampled_from(EDGE_TIMES),
        st.builds(lambda d, off: d.isoformat() + off, st.datetimes(), st.sampled_from(["", "Z", "+14:00", "-12:00", "+01:00", "-00:30"])),
    ),
}


@pytest.fixture(scope="module")
def date_edges() -> Iterator[None]:
    """The date formats drawn with their edges, for this module only (schemathesis' registry is the process's)."""
    for name, strategy in DATE_FORMATS.items():
        schemathesis.openapi.format(name, strategy)
    yield
    for name in DATE_FORMATS:
        unregister_string_format(name)


@pytest.fixture(scope="module")
def api(
    mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory, date_edges: None
) -> Iterator[tuple[OpenApiSchema, dict[str, str], Store]]:
    """(schema, manager headers): one service for the module, since hypothesis runs many cases per test anyway."""
    tmp = tmp_path_factory.mktemp("openapi-fuzz")
    with running_service(mosquitto, tmp / "hub.db", clock=FakeClock(), client_id="hub-openapi-fuzz") as service:
        service.watchdog.stop()  # nothing here is about time passing
        add_users(service, {MANAGER: "manager"}, PASSWORD, CHEAP)

        def _write(db: Any) -> str:
            token = issue_token(db, MANAGER, "fuzz", actor="test")
            return token

        token = on_writer(service, _write)
        # Something for the generated ids and table names to find besides 404s.
        service.execute(StartGame(table="pool-01", actor="test"))
        yield schemathesis.openapi.from_asgi("/openapi.json", web_app(service, data_dir=tmp)), bearer(token), service.store


# pytest 9.2 dropped what schemathesis' own pytest plugin (schema.parametrize) relies on, so each
# operation is a test of ours, driven by the operation's strategy through plain hypothesis.
@pytest.mark.parametrize(("method", "path", "mode"), CASES, ids=[f"{m} {p} {mode}" for m, p, mode in CASES])
def test_every_operation_answers_as_documented(api: tuple[OpenApiSchema, dict[str, str], Store], method: Any, path: Any, mode: Any) -> None:
    schema, headers, store = api

    @given(case=schema[path][method].as_strategy(generation_mode=mode))
    @settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    def check(case: Any) -> None:
        # Its invalid-credential checks come from one address thousands of times; being slowed
        # down for that (429) is right, and proven in tests/security: each case starts unthrottled.
        reset_client(store, "testclient")
        case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])

    check()
