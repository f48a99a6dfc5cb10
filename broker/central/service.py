"""The centre as the web layer sees it: one object, frozen answers, every read scoped by the viewer.

The dashboard (dashboard/central) imports no SQLAlchemy: it calls these. Writes are only the
halls' records (`receive`), the link state (broker.central.live) and people's page logins; people only read.
"""

from __future__ import annotations

import logging
from datetime import date
from typing import Any

from argon2 import PasswordHasher

from broker.accounts.auth_checks import Busy, Throttled
from broker.accounts.users import DEFAULT_HASHER
from broker.central import reads
from broker.central.accounts import CentralError, Viewer, check_login, end_logins, hall_of_token, start_login, viewer_of, viewer_of_login
from broker.central.live import Floors, HallLive
from broker.central.records import Applied, CentralConflict, RecordsRefused, apply_records
from broker.domain.refusals import to_doc
from broker.storage.engine import Store
from broker.storage.models import CentralHall
from broker.storage.types import utcnow

__all__ = ["Busy", "Central", "CentralConflict", "CentralDenied", "CentralError", "RecordsRefused", "Throttled", "Viewer"]

log = logging.getLogger("lavos.central")


class CentralDenied(Exception):
    """A credential that is no hall's (401), or a hall's credential used for another hall (403)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Central:
    def __init__(self, store: Store, floors: Floors | None = None, hasher: PasswordHasher = DEFAULT_HASHER) -> None:
        self.store = store
        self.floors = floors or Floors(store)
        self.hasher = hasher

    def receive(self, token: str, body: Any) -> Applied:
        """A hall's batch of records, on its own credential only."""
        if not isinstance(body, dict):
            raise CentralError("the body must be an object with hall and records")
        with self.store.reader() as db:
            hall = hall_of_token(db, token)
        if hall is None:
            raise CentralDenied(401, "unknown hall credential")
        if body.get("hall") != hall:
            raise CentralDenied(403, f"this credential is hall {hall}'s: it sends no other hall's records")
        try:
            with self.store.session() as db:
                return apply_records(db, hall, body.get("records"))
        except RecordsRefused as e:
            self._note_refused(hall, e)
            raise

    def _note_refused(self, hall: str, e: RecordsRefused) -> None:
        """Count the refusal on the hall's row (its own transaction: the batch's rolled back), for the
        operator's page; the hall sets the records aside and raises its own alert, which reaches us too."""
        log.warning("hall %s: %s", hall, e)
        try:
            with self.store.session() as db:
                row = db.get(CentralHall, hall, with_for_update=True)
                if row is not None:
                    row.refused += len(e.refused)
                    row.refused_at, row.refused_detail = utcnow(), str(e)[:2000]
                    row.refused_why = to_doc(e.first())
        except Exception:
            log.exception("cannot note hall %s's refused records", hall)

    def login(self, username: str, password: str, *, client: str) -> Viewer | None:
        """The person, or None for a wrong name or password; Throttled (429) for a client that must
        wait, Busy (503) while every hash slot is taken (broker.accounts.auth_checks)."""
        return check_login(self.store, username, password, client=client, hasher=self.hasher)

    def start_login(self, viewer: Viewer, *, client: str, user_agent: str) -> str:
        """A page login for a person who has just shown their password: the id for the cookie (only its hash is kept)."""
        with self.store.session() as db:
            return start_login(db, viewer.username, client=client, user_agent=user_agent)

    def viewer(self, username: str) -> Viewer | None:
        with self.store.reader() as db:
            return viewer_of(db, username)

    def login_viewer(self, login_id: str) -> Viewer | None:
        """Whose this page login is, while it lasts (ended at logout or a new password, 12 h at most)."""
        with self.store.reader() as db:
            return viewer_of_login(db, login_id)

    def log_out(self, login_id: str) -> None:
        """End every page login of the person this one is (a copied cookie too)."""
        with self.store.session() as db:
            viewer = viewer_of_login(db, login_id)
            if viewer is not None:
                end_logins(db, viewer.username, by=viewer.username, reason="logout")

    def halls(self, viewer: Viewer) -> list[reads.HallRow]:
        with self.store.reader() as db:
            return reads.halls(db, viewer)

    def floor(self, viewer: Viewer, hall: str) -> HallLive | None:
        return self.floors.hall(hall) if viewer.may_see(hall) else None

    def overview(self, viewer: Viewer, month: date) -> reads.Overview:
        with self.store.reader() as db:
            return reads.overview(db, viewer, month)

    def month(self, viewer: Viewer, hall: str, month: date) -> reads.MonthTakings | None:
        with self.store.reader() as db:
            return reads.month_takings(db, viewer, hall, month)

    def alerts(self, viewer: Viewer, *, open_only: bool = True) -> list[reads.AlertRow]:
        with self.store.reader() as db:
            return reads.alerts(db, viewer, open_only=open_only)
