"""The centre's records API and its scoping, in process on PostgreSQL: each (hall, seq) applied once,
a hall's credential good for its own records only, a hall manager seeing only their hall (API and
pages), bad batches refused whole. The figures: the Z report's own rules over the applied records."""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, date, datetime

import pytest
from fastapi.testclient import TestClient

from broker.accounts.login_throttle import ThrottlePolicy
from broker.central.accounts import add_hall, add_user
from broker.central.service import Central
from broker.domain.receipt import ReceiptLine
from broker.domain.venue_layout import VENUE_TOPIC, venue_layout
from broker.domain.zreport import PaymentRecord, payment_to_json
from broker.storage.engine import open_store
from broker.storage.models import CentralHall
from dashboard.web.central.app import MAX_BODY, build_central_app
from tests.support.centre import hall_venue
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


def _log_in(client, user: str, password: str, next_path: str = "/"):
    page = client.get("/login")
    csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    return client.post(
        "/login", data={"username": user, "password": password, "csrf_token": csrf, "next": next_path}, follow_redirects=False
    )


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
    r = _log_in(client, "jan", "manager-pass")
    assert r.status_code == 303
    home = client.get("/")
    assert "Lavos Krasňany" in home.text and "Petržalka" not in home.text
    assert client.get("/halls/b").status_code == 404
    hall = client.get("/halls/a?month=2026-12")
    assert hall.status_code == 200 and "7,00" in hall.text
    assert client.get("/halls/a?month=nonsense").status_code == 400


def test_a_login_form_without_its_token_is_refused(centre):
    client, _, _ = centre
    r = client.post("/login", data={"username": "jan", "password": "manager-pass", "csrf_token": "forged"}, follow_redirects=False)
    assert r.status_code == 403
    assert client.get("/", follow_redirects=False).status_code == 303


def test_a_seq_the_centre_holds_with_another_record_is_refused_whole(centre):
    """The hall's database restored from a backup numbers new records from the backup's last seq:
    the centre must not take new money for a copy of the old (it acknowledged it and dropped it)."""
    client, tokens, _ = centre
    assert _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(1, 500))])[0] == 200
    restored = [_rec(1, "payment", _payment(1, 800)), _rec(2, "payment", _payment(2, 300))]  # seq 1 again, another payment
    status, body = _post(client, tokens["a"], "a", restored)
    assert status == 409 and body["centre_last_seq"] == 1 and "restored from a backup" in body["detail"]
    month = client.get("/api/central/halls/a/takings?month=2026-12", headers=_basic("eva", "operator-pass")).json()
    assert month["total_cents"] == 500  # nothing of the refused batch, not even seq 2
    assert _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(1, 500))])[1]["duplicates"] == 1  # a true copy is still a copy


def test_pages_and_answers_carry_the_security_headers(centre):
    client, _, _ = centre
    page = client.get("/login")
    assert (
        "default-src 'self'" in page.headers["content-security-policy"]
        and "frame-ancestors 'none'" in page.headers["content-security-policy"]
    )
    api = client.get("/api/central/halls")
    assert api.status_code == 401 and "default-src 'none'" in api.headers["content-security-policy"]
    for r in (page, api):
        assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"


def test_a_body_streaming_past_the_cap_is_cut_there_not_read_whole(centre):
    """A chunked body, no length declared, no credential: read only up to the cap, then 413."""
    client, _, _ = centre
    app = client.app
    chunk = b"x" * 65536
    taken: list[int] = []
    sent: list[dict] = []

    async def receive() -> dict:
        taken.append(len(chunk))
        return {"type": "http.request", "body": chunk, "more_body": len(taken) < 1000}  # 64 MiB on offer

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "path": "/api/central/records",
        "raw_path": b"/api/central/records",
        "query_string": b"",
        "headers": [(b"transfer-encoding", b"chunked"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 80),
        "scheme": "http",
        "root_path": "",
        "app": app,
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 413
    assert sum(taken) <= MAX_BODY + len(chunk)  # it stopped reading at the cap


def test_guessing_a_centre_password_waits_and_a_flood_cannot_hash_on_every_core(centre):
    """The hall's throttle (broker.accounts.login_throttle): a few free mistakes for one account from
    one address, then a wait in which even the right password is refused without a hash."""
    client, _, _ = centre
    for _ in range(ThrottlePolicy().account_free + 1):
        assert client.get("/api/central/halls", headers=_basic("eva", "guess")).status_code == 401
    page = _log_in(client, "eva", "operator-pass")
    assert page.status_code == 429 and "Príliš veľa neúspešných pokusov" in page.text  # the page in Slovak
    r = client.get("/api/central/halls", headers=_basic("eva", "operator-pass"))
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1


def test_the_login_goes_back_only_to_a_page_of_the_centre(centre):
    client, _, _ = centre
    for evil in ("/\\evil.example", "//evil.example", "https://evil.example/"):
        r = _log_in(client, "eva", "operator-pass", evil)
        assert r.status_code == 303 and r.headers["location"] == "/", evil
    assert _log_in(client, "eva", "operator-pass", "/alerts").headers["location"] == "/alerts"


def test_the_overview_names_tables_shows_their_modules_and_a_hall_never_connected(centre):
    client, _, central = centre
    floors = central.floors  # fed as the live subscriber feeds it (tests/central/test_two_halls.py: through real bridges)
    floors.apply(f"hall/a/{VENUE_TOPIC}", venue_layout(hall_venue("a")))
    floors.apply("hall/a/lavos/v1/table/pool-01/status", b'{"state":"online"}')
    floors.apply("hall/a/lavos/v1/table/pool-02/status", b'{"state":"offline"}')
    floors.apply("hall/a/lavos/v1/ha/pool-01/state", b'{"amount":"2.40","amount_cents":240,"state":"running"}')
    _log_in(client, "eva", "operator-pass")
    home = client.get("/")
    a, b = home.text.split('data-hall="a"')[1].split('data-hall="b"')
    assert "Pool 1" in a and ">pool-01<" not in a  # the hall's names, not its ids
    assert "Pripojené moduly pri stoloch: 1 z 14" in a and "odpojený" in a and "ešte sa nepripojil" in a  # node health
    assert "hrá sa 2,40" in a
    assert "herňa sa ešte nepripojila" in b and "lavos server --central" in b  # what the operator is to do


def test_the_overview_says_since_when_a_halls_link_is_down(centre):
    """ "Lavos Petržalka: bez spojenia od 19:42": the time of the change, kept by a repeated "0" (the
    bridge's will and a restarted broker both say it again), stored so a restart of the centre keeps it."""
    client, _, central = centre
    floors = central.floors
    floors.apply("hall/b/bridge/state", b"1")
    floors.apply("hall/b/bridge/state", b"0")
    with central.store.session() as db:  # the drop at 19:42 in Bratislava, as the bridge's will said it then
        db.get(CentralHall, "b").link_changed_at = datetime(2026, 12, 4, 18, 42, tzinfo=UTC)
    floors.apply("hall/b/bridge/state", b"0")  # said again later: still the first time
    _log_in(client, "eva", "operator-pass")
    a, b = client.get("/").text.split('data-hall="a"')[1].split('data-hall="b"')
    assert "Lavos Petržalka" in b and 'data-link="down"' in b and "bez spojenia od" in b and "19:42" in b
    assert 'data-link="never"' in a and "herňa sa ešte nepripojila" in a
    floors.apply("hall/b/bridge/state", b"1")
    assert 'data-link="up"' in client.get("/").text.split('data-hall="b"')[1]
