"""Tournaments (issue 21, the Lavosliga): creating one, its entrants and their check-in with the entry
fee, the draw, and the read-only link of its TV page.

The rules of play are pure (broker.domain.tournaments); this part stores what a tournament is, who
entered and the draw, and nothing else: who plays whom is worked out from the draw and the results
(broker.tournaments.state). The matches on the tables are broker.tournaments.calls, the
results broker.tournaments.results.

Entry fees are the till's: at check-in each player's fee (the member's or the non-member's entry
product, by whether their membership fee is paid this year) goes on a tab of the entrant's own,
paid cash or card like any tab, so the Z report shows it under "Štartovné" and each player gets a
receipt. The nested commands run inline on the writer with one-time keys made from the entrant,
so a check-in repeated after a failure finds the tab and the items it already made.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import func, select
from sqlalchemy.orm import Session as Db

from broker.bookings.bookings import AddBlock, BlockAdded, RemoveBlock
from broker.core.commands import Command, command, handles
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.people import membership
from broker.domain.refusals import N_
from broker.domain.tariffs import calendar_year
from broker.domain.tournaments.draw import make_draw
from broker.domain.tournaments.progress import Plan
from broker.domain.tournaments.rules import MAX_ENTRANTS, BreakRule, Discipline, Format, Races, Rules, TournamentRefused
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.members import MemberError, get_member
from broker.storage.models import (
    SEEDINGS,
    TOURNAMENT_GROUPS,
    BookingBlock,
    Member,
    Payment,
    Product,
    TabItem,
    Tournament,
    TournamentEntrant,
)
from broker.till.tab_views import product_of_extra
from broker.till.tabs import AddTabItem, OpenWalkInTab, VoidTabItem
from broker.tournaments.events import TournamentChanged
from broker.tournaments.results import WithdrawEntrant
from broker.tournaments.season import season_ratings
from broker.tournaments.state import TournamentMissing, calls_from, entrant_name, entrants_of, load, rules_of
from devices.kinds import Kind

Execute = Callable[[Command[Any]], Any]

MAX_NAME = 120
MAX_PLAYER = 80
MAX_TABLES = 32
MAX_BLOCK_HOURS = 14  # from the start to past closing: a Sunday's tournament and its evening
SHOT_CLOCK_S = (10, 45)  # SBiZ 1.11: at most 45 s a shot, 35 s recommended
DEFAULT_SHARES = (50, 30, 20)
# Season points per place (our decision; the manager sets them per tournament): the best place of
# a shared range counts (both "3.-4." get 3rd's), a place not listed gets the nearest listed above.
DEFAULT_POINTS: Mapping[int, int] = {1: 25, 2: 18, 3: 15, 5: 10, 9: 6, 17: 3}
ENTRY_EXTRAS = ("entry_member", "entry_guest")  # the venue file's entry fees, made products at the till's start


@command
class CreateTournament(Command[int]):
    """A new tournament (its rules, tables, fees, payouts, season points); answers its id."""

    name: str
    starts_at: datetime
    league_group: str = ""
    discipline: str = "8-ball"
    format: str = "double"
    race_winners: int = 5
    race_losers: int = 4
    race_final: int = 5
    break_rule: str = "alternate"
    grand_final_reset: bool = True
    group_size: int = 4
    advance: int = 2
    swiss_rounds: int | None = None
    shot_clock_s: int | None = None
    pairs: bool = False
    seeding: str = "random"
    tables: tuple[str, ...] = ()
    fee_member_product: int | None = None
    fee_guest_product: int | None = None
    free_entry: bool = False  # no entry fee (a memorial, a friendly): nothing goes on a tab at check-in
    club_share_percent: int = 0
    payout_shares: tuple[int, ...] = DEFAULT_SHARES
    season_points: Mapping[int, int] | None = None
    tariff: str | None = None
    block_hours: int | None = 6  # its tables held on the booking calendar from the start; None or 0: not


@command
class AddEntrant(Command[int]):
    """Enter a player (a member by id, or a walk-in by name; a pair: two) before the draw; with
    `check_in` also check them in (the fee on their tab). Answers the entrant's id."""

    tournament: int
    member_id: int | None = None
    name: str = ""
    member2_id: int | None = None
    name2: str = ""
    handicap: int = 0
    check_in: bool = False


