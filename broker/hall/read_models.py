"""Read models: what the dashboard may read about the hall, as plain frozen values.

Every query here runs in a read-only store session (`Store.reader()`) and returns dataclasses
copied out of the rows inside it, never ORM rows, so nothing a page holds can lazy-load, change
or be flushed later. Live state (open games, drop counts) comes from the hub's own snapshot
methods. Store failures come out as broker.core.store_errors (never sqlalchemy's).

Writes go through broker.hall.facade.HubFacade, never through this module.
"""

from __future__ import annotations

import logging
from datetime import date, datetime
from functools import cached_property
from typing import TypeVar

from sqlalchemy import text

from broker.bookings.reads import BookingReads
from broker.core.listeners import Listener
from broker.core.ports import HallState
from broker.domain.dates import HallDates
from broker.domain.schedule import business_day
from broker.domain.venue import TableSpec, Venue
from broker.floor.reads import FloorReads
from broker.hall.hub import Hub
from broker.notify.reads import NotifyReads
from broker.outbox.reads import OutboxReads
from broker.people.reads import PeopleReads
from broker.reports.reads import ReportsReads
from broker.shifts.reads import ShiftsReads
from broker.stock.reads import StockReads
from broker.till.reads import TillReads
from broker.tournaments.reads import TournamentReads
from broker.wallet.reads import WalletReads

V = TypeVar("V")
log = logging.getLogger("lavos.hub")


# --- value types -----------------------------------------------------------------------------


# --- the queries -----------------------------------------------------------------------------


class HallReads:
    """What the dashboard reads: each part's reader as `reads.<part>`, and what is the hall's as a
    whole (the venue, its clock and calendar, health, the live events); none of them writes."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self._store = hub.store

    # Each part's reader, built on first use from what it reads (never the hub itself).
    @cached_property
    def _hall(self) -> HallState:
        return self._hub.hall_state

    @cached_property
    def bookings(self) -> BookingReads:
        return BookingReads(self._hall, self._hub.booking_book, self._hub.bookings, self._hub.out_of_service_book)

    @cached_property
    def till(self) -> TillReads:
        return TillReads(self._hall, self._hub.till)

    @cached_property
    def wallet(self) -> WalletReads:
        return WalletReads(self._hall)

    @cached_property
    def floor(self) -> FloorReads:
        return FloorReads(self._hall, self._hub.lights, self._hub.out_of_service_book, self.till)

    @cached_property
    def people(self) -> PeopleReads:
        return PeopleReads(self._hall)

    @cached_property
    def stock(self) -> StockReads:
        return StockReads(self._hall)

    @cached_property
    def tournaments(self) -> TournamentReads:
        return TournamentReads(self._hall, self._hub.tournament_calls)

    @cached_property
    def notify(self) -> NotifyReads:
        return NotifyReads(self._hub.notifications)

    @cached_property
    def outbox(self) -> OutboxReads:
        return OutboxReads(self._hall)

    @cached_property
    def reports(self) -> ReportsReads:
        return ReportsReads(self._hall)

    @cached_property
    def shifts(self) -> ShiftsReads:
        return ShiftsReads(self._hall)

    # configuration and clock (the venue file; never changes while running)
    @property
    def venue(self) -> Venue:
        return self._hall.venue

    @property
    def tables(self) -> dict[str, TableSpec]:
        return self._hall.tables

    def clock(self) -> datetime:
        return self._hall.clock()

    @property
    def clock_speed(self) -> float:
        """Hall seconds per real second: 1 for the real clock; a clock that runs faster (the demo's
        sim.clock.ScaledClock, `--speed`) says how much in its `speed`. A browser counts real
        time: the pages tell it this, and it turns the hall's durations into its own with it."""
        speed = getattr(self._hall.clock, "speed", 1.0)
        return float(speed) if isinstance(speed, int | float) and speed > 0 else 1.0

    def today(self) -> date:
        """Today's business day at the venue, by the hub's (billing) clock: at 00:30 still yesterday's evening."""
        return business_day(self.clock(), self.venue)

    def dates(self) -> HallDates:
        """The hall's calendar for reading the dates people write (its time zone, today): broker.domain.dates."""
        return HallDates(self.venue.tz, self.today())

    def fee_year(self) -> int:
        return self._hall.fee_year()

    @property
    def backend(self) -> str:
        return self._store.backend

    @property
    def mqtt_connected(self) -> bool | None:
        return self._hub.mqtt_connected

    def database_ok(self) -> bool:
        try:
            with self._store.reader() as db:
                db.execute(text("SELECT 1"))
            return True
        except Exception as e:  # noqa: BLE001 - any failure to answer SELECT 1 is "not reachable"
            log.warning("health: database check failed: %s", e)
            return False

    def subscribe(self, fn: Listener) -> None:
        """Call fn(topic, data) after every committed change of the hall (from the hub's threads: hand over, never wait)."""
        self._hall.listeners.subscribe(fn)

    def unsubscribe(self, fn: Listener) -> None:
        self._hall.listeners.unsubscribe(fn)
