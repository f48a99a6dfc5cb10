"""Garbage in, a 4xx with a readable detail out, on every route and both backends; never a 500, nothing changes.

The TestClient re-raises any unhandled server error, so a bug fails the test where it happens.
"""

from __future__ import annotations

import json
import re

from sqlalchemy import func, select

from broker.storage.members import add_member
from broker.storage.models import AuditEntry, GameOp, Member
from dashboard.api.app import api_routes
from tests.support.hub import on_writer

BAD_BODIES: list[bytes] = [
    b"{",
    b"[]",
    b"null",
    b'"text"',
    b"1e999",
    b"\xff\xfe",
    b'{"table": "pool-01"',
    b"{}" * 1000,
    *(
        json.dumps(body).encode()
        for body in [
            {"table": 5},
            {"table": None},
            {"table": ["pool-01"]},
            {"table": "pool-01\u0000"},
            {"table": "x" * 100_000},
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
    ),
]
BAD_QUERIES = [
    "open=maybe",
    "day=2026-13-45",
    "day=yesterday",
    "limit=-1",
    "limit=99999999999999999999",
    "from=2026-01-31&to=2026-01-01",
    "from=1900-01-01&to=2900-01-01",
    "from=x",
    "q=%00",
    "q=%27%20OR%201%3D1%20--",
    "table=%00",
    "day=2026-02-30",
]


BAD_IDS = ["0", "-1", "abc", "1.5", "99999999999999999999", "%00", "%27%3B%20DROP%20TABLE%20sessions%3B--"]


def _requests(method: str, template: str, sid: int, mid: int):
    """(url, body) pairs: garbage bodies or queries on the real path, then garbage in each path parameter."""
    concrete = template.replace("{session_id}", str(sid)).replace("{member_id}", str(mid)).replace("{alert_id}", "1")
    concrete = concrete.replace("{table_id}", "pool-01").replace("{table}", "foos-01").replace("{uid}", "0a0b0c0d")
    if method == "GET":
        yield from ((f"{concrete}?{q}", None) for q in BAD_QUERIES)
    else:
        yield from ((concrete, body) for body in BAD_BODIES)
    for name in re.findall(r"\{([^}]+)\}", template):
        for bad in BAD_IDS:
            yield re.sub(r"\{[^}]+\}", "1", template.replace("{" + name + "}", bad)), None


def test_every_route_refuses_garbage_with_a_4xx_and_changes_nothing(api):
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]

    def _write(db):
        mid = add_member(db, "Ambra Tomáš", actor="test").id
        return mid

    mid = on_writer(api.service, _write)

    def counts():
        with api.service.store.reader() as db:
            return [db.scalar(select(func.count()).select_from(t)) for t in (GameOp, Member, AuditEntry)]

    before = counts()
    seen_500, unreadable = [], []
    for method, template, _ in api_routes():
        if template.endswith(("/stop", "/pause", "/resume")):
            continue  # they take no body, so no input can be wrong but the id (checked below)
        for url, body in _requests(method, template, sid, mid):
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


def test_validation_messages_name_the_field(api):
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]
    r = api.client.post(f"/api/sessions/{sid}/extend", headers=api.staff, json={"minutes": -5})
    assert r.status_code == 422 and r.json()["detail"].startswith("minutes: Input should be greater than or equal to 1")
    r = api.client.post(f"/api/sessions/{sid}/extend", headers=api.staff, json={"minutes": "5"})
    assert r.status_code == 422 and "minutes: Input should be a valid integer" in r.json()["detail"]
    r = api.client.post("/api/sessions", headers={**api.staff, "Content-Type": "application/json"}, content=b"{")
    assert r.status_code == 422 and "not valid JSON" in r.json()["detail"]
    r = api.client.post("/api/sessions", headers=api.staff, json={"table": "pool-02\u0000"})
    assert r.status_code == 422 and "table: Value error, contains a control character" in r.json()["detail"]
    r = api.client.get("/api/sessions/99999999999999999999", headers=api.staff)
    assert r.status_code == 422 and "session_id" in r.json()["detail"]
    r = api.client.get("/api/tables/'; DROP TABLE sessions; --", headers=api.staff)
    assert r.status_code == 404 and "no table" in r.json()["detail"]
    assert api.ok("GET", "/api/tables/pool-01")["session"]["id"] == sid