@command
class CheckInEntrant(Command[int | None]):
    """An entrant is here: their entry fee goes on a tab of their own; answers that tab (None: no fee)."""

    tournament: int
    entrant: int


@command
class RemoveEntrant(Command[None]):
    """An entrant withdraws: before the draw they are removed (an unpaid fee is voided, a paid one
    must be refunded first); after it every match of theirs not played is a walkover (WithdrawEntrant)."""

    tournament: int
    entrant: int


@command
class DrawTournament(Command[tuple[int, ...]]):
    """Draw the checked-in entrants (seeded or random, as the tournament says); answers the order.
    Drawn already: the same order again (the first draw is stored). Its matches are called to the
    tables from its start: a draw made earlier waits."""

    tournament: int


@command
class StartTournamentNow(Command["StartedNow"]):
    """The director begins before the planned start: the start moves to now and the tables' block
    with it (the same length, checked against the bookings as any block: those on its tables move
    to free tables of their kind, the rest are listed to call); the free tables get their matches."""

    tournament: int


@dataclass(frozen=True)
class StartedNow:
    """A start moved to now: when, and the bookings its block moved (id, from, to) or left to call."""

    starts_at: datetime
    moved: tuple[tuple[int, str, str], ...] = ()
    to_call: tuple[int, ...] = ()


@command
class NewTvLink(Command[str]):
    """A new read-only link for the TV and the players' phones (the old one stops working); answers its token."""

    tournament: int


@command
class RevokeTvLink(Command[None]):
    """The TV link stops working."""

    tournament: int


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _clean(text: str, limit: int) -> str:
    return " ".join((text or "").split())[:limit]


