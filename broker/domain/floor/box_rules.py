"""The hub box's own health, as rules: its clock, its nightly backup, its TLS certificates. Pure.

broker.floor.box_watch applies them in the watchdog's rounds to what broker.adapters.box_sensors
reads; `lavos backup --nightly` (broker.ops.box) writes the status these rules read.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from broker.domain.floor import alert_kinds
from broker.domain.floor.alert_kinds import AlertSpec

# A nightly backup runs once a day (lavos-backup.timer): a day and two hours without a good one is
# one missed night, so the manager hears of it the next evening, not a week later.
BACKUP_MAX_AGE = timedelta(hours=26)
# Certificates: the alert (and the push to the manager) from 30 days before the end; make-certs.sh,
# run by deploy/hub/install.sh, re-issues the server certificate in the same window.
CERT_WARNING = timedelta(days=30)
# A step of the wall clock against the monotonic one by a minute or more is a jump (billing counts
# started minutes); NTP's slewing and its small steps on a drifting Pi stay far below it.
CLOCK_JUMP = timedelta(seconds=60)

ClockCheck = str  # "off", "ntp" (synchronised since boot), "ntp-or-rtc" (or set from a battery RTC at boot)
CLOCK_CHECKS = ("off", "ntp", "ntp-or-rtc")


@dataclass(frozen=True)
class BackupStatus:
    """What the last `lavos backup --nightly` did: written by it, read by the hub's box watch."""

    at: datetime  # when it ran (UTC)
    ok: bool  # the backup file was made (and, with a copy_to, copied off the box)
    file: str | None = None
    bytes: int | None = None
    seconds: float | None = None
    copied_to: str | None = None  # where it was copied off the box (None: no copy_to set)
    error: str | None = None  # why it failed (the backup itself)
    copy_error: str | None = None  # made on the box, but the copy off it failed
    last_ok_at: datetime | None = None  # the last run that succeeded (this one or an earlier one)

    def to_json(self) -> str:
        doc: dict[str, Any] = asdict(self)
        doc["at"] = self.at.isoformat()
        doc["last_ok_at"] = self.last_ok_at.isoformat() if self.last_ok_at else None
        return json.dumps(doc, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> BackupStatus:
        """ValueError when `text` is not a status (a torn or foreign file)."""
        try:
            doc = json.loads(text)
            return cls(
                at=_utc(doc["at"]),
                ok=bool(doc["ok"]),
                file=doc.get("file"),
                bytes=doc.get("bytes"),
                seconds=doc.get("seconds"),
                copied_to=doc.get("copied_to"),
                error=doc.get("error"),
                copy_error=doc.get("copy_error"),
                last_ok_at=_utc(doc["last_ok_at"]) if doc.get("last_ok_at") else None,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ValueError(f"not a backup status: {e}") from None

    @property
    def good_at(self) -> datetime | None:
        """When the last good backup was made: this run's time if it succeeded."""
        return self.at if self.ok else self.last_ok_at


def _utc(text: str) -> datetime:
    at = datetime.fromisoformat(text)
    if at.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    return at


def backup_failed(status: BackupStatus | None, when: tuple[str, str]) -> AlertSpec | None:
    """The alert for a failed last run (the backup itself, or its copy off the box), or None.
    `when`: the run's time as staff read it (Slovak, English)."""
    if status is None or status.ok:
        return None
    if status.error:
        return alert_kinds.backup_failed(*when, _short(status.error), copy_only=False)
    return alert_kinds.backup_failed(*when, _short(status.copy_error or "?"), copy_only=True)


def backup_missing(status: BackupStatus | None, now: datetime, watching_since: datetime, last: tuple[str, str] | None) -> AlertSpec | None:
    """No good backup for BACKUP_MAX_AGE (counted from the hub's start when there has never been one)."""
    good = status.good_at if status is not None else None
    since = good or watching_since
    age = now - since
    if age < BACKUP_MAX_AGE:
        return None
    hours = int(age.total_seconds() // 3600)
    if good is None:
        return alert_kinds.backup_missing(None, None, hours)
    sk, en = last or (good.isoformat(), good.isoformat())
    return alert_kinds.backup_missing(sk, en, hours)


def cert_expiring(name: str, not_after: datetime, now: datetime, until: tuple[str, str]) -> AlertSpec | None:
    """The alert for a certificate within CERT_WARNING of its end (or past it), or None."""
    left = not_after - now
    if left > CERT_WARNING:
        return None
    days = int(left.total_seconds() // 86400) if left >= timedelta(0) else -1
    return alert_kinds.cert_expiring(name, *until, days)


def clock_jumped(before: timedelta | None, now: timedelta) -> timedelta | None:
    """How far the wall clock stepped against the monotonic one between two readings of their
    difference (wall - monotonic), or None when it did not jump."""
    if before is None:
        return None
    step = now - before
    return step if abs(step) >= CLOCK_JUMP else None


def worded_step(step: timedelta) -> tuple[str, str]:
    """+2 h 13 min / -45 s, as staff read a clock's jump (Slovak, English)."""
    sign = "+" if step >= timedelta(0) else "-"
    s = int(abs(step).total_seconds())
    d, rest = divmod(s, 86400)
    h, rest = divmod(rest, 3600)
    m, sec = divmod(rest, 60)
    parts = [(d, "d", "d"), (h, "h", "h"), (m, "min", "min")]
    sk = " ".join(f"{n} {u}" for n, u, _ in parts if n) or f"{sec} s"
    en = " ".join(f"{n} {u}" for n, _, u in parts if n) or f"{sec} s"
    return sign + sk, sign + en


def _short(error: str, limit: int = 160) -> str:
    line = " ".join(error.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
