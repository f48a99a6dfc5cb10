"""What the hub tells each table: the light it wants there and the retained game summary.

The light follows the game: on while one runs, while paused as the venue says, off otherwise,
and always off on a table out of service; a table whose kind is not billed by time (darts) is
not ours to drive (None). Commands are never retained (the wire contract): after a reconnect or
a node's birth the hub sends every table's wanted light again (`resend`), which is idempotent.

Runs on the hub's writer (effects after a commit, reconnects, watchdog rounds); `desired` and
`summary` read snapshots and may be called from any thread.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Protocol

from broker.core.open_games import OpenGames
from broker.domain.billing import Bill
from broker.domain.floor import game_ops
from broker.domain.venue import TableSpec, Venue
from broker.floor.light_commands import LightCommand, LightCommands
from broker.floor.table_service import OutOfServiceBook
from devices import contract
from devices.kinds import Kind


class Link(Protocol):
    """What the lights need of the MQTT link (HubLink or ProcessLink)."""

    def send_light(self, table: str, cmd: contract.LightSet) -> None: ...

    def send_summary(self, table: str, summary: contract.SessionSummary | None) -> None: ...


class Lights:
    def __init__(
        self,
        venue: Venue,
        tables: Mapping[str, TableSpec],
        clock: Callable[[], datetime],
        games: OpenGames,
        out_of_service: OutOfServiceBook,
        link: Link | None,
    ) -> None:
        self._venue, self._tables, self._clock = venue, tables, clock
        self._games, self._out_of_service, self._link = games, out_of_service, link
        self._commands = LightCommands()
        # Home Assistant's running amount follows every change of a game (set by the hub).
        self.game_changed: Callable[[str], None] | None = None

    def desired(self, table: str) -> bool | None:
        """On while a game runs; while paused as configured; off otherwise. None: not ours to drive."""
        g = self._games.get(table)
        return self.desired_with(table, g.state if g is not None else None)

    def desired_with(self, table: str, game: game_ops.GameState | None) -> bool | None:
        """The light `table` wants with `game` on it (None: no game there)."""
        if self._out_of_service.get(table) is not None:
            return False
        if not Kind(self._tables[table].kind).billed:
            return None
        if game is None or game.state == "stopped":
            return False
        if game.state == "paused":
            return self._venue.billing.pause_light == "on"
        return True

    def commanding(self, table: str, on: bool | None) -> None:
        """The hub has decided `table`'s light and sends it once the change is committed: views
        count it as commanded from now (broker.floor.light_commands), so none drawn in between
        shows the old light as the table's state."""
        if on is not None and self._link is not None:
            self._commands.sent(table, on)

    def send(self, table: str, on: bool, blink_s: int | None = None) -> None:
        if self._link is None:
            return
        self._link.send_light(table, contract.LightSet(on=on, blink_s=blink_s, cmd_id=uuid.uuid4().hex))
        self._commands.sent(table, on)

    def commands(self) -> Mapping[str, LightCommand]:
        """The light last commanded per table and when (broker.floor.light_commands says what for)."""
        return self._commands.view()

    def bill_of(self, s: game_ops.GameState, at: datetime | None = None) -> Bill:
        """A game's bill now (an open one) or as it stopped."""
        return game_ops.bill_now(s, self._venue, at or self._clock())

    def summary(self, table: str) -> contract.SessionSummary | None:
        """The retained summary of the table's game (the wire contract's `session` topic), or None."""
        g = self._games.get(table)
        if g is None:
            return None
        st = g.state
        billing = self._venue.billing
        return contract.SessionSummary(
            session_id=str(g.id),
            table=table,
            state="paused" if st.state == "paused" else "running",
            started_at=st.started_at,
            tariff=st.tariff or (billing.member_tariff if st.member else billing.default_tariff),
            member=st.member.name if st.member else None,
            prepaid_until=st.prepaid_until,
            amount_cents=self.bill_of(st).total_cents,
        )

    def publish_game(self, table: str) -> None:
        if self._link:
            self._link.send_summary(table, self.summary(table))
        if self.game_changed is not None:
            self.game_changed(table)

    def resend(self, table: str) -> None:
        """The wanted light and, for a billed table, the game summary again (after a reconnect or a birth)."""
        want = self.desired(table)
        if want is not None:
            self.send(table, want)
        if Kind(self._tables[table].kind).billed:
            self.publish_game(table)
