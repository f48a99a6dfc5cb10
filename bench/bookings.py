"""Server time of the floor view with bookings and a waiting list, and of a day's availability.

    .venv/bin/python -m bench.bookings [--requests 200]

The shipped ŠBK Lavos hall (14 tables) on a busy Friday evening at 19:50: 7 games running, 40
bookings (the rest of the evening and the next evening, some with their card mark on the floor,
one no-show, one arrived), 10 parties on the waiting list (an offer among them). A real Hub
(SQLite file, no MQTT) on a fixed clock, with the web app over it; everything is made through the
hub's commands. Timed inside the app (bench.floor_view.ServerTimer), from the request's arrival
to its last byte: GET / (the floor: every card with its booking mark, the waiting list), GET
/api/availability?kind=pool for a business day, GET /bookings (the day view).
Targets: the floor p95 under 300 ms; availability for a day under 50 ms (p95).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from fastapi.testclient import TestClient

from bench.floor_view import LAVOS_VENUE, MANAGER, PASSWORD, ServerTimer, log_in
from broker.accounts.users import new_password
from broker.bookings.bookings import BookTable, GuestsArrived, MarkNoShow
from broker.bookings.waiting_list import JoinWaitingList
from broker.compose import build_hub, open_store
from broker.domain.venue import load_venue
from broker.floor.games import StartGame
from broker.hall.facade import HubFacade
from broker.people.accounts import CreateStaff

FLOOR_TARGET_MS = 300.0
AVAILABILITY_TARGET_MS = 50.0
TZ = ZoneInfo("Europe/Bratislava")
EVENING = datetime(2026, 12, 4, 19, 50, tzinfo=TZ)  # a Friday; the bookings of 20:00 are on the floor cards
PLAYING = ("pool-01", "pool-02", "pool-03", "pool-05", "pool-06", "carom-01", "pool-09")
BOOKABLE = ("pool-01", "pool-02", "pool-03", "pool-04", "pool-05", "pool-06", "pool-07", "pool-08", "pool-09", "pool-10", "carom-01")


class FixedClock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


def busy_evening(hub: HubFacade, clock: FixedClock) -> dict[str, int]:
    """Games, 40 bookings and 10 waiting parties, made through the hub's commands."""
    hub.execute(CreateStaff(username=MANAGER, password=new_password(PASSWORD), role="manager", actor="bench"))
    clock.at = EVENING - timedelta(hours=1)  # 18:50: the bookings of 19:00 are still to come
    made = {"bookings": 0, "parties": 0}
    slots: list[tuple[datetime, str]] = []
    for day in (0, 1):
        for table in BOOKABLE:
            if day == 0 and table == "pool-10":
                continue  # free tonight: the waiting list's first party is offered it
            for start_h in (20, 22):
                slots.append((EVENING.replace(hour=start_h, minute=0) + timedelta(days=day), table))
    slots = [(EVENING.replace(hour=19, minute=0), "pool-07"), (EVENING.replace(hour=19, minute=0), "pool-08"), *slots]
    for n, (start, table) in enumerate(slots[:40]):
        hub.execute(
            BookTable(
                table=table,
                start=start,
                end=start + timedelta(hours=1 if start.hour == 19 else 2),
                party_size=2 + n % 5,
                name=f"Hosť Číslo{n:02d}",
                phone=f"0903 {n:03d} 000",
                actor="bench",
            )
        )
        made["bookings"] += 1
    clock.at = EVENING
    first, second = (b.id for b in hub.reads.bookings.bookings(EVENING - timedelta(hours=1), EVENING)[:2])
    hub.execute(MarkNoShow(booking=first, actor="bench"))  # 19:00 on Pool 7: nobody came
    hub.execute(GuestsArrived(booking=second, actor="bench"))  # 19:00 on Pool 8: they came
    for table in PLAYING:
        hub.execute(StartGame(table=table, actor="bench"))
    for n in range(10):
        hub.execute(JoinWaitingList(name=f"Čakajúci {n}", party_size=2 + n % 3, kind=("pool", "pool9", "carom")[n % 3], actor="bench"))
        made["parties"] += 1
    return made


def _p(ms: list[float], share: float) -> float:
    return sorted(ms)[max(0, round(share * len(ms)) - 1)]


def measure(workdir: Path, requests: int) -> dict[str, Any]:
    from dashboard.cli import hub_web_app

    clock = FixedClock(EVENING)
    store = open_store(f"sqlite:///{workdir / 'lavos.db'}")
    hub = build_hub(load_venue(LAVOS_VENUE), store, clock=clock)
    hub.start()
    try:
        hub.watchdog.stop()  # the bench ticks it once: the no-show round and the waiting list's offers
        made = busy_evening(HubFacade(hub), clock)
        hub.watchdog.tick()
        timer = ServerTimer(hub_web_app(hub))
        results: dict[str, Any] = {**made, "offers": sum(1 for p in hub.booking_book.waiting() if p.offered_table)}
        with TestClient(timer, base_url="http://127.0.0.1") as client:
            log_in(client)
            for name, path in (("floor", "/"), ("availability", "/api/availability?kind=pool&from=2026-12-04"), ("day", "/bookings")):
                for _ in range(5):  # warm up: templates compiled, caches filled
                    assert client.get(path).status_code == 200
                timer.samples.clear()
                for _ in range(requests):
                    r = client.get(path)
                    if r.status_code != 200:
                        raise SystemExit(f"GET {path} → {r.status_code}: {r.text[:300]}")
                if name == "floor":
                    results["marks"] = r.text.count("data-booking-mark=")
                    results["waiting_shown"] = r.text.count("data-party=")
                ms = list(timer.samples)
                results[name] = {"n": len(ms), "p50": statistics.median(ms), "p95": _p(ms, 0.95), "max": max(ms)}
        return results
    finally:
        hub.close()
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="lavos-bookings-") as tmp:
        r = measure(Path(tmp), args.requests)
    print(
        f"ŠBK Lavos at 19:50: {len(PLAYING)} games, {r['bookings']} bookings ({r['marks']} marks on the floor), "
        f"{r['parties']} waiting parties ({r['offers']} offered); {args.requests} requests each, server time in ms"
    )
    print(f"{'what':40} {'p50':>7} {'p95':>7} {'max':>7}")
    for name, label in (
        ("floor", "GET / (floor view)"),
        ("availability", "GET /api/availability (pool, one day)"),
        ("day", "GET /bookings (day view)"),
    ):
        s = r[name]
        print(f"{label:40} {s['p50']:>7.1f} {s['p95']:>7.1f} {s['max']:>7.1f}")
    ok = r["floor"]["p95"] < FLOOR_TARGET_MS and r["availability"]["p95"] < AVAILABILITY_TARGET_MS
    print(f"targets: floor p95 < {FLOOR_TARGET_MS:.0f} ms, availability p95 < {AVAILABILITY_TARGET_MS:.0f} ms: {'met' if ok else 'MISSED'}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
