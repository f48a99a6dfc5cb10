"""The centre's pages at scale: 100 halls × a year of records, server time of what an operator loads.

    .venv/bin/python -m bench.centre_overview [--halls 100] [--days 365] [--payments 150] [--requests 50]

What runs, all in this process but PostgreSQL (a cluster of its own, tests/support/postgres.py, the
centre's schema migrated; docs/scaling.md says what runs where):
1. the year before today, every hall's payments (`--payments` a day) as the centre holds them once
   applied: its records (central_records), payments (central_payments), the daily sums per payment
   method (central_takings, summed from those payments as the applying transaction adds them), each
   day's Z report (central_days) and a few alerts. Written by SQL (generate_series): 5.5 M records
   in a few minutes, where applying them one by one would take hours; the compact JSON they carry
   is never read by the pages (tests/central/test_centre_api.py checks that no page reads the records);
2. today: every hall's payments through the real records API (POST /api/central/records, the
   centre's app in process, a batch of up to 200 whole payment records a hall), with the daily
   sums kept in the same transaction: what ingest costs now, in records/s;
3. every hall's live floor as its bridge forwards it (its layout of the shipped venue's 14 tables,
   each module online, two thirds of the billiard tables playing with their running amount), fed
   into the centre's Floors as the live subscriber feeds it;
4. an operator logged in through the login form, then `--requests` times each: the overview (`/`,
   which reloads every 15 s), the halls API, the all-halls takings API and one hall's month page,
   timed inside the app (bench.floor_view.ServerTimer: arrival to the last byte, no HTTP client).

Printed: p50/p95/max per page, each p95 as a ratio to the target (p95 < 300 ms), the ingest rate, and
the rows behind them. Before issue 29 the overview rebuilt every hall's month from its raw records in
Python on each load: 6.4-8.4 s with 7-10 k payments this month (the issue's figures).
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select, text

from bench.floor_view import ServerTimer
from broker.central.accounts import add_hall, add_user
from broker.central.service import Central
from broker.domain.central_records import payment_doc
from broker.domain.till.receipt import ReceiptLine
from broker.domain.till.revenue import PaymentRecord
from broker.domain.venue_layout import VENUE_TOPIC, venue_layout
from broker.storage.engine import Store, open_store
from broker.storage.models import CentralRecord, CentralTakings
from dashboard.web.central.app import build_central_app, today
from tests.support.centre import hall_venue
from tests.support.sqlite_template import CHEAP

TARGET_MS = 300.0
OPERATOR, PASSWORD = "bench-operator", "bench-operator-pass"
BATCH = 200  # records a request, as the hall's sender sends them
PAGES = ("/", "/api/central/halls", "/api/central/takings", "/halls/h001")


@dataclass
class Made:
    halls: int
    records: int  # all the centre holds
    takings_rows: int
    today: int  # payments applied through the API today
    ingest_s: float


def _halls(n: int) -> list[str]:
    return [f"h{i:03d}" for i in range(1, n + 1)]


def _year(store: Store, halls: list[str], days: int, per_day: int, first: date) -> None:
    """The year before today, written as the centre holds it once applied (one statement per hall and table)."""
    amount = "100 + ((h.n * 7919 + d * 104729 + i * 31) % 4900)"  # 1,00-50,00 €, varied by hall, day and payment
    method = "CASE WHEN i % 3 = 0 THEN 'cash' ELSE 'card' END"
    for n, hall in enumerate(halls, 1):
        p = {"hall": hall, "n": n, "days": days - 1, "per_day": per_day, "first": first}
        rows = """
            FROM (SELECT CAST(:n AS bigint) AS n) h, generate_series(0, :days) d, generate_series(1, :per_day) i"""
        with store.session() as db:
            db.execute(
                text(f"""INSERT INTO central_payments (hall, payment_id, business_day, amount_cents, record)
                SELECT :hall, d * :per_day + i, CAST(:first AS date) + d, {amount},
                       jsonb_build_object('id', d * :per_day + i, 'amount_cents', {amount}, 'method', {method}) {rows}"""),
                p,
            )
            db.execute(
                text(f"""INSERT INTO central_records (hall, seq, kind, ref, at, data, applied_at)
                SELECT :hall, d * :per_day + i, 'payment', 'payment:' || (d * :per_day + i),
                       CAST(:first AS timestamptz) + d * interval '1 day' + interval '18 hours' + i * interval '1 minute',
                       jsonb_build_object('id', d * :per_day + i, 'amount_cents', {amount}, 'method', {method}), now() {rows}"""),
                p,
            )
            db.execute(
                text("""INSERT INTO central_takings (hall, day, method, name, name_en, cash, count, payments_cents, reversals_cents)
                SELECT hall, business_day, record->>'method',
                       CASE WHEN record->>'method' = 'cash' THEN 'Hotovosť' ELSE 'Karta' END,
                       CASE WHEN record->>'method' = 'cash' THEN 'Cash' ELSE 'Card' END,
                       record->>'method' = 'cash', count(*), sum(amount_cents), 0
                FROM central_payments WHERE hall = :hall GROUP BY hall, business_day, record->>'method'"""),
                p,
            )
            db.execute(
                text("""INSERT INTO central_days (hall, day, total_cents, report)
                SELECT hall, day, sum(payments_cents + reversals_cents), jsonb_build_object('total_cents', sum(payments_cents + reversals_cents))
                FROM central_takings WHERE hall = :hall GROUP BY hall, day"""),
                p,
            )
            at = datetime.combine(first, datetime.min.time(), UTC)
            for k in range(3):  # three alerts a hall, the last still open
                db.execute(
                    text("""INSERT INTO central_alerts (hall, alert_id, kind, table_id, severity, message, message_en, opened_at, closed_at)
                    VALUES (:hall, :k, 'node_offline', 'pool-01', 'warning', 'Pool 1: modul', 'Pool 1: module', :at, :closed)"""),
                    {"hall": hall, "k": k + 1, "at": at + timedelta(days=k), "closed": None if k == 2 else at + timedelta(days=k, hours=1)},
                )
            db.execute(
                text("UPDATE central_halls SET last_seq = :seqs, received = :seqs WHERE hall = :hall"),
                {"hall": hall, "seqs": days * per_day},
            )
        if n % 10 == 0 or n == len(halls):
            print(f"  {n}/{len(halls)} halls' year written", flush=True)


def _payment(pid: int, cents: int, day: date, n: int) -> dict[str, Any]:
    line = ReceiptLine("Pivo 0,5 l", "Beer", 1, cents, cents, 19, "drinks")
    cash = n % 3 == 0
    rec = PaymentRecord(pid, "cash" if cash else "card", cents, "jana", datetime.now(UTC), pid, "Bar", pid, (line,), day=day)
    return payment_doc(
        rec,
        business_day=day,
        method_name="Hotovosť" if cash else "Karta",
        method_name_en="Cash" if cash else "Card",
        cash=cash,
        fallback_vat=23,
    )


def _today(client: TestClient, tokens: dict[str, str], days: int, per_day: int) -> tuple[int, float]:
    """Every hall's payments today through the records API: (records applied, seconds)."""
    day, at = today(), datetime.now(UTC).isoformat()
    applied, t0 = 0, time.perf_counter()
    for hall, token in tokens.items():
        first = days * per_day
        records = [
            {"seq": first + i, "kind": "payment", "ref": f"payment:{first + i}", "at": at, "data": _payment(first + i, 100 + i * 7, day, i)}
            for i in range(1, per_day + 1)
        ]
        for start in range(0, len(records), BATCH):
            r = client.post(
                "/api/central/records",
                json={"hall": hall, "records": records[start : start + BATCH]},
                headers={"Authorization": f"Bearer {token}"},
            )
            if r.status_code != 200:
                raise SystemExit(f"POST records for {hall} → {r.status_code}: {r.text[:300]}")
            applied += r.json()["applied"]
    return applied, time.perf_counter() - t0