def _int(value: object, bounds: tuple[int, int], message: str, **params: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        raise TournamentRefused(message, **params)
    return value


class Tournaments(Part):
    as_not_found = (TournamentMissing,)
    as_service_error = (TournamentRefused,)

    def __init__(self, hall: HallState, execute: Execute, on_drawn: Callable[[int, str], object]) -> None:
        self.h = hall
        self._execute = execute  # nested commands (the fee's tab) run inline on the writer
        self._on_drawn = on_drawn  # the calls part: light the free tables at once

    # -- creating ----------------------------------------------------------------------------

    @handles(CreateTournament)
    def create(self, c: CreateTournament) -> int:
        name = _clean(c.name, MAX_NAME)
        if len(name) < 2:
            raise TournamentRefused(N_("Name the tournament (at least 2 letters)."))
        if c.starts_at.tzinfo is None:
            raise TournamentRefused(N_("Give the tournament's date and start time."))
        if c.league_group not in TOURNAMENT_GROUPS:
            raise TournamentRefused(N_("The group is I, II or none."))
        if c.seeding not in SEEDINGS:
            raise TournamentRefused(N_("The draw is random or seeded."))
        rules = Rules(
            format=cast(Format, c.format),  # the command's text: Rules checks it and says what is wrong
            races=Races(c.race_winners, c.race_losers, c.race_final),
            discipline=cast(Discipline, c.discipline),
            break_rule=cast(BreakRule, c.break_rule),
            grand_final_reset=c.grand_final_reset,
            group_size=c.group_size,
            advance=c.advance,
            swiss_rounds=c.swiss_rounds,
        )
        if c.shot_clock_s is not None:
            _int(c.shot_clock_s, SHOT_CLOCK_S, N_("A shot clock is between %(low)d and %(high)d seconds (SBiZ 1.11)."), low=10, high=45)
        _int(c.club_share_percent, (0, 100), N_("The club's share is between 0 and 100 %."))
        shares = list(c.payout_shares)
        if (
            not 1 <= len(shares) <= 16
            or any(isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= 100 for s in shares)
            or not any(shares)
        ):
            raise TournamentRefused(N_("The payout shares must be positive numbers for the first places."))
        points = dict(DEFAULT_POINTS if c.season_points is None else c.season_points)
        for place, pts in points.items():
            _int(place, (1, MAX_ENTRANTS), N_("Season points are given for places 1 to %(most)d."), most=MAX_ENTRANTS)
            _int(pts, (0, 1000), N_("Season points for a place are from 0 to 1000."))
        tables = self._tables(c.tables)
        tariff = self._tariff(c.tariff)
        if c.block_hours is not None:
            _int(c.block_hours, (0, MAX_BLOCK_HOURS), N_("The tables are held for 0 to %(most)d hours."), most=MAX_BLOCK_HOURS)
        now = self.h.clock()
        block = self._block(c, name, tables, now)
        with self.h.store.session() as db:
            member_fee, guest_fee = (None, None) if c.free_entry else self._fees(db, c.fee_member_product, c.fee_guest_product)
            t = Tournament(
                name=name,
                starts_at=c.starts_at,
                league_group=c.league_group,
                discipline=rules.discipline,
                format=rules.format,
                race_winners=rules.races.winners,
                race_losers=rules.races.losers,
                race_final=rules.races.final,
                break_rule=rules.break_rule,
                grand_final_reset=rules.grand_final_reset,
                group_size=rules.group_size,
                advance=rules.advance,
                swiss_rounds=rules.swiss_rounds,
                shot_clock_s=c.shot_clock_s,
                pairs=c.pairs,
                seeding=c.seeding,
                fee_member_product_id=member_fee,
                fee_guest_product_id=guest_fee,
                club_share_percent=c.club_share_percent,
                tariff=tariff,
                options={
                    "tables": tables,
                    "payout_shares": shares,
                    "season_points": {str(k): v for k, v in sorted(points.items())},
                    "block": block,
                },
                created_at=now,
                created_by=c.actor,
            )
            db.add(t)
            db.flush()
            record_audit(db, c.actor, "tournament.create", f"tournament:{t.id}", {"name": name, "format": rules.format}, at=now)
            tid = t.id
            self._notify(db, tid)
        return tid

    def _block(self, c: CreateTournament, name: str, tables: list[str], now: datetime) -> int | None:
        """Hold its tables on the booking calendar (the bookings' own command, inline): bookings
        there move to other tables or are listed to call. Not for a tournament already over."""
        if not tables or not c.block_hours:
            return None
        end = c.starts_at + timedelta(hours=c.block_hours)
        if end <= now:
            return None
        added = self._execute(AddBlock(kind="tournament", start=c.starts_at, end=end, label=name, tables=tuple(tables), actor=c.actor))
        return int(added.block)

    def _tables(self, asked: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for table in asked:
            spec = self.h.tables.get(table)
            if spec is None or not Kind(spec.kind).billed:
                raise TournamentRefused(N_("A tournament is played on pool and carom tables; %(table)s is not one."), table=str(table)[:40])
            if table not in out:
                out.append(table)
        if len(out) > MAX_TABLES:
            raise TournamentRefused(N_("A tournament has at most %(most)d tables."), most=MAX_TABLES)
        return out

    def _tariff(self, asked: str | None) -> str | None:
        """The rate its matches are billed at: as asked, else the venue's tournament tariff, else the default."""
        venue = self.h.venue
        if asked:
            if asked not in {t.id for t in venue.tariffs}:
                raise TournamentRefused(N_("There is no rate %(tariff)s in the venue file."), tariff=asked[:40])
            return asked
        return next((t.id for t in venue.tariffs if t.tournament), None)

    def _fees(self, db: Db, member: int | None, guest: int | None) -> tuple[int | None, int | None]:
        """The entry products (members', others'): as asked, else the venue file's entry fees."""
        defaults = [self._entry_product(db, extra) for extra in ENTRY_EXTRAS]
        out = []
        for asked, default in zip((member, guest), defaults, strict=True):
            if asked is None:
                out.append(default)
                continue
            p = db.get(Product, asked)
            if p is None or p.category != "tournament_entry":
                raise TournamentRefused(N_("The entry fee is a product of the category Tournament entry."))
            out.append(p.id)
        return out[0], out[1]

    def _entry_product(self, db: Db, extra_id: str) -> int | None:
        """The product that stands for the venue file's entry fee `extra_id` (by its code: a
        manager may rename it)."""
        p = product_of_extra(db, extra_id)
        return p.id if p is not None and p.category == "tournament_entry" else None

    # -- entrants ------------------------------------------------------------------------------

    @handles(AddEntrant)
    def add_entrant(self, c: AddEntrant) -> int:
        now = self.h.clock()
        with self.h.store.session() as db:
            t = self._open_for_entries(db, c.tournament)
            entrants = entrants_of(db, t.id)
            first = self._player(db, c.member_id, c.name, entrants)
            second: tuple[str, Member | None] = ("", None)
            if t.pairs:
                if c.member2_id is None and not _clean(c.name2, MAX_PLAYER):
                    raise TournamentRefused(N_("A pair is two players: give the second one too."))
                second = self._player(db, c.member2_id, c.name2, entrants)
                if (first[1] is not None and first[1] is second[1]) or first[0].casefold() == second[0].casefold():
                    raise TournamentRefused(N_("A pair is two different players."))
            elif c.member2_id is not None or _clean(c.name2, MAX_PLAYER):
                raise TournamentRefused(N_("This tournament is played by single players, not pairs."))
            lowest = min(t.race_winners, t.race_losers, t.race_final)
            _int(c.handicap, (0, lowest - 1), N_("A handicap start score must be below the race (to %(race)d)."), race=lowest)
            e = TournamentEntrant(
                tournament_id=t.id,
                name=first[0],
                member_id=first[1].id if first[1] else None,
                name2=second[0],
                member2_id=second[1].id if second[1] else None,
                handicap=c.handicap,
                added_at=now,
                added_by=c.actor,
            )
            db.add(e)
            db.flush()
            record_audit(db, c.actor, "tournament.entrant_add", f"tournament:{t.id}", {"entrant": e.id, "name": entrant_name(e)}, at=now)
            eid = e.id
            self._notify(db, t.id)
        if c.check_in:
            self.check_in(CheckInEntrant(tournament=c.tournament, entrant=eid, actor=c.actor))
        return eid

    def _open_for_entries(self, db: Db, tournament_id: int) -> Tournament:
        t = db.get(Tournament, tournament_id)
        if t is None:
            raise TournamentMissing(N_("There is no such tournament."))
        if t.draw_order is not None:
            raise TournamentRefused(N_("The draw is made: nobody can join now."))
        return t

    def _player(self, db: Db, member_id: int | None, name: str, entrants: list[TournamentEntrant]) -> tuple[str, Member | None]:
        """(the name, the member) of one player, refused if they are entered already."""
        member: Member | None = None
        if member_id is not None:
            try:
                member = get_member(db, member_id)
            except MemberError as missing:
                raise TournamentMissing(missing.msgid, **missing.params) from None
            clean = member.name
            if any(member.id in (e.member_id, e.member2_id) for e in entrants):
                raise TournamentRefused(N_("%(player)s is entered already."), player=clean)
        else:
            clean = _clean(name, MAX_PLAYER)
            if len(clean) < 2:
                raise TournamentRefused(N_("Give the player's name (at least 2 letters), or find them among the members."))
        for other in entrants:
            for entered in (other.name, other.name2):
                if entered and entered.casefold() == clean.casefold():
                    raise TournamentRefused(N_("%(player)s is entered already."), player=entered)
        return clean, member

    def _entrant(self, db: Db, tournament_id: int, entrant_id: int) -> TournamentEntrant:
        e = db.get(TournamentEntrant, entrant_id)
        if e is None or e.tournament_id != tournament_id or e.removed_at is not None:
            raise TournamentMissing(N_("There is no such player in this tournament."))
        return e

    @handles(CheckInEntrant)
    def check_in(self, c: CheckInEntrant) -> int | None:
        with self.h.store.reader() as db:
            t = self._open_for_entries(db, c.tournament)
            e = self._entrant(db, t.id, c.entrant)
            if e.checked_in_at is not None:
                return e.fee_tab_id
            fees = self._fee_products(db, t, e)
            label = _clean(f"{entrant_name(e)} ({t.name})", 60)
        tab: int | None = None
        if fees:
            # The till's own commands, inline: a tab of the entrant's own, an item per player's fee.
            tab = self._execute(  # fees only: its payments are the pot (the till refuses a drink on it, a merge)
                OpenWalkInTab(label=label, form_key=f"tournament-entry-{c.entrant}", holds="tournament_entry", actor=c.actor)
            )
            for n, product in enumerate(fees, start=1):
                self._execute(AddTabItem(tab=tab, product=product, form_key=f"tournament-fee-{c.entrant}-{n}", actor=c.actor))
        now = self.h.clock()
        with self.h.store.session() as db:
            t = self._open_for_entries(db, c.tournament)
            e = self._entrant(db, t.id, c.entrant)
            e.checked_in_at, e.checked_in_by, e.fee_tab_id = now, c.actor, tab
            record_audit(db, c.actor, "tournament.check_in", f"tournament:{t.id}", {"entrant": e.id, "tab": tab}, at=now)
            self._notify(db, t.id)
        return tab

    def _fee_products(self, db: Db, t: Tournament, e: TournamentEntrant) -> list[int]:
        """Each player's entry product: the members' for a member whose fee for this year is paid."""
        year = calendar_year(self.h.clock(), self.h.venue)
        out = []
        for member_id in (e.member_id, e.member2_id) if t.pairs else (e.member_id,):
            member = db.get(Member, member_id) if member_id is not None else None
            paid = member is not None and membership.eligibility(member.active, [f.year for f in member.fees], year) == "ok"
            product = t.fee_member_product_id if paid else t.fee_guest_product_id
            if product is not None:
                out.append(product)
        return out

    @handles(RemoveEntrant)
    def remove_entrant(self, c: RemoveEntrant) -> None:
        with self.h.store.reader() as db:
            t = db.get(Tournament, c.tournament)
            drawn = t is not None and t.draw_order is not None
        if drawn:  # in the bracket: their matches are walkovers from now on (broker.tournaments.results)
            self._execute(WithdrawEntrant(tournament=c.tournament, entrant=c.entrant, actor=c.actor))
            return
        with self.h.store.reader() as db:
            t = self._open_for_entries(db, c.tournament)
            e = self._entrant(db, t.id, c.entrant)
            items: list[int] = []
            if e.fee_tab_id is not None:
                paid = db.scalar(select(func.coalesce(func.sum(Payment.amount_cents), 0)).where(Payment.tab_id == e.fee_tab_id)) or 0
                if paid:
                    raise TournamentRefused(
                        N_("%(player)s has paid the entry fee: refund it first (the payment's reversal), then withdraw them."),
                        player=entrant_name(e),
                    )
                items = list(db.scalars(select(TabItem.id).where(TabItem.tab_id == e.fee_tab_id, TabItem.voided_at.is_(None))))
            tab = e.fee_tab_id
        for item in items:
            assert tab is not None
            self._execute(VoidTabItem(tab=tab, item=item, reason="withdrew from the tournament", actor=c.actor))
        now = self.h.clock()
        with self.h.store.session() as db:
            t = self._open_for_entries(db, c.tournament)
            e = self._entrant(db, t.id, c.entrant)
            e.removed_at, e.removed_by = now, c.actor
            record_audit(db, c.actor, "tournament.entrant_remove", f"tournament:{t.id}", {"entrant": e.id, "name": entrant_name(e)}, at=now)
            self._notify(db, t.id)

    # -- the draw --------------------------------------------------------------------------------

    @handles(DrawTournament)
    def draw(self, c: DrawTournament) -> tuple[int, ...]:
        now = self.h.clock()
        with self.h.store.session() as db:
            loaded = load(db, c.tournament, for_update=True)
            t = loaded.t
            if t.draw_order is not None:
                return tuple(t.draw_order["order"])  # drawn already: the same bracket again
            here = [e for e in loaded.entrants if e.checked_in_at is not None]
            if len(here) < 2:
                raise TournamentRefused(N_("Check in at least two players before the draw."))
            seed = secrets.randbelow(2**31)
            ratings = season_ratings(db, t, here, self.h.venue) if t.seeding == "seeded" else None
            order = make_draw([e.id for e in here], seed, ratings)
            Plan(rules_of(t, here), order, t.starts_at)  # refuses what cannot be played (too many)
            t.draw_seed, t.draw_order, t.drawn_at, t.drawn_by = seed, {"order": list(order)}, now, c.actor
            db.flush()
            record_audit(
                db,
                c.actor,
                "tournament.draw",
                f"tournament:{t.id}",
                {"seed": seed, "order": list(order), "not_checked_in": [e.id for e in loaded.entrants if e.checked_in_at is None]},
                at=now,
            )
            self._notify(db, t.id)
            tid = t.id
        self._on_drawn(tid, c.actor)  # the free tables get their first matches (from its start: calls_from)
        return order

    # -- starting before the planned start -----------------------------------------------------------

    @handles(StartTournamentNow)
    def start_now(self, c: StartTournamentNow) -> StartedNow:
        """Calls begin at the start (broker.tournaments.calls): to begin earlier the start
        moves, and the tables' block with it, so the tables are held from now as from any start."""
        now = self.h.clock()
        with self.h.store.reader() as db:
            t = db.get(Tournament, c.tournament)
            if t is None:
                raise TournamentMissing(N_("There is no such tournament."))
            if t.finished_at is not None:
                raise TournamentRefused(N_("The tournament is over."))
            if calls_from(t, now) is None:
                raise TournamentRefused(N_("The tournament has started already: its matches are called to its free tables."))
            old_start, name = t.starts_at, t.name
            block = db.get(BookingBlock, (t.options or {}).get("block") or 0)
            if block is not None and (block.removed_at is not None or block.end_at <= now):
                block = None  # removed by a manager, or over: nothing is held to move
            held = (block.id, block.end_at - block.start_at, tuple(block.tables)) if block is not None else None
        added: BlockAdded | None = None
        if held is not None:
            block_id, length, tables = held
            added = self._execute(AddBlock(kind="tournament", start=now, end=now + length, label=name, tables=tables, actor=c.actor))
            self._execute(RemoveBlock(block=block_id, actor=c.actor))
        with self.h.store.session() as db:
            t = db.get(Tournament, c.tournament)
            assert t is not None
            t.starts_at = now
            if added is not None:
                t.options = {**(t.options or {}), "block": added.block}
            record_audit(
                db, c.actor, "tournament.start_now", f"tournament:{t.id}", {"from": old_start.isoformat(), "to": now.isoformat()}, at=now
            )
            self._notify(db, t.id)
            drawn = t.draw_order is not None
        if drawn:
            self._on_drawn(c.tournament, c.actor)  # the free tables get their matches now
        return StartedNow(now, added.moved if added else (), added.to_call if added else ())

    # -- the TV link -------------------------------------------------------------------------------

    @handles(NewTvLink)
    def new_tv_link(self, c: NewTvLink) -> str:
        token = secrets.token_urlsafe(24)
        with self.h.store.session() as db:
            t = db.get(Tournament, c.tournament)
            if t is None:
                raise TournamentMissing(N_("There is no such tournament."))
            t.tv_token_hash = token_hash(token)
            record_audit(db, c.actor, "tournament.tv_link", f"tournament:{t.id}", {"new": True}, at=self.h.clock())
        return token

    @handles(RevokeTvLink)
    def revoke_tv_link(self, c: RevokeTvLink) -> None:
        with self.h.store.session() as db:
            t = db.get(Tournament, c.tournament)
            if t is None:
                raise TournamentMissing(N_("There is no such tournament."))
            t.tv_token_hash = None
            record_audit(db, c.actor, "tournament.tv_link", f"tournament:{t.id}", {"revoked": True}, at=self.h.clock())
            self._notify(db, t.id)

    def _notify(self, db: Db, tournament_id: int) -> None:
        after_commit(db).add(lambda: self.h.listeners.notify(TournamentChanged(tournament=tournament_id)))


def tournament_by_token(db: Db, token: str) -> Tournament | None:
    """The tournament whose TV link this is (None: no such link, or revoked)."""
    if not token or len(token) > 64:
        return None
    return db.scalar(select(Tournament).where(Tournament.tv_token_hash == token_hash(token)))


__all__ = [
    "AddEntrant",
    "CheckInEntrant",
    "CreateTournament",
    "DrawTournament",
    "NewTvLink",
    "RemoveEntrant",
    "RevokeTvLink",
    "StartTournamentNow",
    "StartedNow",
    "Tournaments",
    "tournament_by_token",
]
