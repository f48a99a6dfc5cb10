"""Who may call what: every route but health and the schema needs a login; manager routes refuse staff."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from broker.accounts.auth_checks import reset_failures
from broker.accounts.login_throttle import ThrottlePolicy
from broker.accounts.users import revoke_token
from broker.storage.models import ApiToken
from dashboard import access
from dashboard.api.app import PUBLIC_PATHS, api_routes
from devices.version import software_version
from tests.dashboard.conftest import MANAGER, PASSWORD, STAFF, basic, bearer, sqlite_only
from tests.support.hub import on_writer

if TYPE_CHECKING:
    from tests.dashboard.conftest import Api


pytestmark = sqlite_only


def _concrete(path: str) -> str:
    # Any value will do: authentication runs before the path is looked at.
    return re.sub(r"\{[^}]+\}", "1", path)


def _needs_manager(route: Any) -> bool:
    """Whether the capability the route declares (dashboard.access) needs the manager."""

    def calls(dependant: Any) -> Iterator[Any]:
        for d in dependant.dependencies:
            yield d.call
            yield from calls(d)

    return any(access.role_for(c.capability) == "manager" for c in calls(route.dependant) if hasattr(c, "capability"))


ROUTES = list(api_routes())
MANAGER_ROUTES = [(m, p) for m, p, r in ROUTES if _needs_manager(r)]


def test_the_route_list_covers_the_whole_schema(api: Api) -> None:
    schema = api.client.get("/openapi.json").json()
    documented = {(m.upper(), p) for p, ops in schema["paths"].items() for m in ops}
    assert documented == {(m, p) for m, p, _ in ROUTES}
    assert {"HTTPBase", "HTTPBearer"} <= set(schema["components"]["securitySchemes"])


# A calendar app cannot log in: the feed's secret is its revocable link (issue 20, item 7). A link
# nobody was given answers 404 whatever the headers say, never a login challenge that would tell
# a guesser the route takes credentials.
LINK_PATHS = {"/api/calendar/{token}.ics"}


def test_anonymous_is_401_with_a_challenge_on_every_route(api: Api) -> None:
    wrong = []
    for method, path, _ in ROUTES:
        if path in PUBLIC_PATHS:
            continue
        if path in LINK_PATHS:
            for headers in ({}, {"Authorization": "Bearer lavos_nope"}):
                r = api.client.request(method, _concrete(path), headers=headers)
                if r.status_code != 404 or "www-authenticate" in r.headers:
                    wrong.append((method, path, headers, r.status_code))
            continue
        for headers in ({}, {"Authorization": "Bearer lavos_nope"}, {"Authorization": "Digest x"}):
            r = api.client.request(method, _concrete(path), headers=headers)
            if r.status_code != 401 or "Basic" not in r.headers.get("www-authenticate", "") or not r.json()["detail"]:
                wrong.append((method, path, headers, r.status_code))
    assert wrong == []


def test_public_routes_answer_without_login(api: Api) -> None:
    health = api.client.get("/api/health")
    expected = {"ok": True, "mqtt": True, "db": True, "backend": "sqlite", "version": software_version()}
    assert health.status_code == 200 and health.json() == expected
    assert api.client.get("/openapi.json").status_code == 200


def test_manager_routes(api: Api) -> None:
    assert {p for _, p in MANAGER_ROUTES} >= {
        "/api/sessions/{session_id}/correction",
        "/api/members",
        "/api/members/{member_id}",
        "/api/members/import",
        "/api/reports/revenue",
        "/api/reports/utilisation",
        "/api/reports/drops",
        "/api/members/export",
        "/api/nodes",  # issue 9: the matching pages are the manager's
    }
    assert ("GET", "/api/members") not in MANAGER_ROUTES  # staff search it by name (without notes and cards)


def test_staff_get_403_on_manager_routes(api: Api) -> None:
    answers = {(m, p): api.client.request(m, _concrete(p), headers=api.staff) for m, p in MANAGER_ROUTES}
    assert {k: r.status_code for k, r in answers.items() if r.status_code != 403 or "manager" not in r.json()["detail"]} == {}


def test_basic_login_with_a_utf8_password(api: Api) -> None:
    assert api.client.get("/api/tables", headers=basic(STAFF, PASSWORD)).status_code == 200
    assert api.client.get("/api/reports/drops", headers=basic(MANAGER, PASSWORD)).status_code == 200
    assert api.client.get("/api/reports/drops", headers=basic(STAFF, PASSWORD)).status_code == 403
    garbled = {"Authorization": "Basic !!!not-base64"}
    assert api.client.get("/api/tables", headers=garbled).status_code == 401


def test_repeated_failures_slow_down_that_client_until_a_manager_lifts_it(api: Api) -> None:
    # The per-client rules themselves (another address still gets in) are proven through a real
    # server in tests/security/test_lockout.py; here, one client, as staff would see it.
    for _ in range(ThrottlePolicy().account_free + 1):
        assert api.client.get("/api/tables", headers=basic(STAFF, "guess-guess")).status_code == 401
    r = api.client.get("/api/tables", headers=basic(STAFF, PASSWORD))  # even the right password, for now
    assert r.status_code == 429
    assert "try again in" in r.json()["detail"] and 0 < int(r.headers["retry-after"]) <= 15 * 60
    assert api.client.get("/api/tables", headers=api.staff).status_code == 200  # tokens are not passwords
    assert reset_failures(api.service.store, STAFF) == 1
    assert api.client.get("/api/tables", headers=basic(STAFF, PASSWORD)).status_code == 200


def test_tokens_work_until_revoked(api: Api) -> None:
    assert api.client.get("/api/tables", headers=api.staff).status_code == 200

    def _write(db: Any) -> None:
        token = db.scalars(select(ApiToken).where(ApiToken.username == STAFF)).one()
        revoke_token(db, token.id, actor="test")

    on_writer(api.service, _write)
    r = api.client.get("/api/tables", headers=api.staff)
    assert r.status_code == 401 and r.json()["detail"] == "invalid token"
    assert api.client.get("/api/tables", headers=bearer("")).status_code == 401
