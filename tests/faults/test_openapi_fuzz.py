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

A 200 body is the read model's own view (a frozen dataclass that pydantic describes in the
document: broker/domain/json_shape.py), so a success is checked field by field against it, as
every refusal is against the ErrorOut model.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from broker.accounts.auth_checks import reset_client
from broker.accounts.users import issue_token
from broker.hall.games import StartGame
from dashboard.api.app import api_routes
from tests.dashboard.conftest import CHEAP, MANAGER, PASSWORD, FakeClock, bearer
from tests.support.examples import few
from tests.support.hub import on_writer, running_service
from tests.support.web import add_users, web_app

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


@pytest.fixture(scope="module")
def api(mosquitto, tmp_path_factory):
    """(schema, manager headers): one service for the module, since hypothesis runs many cases per test anyway."""
    tmp = tmp_path_factory.mktemp("openapi-fuzz")
    with running_service(mosquitto, f"sqlite:///{tmp / 'hub.db'}", clock=FakeClock(), client_id="hub-openapi-fuzz") as service:
        service.watchdog.stop()  # nothing here is about time passing
        add_users(service, {MANAGER: "manager"}, PASSWORD, CHEAP)

        def _write(db):
            token = issue_token(db, MANAGER, "fuzz", actor="test")
            return token

        token = on_writer(service, _write)
        # Something for the generated ids and table names to find besides 404s.
        service.execute(StartGame(table="pool-01", actor="test"))
        yield schemathesis.openapi.from_asgi("/openapi.json", web_app(service, data_dir=tmp)), bearer(token), service.store


# pytest 9.2 dropped what schemathesis' own pytest plugin (schema.parametrize) relies on, so each
# operation is a test of ours, driven by the operation's strategy through plain hypothesis.
@pytest.mark.parametrize(("method", "path", "mode"), CASES, ids=[f"{m} {p} {mode}" for m, p, mode in CASES])
def test_every_operation_answers_as_documented(api, method, path, mode):
    schema, headers, store = api

    @given(case=schema[path][method].as_strategy(generation_mode=mode))
    @settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    def check(case):
        # Its invalid-credential checks come from one address thousands of times; being slowed
        # down for that (429) is right, and proven in tests/security: each case starts unthrottled.
        reset_client(store, "testclient")
        case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])

    check()
