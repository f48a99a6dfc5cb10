"""The centre's records API and its scoping, in process on PostgreSQL: each (hall, seq) applied once,
a hall's credential good for its own records only, a hall manager seeing only their hall (API and
pages), bad batches refused whole. The figures: the Z report's own rules over the applied records."""

from __future__ import annotations

import asyncio
import base64
import json
import random
import re
from collections.abc import Callable, Iterator, MutableMapping
from datetime import UTC, date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, cast

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import event, func, select

from broker.accounts.login_throttle import ThrottlePolicy
from broker.central.accounts import add_hall, add_user
from broker.central.service import Central
from broker.domain.central_records import FIRST_YEAR, LAST_YEAR, MAX_KEY, payment_doc
from broker.domain.euros import MAX_AMOUNT_CENTS
from broker.domain.refusals import from_doc
from broker.domain.till.receipt import ReceiptLine
from broker.domain.till.zreport import DayOpening, Method, PaymentRecord, payment_from_json, payment_to_json, to_json, z_report
from broker.domain.venue_layout import VENUE_TOPIC, venue_layout
from broker.storage.engine import open_store
from broker.storage.models import CentralHall, CentralRecord
from dashboard.web.central.app import FULL_FLOORS_UPTO, MAX_BODY, build_central_app, today
from dashboard.web.i18n import refusal_text
from tests.support.centre import hall_venue
from tests.support.matching import some
from tests.support.sqlite_template import CHEAP

if TYPE_CHECKING:
    import starlette.testclient

    from tests.support.postgres import PostgresCluster


DAY = date(2026, 12, 4)


@pytest.fixture
def centre(
    postgres_cluster: PostgresCluster, postgres_template: str
) -> Iterator[tuple[starlette.testclient.TestClient, dict[str, str], Central]]:
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


def _payment(pid: int, cents: int, method: str = "cash", reverses: int | None = None, day: date = DAY) -> dict[str, Any]:
    line = ReceiptLine("Pool 1", "Pool 1", 1, cents, cents, 23, "table_time")
    at = datetime(day.year, day.month, day.day, 19, tzinfo=UTC)
    rec = PaymentRecord(pid, method, cents, "jana", at, pid, "Pool 1", 1, (line,), reverses_id=reverses, day=day)
    cash = method == "cash"
    return payment_to_json(rec) | {
        "business_day": day.isoformat(),
        "method_name": "Hotovosť" if cash else "Karta",
        "method_name_en": "Cash" if cash else "Card",
        "cash": cash,
        "fallback_vat": 23,
    }


def _zreport(day: date, payments: list[dict[str, Any]]) -> dict[str, Any]:
    """A closed day's record as the hall sends it: its Z report of these payment records, frozen."""
    methods = [Method("cash", "Hotovosť", "Cash", True), Method("card", "Karta", "Card", False)]
    at = datetime(day.year, day.month, day.day, 23, tzinfo=UTC)
    z = z_report(
        DayOpening(day, None, "", 0),
        [payment_from_json(p) for p in payments],
        methods,
        made_at=at,
        fallback_vat=23,
        closed_by="boss",
        counted_cents=0,
    )
    return {"day": day.isoformat(), "report": to_json(z)}


def _rec(seq: int, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"seq": seq, "kind": kind, "ref": f"{kind}:{seq}", "at": "2026-12-04T19:00:00+00:00", "data": data}


def _post(client: Any, token: str, hall: str, records: list[Any]) -> tuple[int, dict[str, Any]]:
    r = client.post("/api/central/records", json={"hall": hall, "records": records}, headers={"Authorization": f"Bearer {token}"})
    return r.status_code, r.json()


def _log_in(client: Any, user: str, password: str, next_path: str = "/") -> Any:
    page = client.get("/login")
    csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    return client.post(
        "/login", data={"username": user, "password": password, "csrf_token": csrf, "next": next_path}, follow_redirects=False
    )


