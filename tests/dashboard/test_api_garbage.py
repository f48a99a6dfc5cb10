"""Garbage in, a 4xx with a readable detail out, on every route and both backends; never a 500, nothing changes.

The TestClient re-raises any unhandled server error, so a bug fails the test where it happens.

Each route gets the garbage that reaches something of its own: every body gets broken or
wrong-typed JSON, one too big for the route and an unknown field, and each wrong field goes to
every body that has that field;
each query parameter its bad values; each path parameter bad ids. (Sending every wrong field to every
route, 2,111 requests a backend, proved no more: a field a body does not have is refused as unknown,
whatever its value, before anything reads it; this is about 830.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, get_args

from fastapi.routing import APIRoute
from sqlalchemy import func, select

from broker.storage.members import add_member
from broker.storage.models import AuditEntry, GameOp, Member
from dashboard.api.app import api_routes
from dashboard.api.schemas import Body
from tests.support.hub import on_writer

if TYPE_CHECKING:
    from tests.dashboard.conftest import Api


# For every body: broken JSON, the wrong JSON type, bad encoding, too big for the route.
STRUCTURE: list[bytes] = [
    b"{",
    b"[]",
    b"null",
    b'"text"',
    b"1e999",
    b"\xff\xfe",
    b'{"table": "pool-01"',
    b"{}" * 1000,
    json.dumps({"table": "x" * 100_000}).encode(),  # past what most routes take (their body limits)
]
# An object with one wrong field each: sent to every route whose body has one of its fields. Any
# other route's body model forbids unknown fields (strict, extra="forbid"; checked below), so there
# each of these is the same refusal as UNKNOWN_FIELD, which every route with a body gets.
FIELDS: list[dict[str, Any]] = [
    {"table": 5},
    {"table": None},
    {"table": ["pool-01"]},
    {"table": "pool-01\u0000"},
    {"table": "pool-01'; DROP TABLE sessions; --"},
    {"table": "pool-01", "unexpected": 1},
    {"minutes": "5"},
    {"minutes": -5},
    {"minutes": 0},
    {"minutes": 10**30},
    {"minutes": 1.5},
    {"minutes": True},
    {"extra": "topping", "quantity": 10**6},
    {"extra": "\ud800"},
    {"amount_cents": 0, "reason": "x"},
    {"amount_cents": 10**12, "reason": "x"},
    {"amount_cents": 100, "reason": " "},
    {"member_id": -1},
    {"member_id": 2**63},
    {"card_uid": "zz", "member_id": 1},
    {"year": 1066, "amount_cents": 1000},
    {"year": 2026, "amount_cents": -1},
    {"name": ""},
    {"name": "a\u0007b"},
    {"kind": "vip", "name": "X"},
    {"uid": "not hex!"},
    {"close": "yes"},
]
UNKNOWN_FIELD = {"unexpected": "\ud800", "table\u0000": 10**30}
BAD_BODIES: list[bytes] = [*STRUCTURE, *(json.dumps(body).encode() for body in [*FIELDS, UNKNOWN_FIELD])]
BAD_QUERIES = [
    "open=maybe",
    "day=2026-13-45",
    "day=yesterday",
    "limit=-1",
    "limit=99999999999999999999",
    "first=2026-01-31&last=2026-01-01",
    "first=1900-01-01&last=2900-01-01",
    "first=x",
    "last=2026-02-30",
    "q=%00",
    "q=%27%20OR%201%3D1%20--",
    "table=%00",
    "day=2026-02-30",
    "all=maybe",
]


BAD_IDS = ["0", "-1", "abc", "1.5", "99999999999999999999", "%00", "%27%3B%20DROP%20TABLE%20sessions%3B--"]


def body_fields(route: APIRoute) -> set[str] | None:
    """The fields of the route's JSON body model (all strict, unknown fields forbidden), or None
    when it takes no JSON body (none at all, or a raw one such as the members' CSV)."""
    fields: set[str] = set()
    for param in route.dependant.body_params:
        for model in get_args(param.field_info.annotation) or (param.field_info.annotation,):
            config = getattr(model, "model_config", None)
            if config is None:
                continue  # None, in an optional body
            assert config.get("extra") == "forbid" and config.get("strict"), f"{model.__name__} accepts what it does not know"
            fields |= set(model.model_fields)
    return fields if route.dependant.body_params else None


def bodies_for(route: APIRoute, structure: list[bytes] = STRUCTURE) -> list[bytes]:
    """The garbage a route's body gets: all of it for a raw body (the CSV import parses whatever
    comes); for a JSON body, the structural garbage, one unknown field, and every wrong field it
    has; for a route that reads no body, the structural garbage (it must not start reading one)."""
    fields = body_fields(route)
    if fields is None:
        return BAD_BODIES if route.openapi_extra else structure
    own = [body for body in FIELDS if fields & set(body)]
    return [*structure, *(json.dumps(body).encode() for body in [*own, UNKNOWN_FIELD])]


def queries_for(route: APIRoute) -> list[str]:
    """The bad queries that name the route's own parameters (it ignores any other), or, for a route
    without any, one it must ignore."""
    names = {p.alias for p in route.dependant.query_params}
    own = [q for q in BAD_QUERIES if names & {part.split("=", 1)[0] for part in q.split("&")}]
    return own or BAD_QUERIES[:1]


def _requests(
    method: str, template: str, route: APIRoute, sid: int, mid: int, structure: list[bytes] = STRUCTURE
) -> Iterator[tuple[str, None] | tuple[str, bytes]]:
    """(url, body) pairs: garbage bodies or queries on the real path, then garbage in each path parameter."""
    concrete = template.replace("{session_id}", str(sid)).replace("{member_id}", str(mid)).replace("{alert_id}", "1")
    concrete = concrete.replace("{table_id}", "pool-01").replace("{table}", "foos-01").replace("{uid}", "0a0b0c0d")
    if method == "GET":
        yield from ((f"{concrete}?{q}", None) for q in queries_for(route))
    else:
        yield from ((concrete, body) for body in bodies_for(route, structure))
    for name in re.findall(r"\{([^}]+)\}", template):
        for bad in BAD_IDS:
            yield re.sub(r"\{[^}]+\}", "1", template.replace("{" + name + "}", bad)), None


def test_every_route_refuses_garbage_with_a_4xx_and_changes_nothing(api: Api) -> None:
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]

    def _write(db: Any) -> int:
        mid = add_member(db, "Ambra Tomáš", actor="test").id
        return mid

    mid = on_writer(api.service, _write)

    def counts() -> list[Any]:
        with api.service.store.reader() as db:
            return [db.scalar(select(func.count()).select_from(t)) for t in (GameOp, Member, AuditEntry)]

    before = counts()
    seen_500, unreadable = [], []
    # Broken JSON, a wrong JSON type, a body over the route's limit: refused before any database is
    # read (the parser, the body limit, the model's type), the same on both; PostgreSQL gets what
    # reaches a database (its ints are 4 or 8 bytes, it refuses NUL): wrong fields, queries, ids.
    structure = STRUCTURE if api.service.store.engine.dialect.name == "sqlite" else []
    for method, template, route in api_routes():
        if template.endswith(("/stop", "/pause", "/resume", "/shifts/clock-in")):
            continue  # they take no body, so no input can be wrong but the id (checked below; clocking in has none: it is who asks)
        for url, body in _requests(method, template, route, sid, mid, structure):
            r = api.client.request(method, url, headers={**api.manager, "Content-Type": "application/json"}, content=body)
            if r.status_code >= 500:
                seen_500.append((method, url, body, r.status_code))
            elif r.status_code >= 400 and not (isinstance(r.json().get("detail"), str) and r.json()["detail"]):
                unreadable.append((method, url, r.text))
    for action in ("stop", "pause", "resume"):
        for bad in BAD_IDS:
            assert 400 <= api.client.post(f"/api/sessions/{bad}/{action}", headers=api.staff).status_code < 500
    assert seen_500 == [] and unreadable == []
    assert counts() == before
    assert api.ok("GET", f"/api/sessions/{sid}")["state"] == "running"