def _floors(central: Central, halls: list[str]) -> None:
    """Every hall's tables, modules, lights and games, as the live subscriber applies them (broker.central.live)."""
    for hall in halls:
        venue = hall_venue(hall)
        central.floors.apply(f"hall/{hall}/{VENUE_TOPIC}", venue_layout(venue))
        central.floors.apply(f"hall/{hall}/lavos/v1/hub/status", b'{"state":"online"}')
        for n, t in enumerate(venue.tables):
            central.floors.apply(f"hall/{hall}/lavos/v1/table/{t.id}/status", b'{"state":"online"}')
            playing = t.kind.billed and n % 3 != 2
            central.floors.apply(f"hall/{hall}/lavos/v1/table/{t.id}/light/state", b'{"on":true}' if playing else b'{"on":false}')
            if playing:
                state = {"state": "running", "amount_cents": 240 + 10 * n, "amount": f"{(240 + 10 * n) / 100:.2f}"}
                central.floors.apply(f"hall/{hall}/lavos/v1/ha/{t.id}/state", json.dumps(state).encode())


def make(url: str, halls: int, days: int, per_day: int) -> tuple[Central, Made]:
    store = open_store(url)
    names = _halls(halls)
    with store.session() as db:
        tokens = {h: add_hall(db, h, f"Herňa {h[1:]}") for h in names}
        add_user(db, OPERATOR, PASSWORD, "operator", None, CHEAP)
    first = today() - timedelta(days=days)
    t0 = time.perf_counter()
    _year(store, names, days, per_day, first)
    with store.session() as db:
        db.execute(text("ANALYZE"))
    print(f"  the year written in {time.perf_counter() - t0:.0f} s", flush=True)
    central = Central(store, hasher=CHEAP)
    _floors(central, names)
    with TestClient(build_central_app(central, secret="bench")) as client:
        applied, took = _today(client, tokens, days, per_day)
    with store.reader() as db:
        records = db.scalar(select(func.count()).select_from(CentralRecord)) or 0
        rows = db.scalar(select(func.count()).select_from(CentralTakings)) or 0
    return central, Made(halls, records, rows, applied, took)