def _basic(user: str, password: str) -> dict[str, Any]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_each_record_is_applied_once_and_the_figures_are_the_z_reports(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
    client, tokens, _ = centre
    batch = [
        _rec(1, "payment", _payment(10, 900)),
        _rec(2, "payment", _payment(11, -900, reverses=10)),
        _rec(3, "payment", _payment(12, 1250, "card")),
    ]
    assert _post(client, tokens["a"], "a", batch) == (200, {"acked": 3, "applied": 3, "duplicates": 0})
    # The same batch again (the hall never heard the answer), and one overlapping it: nothing twice.
    assert _post(client, tokens["a"], "a", batch) == (200, {"acked": 3, "applied": 0, "duplicates": 3})
    z = _zreport(DAY, [_payment(12, 1250, "card")])
    assert _post(client, tokens["a"], "a", [batch[2], _rec(4, "zreport", z)]) == (200, {"acked": 4, "applied": 1, "duplicates": 1})
    month = client.get("/api/central/halls/a/takings?month=2026-12", headers=_basic("eva", "operator-pass")).json()
    (day,) = month["days"]
    assert (day["total_cents"], day["reversals_cents"], day["payments_count"], day["hall_z_cents"]) == (1250, -900, 2, 1250)
    assert {m["method"]: m["cents"] for m in day["by_method"]} == {"cash": 0, "card": 1250}
    assert month["total_cents"] == 1250


def test_a_halls_credential_posts_only_its_own_records(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
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
def test_a_bad_batch_is_refused_whole(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central], records: Any) -> None:
    client, tokens, _ = centre
    status, body = _post(client, tokens["a"], "a", records)
    assert status == 400 and body["detail"]
    assert _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(1, 100))])[1]["applied"] == 1