def test_validation_messages_name_the_field(api: Api) -> None:
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]
    r = api.client.post(f"/api/sessions/{sid}/extend", headers=api.staff, json={"minutes": -5})
    assert r.status_code == 422 and r.json()["detail"].startswith("minutes: Input should be greater than or equal to 1")
    r = api.client.post(f"/api/sessions/{sid}/extend", headers=api.staff, json={"minutes": "5"})
    assert r.status_code == 422 and "minutes: Input should be a valid integer" in r.json()["detail"]
    r = api.client.post("/api/sessions", headers={**api.staff, "Content-Type": "application/json"}, content=b"{")
    assert r.status_code == 422 and "not valid JSON" in r.json()["detail"]
    r = api.client.post("/api/sessions", headers=api.staff, json={"table": "pool-02\u0000"})
    assert r.status_code == 422 and "table: contains a control character" in r.json()["detail"]
    r = api.client.get("/api/sessions/99999999999999999999", headers=api.staff)
    assert r.status_code == 422 and "session_id" in r.json()["detail"]
    r = api.client.get("/api/tables/'; DROP TABLE sessions; --", headers=api.staff)
    assert r.status_code == 404 and "no table" in r.json()["detail"]
    assert api.ok("GET", "/api/tables/pool-01")["session"]["id"] == sid


# Core-schema types that a parsed JSON body (dicts, lists, str, int, float, bool, None) can never be
# in strict mode: FastAPI validates the body after json.loads, in Python mode, where `[0, 0]` is a
# list and not a tuple, "2026-12-04" a str and not a date. Such a field needs strict=False for its
# container or its parsing (its items stay strict), or no JSON value passes it.
PYTHON_ONLY = {"tuple", "set", "frozenset", "date", "datetime", "time", "timedelta", "decimal", "uuid", "bytes", "enum"}


def _unreachable(node: object, where: str) -> Iterator[str]:
    if isinstance(node, dict):
        if node.get("type") in PYTHON_ONLY and node.get("strict") is not False:
            yield f"{where}: {node['type']}"
        if node.get("type") == "model-fields":
            for name, field in node["fields"].items():
                yield from _unreachable(field, f"{where}.{name}" if where else name)
            return
        for key, value in node.items():
            if key not in ("metadata", "serialization", "json_schema_input_schema"):  # not what validates
                yield from _unreachable(value, where)
    elif isinstance(node, list):
        for value in node:
            yield from _unreachable(value, where)


def unreachable_fields(model: type) -> list[str]:
    return list(_unreachable(getattr(model, "__pydantic_core_schema__", {}), ""))


def test_every_body_field_can_be_given_in_json() -> None:
    found = []
    for method, path, route in api_routes():
        for param in route.dependant.body_params:
            for model in get_args(param.field_info.annotation) or (param.field_info.annotation,):
                found += [f"{method} {path} {model.__name__} {f}" for f in unreachable_fields(model)]
    assert found == []


def test_the_walk_finds_a_field_no_json_can_give() -> None:
    class Tap(Body):
        seen: tuple[int, int] | None = None

    assert unreachable_fields(Tap) == ["seen: tuple"]