def quantile(ms: list[float], q: float) -> float:
    ms = sorted(ms)
    return ms[max(0, round(q * len(ms)) - 1)]


def measure(central: Central, requests: int) -> dict[str, dict[str, float]]:
    """Server time in ms of each page, `requests` times, as a logged-in operator (pages) or by HTTP Basic (API)."""
    timer = ServerTimer(build_central_app(central, secret="bench"))
    out: dict[str, dict[str, float]] = {}
    basic = {"Authorization": "Basic " + base64.b64encode(f"{OPERATOR}:{PASSWORD}".encode()).decode()}
    with TestClient(timer, base_url="http://127.0.0.1") as client:
        form = client.get("/login").text.split('name="csrf_token" value="')[1].split('"')[0]
        r = client.post(
            "/login", data={"username": OPERATOR, "password": PASSWORD, "csrf_token": form, "next": "/"}, follow_redirects=False
        )
        if r.status_code != 303:
            raise SystemExit(f"login failed: {r.status_code} {r.text[:300]}")
        for path in PAGES:
            headers = basic if path.startswith("/api/") else {}
            for _ in range(3):  # warm up: templates compiled, the credential cached
                client.get(path, headers=headers)
            timer.samples.clear()
            for _ in range(requests):
                r = client.get(path, headers=headers)
                if r.status_code != 200:
                    raise SystemExit(f"GET {path} → {r.status_code}: {r.text[:300]}")
            ms = list(timer.samples)
            out[path] = {"n": len(ms), "p50": statistics.median(ms), "p95": quantile(ms, 0.95), "max": max(ms), "kB": len(r.content) / 1024}
    return out


def report(made: Made, pages: dict[str, dict[str, float]], days: int, per_day: int) -> list[str]:
    lines = [
        f"the centre: {made.halls} halls × {days} days × {per_day} payments a day: {made.records:,} records held, "
        f"{made.takings_rows:,} daily sums (hall × day × method) the pages read",
        f"ingest today through the records API: {made.today:,} payments in {made.ingest_s:.1f} s = "
        f"{made.today / made.ingest_s:,.0f} records/s (each batch's daily sums in its transaction)",
        f"{'page':28} {'n':>4} {'kB':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}  p95/target",
    ]
    for path, r in pages.items():
        lines.append(
            f"{path:28} {r['n']:>4.0f} {r['kB']:>6.0f} {r['p50']:>8.1f} {r['p95']:>8.1f} {r['max']:>8.1f}  {r['p95'] / TARGET_MS:.2f}"
        )
    worst = max(r["p95"] for r in pages.values())
    verdict = "under" if worst < TARGET_MS else "OVER"
    lines.append(
        f"target: every page p95 < {TARGET_MS:.0f} ms: {verdict} (worst p95 {worst:.1f} ms, {worst / TARGET_MS:.2f} of the target)"
    )
    return lines


def run(url: str, halls: int, days: int, per_day: int, requests: int) -> tuple[Made, dict[str, dict[str, float]]]:
    central, made = make(url, halls, days, per_day)
    try:
        return made, measure(central, requests)
    finally:
        central.store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--halls", type=int, default=100)
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--payments", type=int, default=150, help="payments a hall takes a day")
    ap.add_argument("--requests", type=int, default=50, help="requests of each page")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    from tests.support.postgres import PostgresCluster

    pg = PostgresCluster().start()
    try:
        url = pg.create_database()
        made, pages = run(url, args.halls, args.days, args.payments, args.requests)
    finally:
        pg.stop()
    print("\n".join(report(made, pages, args.days, args.payments)))
    return 0 if max(r["p95"] for r in pages.values()) < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