def test_a_huge_body_is_refused_before_it_is_read(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
    client, tokens, _ = centre
    r = client.post("/api/central/records", content=b"x" * (3 * 1024 * 1024), headers={"Authorization": f"Bearer {tokens['a']}"})
    assert r.status_code == 413


def test_a_hall_manager_sees_only_their_hall(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
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
        "acked_at": None,
        "closed_at": None,
    }
    assert _post(client, tokens["b"], "b", [_rec(2, "alert", alert)])[0] == 200
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


def test_a_login_form_without_its_token_is_refused(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
    client, _, _ = centre
    r = client.post("/login", data={"username": "jan", "password": "manager-pass", "csrf_token": "forged"}, follow_redirects=False)
    assert r.status_code == 403
    assert client.get("/", follow_redirects=False).status_code == 303


def test_a_seq_the_centre_holds_with_another_record_is_refused_whole(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
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


def test_pages_and_answers_carry_the_security_headers(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
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


def test_a_body_streaming_past_the_cap_is_cut_there_not_read_whole(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
    """A chunked body, no length declared, no credential: read only up to the cap, then 413."""
    client, _, _ = centre
    app = cast(FastAPI, client.app)  # build_central_app's
    chunk = b"x" * 65536
    taken: list[int] = []
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        taken.append(len(chunk))
        return {"type": "http.request", "body": chunk, "more_body": len(taken) < 1000}  # 64 MiB on offer

    async def send(message: MutableMapping[str, Any]) -> None:
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


def test_guessing_a_centre_password_waits_and_a_flood_cannot_hash_on_every_core(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
    """The hall's throttle (broker.accounts.login_throttle): a few free mistakes for one account from
    one address, then a wait in which even the right password is refused without a hash."""
    client, _, _ = centre
    for _ in range(ThrottlePolicy().account_free + 1):
        assert client.get("/api/central/halls", headers=_basic("eva", "guess")).status_code == 401
    page = _log_in(client, "eva", "operator-pass")
    assert page.status_code == 429 and "Príliš veľa neúspešných pokusov" in page.text  # the page in Slovak
    r = client.get("/api/central/halls", headers=_basic("eva", "operator-pass"))
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1


def test_the_login_goes_back_only_to_a_page_of_the_centre(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
    client, _, _ = centre
    for evil in ("/\\evil.example", "//evil.example", "https://evil.example/"):
        r = _log_in(client, "eva", "operator-pass", evil)
        assert r.status_code == 303 and r.headers["location"] == "/", evil
    assert _log_in(client, "eva", "operator-pass", "/alerts").headers["location"] == "/alerts"


def test_the_overview_names_tables_shows_their_modules_and_a_hall_never_connected(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
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


def test_the_overview_says_since_when_a_halls_link_is_down(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
    """ "Lavos Petržalka: bez spojenia od 19:42": the time of the change, kept by a repeated "0" (the
    bridge's will and a restarted broker both say it again), stored so a restart of the centre keeps it."""
    client, _, central = centre
    floors = central.floors
    floors.apply("hall/b/bridge/state", b"1")
    floors.apply("hall/b/bridge/state", b"0")
    with central.store.session() as db:  # the drop at 19:42 in Bratislava, as the bridge's will said it then
        some(db.get(CentralHall, "b")).link_changed_at = datetime(2026, 12, 4, 18, 42, tzinfo=UTC)
    floors.apply("hall/b/bridge/state", b"0")  # said again later: still the first time
    _log_in(client, "eva", "operator-pass")
    a, b = client.get("/").text.split('data-hall="a"')[1].split('data-hall="b"')
    assert "Lavos Petržalka" in b and 'data-link="down"' in b and "bez spojenia od" in b and "19:42" in b
    assert 'data-link="never"' in a and "herňa sa ešte nepripojila" in a
    floors.apply("hall/b/bridge/state", b"1")
    assert 'data-link="up"' in client.get("/").text.split('data-hall="b"')[1]


# -- issue 29: what the centre takes, and what its pages read ----------------------------------


def _pages_answer(client: Any, hall: str = "a", month: str | None = None) -> None:
    """Every page and JSON answer of the centre that shows `hall`'s records answers 200, for an operator."""
    eva = _basic("eva", "operator-pass")
    query = f"?month={month}" if month else ""
    for path in ("/api/central/halls", f"/api/central/halls/{hall}/takings{query}", f"/api/central/takings{query}", "/api/central/alerts"):
        assert client.get(path, headers=eva).status_code == 200, path
    _log_in(client, "eva", "operator-pass")
    for path in ("/", f"/halls/{hall}{query}", "/alerts"):
        assert client.get(path).status_code == 200, path


def _stored(central: Any) -> int:
    with central.store.reader() as db:
        result: int = db.scalar(select(func.count()).select_from(CentralRecord))
        return result


def test_a_record_that_is_not_a_whole_payment_is_refused_and_every_page_still_answers(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
    """Issue 29, item 6: a payment with only its id, day and amount was applied (200) and then the
    overview, the hall's page and its takings answered 500 for everyone, until the row was removed by hand."""
    client, tokens, central = centre
    day = today().isoformat()
    partial = {
        "seq": 1,
        "kind": "payment",
        "ref": "payment:777",
        "at": "2026-12-04T19:00:00+00:00",
        "data": {"id": 777, "business_day": day, "amount_cents": 100},
    }
    status, body = _post(client, tokens["a"], "a", [partial])
    assert status == 400 and [r["seq"] for r in body["refused"]] == [1] and "method" in body["refused"][0]["detail"]
    assert _stored(central) == 0
    _pages_answer(client)
    # The hall's own record of the same payment, whole, is taken and shown.
    assert _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(777, 100, day=today()))])[0] == 200
    _pages_answer(client)
    assert "1,00" in client.get("/halls/a").text


def _raw_post(client: Any, token: str, body: str) -> Any:
    return client.post(
        "/api/central/records", content=body.encode(), headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    )


def _batch_text(payment_text: str) -> str:
    return (
        '{"hall": "a", "records": [{"seq": 1, "kind": "payment", "ref": "payment:1", "at": "2026-12-04T19:00:00+00:00", "data": '
        + payment_text
        + "}]}"
    )


MALFORMED = {
    "amount 10^20": _batch_text(json.dumps(_payment(1, 100) | {"amount_cents": 10**20})),
    "amount 1e400": _batch_text(json.dumps(_payment(1, 100)).replace('"amount_cents": 100,', '"amount_cents": 1e400,', 1)),
    "amount 2^31": _batch_text(json.dumps(_payment(1, 100) | {"amount_cents": 2**31})),  # the centre's columns are 32-bit
    "a NUL in a text": _batch_text(json.dumps(_payment(1, 100) | {"tab": "Bar A\u0000B"})),
    "seq 2^63": _batch_text(json.dumps(_payment(1, 100))).replace('"seq": 1', f'"seq": {2**63}'),
    "100,000-deep batch": '{"hall": "a", "records": [' + "[" * 100_000 + "]" * 100_000 + "]}",
    "100,000-deep data": _batch_text("[" * 100_000 + "]" * 100_000),
}


def test_a_malformed_batch_is_a_400_and_keeps_nothing(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
    """Issue 29, item 7: each of these answered 500 (the docs say 400)."""
    client, tokens, central = centre
    for what, body in MALFORMED.items():
        r = _raw_post(client, tokens["a"], body)
        assert r.status_code == 400 and r.json()["detail"], (what, r.text[:300])
        assert _stored(central) == 0, what
    assert _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(1, 100))])[1]["applied"] == 1  # the hall's next try


def test_a_payment_is_kept_once_by_what_it_is_not_by_its_seq(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
    """Issue 29, item 12: the same payment id under seq+1 with 9 900,00 € was applied over the 10,00 €."""
    client, tokens, central = centre
    eva = _basic("eva", "operator-pass")

    def takings() -> int:
        result: int = client.get("/api/central/halls/a/takings?month=2026-12", headers=eva).json()["total_cents"]
        return result

    assert _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(777, 1000))])[0] == 200
    status, body = _post(client, tokens["a"], "a", [_rec(2, "payment", _payment(777, 990_000))])
    assert status == 400 and [r["seq"] for r in body["refused"]] == [2] and "reversal" in body["refused"][0]["detail"]
    assert takings() == 1000 and _stored(central) == 1
    # The same payment again under a new seq (a hall's export that saw it twice) is a copy, not new money.
    assert _post(client, tokens["a"], "a", [_rec(2, "payment", _payment(777, 1000))]) == (200, {"acked": 2, "applied": 0, "duplicates": 1})
    assert takings() == 1000
    # A correction is a record of its own: the reversal, then the right amount.
    back = _rec(3, "payment", _payment(778, -1000, reverses=777))
    assert _post(client, tokens["a"], "a", [back, _rec(4, "payment", _payment(779, 990))])[1]["applied"] == 2
    assert takings() == 990
    # A closed day is a fact too: its Z report again with another total is refused.
    z = _zreport(DAY, [_payment(777, 1000), _payment(778, -1000, reverses=777), _payment(779, 990)])
    assert _post(client, tokens["a"], "a", [_rec(5, "zreport", z)])[0] == 200
    other = _zreport(DAY, [_payment(779, 5000)])
    assert _post(client, tokens["a"], "a", [_rec(6, "zreport", other)])[0] == 400
    assert client.get("/api/central/halls/a/takings?month=2026-12", headers=eva).json()["days"][0]["hall_z_cents"] == 990
    with central.store.reader() as db:
        hall = db.get(CentralHall, "a")
        assert hall is not None
        assert (hall.refused, hall.last_seq, hall.received) == (2, 5, 5)  # each refusal counted, none held


def test_a_payment_held_with_other_content_is_refused_naming_what_differs_in_the_reader_s_language(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
    """Issue 29's independent check: the same payment id with only another method or day said
    "(10,00 € held, 10,00 € sent)", in English on the Slovak pages of both ends. Now each field
    that differs is named, held → sent, and the answer carries the reason as a message id with its
    params (`why`), which the hall's page says in Slovak."""
    client, tokens, _ = centre
    later = DAY + timedelta(days=1)
    assert _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(777, 1000))])[0] == 200
    status, body = _post(client, tokens["a"], "a", [_rec(2, "payment", _payment(777, 1000, method="card"))])
    (refused,) = body["refused"]
    assert status == 400 and "method cash → card" in refused["detail"] and "10,00\xa0€ held" not in refused["detail"], refused
    said = refusal_text(from_doc(refused["why"]), "sk")
    assert said.startswith("platba č. 777 je uložená s iným obsahom (čo sa líši, uložené → poslané: method cash → card, "), said
    assert "storno" in said and not re.search(r"\b(held|sent|payment|what|taken|changed)\b", said), said
    detail = _post(client, tokens["a"], "a", [_rec(2, "payment", _payment(777, 1000, day=later))])[1]["refused"][0]["detail"]
    assert f"business_day {DAY.isoformat()} → {later.isoformat()}" in detail, detail
    # A record that is not a payment's shape: pydantic's English is not what a page says.
    refused = _post(client, tokens["a"], "a", [_rec(2, "payment", {"id": 778})])[1]["refused"][0]
    assert refused["detail"] == "payment: method: missing" and refusal_text(from_doc(refused["why"]), "sk") == "platba: method: chýba"


def test_an_amount_the_hall_would_never_take_is_refused(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
    """Issue 29, items 13 and 14: by the hall's own rules (broker.domain.euros.MAX_AMOUNT_CENTS, a
    payment positive, its reversal negative); 12.5 cents was taken and then broke the pages."""
    client, tokens, central = centre
    for amount in (MAX_AMOUNT_CENTS + 1, 1_000_000_000, -1_000_000_000, True, False, 12.5, "100", 0, -100):
        status, body = _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(1, 100, day=today()) | {"amount_cents": amount})])
        assert status == 400 and body["refused"][0]["seq"] == 1, (amount, body)
        assert _stored(central) == 0, amount
    _pages_answer(client)


