"""The hub box watching itself, in the watchdog's rounds (on the writer): its billing clock, its
nightly backup and its TLS certificates. Each finding is an alert on every tablet (and a push to
the manager's notification targets); each alert is settled when its cause is gone.

The billing clock. A Pi hub has no real-time clock: after a power cut with no internet its clock
is where fake-hwclock left it, and when NTP comes back it steps, possibly in the middle of a game.
The hub does NOT refuse games or payments then (the decision, README "The billing clock"): a club
whose internet is down would be closed by its own till. Instead, while the clock has not been
synchronised since boot, the alert `clock_unsynced` stands on every tablet and every game that
runs meanwhile is marked (`MarkClockUnsure`: its bill page says to check its times); a step of
the wall clock against the monotonic one by a minute or more (`box_rules.CLOCK_JUMP`) is the alert
`clock_jump`, and the games running at that moment are marked too.

Alerts change only when what they say changes (a round every second touches nothing otherwise),
and a settle costs a transaction only when the alert may be open.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from broker.adapters.box_sensors import BoxSensors
from broker.core.part import Part, Round
from broker.core.ports import HallState
from broker.domain.floor import alert_kinds, box_rules
from broker.domain.floor.alert_kinds import AlertSpec
from broker.domain.floor.box_rules import BackupStatus
from broker.domain.tariffs import local
from broker.floor.games import MarkClockUnsure

log = logging.getLogger("lavos.hub.box")


class BoxWatch(Part):
    def __init__(self, hall: HallState, sensors: BoxSensors, execute: Callable[[Any], Any]) -> None:
        self.h = hall
        self.sensors = sensors
        self._execute = execute
        self._raised: dict[str, str] = {}  # cause -> the message raised (a new message touches the alert)
        self._offset: timedelta | None = None  # wall clock - monotonic clock at the last round
        self._since: datetime | None = None  # the first round: "no backup yet" counts from here
        self.unsynced: bool | None = None  # the last reading (None: not watched, or unreadable)
        self.last_backup: BackupStatus | str | None = None
        self.certificates: dict[str, datetime | str] = {}

    def rounds(self) -> tuple[Round, ...]:
        return (self.round,)

    def round(self, now: datetime) -> None:
        if self._since is None:
            self._since = now
        self._clock(now)
        if self.sensors.backup_status is not None:
            self._backup(now)
        if self.sensors.certificates:
            self._certs(now)

    # -- the clock ----------------------------------------------------------------------------

    def _clock(self, now: datetime) -> None:
        offset = timedelta(seconds=now.timestamp() - self.sensors.monotonic())
        step = box_rules.clock_jumped(self._offset, offset)
        self._offset = offset
        if step is not None and self.sensors.watches_clock:
            log.warning("the hub's clock jumped by %s", step)
            self._set(alert_kinds.clock_jump_key(), alert_kinds.clock_jump(*box_rules.worded_step(step)), now, force=True)
            self._mark_games("jump", int(step.total_seconds()), every=True)
        synced = self.sensors.clock_synchronised()
        if synced is None:
            return
        self.unsynced = not synced
        self._set(alert_kinds.clock_unsynced_key(), None if synced else alert_kinds.clock_unsynced(), now)
        if not synced:
            self._mark_games("unsynced", None, every=False)

    def _mark_games(self, cause: str, jump_s: int | None, *, every: bool) -> None:
        for game in self.h.games.view().values():
            if every or not game.state.clock_unsure:
                self._execute(MarkClockUnsure(game=game.id, cause=cause, jump_s=jump_s, actor="system"))

    # -- the nightly backup ----------------------------------------------------------------------

    def _backup(self, now: datetime) -> None:
        status = self.sensors.backup()
        self.last_backup = status
        if isinstance(status, str):  # unreadable: a failure the manager must see
            failed: AlertSpec | None = alert_kinds.backup_failed(*self._when(now), status, copy_only=False)
            status = None
        else:
            failed = box_rules.backup_failed(status, self._when(status.at) if status else ("", ""))
        good = status.good_at if status is not None else None
        assert self._since is not None
        missing = box_rules.backup_missing(status, now, self._since, self._when(good) if good else None)
        self._set(alert_kinds.backup_failed_key(), failed, now)
        self._set(alert_kinds.backup_missing_key(), missing, now)

    # -- the certificates ------------------------------------------------------------------------

    def _certs(self, now: datetime) -> None:
        self.certificates = self.sensors.certificate_ends()
        for name, end in self.certificates.items():
            if isinstance(end, str):
                spec: AlertSpec | None = alert_kinds.cert_expiring(name, "?", "?", -1)
                log.warning("certificate %s: %s", name, end)
            else:
                spec = box_rules.cert_expiring(name, end, now, self._when(end, day_only=True))
            self._set(alert_kinds.cert_expiring_key(name), spec, now)

    # -- alerts ----------------------------------------------------------------------------------

    def _when(self, at: datetime, *, day_only: bool = False) -> tuple[str, str]:
        t = local(at, self.h.venue)
        if day_only:
            return f"{t.day}. {t.month}. {t.year}", t.strftime("%Y-%m-%d")
        return f"{t.day}. {t.month}. {t.year} {t:%H:%M}", t.strftime("%Y-%m-%d %H:%M")

    def _set(self, cause: str, spec: AlertSpec | None, now: datetime, *, force: bool = False) -> None:
        """Raise `spec` for `cause` when it is new or says something new (or `force`: it happened
        again); settle the cause when `spec` is None and its alert may be open."""
        if spec is not None:
            if not force and self._raised.get(cause) == spec.message:
                return
            with self.h.store.session() as db:
                self.h.alerts.raise_alert(db, spec)
            self._raised[cause] = spec.message
            return
        self._raised.pop(cause, None)
        if cause in self.h.alerts.open_causes():
            with self.h.store.session() as db:
                self.h.alerts.settle(db, cause, now)
