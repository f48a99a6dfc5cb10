"""What a game looks like to the pages and the API: frozen values made from its replayed state.

The API answers with these as they are (dashboard/api/games.py, tables.py; broker.domain.json_shape
says how they read as JSON), the floor's cards and the bill page draw them. HallReads
(broker.hall.read_models) makes them; nothing here reads the database.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from broker.domain.billing import Bill, format_eur
from broker.domain.floor import game_ops
from broker.domain.json_shape import derived, every_field_sent
from broker.domain.venue import Venue

if TYPE_CHECKING:
    from broker.till.tab_views import TabItemView


@dataclass(frozen=True)
class GameMember:
    """The member whose club card is on the game, as the card was shown."""

    id: int
    name: str
    fee_paid: bool


@every_field_sent
@dataclass(frozen=True)
class GameExtra:
    """Something put on the game's tab: a product (an extra of the venue file, a drink), at its own
    VAT rate (a voided one stays, marked)."""

    item: Annotated[int, Field(description="The item on the game's tab: what POST .../void names")]
    extra: Annotated[
        str | None, Field(description="The extra's id in GET /api/extras (its product's code); null for a product that is no extra")
    ]
    product: int | None
    name: str
    name_en: str
    quantity: int
    unit_cents: int
    vat_percent: int
    category: str
    at: datetime
    by: str | None
    voided: bool = False

    @classmethod
    def of(cls, i: TabItemView) -> GameExtra:
        return cls(
            i.id, i.code, i.product_id, i.name, i.name_en or i.name, i.quantity, i.unit_cents, i.vat_percent, i.category,
            i.added_at, i.added_by, i.voided_at is not None,
        )  # fmt: skip


@dataclass(frozen=True)
class GameBrief:
    """A game as lists show it: state and amount, no bill lines."""

    id: int
    table: str
    state: str
    started_at: datetime
    stopped_at: datetime | None
    paused_at: datetime | None
    tariff: str | None  # the tariff billed now (a stopped game: its last)
    requested_tariff: str | None  # a special tariff staff asked for (training), None: the usual
    member: GameMember | None
    prepaid_until: datetime | None
    prepaid_left_s: int | None
    amount_cents: int
    extras: tuple[GameExtra, ...]
    # The hub's clock was not to be trusted while it ran (never synchronised since boot, or it
    # jumped): its times and bill need a look (broker.floor.box_watch).
    clock_unsure: bool

    @derived
    def amount(self) -> str:
        return format_eur(self.amount_cents)


@dataclass(frozen=True)
class GameView(GameBrief):
    """One game with its itemised bill."""

    bill: Bill


@every_field_sent
@dataclass(frozen=True)
class GameStarted(GameView):
    """A game just started. `warning` (English) says why a member's game runs at the standard
    rate (a table without the club rate, this year's fee not paid), as the start page says it;
    `warning_code` is the rate's basis: card_table_not_eligible or card_unpaid. Both null otherwise."""

    warning: str | None = None
    warning_code: str | None = None


@dataclass(frozen=True)
class GameOnTable(GameBrief):
    """The game running on a table, as the table's live state shows it."""

    drops: int  # ball drops since the game started


def _tariff_now(st: game_ops.GameState, bill: Bill, venue: Venue, now: datetime) -> str | None:
    if st.state == "running":
        rate = game_ops.current_rate(st, venue, now)
        return rate.tariff_id if rate else None
    times = [x for x in bill.lines if x.kind == "time"]
    return times[-1].tariff_id if times else st.tariff


def brief_fields(
    game_id: int, st: game_ops.GameState, bill: Bill, venue: Venue, now: datetime, items: Iterable[TabItemView]
) -> dict[str, Any]:
    """The fields every game view shares, at `now` (the hub's clock; never before the game's last op);
    `items`: what is on the game's tab (reads.till.game_items reads a list of games' at once)."""
    now = max(now, st.last_at)
    left = game_ops.prepaid_remaining(st, now)
    m = st.member
    return dict(
        id=game_id,
        table=st.table,
        state=st.state,
        started_at=st.started_at,
        stopped_at=st.stopped_at,
        paused_at=st.paused_at,
        tariff=_tariff_now(st, bill, venue, now),
        requested_tariff=st.tariff,
        member=GameMember(m.member_id, m.name, m.fee_paid) if m else None,
        prepaid_until=st.prepaid_until,
        prepaid_left_s=int(left.total_seconds()) if left is not None else None,
        amount_cents=bill.total_cents,
        extras=tuple(GameExtra.of(i) for i in items),
        clock_unsure=st.clock_unsure,
    )