def test_the_hall_s_cap_itself_is_taken_and_shown(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
    client, tokens, _ = centre
    big = [
        _rec(1, "payment", _payment(1, MAX_AMOUNT_CENTS, day=today())),
        _rec(2, "payment", _payment(2, -MAX_AMOUNT_CENTS, reverses=1, day=today())),
    ]
    assert _post(client, tokens["a"], "a", big)[1]["applied"] == 2
    _pages_answer(client)


def test_the_overview_adds_up_every_hall_and_the_halls_api_carries_takings(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
    """Issue 29, item 14: the owner added three numbers by hand; the halls API had no takings."""
    client, tokens, _ = centre
    now = today()
    _post(client, tokens["a"], "a", [_rec(1, "payment", _payment(1, 1250, day=now)), _rec(2, "payment", _payment(2, 300, "card", day=now))])
    _post(client, tokens["b"], "b", [_rec(1, "payment", _payment(1, 4000, day=now))])
    eva = _basic("eva", "operator-pass")
    halls = {h["hall"]: h["takings"] for h in client.get("/api/central/halls", headers=eva).json()}
    assert halls["a"]["total_cents"] == 1550 and halls["b"]["total_cents"] == 4000 and halls["a"]["last_day"] == now.isoformat()
    every = client.get("/api/central/takings", headers=eva).json()
    assert every["total_cents"] == 5550 and every["last_day_cents"] == 5550 and [h["hall"] for h in every["halls"]] == ["a", "b"]
    _log_in(client, "eva", "operator-pass")
    table = client.get("/").text.split('id="all-halls"')[1].split("</table>")[0]
    assert "Všetky herne" in table and "55,50" in table and "15,50" in table and "40,00" in table
    # A hall manager's sum is their hall's alone.
    jan = client.get("/api/central/takings", headers=_basic("jan", "manager-pass")).json()
    assert jan["total_cents"] == 1550 and [h["hall"] for h in jan["halls"]] == ["a"]


def _statements(central: Any) -> tuple[list[str], Callable[..., Any]]:
    """The SQL the centre's store runs meanwhile (a list filled as it goes)."""
    seen: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: Any, *_args: Any) -> None:
        seen.append(statement)

    event.listen(central.store.engine, "before_cursor_execute", note)
    return seen, lambda: event.remove(central.store.engine, "before_cursor_execute", note)


def test_the_pages_read_daily_sums_never_the_records(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
    """Issue 29, item 15: the overview rebuilt every hall's month from its raw records on each load
    (6-8 s at 10 k payments a month) and counted every record ever received per hall."""
    client, tokens, central = centre
    now = today()
    _post(client, tokens["a"], "a", [_rec(n, "payment", _payment(n, 100 * n, day=now)) for n in range(1, 21)])
    _log_in(client, "eva", "operator-pass")
    eva = _basic("eva", "operator-pass")
    client.get("/api/central/halls", headers=eva)  # the login's credential check once, outside the count
    seen, stop = _statements(central)
    try:
        for path in ("/", "/halls/a"):
            assert client.get(path).status_code == 200
        for path in ("/api/central/halls", "/api/central/takings", "/api/central/halls/a/takings"):
            assert client.get(path, headers=eva).status_code == 200
    finally:
        stop()
    assert seen and not [s for s in seen if "central_records" in s or "central_payments" in s]
    assert "210,00" in client.get("/").text  # 1 + 2 + … + 20 euros


def test_the_centre_s_day_is_the_hall_s_z_report_to_the_cent(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
    """The daily sums kept as records arrive, in batches, equal the Z report of the same records
    (the hall's own function): total, payments, refunds and each method, on every day."""
    client, tokens, _ = centre
    rng = random.Random(29)
    days = [DAY, date(2026, 12, 5), date(2026, 12, 6)]
    payments: list[dict[str, Any]] = []
    for pid in range(1, 121):
        day = rng.choice(days)
        cents = rng.randint(1, 50_000)
        payments.append(_payment(pid, cents, rng.choice(["cash", "card"]), day=day))
        if rng.random() < 0.2:  # a refund, on its own day or a later one
            payments.append(_payment(1000 + pid, -cents, payments[-1]["method"], reverses=pid, day=max(day, rng.choice(days))))
    records = [_rec(n, "payment", p) for n, p in enumerate(payments, 1)]
    for start in range(0, len(records), 17):  # batches of odd size
        assert _post(client, tokens["a"], "a", records[start : start + 17])[0] == 200
    month = client.get("/api/central/halls/a/takings?month=2026-12", headers=_basic("eva", "operator-pass")).json()
    methods = [Method("cash", "Hotovosť", "Cash", True), Method("card", "Karta", "Card", False)]
    for shown in month["days"]:
        day = date.fromisoformat(shown["day"])
        of_day = [payment_from_json(p) for p in payments if p["business_day"] == shown["day"]]
        z = z_report(DayOpening(day, None, "", 0), of_day, methods, made_at=datetime.now(UTC), fallback_vat=23)
        assert (shown["total_cents"], shown["payments_count"], shown["reversals_cents"]) == (
            z.total_cents,
            z.payments_count,
            z.reversals_cents,
        )
        assert {m["method"]: m["cents"] for m in shown["by_method"]} == {m.method: m.net_cents for m in z.by_method}
    assert len(month["days"]) == 3


def test_every_field_at_its_bounds_is_kept_and_shown(centre: tuple[starlette.testclient.TestClient, dict[str, str], Central]) -> None:
    """Every shape the centre takes, at the edges of what it takes (longest texts, largest keys and
    amounts, the first and last year, any zone), is stored and every page shows it (item 6)."""
    client, tokens, _ = centre
    long = "ž" * 2000
    edge = datetime(LAST_YEAR, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-12)))  # 2101 in UTC
    line = ReceiptLine(long, long, 1_000_000, MAX_AMOUNT_CENTS, MAX_AMOUNT_CENTS, 100, "c" * 32, (("c" * 32, MAX_AMOUNT_CENTS), ("d", 0)))
    pay = PaymentRecord(
        MAX_KEY, "m" * 32, MAX_AMOUNT_CENTS, "s" * 64, edge, MAX_KEY, "t" * 120, MAX_KEY, (line, line), reason=long, table="x" * 32
    )
    last_day = date(LAST_YEAR, 12, 31)
    payment = payment_doc(pay, business_day=last_day, method_name="n" * 120, method_name_en="e" * 120, cash=False, fallback_vat=0)
    first = datetime(FIRST_YEAR, 1, 1, tzinfo=timezone(timedelta(hours=14)))  # 1999 in UTC
    game = {
        "id": MAX_KEY,
        "table": "x" * 32,
        "table_name": long[:120],
        "started_at": first.isoformat(),
        "stopped_at": edge.isoformat(),
        "total_cents": -MAX_AMOUNT_CENTS,
    }
    alert = {
        "id": MAX_KEY,
        "kind": "k" * 32,
        "table": "x" * 32,
        "severity": "critical",
        "message": long,
        "message_en": long,
        "opened_at": first.isoformat(),
        "acked_at": edge.isoformat(),
        "closed_at": None,
    }
    records = [
        _rec(1, "payment", payment),
        _rec(2, "game", game),
        _rec(3, "alert", alert),
        _rec(4, "zreport", _zreport(last_day, [payment])),
    ]
    records[0]["ref"] = "r" * 64
    assert _post(client, tokens["a"], "a", records)[0] == 200
    _pages_answer(client, month=f"{LAST_YEAR}-12")
    assert "100\u00a0000,00" in client.get(f"/halls/a?month={LAST_YEAR}-12").text


def test_many_halls_get_a_line_each_and_their_tables_on_their_own_page(
    centre: tuple[starlette.testclient.TestClient, dict[str, str], Central],
) -> None:
    """Item 15's bench: 100 halls' 1,400 tables on the overview were a 250 kB page at 0.6-1.2 s. Past
    FULL_FLOORS_UPTO halls the overview gives each a line (modules, tables playing); its page the tables."""
    client, _, central = centre
    with central.store.session() as db:
        for n in range(FULL_FLOORS_UPTO - 1):  # with a and b: one hall more than the overview lists the tables of
            add_hall(db, f"h{n}", f"Lavos {n}")
    floors = central.floors
    floors.apply(f"hall/a/{VENUE_TOPIC}", venue_layout(hall_venue("a")))
    floors.apply("hall/a/lavos/v1/table/pool-01/status", b'{"state":"online"}')
    floors.apply("hall/a/lavos/v1/ha/pool-01/state", b'{"amount":"2.40","amount_cents":240,"state":"running"}')
    _log_in(client, "eva", "operator-pass")
    a = client.get("/").text.split('data-hall="a"')[1].split("</section>")[0]
    assert "Pripojené moduly pri stoloch: 1 z 14" in a and "hrá sa na stoloch: 1" in a and 'data-table="pool-01"' not in a
    assert 'data-table="pool-01"' in client.get("/halls/a").text and "hrá sa 2,40" in client.get("/halls/a").text
