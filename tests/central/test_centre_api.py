"""The centre's records API and its scoping, in process on PostgreSQL: each (hall, seq) applied once,
a hall's credential good for its own records only, a hall manager seeing only their hall (API and
pages), bad batches refused whole. The figures: the Z report's own rules over the applied records."""

from __future__ import annotations

import base64
from datetime import UTC, date, datetime

import pytest
from fastapi.testclient import TestClient

from broker.central.accounts import add_hall, add_user
from broker.central.service import Central
from broker.domain.receipt import ReceiptLine
from broker.domain.zreport import PaymentRecord, payment_to_json
from broker.storage.engine import open_store
from dashboard.web.central.app import build_central_app
from tests.support.sqlite_template import CHEAP

DAY = date(2026, 12, 4)


@pytest.fixture
def centre(postgres_cluster, postgres_template):
    url = postgres_cluster.create_database(template=postgres_template)
    store = open_store(url)
    with store.session() as db:
        tokens = {"a": add_hall(db, "a", "Lavos Krasňany"), "b": add_hall(db, "b", "Lavos Petržalka")}
        add_user(db, "eva", "operator-pass", "operator", None, CHEAP)
        add_user(db, "jan", "manager-pass", "hall_manager", "a", CHEAP)
    central = Central(store, hasher=CHEAP)
    with TestClient(build_central_app(central, secret="s")) as client:
        yield client, tokens, central
    store.close()
    postgres_cluster.drop_database(url)


def _payment(pid: int, cents: int, method: str = "cash", reverses: int | None = None) -> dict:
    line = ReceiptLine("Pool 1", "Pool 1", 1, cents, cents, 23, "table_time")
    rec = PaymentRecord(pid, method, cents, "jana", datetime(2026, 12, 4, 19, tzinfo=UTC), pid, "Pool 1", 1, (line,), reverses_id=reverses)
    return payment_to_json(rec) | {
        "business_day": DAY.isoformat(),
        "method_name": "Hotovosť",
        "method_name_en": "Cash",
        "cash": True,
        "fallback_vat": 23,
    }


def _rec(seq: int, kind: str, data: dict) -> dict:
    return {"seq": seq, "kind": kind, "ref": f"{kind}:{seq}", "at": "2026-12-04T19:00:00+00:00", "data": data}


def _post(client, token: str, hall: str, records: list) -> tuple[int, dict]:
    r = client.post("/api/central/records", json={"hall": hall, "records": records}, headers={"Authorization": f"Bearer {token}"})
    return r.status_code, r.json()


def _basic(user: str, password: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_each_record_is_applied_once_and_the_figures_are_the_z_reports(centre):
    client, tokens, _ = centre
    batch = [
        _rec(1, "payment", _payment(10, 900)),
        _rec(2, "payment", _payment(11, -900, reverses=10)),
        _rec(3, "payment", _payment(12, 1250, "card")),
    ]
    assert _post(client, tokens["a"], "a", batch) == (200, {"acked": 3, "applied": 3, "duplicates": 0})
    # The same batch again (the hall never heard the answer), and one overlapping it: nothing twice.
    assert _post(client, tokens["a"], "a", batch) == (200, {"acked": 3, "applied": 0, "duplicates": 3})
    z = {"day": DAY.isoformat(), "report": {"total_cents": 1250}}
    assert _post(client, tokens["a"], "a", [batch[2], _rec(4, "zreport", z)]) == (200, {"acked": 4, "applied": 1, "duplicates": 1})
    month = client.get("/api/central/halls/a/takings?month=2026-12", headers=_basic("eva", "operator-pass")).json()
    (day,) = month["days"]
    assert (day["total_cents"], day["reversals_cents"], day["payments_count"], day["hall_z_cents"]) == (1250, -900, 2, 1250)
    assert {m["method"]: m["cents"] for m in day["by_method"]} == {"cash": 0, "card": 1250}
    assert month["total_cents"] == 1250


def test_a_halls_credential_posts_only_its_own_records(centre):
    client, tokens, _ = centre
    assert _post(client, tokens["b"], "a", [_rec(1, "payment", _payment(1, 500))])[0] == 403
    assert _post(client, "not-a-credential", "a", [_rec(1, "payment", _payment(1, 500))])[0] == 401
    assert _post(client, "", "a", [_rec(1, "payment", _payment(1, 500))])[0] == 401
    ok = client.get("/api/central/halls/a/takings?month=2026-12", headers=_basic("eva", "operator-pass")).json()
    assert ok["days"] == []  # nothing of B's reached A


@pytest.mark.parametrize(
    "records",
    [
        [],
        [_rec(0, "payment", {})],
        [_rec(1, "nonsense", {})],
        [{"seq": 1, "kind": "payment", "data": {}, "at": "yesterday"}],
        [_rec(1, "payment", _payment(1, 100)), _rec(2, "payment", {"id": "x"})],  # the second breaks: none applied
        "records",
    ],
)
def test_a_bad_batch_is_refused_whole(centre, records):
    client, tokens, _ = centre
    status, body = _post(client, tokens["a"], "a", records)
    assert status == 400 and body["detail"]
    assert _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(1, 100))])[1]["applied"] == 1


def test_a_huge_body_is_refused_before_it_is_read(centre):
    client, tokens, _ = centre
    r = client.post("/api/central/records", content=b"x" * (3 * 1024 * 1024), headers={"Authorization": f"Bearer {tokens['a']}"})
    assert r.status_code == 413


def test_a_hall_manager_sees_only_their_hall(centre):
    client, tokens, _ = centre
    _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(1, 700))])
    _post(client, tokens["b"], "b", [_rec(1, "payment", _payment(1, 300))])
    alert = {
        "id": 5,
        "kind": "node_offline",
        "table": "pool-01",
        "severity": "warning",
        "message": "Pool 1: modul",
        "message_en": "x",
        "opened_at": "2026-12-04T19:00:00+00:00",
    }
    _post(client, tokens["b"], "b", [_rec(2, "alert", alert)])
    jan = _basic("jan", "manager-pass")
    assert [h["hall"] for h in client.get("/api/central/halls", headers=jan).json()] == ["a"]
    assert client.get("/api/central/halls/b/takings", headers=jan).status_code == 404
    assert client.get("/api/central/alerts", headers=jan).json() == []
    eva = _basic("eva", "operator-pass")
    assert [h["hall"] for h in client.get("/api/central/halls", headers=eva).json()] == ["a", "b"]
    assert [a["hall"] for a in client.get("/api/central/alerts", headers=eva).json()] == ["b"]
    assert client.get("/api/central/halls", headers=_basic("jan", "wrong")).status_code == 401
    # The pages, logged in as the hall manager: their hall, not the other.
    page = client.get("/login")
    csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
    r = client.post("/login", data={"username": "jan", "password": "manager-pass", "csrf": csrf, "next": "/"}, follow_redirects=False)
    assert r.status_code == 303
    home = client.get("/")
    assert "Lavos Krasňany" in home.text and "Petržalka" not in home.text
    assert client.get("/halls/b").status_code == 404
    hall = client.get("/halls/a?month=2026-12")
    assert hall.status_code == 200 and "7,00" in hall.text
    assert client.get("/halls/a?month=nonsense").status_code == 400


def test_a_login_form_without_its_token_is_refused(centre):
    client, _, _ = centre
    r = client.post("/login", data={"username": "jan", "password": "manager-pass", "csrf": "forged"}, follow_redirects=False)
    assert r.status_code == 403
    assert client.get("/", follow_redirects=False).status_code == 303
