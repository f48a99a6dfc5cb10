"""The demo's bookings and waiting list (issue 20), on the two 8-ft tables of the non-smoking room,
which the players' plan leaves to them (sim.players plays the other tables).

Taken by phone before the doors open: Novák (4) on Pool 9 at 16:10, who come and play; Horák (2)
on Pool 10 at 16:20, who never come, so the hub marks them a no-show after its grace period and
the table goes to the waiting list; and two more for later in the evening (the day view shows
them). Walk-ins wait for an 8-ft table: Kováč (3) takes Pool 10 when it is offered; Bielik (2)
let the first offer pass (it goes to the next party, then comes back) and take the next one.
Everything goes through the hub's facade, as the dashboard's pages do; the hub's own watchdog does
the no-show and the offers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any

from broker.bookings.bookings import BookTable, GuestsArrived
from broker.bookings.waiting_list import JoinWaitingList, TakeOffer
from broker.hall.facade import HubFacade, ServiceError
from sim.players import Action, Do

TABLES = ("pool-09", "pool-10")  # the players' plan leaves these to the bookings
FIRST_PARTY = 9001  # the evening's party numbers for these games (the players' plan counts from 1)


@dataclass(frozen=True)
class Booked:
    table: str
    minute: int  # after the doors open
    length: int  # minutes
    name: str
    size: int
    phone: str
    comes: bool


BOOKINGS = (
    Booked("pool-09", 10, 90, "Novák", 4, "0903 111 222", comes=True),
    Booked("pool-10", 20, 120, "Horák", 2, "0905 333 444", comes=False),
    Booked("pool-09", 240, 120, "Tím Lavos B", 6, "0907 555 666", comes=True),
    Booked("pool-10", 300, 60, "Sedlák", 2, "", comes=True),
)
WAITING = (("Kováč", 3, 25), ("Bielik", 2, 40))  # name, party size, minute they come in
GAME_MIN = 50  # how long the demo's booked and waiting parties play


def banner() -> str:
    """The demo's banner line about tonight's bookings and waiting list."""
    return (
        "Bookings tonight (Rezervácie): Pool 9 16:10 Novák (4) arrive and play, Pool 10 16:20 Horák (2) never come "
        "(a no-show after 15 min; the table goes to the waiting list), two more later; "
        "waiting list (Poradie): Kováč (3) and Bielik (2) for an 8-ft table"
    )


class DemoBookings:
    """Books, seats and takes offers at their moments of the demo's evening, on a thread of its own."""

    def __init__(self, evening: Any, stop: threading.Event, deadline: float | None) -> None:
        self.evening = evening  # sim.demo.Evening: its hub, clock, say, parties and bar
        self.hub: HubFacade = evening.hub
        self.stop = stop
        self.deadline = deadline
        self.booked: dict[int, Booked] = {}
        self._party = FIRST_PARTY

    def book_all(self) -> None:
        """Before the doors open: the phone bookings of the day."""
        opens = self.evening.clock.start
        for b in BOOKINGS:
            start = opens + timedelta(minutes=b.minute)
            booking = self.hub.execute(
                BookTable(
                    table=b.table,
                    start=start,
                    end=start + timedelta(minutes=b.length),
                    party_size=b.size,
                    name=b.name,
                    phone=b.phone or None,
                    actor="staff",
                )
            )
            self.booked[booking] = b

    def on_service(self, topic: str, data: dict[str, Any]) -> None:
        """The hub's news (its writer, after the commit): a no-show and an offer are printed."""
        if topic == "booking" and isinstance(data.get("booking"), int):
            b = self.hub.reads.bookings.booking(data["booking"])
            if b is not None and b.state == "no_show":
                self.evening.say(b.table, f"booking of {b.name} ({b.party_size}): nobody came, a no-show; the table is free", "magenta")
        elif topic == "session" and data.get("action") == "offer":
            for p in self.hub.reads.bookings.waiting():
                if p.offered_table == data.get("table"):
                    self.evening.say(p.offered_table, f"offered to the waiting list: {p.name} ({p.size})", "magenta")

    def start(self) -> threading.Thread:
        self.hub.reads.subscribe(self.on_service)
        thread = threading.Thread(target=self._run, name="demo-bookings", daemon=True)
        thread.start()
        self.evening.background.append(thread)
        return thread

    def _steps(self) -> list[tuple[float, Callable[[], None]]]:
        steps: list[tuple[float, Callable[[], None]]] = []
        for booking, b in self.booked.items():
            if b.comes:
                steps.append((b.minute + 2, partial(self._arrive, booking, b)))
        for name, size, minute in WAITING:
            steps.append((minute, partial(self._join, name, size)))
        steps.append((38, partial(self._take, "Kováč")))  # Horák's table is offered at 16:35
        steps.append((92, partial(self._take, "Bielik")))
        return sorted(steps, key=lambda s: s[0])

    def _run(self) -> None:
        for minute, step in self._steps():
            delay = self.evening.clock.real_delay(minute * 60)
            if self.deadline is not None:
                delay = min(delay, self.deadline - time.monotonic())
            if delay > 0 and self.stop.wait(delay):
                return
            if self.deadline is not None and time.monotonic() >= self.deadline:
                return
            try:
                step()
            except ServiceError as e:
                self.evening.say("bookings", f"staff could not: {e}", "yellow")

    def _played(self, table: str, game: int) -> None:
        """A booked or waiting party's game: the evening's bar bills it, and it stops after GAME_MIN."""
        party, self._party = self._party, self._party + 1
        with self.evening.lock:
            self.evening.parties[party] = game
        if self.evening.bar is not None:
            self.evening.bar.game_started(party, table, game)
        at = (self.evening.clock() - self.evening.clock.start).total_seconds() + GAME_MIN * 60
        threading.Thread(target=self._stop_later, args=(Action(at, Do.STOP, table, party=party),), daemon=True).start()

    def _stop_later(self, action: Action) -> None:
        delay = self.evening.clock.real_delay(action.at)
        if delay > 0 and self.stop.wait(delay):
            return
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return
        self.evening.do(action)

    def _arrive(self, booking: int, b: Booked) -> None:
        game = self.hub.execute(GuestsArrived(booking=booking, actor="staff"))
        if game is None:
            self.evening.say(b.table, f"{b.name} ({b.size}) arrived; their table is still played", "cyan")
            return
        self.evening.say(b.table, f"booking of {b.name} ({b.size}): they came, game {game} started (Prišli)", "cyan")
        self._played(b.table, game)

    def _join(self, name: str, size: int) -> None:
        self.hub.execute(JoinWaitingList(name=name, party_size=size, kind="pool8", actor="staff"))
        self.evening.say("waiting", f"{name} ({size}) wait for an 8-ft table", "cyan")

    def _take(self, name: str) -> None:
        party = next((p for p in self.hub.reads.bookings.waiting() if p.name == name and p.offered_table), None)
        if party is None or party.offered_table is None:
            self.evening.say("waiting", f"{name}: no table offered yet, they keep waiting", "cyan")
            return
        game = self.hub.execute(TakeOffer(party=party.id, actor="staff"))
        self.evening.say(party.offered_table, f"{name} ({party.size}) take the table offered them, game {game} started", "cyan")
        self._played(party.offered_table, game)
