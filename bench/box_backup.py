"""The hub box's figures for the README ("Deploying at a club"): install time, and the nightly
backup's size and time and the restore's time for a year of a club's data.

    .venv/bin/python -m bench.box_backup [--days 365] [--keep DIR]

1. deploy/hub/install.sh into a scratch root (--prefix, --no-pip: the venv is this checkout's, so
   the figure is the script's own work: config, certificates, Mosquitto logins, a kit per table,
   the first manager), timed.
2. A year of the shipped venue's club generated into that box's SQLite database, row shapes as the
   hub writes them: ~4 games a billed table a day (start, a pause in one of five, stop), a tab per
   game and ~20 bar sales a day, two items a tab, a payment a tab with its receipt lines, ~45 ball
   drops an hour of pool (the raw events the hub keeps 400 days), an audit entry per payment.
3. `lavos backup --nightly` (broker.ops.box.nightly) of that box: time and size.
4. install.sh --restore of that backup onto a second scratch root: time (the restore of the
   database and the files, then the install's steps, which find everything in place).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from broker.domain.venue import load_venue
from broker.ops.box import BoxLayout, nightly
from broker.storage.engine import open_store
from broker.storage.models import AuditEntry, Event, Game, GameOp, Payment, Tab, TabItem

REPO = Path(__file__).resolve().parents[1]
INSTALL = REPO / "deploy" / "hub" / "install.sh"
BATCH = 20_000


def install(root: Path, *args: str) -> float:
    venv = root / "opt/lavos/.venv/bin"
    if not venv.exists():
        venv.mkdir(parents=True)
        (venv / "python").symlink_to(REPO / ".venv" / "bin" / "python")
        (venv / "lavos").symlink_to(REPO / ".venv" / "bin" / "lavos")
    started = time.monotonic()
    subprocess.run(["bash", str(INSTALL), "--prefix", str(root), "--no-pip", *args], check=True, capture_output=True, text=True)
    return time.monotonic() - started


class Year:
    """A year of one club's rows, written in batches as the hub's tables hold them."""

    MODELS = (Game, GameOp, Tab, TabItem, Payment, Event, AuditEntry)  # parents before children

    def __init__(self, layout: BoxLayout, seed: int = 7) -> None:
        self.rnd = random.Random(seed)
        venue = load_venue(layout.venue)
        self.billed = [t.id for t in venue.tables if t.kind.billed]
        self.pool = {t.id for t in venue.tables if t.kind.value == "pool"}
        self.store = open_store(layout.db_url)
        self.counts = dict.fromkeys(("games", "ops", "tabs", "items", "payments", "events", "audit"), 0)
        self.rows: dict[type, list[dict[str, Any]]] = {m: [] for m in self.MODELS}

    def flush(self, force: bool = False) -> None:
        if not force and sum(len(v) for v in self.rows.values()) < BATCH:
            return
        with self.store.engine.begin() as conn:
            for model in self.MODELS:
                if self.rows[model]:
                    conn.execute(insert(model), self.rows[model])
                    self.rows[model].clear()

    def day(self, day: date) -> None:
        opens = datetime(day.year, day.month, day.day, 15, 0, tzinfo=UTC)
        sales: list[tuple[int | None, datetime]] = [
            (None, opens + timedelta(minutes=self.rnd.randrange(0, 480))) for _ in range(self.rnd.randint(14, 26))
        ]
        for table in self.billed:
            at = opens + timedelta(minutes=self.rnd.randrange(0, 40))
            for _ in range(self.rnd.randint(2, 6)):
                game, at = self.game(table, at)
                sales.append((game, at))
                at += timedelta(minutes=self.rnd.randrange(0, 30))
            self.flush()
        for sold, when in sales:
            self.sale(day, sold, when)
        self.flush()

    def game(self, table: str, at: datetime) -> tuple[int, datetime]:
        minutes = self.rnd.randint(30, 150)
        end = at + timedelta(minutes=minutes)
        self.counts["games"] += 1
        game = self.counts["games"]
        self.rows[Game].append(
            dict(id=game, table_id=table, state="stopped", started_at=at, stopped_at=end, total_cents=minutes * 10, member_id=None)
        )
        ops = [("start", at, {"table": table, "tariff": None, "member": None, "prepaid_minutes": None})]
        if self.rnd.random() < 0.2:
            ops += [("pause", at + timedelta(minutes=20), {}), ("resume", at + timedelta(minutes=25), {})]
        ops.append(("stop", end, {}))
        for seq, (kind, when, data) in enumerate(ops, 1):
            self.rows[GameOp].append(dict(session_id=game, seq=seq, at=when, kind=kind, data=data, actor="jana", reason=None))
        self.counts["ops"] += len(ops)
        if table in self.pool:
            self.drops(table, at, minutes)
        return game, end

    def drops(self, table: str, at: datetime, minutes: int) -> None:
        n = int(minutes / 60 * 45)
        for i in range(n):
            t = at + timedelta(seconds=self.rnd.uniform(0, minutes * 60))
            self.rows[Event].append(
                dict(table_id=table, boot=f"{table}-boot", seq=self.counts["events"] + i, type="pocket", node_ts=t, ts_synced=True,
                     received_at=t, data={"pocket": self.rnd.randrange(6), "pulse_ms": round(self.rnd.uniform(10, 60), 1)})
            )  # fmt: skip
        self.counts["events"] += n

    def sale(self, day: date, game: int | None, when: datetime) -> None:
        self.counts["tabs"] += 1
        tab = self.counts["tabs"]
        self.rows[Tab].append(
            dict(id=tab, table_id=None, session_id=game, label="" if game else f"Bar {when:%H:%M}", opened_at=when,
                 opened_by="jana", business_day=day, settled_at=when)
        )  # fmt: skip
        lines: list[dict[str, int | str]] = []
        cents_total = 0
        for _ in range(2):
            cents = self.rnd.choice((150, 200, 250, 350, 600))
            self.rows[TabItem].append(
                dict(tab_id=tab, product_id=None, name="Kofola 0,5 l", name_en="Kofola 0.5 l", category="drink",
                     unit_cents=cents, vat_percent=19, quantity=1, added_at=when, added_by="jana")
            )  # fmt: skip
            lines.append({"text": "Kofola 0,5 l", "cents": cents, "vat": 19, "category": "drink"})
            cents_total += cents
        self.counts["items"] += 2
        total = cents_total
        self.rows[Payment].append(
            dict(tab_id=tab, method=self.rnd.choice(("cash", "card")), amount_cents=total, staff="jana", at=when, business_day=day,
                 receipt_no=tab, lines={"lines": lines, "vat": [{"rate": 19, "gross": total}]}, fiscal_state="none")
        )  # fmt: skip
        self.rows[AuditEntry].append(
            dict(at=when, actor="jana", action="payment.take", target=f"tab:{tab}", detail={"cents": total}, reason=None)
        )
        self.counts["payments"] += 1
        self.counts["audit"] += 1


def generate(layout: BoxLayout, days: int) -> dict[str, int]:
    year = Year(layout)
    first = date.today() - timedelta(days=days)
    for d in range(days):
        year.day(first + timedelta(days=d))
    year.flush(force=True)
    year.store.close()
    return year.counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--keep", type=Path, help="Work in this directory and leave it (default: a temporary one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        first, second = BoxLayout(work / "box"), BoxLayout(work / "new-box")
        print(f"install.sh --prefix (a fresh box, 14 tables' kits, the first manager): {install(first.root, '--manager', 'jana'):.1f} s")
        started = time.monotonic()
        counts = generate(first, args.days)
        db_bytes = Path(first.db_url.removeprefix("sqlite:///")).stat().st_size
        print(f"generated {args.days} days in {time.monotonic() - started:.0f} s: {counts}; database {db_bytes / 1e6:.0f} MB")
        status = nightly(first)
        assert status.ok, status
        print(f"lavos backup --nightly: {(status.bytes or 0) / 1e6:.1f} MB in {status.seconds} s ({status.file})")
        bundle = Path(status.file or "")
        print(f"install.sh --restore onto a fresh box: {install(second.root, '--restore', str(bundle)):.1f} s")


if __name__ == "__main__":
    main()
