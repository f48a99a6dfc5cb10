"""A game is the replay of its append-only list of operations.

The storage layer persists the ops (they are the audit log: who, when, what, why); this module
only folds them into a state and a bill. The fold reads no clock and no database, so a service
killed mid-game and restarted replays the same ops into the same state and bills exactly as
if it had never stopped. `apply` is the same fold, one step: the hub calls it to validate a
new op before appending it, and `replay` is nothing but `apply` over the log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal, TypedDict, TypeVar, Unpack, cast, get_args

from broker.domain.billing import Bill, BillLine, make_bill, minimum_line, time_lines
from broker.domain.euros import MAX_AMOUNT_CENTS
from broker.domain.refusals import N_, Name, Refusal, table_name
from broker.domain.tariffs import MemberSnapshot, Rate, RateContext, Segment, as_utc, local, rate_at, split, tariff_window
from broker.domain.venue import Venue

__all__ = [
    "OP_KINDS",
    "REASON_MAX",
    "Correction",
    "GameError",
    "GameState",
    "MemberSnapshot",
    "Op",
    "OpKind",
    "Segment",
    "apply",
    "bill",
    "bill_reason",
    "card_op",
    "card_removed_op",
    "clock_op",
    "correction_op",
    "current_rate",
    "extend_op",
    "pause_op",
    "prepaid_remaining",
    "replay",
    "resume_op",
    "segments",
    "start_op",
    "stop_op",
    "transfer_op",
]

OpKind = Literal["start", "stop", "pause", "resume", "transfer", "card", "card_removed", "extend", "extra", "correction", "void", "clock"]
OP_KINDS: tuple[str, ...] = get_args(OpKind)
# "extra" and "void" are kinds of the past: a game's extras were ops of its log until migration
# 0012 moved every one onto the game's tab (broker.till.tabs: products, VAT per item, one void
# path). They stay in the logs (never deleted), are read and ignored; nothing appends them any more.
MOVED_TO_TAB = frozenset({"extra", "void"})
# A bill already issued may be corrected (who may do that is the dashboard's access table); the
# moved kinds may follow a stop in an old log.
_AFTER_STOP = {"correction"} | MOVED_TO_TAB
REASON_MAX = 200
_MAX_MINUTES = 24 * 60
_MAX_QUANTITY = 100


class GameError(Refusal):
    """An operation that cannot apply to the game; str() says what and why, for staff and logs."""


def _utc(at: object, what: str) -> datetime:
    try:
        return as_utc(at, what)
    except ValueError as e:
        raise GameError(str(e)) from None


def _hhmm(at: datetime, venue: Venue) -> str:
    return local(at, venue).strftime("%Y-%m-%d %H:%M %Z")


@dataclass(frozen=True)
class Op:
    """One appended operation; `at` is the hub's clock, normalised to UTC."""

    kind: OpKind
    at: datetime
    # A JSON object as stored and as the API gave it: checked by `_parse`, which makes `_OpData`.
    # The hub reads its keys directly too (hub.py: op.data["table"]), hence Any.
    data: dict[str, Any] = field(default_factory=dict)
    actor: str = "system"
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in OP_KINDS:
            raise GameError(f"unknown operation {self.kind!r} (known: {', '.join(OP_KINDS)})")
        object.__setattr__(self, "at", _utc(self.at, f"{self.kind} time"))
        if not isinstance(self.data, dict):
            raise GameError(f"{self.kind} data must be a JSON object, got {type(self.data).__name__}")
        if not isinstance(self.actor, str) or not self.actor.strip():
            raise GameError(f"{self.kind} needs an actor (who did it), got {self.actor!r}")
        if self.reason is not None and not isinstance(self.reason, str):
            raise GameError(f"{self.kind} reason must be text, got {type(self.reason).__name__}")

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "at": self.at.isoformat(), "data": self.data, "actor": self.actor, "reason": self.reason}

    @classmethod
    def from_dict(cls, d: object) -> Op:
        if not isinstance(d, dict) or not {"kind", "at"} <= d.keys():
            raise GameError(f"a stored operation is an object with kind and at, got {d!r}")
        at = d["at"]
        try:
            at = datetime.fromisoformat(at) if isinstance(at, str) else at
        except ValueError:
            raise GameError(f"operation time {at!r} is not an ISO-8601 timestamp") from None
        return cls(d["kind"], at, d.get("data", {}), d.get("actor", "system"), d.get("reason"))


# --- builders: the only place that knows each kind's data keys besides the validators below ---


def start_op(
    at: datetime,
    table: str,
    tariff: str | None = None,
    member: MemberSnapshot | None = None,
    prepaid_minutes: int | None = None,
    *,
    actor: str = "system",
    reason: str | None = None,
) -> Op:
    data = {"table": table, "tariff": tariff, "member": member.to_dict() if member else None, "prepaid_minutes": prepaid_minutes}
    return Op("start", at, data, actor, reason)


def _bare_builder(kind: OpKind) -> Callable[..., Op]:
    def build(at: datetime, *, actor: str = "system", reason: str | None = None) -> Op:
        return Op(kind, at, {}, actor, reason)

    build.__name__ = build.__qualname__ = f"{kind}_op"
    build.__doc__ = f"A {kind} operation (no data)."
    return build


stop_op = _bare_builder("stop")
pause_op = _bare_builder("pause")
resume_op = _bare_builder("resume")
card_removed_op = _bare_builder("card_removed")


def transfer_op(at: datetime, table: str, *, actor: str = "system", reason: str | None = None) -> Op:
    return Op("transfer", at, {"table": table}, actor, reason)


def card_op(at: datetime, member: MemberSnapshot, *, actor: str = "system", reason: str | None = None) -> Op:
    return Op("card", at, {"member": member.to_dict()}, actor, reason)


def extend_op(at: datetime, minutes: int, *, actor: str = "system", reason: str | None = None) -> Op:
    return Op("extend", at, {"minutes": minutes}, actor, reason)


def clock_op(at: datetime, cause: str, jump_s: int | None = None) -> Op:
    """The hub's clock could not be trusted while this game ran (broker.floor.box_watch): `cause`
    "unsynced" (never synchronised since boot) or "jump" (it stepped by `jump_s` seconds). Changes
    no amount: it marks the game so staff check its times and bill."""
    return Op("clock", at, {"cause": cause, "jump_s": jump_s}, "system", None)


def correction_op(at: datetime, amount_cents: int, reason: str, *, actor: str) -> Op:
    return Op("correction", at, {"amount_cents": amount_cents}, actor, reason)


def bill_reason(reason: object) -> str:
    """The reason of a correction, trimmed; GameError when it is missing or too long.

    A person reads it on the bill and in the audit months later, so it must say something."""
    text = reason.strip() if isinstance(reason, str) else ""
    if len(text) < 3:
        raise GameError(N_("Write why (at least 3 characters): the reason is printed on the bill and kept in the record."))
    if len(text) > REASON_MAX:
        raise GameError(N_("The reason is too long: %(max)d characters at most."), max=REASON_MAX)
    return text


# --- validating op data: garbage from storage or the API becomes a GameError, never a crash ---


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GameError(f"{where} must be non-empty text, got {value!r}")
    return value


def _int_in(low: int, high: int) -> Callable[[object, str], int]:
    def check(value: object, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise GameError(f"{where} must be a whole number from {low} to {high}, got {value!r}")
        return value

    return check


def _correction_cents(value: object, where: str) -> int:
    amount = _int_in(-MAX_AMOUNT_CENTS, MAX_AMOUNT_CENTS)(value, where)
    if amount == 0:
        raise GameError(f"{where} must not be 0: a correction changes the bill")
    return amount


def _member(value: object, where: str) -> MemberSnapshot:
    if not isinstance(value, dict):
        raise GameError(f"{where} must be an object with member_id, name, fee_paid, got {value!r}")
    _only_keys(value, {"member_id", "name", "fee_paid", "year", "next_year_paid"}, {"member_id", "name", "fee_paid"}, where)
    # Ops stored before next_year_paid existed replay as they were billed: next year unpaid.
    fee_paid, next_paid = (_bool(value.get(k, False), f"{where}.{k}") for k in ("fee_paid", "next_year_paid"))
    year = value.get("year")
    return MemberSnapshot(
        member_id=_int_in(1, 2**63 - 1)(value["member_id"], f"{where}.member_id"),
        name=_text(value["name"], f"{where}.name"),
        fee_paid=fee_paid,
        year=None if year is None else _int_in(2000, 9999)(year, f"{where}.year"),
        next_year_paid=next_paid,
    )


def _one_of(*allowed: str) -> Callable[[object, str], str]:
    def check(value: object, where: str) -> str:
        if value not in allowed:
            raise GameError(f"{where} must be one of {', '.join(allowed)}, got {value!r}")
        return str(value)

    return check


def _bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise GameError(f"{where} must be true or false, got {value!r}")
    return value


def _only_keys(d: Mapping[str, object], allowed: set[str], required: set[str], where: str) -> None:
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise GameError(f"{where} has unexpected key(s) {', '.join(map(repr, unknown))} (allowed: {', '.join(sorted(allowed)) or 'none'})")
    missing = sorted(required - set(d))
    if missing:
        raise GameError(f"{where} is missing {', '.join(map(repr, missing))}")


Check = Callable[[object, str], object]
# kind -> key -> (check, required); an optional key may also be null.
_SCHEMAS: dict[str, dict[str, tuple[Check, bool]]] = {
    "start": {
        "table": (_text, True),
        "tariff": (_text, False),
        "member": (_member, False),
        "prepaid_minutes": (_int_in(1, _MAX_MINUTES), False),
    },
    "stop": {},
    "pause": {},
    "resume": {},
    "card_removed": {},
    "transfer": {"table": (_text, True)},
    "card": {"member": (_member, True)},
    "extend": {"minutes": (_int_in(1, _MAX_MINUTES), True)},
    "extra": {"extra": (_text, True), "quantity": (_int_in(1, _MAX_QUANTITY), True), "unit_cents": (_int_in(0, 1_000_000), True)},
    "correction": {"amount_cents": (_correction_cents, True)},
    "void": {"extra_op": (_int_in(1, 1_000_000), True)},
    "clock": {"cause": (_one_of("unsynced", "jump"), True), "jump_s": (_int_in(-(10**10), 10**10), False)},
}


class _OpData(TypedDict, total=False):
    """An op's data once `_parse` has checked it: each kind has the keys of its `_SCHEMAS` entry."""

    table: str
    tariff: str | None
    member: MemberSnapshot | None  # null only where optional (start); card requires it
    prepaid_minutes: int | None
    minutes: int
    extra: str
    quantity: int
    unit_cents: int
    amount_cents: int
    extra_op: int
    cause: str
    jump_s: int | None


def _parse(op: Op) -> _OpData:
    schema = _SCHEMAS[op.kind]
    _only_keys(op.data, set(schema), {k for k, (_, req) in schema.items() if req}, f"{op.kind} data")
    parsed = {k: None if op.data.get(k) is None and not req else check(op.data[k], f"{op.kind}.{k}") for k, (check, req) in schema.items()}
    # The schema's checks made each value the type _OpData names for its key (see _SCHEMAS).
    return cast(_OpData, parsed)


# --- state ---


@dataclass(frozen=True)
class Correction:
    at: datetime
    amount_cents: int
    reason: str
    actor: str


@dataclass(frozen=True)
class GameState:
    """Immutable, so a state handed out can never be changed behind the replay's back."""

    table: str
    state: Literal["running", "paused", "stopped"]
    started_at: datetime
    last_at: datetime  # the latest op: new ops may not go back in time
    tariff: str | None = None  # a requested special tariff (training); None = standard or club card
    tariff_until: datetime | None = None  # end of that tariff's hours, after which the open rate applies
    member: MemberSnapshot | None = None
    stopped_at: datetime | None = None
    paused_at: datetime | None = None
    running_since: datetime | None = None  # start of the played time not yet cut into segments
    prepaid_until: datetime | None = None
    segments: tuple[Segment, ...] = ()  # played time up to the last op that changed the rate or paused
    corrections: tuple[Correction, ...] = ()
    op_count: int = 0
    clock_unsure: bool = False  # the hub's clock was not to be trusted during the game (a "clock" op)

    @property
    def context(self) -> RateContext:
        return RateContext(self.table, self.tariff, self.tariff_until, self.member)

    @property
    def is_open(self) -> bool:
        return self.state != "stopped"


_Found = TypeVar("_Found")


def _venue_lookup(lookup: Callable[[str], _Found], key: str) -> _Found:
    try:
        return lookup(key)
    except KeyError as e:
        raise GameError(e.args[0]) from None


def _billed_table(venue: Venue, table_id: str) -> str:
    spec = _venue_lookup(venue.table, table_id)
    if not spec.kind.billed:
        raise GameError(N_("%(table)s is not billed by time; only pool and carom tables are."), table=table_name(spec))
    return table_id


def _requested_tariff(
    venue: Venue, tariff_id: str | None, member: MemberSnapshot | None, at: datetime
) -> tuple[str | None, datetime | None]:
    """(special tariff or None for automatic, end of its hours)."""
    for needed in (venue.billing.default_tariff, venue.billing.member_tariff):
        _venue_lookup(venue.tariff, needed)
    if tariff_id is None or tariff_id == venue.billing.default_tariff:
        return None, None
    tariff = _venue_lookup(venue.tariff, tariff_id)
    if tariff.requires_member:
        # Asking for the club-card tariff is asking to check the card: automatic choice decides.
        if member is None:
            raise GameError(N_("The rate %(tariff)s needs a member's club card; none was given."), tariff=Name(tariff.name, tariff.name_en))
        return None, None
    if tariff.hours is None:
        return tariff_id, None
    window = tariff_window(tariff, at, venue)
    if window is None:
        hours = f"{tariff.hours.open:%H:%M}–{tariff.hours.close:%H:%M}"
        raise GameError(
            N_("The rate %(tariff)s can only start between %(hours)s; it is %(now)s now."),
            tariff=Name(tariff.name, tariff.name_en),
            hours=hours,
            now=local(at, venue).strftime("%H:%M"),
        )
    return tariff_id, window[1]


def _close(state: GameState, at: datetime, venue: Venue) -> GameState:
    """Cut the played time up to `at` into segments at the rates that applied."""
    if state.running_since is None:
        return state
    cut = split(venue, state.context, state.running_since, at)
    return replace(state, segments=state.segments + tuple(cut), running_since=None)


class _Context(TypedDict, total=False):
    """What a transfer or a card changes of a game's rate context."""

    table: str
    member: MemberSnapshot | None


def _recontext(state: GameState, op: Op, venue: Venue, **changes: Unpack[_Context]) -> GameState:
    """The rate may change from here on (table, card): close what was played, go on under the new context."""
    closed = _close(state, op.at, venue)
    return replace(closed, running_since=op.at if state.state == "running" else None, **changes)


def _unpause_prepaid(state: GameState, at: datetime) -> datetime | None:
    # Paused time is not played time, so it does not use up prepaid minutes.
    if state.prepaid_until is None or state.paused_at is None:
        return state.prepaid_until
    return state.prepaid_until + (at - state.paused_at)


def _need_state(state: GameState, op: Op, wanted: str) -> None:
    if state.state != wanted:
        # Only pause wants "running" and only resume "paused"; a stopped game is refused before.
        if wanted == "running":
            raise GameError(N_("The game is already paused."))
        raise GameError(N_("The game is not paused; it is running."))


def _start(op: Op, d: _OpData, venue: Venue) -> GameState:
    table = _billed_table(venue, d["table"])
    tariff, until = _requested_tariff(venue, d["tariff"], d["member"], op.at)
    prepaid = op.at + timedelta(minutes=d["prepaid_minutes"]) if d["prepaid_minutes"] else None
    return GameState(
        table=table,
        state="running",
        started_at=op.at,
        last_at=op.at,
        tariff=tariff,
        tariff_until=until,
        member=d["member"],
        running_since=op.at,
        prepaid_until=prepaid,
    )


def _stop(state: GameState, op: Op, d: _OpData, venue: Venue) -> GameState:
    closed = _close(state, op.at, venue)
    return replace(closed, state="stopped", stopped_at=op.at, paused_at=None, prepaid_until=_unpause_prepaid(state, op.at))


def _pause(state: GameState, op: Op, d: _OpData, venue: Venue) -> GameState:
    _need_state(state, op, "running")
    return replace(_close(state, op.at, venue), state="paused", paused_at=op.at)


def _resume(state: GameState, op: Op, d: _OpData, venue: Venue) -> GameState:
    _need_state(state, op, "paused")
    return replace(state, state="running", paused_at=None, running_since=op.at, prepaid_until=_unpause_prepaid(state, op.at))


def _transfer(state: GameState, op: Op, d: _OpData, venue: Venue) -> GameState:
    target = _billed_table(venue, d["table"])
    if target == state.table:
        raise GameError(N_("The game is already on %(table)s."), table=table_name(venue.table(target)))
    return _recontext(state, op, venue, table=target)


def _card(state: GameState, op: Op, d: _OpData, venue: Venue) -> GameState:
    if state.member is not None and d["member"] == state.member:  # card's member is never None (_SCHEMAS)
        raise GameError(N_("The club card of %(member)s is already on this game."), member=state.member.name)
    return _recontext(state, op, venue, member=d["member"])


def _card_removed(state: GameState, op: Op, d: _OpData, venue: Venue) -> GameState:
    if state.member is None:
        raise GameError(N_("There is no club card on this game to take off."))
    return _recontext(state, op, venue, member=None)


def _extend(state: GameState, op: Op, d: _OpData, venue: Venue) -> GameState:
    if state.prepaid_until is None:
        raise GameError(N_("The game has no prepaid time, so there is nothing to extend."))
    # Extending after the prepaid time ran out (expiry "continue") buys minutes from now, not from the past.
    now = state.paused_at or op.at
    return replace(state, prepaid_until=max(state.prepaid_until, now) + timedelta(minutes=d["minutes"]))


def _moved_to_tab(state: GameState, op: Op, d: _OpData, venue: Venue) -> GameState:
    """An extra (or its void) of an old log: migration 0012 put it on the game's tab, where it counts."""
    return state


def _clock(state: GameState, op: Op, d: _OpData, venue: Venue) -> GameState:
    return replace(state, clock_unsure=True)


def _correct(state: GameState, op: Op, d: _OpData, venue: Venue) -> GameState:
    reason = _text(op.reason, "a correction's reason")
    if op.actor == "system":
        raise GameError(N_("A correction is made by a person (a manager), not by the system."))
    return replace(state, corrections=(*state.corrections, Correction(op.at, d["amount_cents"], reason, op.actor)))


_HANDLERS: dict[str, Callable[[GameState, Op, _OpData, Venue], GameState]] = {
    "stop": _stop,
    "pause": _pause,
    "resume": _resume,
    "transfer": _transfer,
    "card": _card,
    "card_removed": _card_removed,
    "extend": _extend,
    "extra": _moved_to_tab,
    "correction": _correct,
    "void": _moved_to_tab,
    "clock": _clock,
}


def apply(state: GameState | None, op: Op, venue: Venue) -> GameState:
    """The state after `op`; GameError if `op` cannot follow `state` (None = no game yet)."""
    if not isinstance(op, Op):
        raise GameError(f"expected an Op, got {type(op).__name__}")
    data = _parse(op)
    if state is None:
        if op.kind != "start":
            raise GameError(f"a game begins with start, not {op.kind}")
        return replace(_start(op, data, venue), op_count=1)
    if op.kind == "start":
        raise GameError(f"the game on {state.table} was already started at {state.started_at.isoformat()}")
    if op.at < state.last_at:
        raise GameError(f"{op.kind} at {op.at.isoformat()} is earlier than the previous operation at {state.last_at.isoformat()}")
    if state.state == "stopped" and op.kind not in _AFTER_STOP:
        assert state.stopped_at is not None  # _stop sets both
        stopped = local(state.stopped_at, venue).strftime("%H:%M")
        raise GameError(N_("The game has already ended; it was stopped at %(time)s."), time=stopped)
    new = _HANDLERS[op.kind](state, op, data, venue)
    return replace(new, last_at=op.at, op_count=state.op_count + 1)


def replay(ops: Sequence[Op], venue: Venue) -> GameState:
    """Fold the whole log; the error names the first operation that does not fit."""
    state: GameState | None = None
    for n, op in enumerate(ops, start=1):
        try:
            state = apply(state, op, venue)
        except GameError as e:
            raise GameError(f"operation {n} ({getattr(op, 'kind', '?')}): {e}") from None
    if state is None:
        raise GameError("no operations to replay: a game needs at least its start")
    return state


# --- reading a state at a moment ---


def _now(state: GameState, now: datetime) -> datetime:
    now = _utc(now, "now")
    if state.is_open and now < state.last_at:
        raise GameError(f"now ({now.isoformat()}) is before the game's last operation ({state.last_at.isoformat()})")
    return now


def segments(state: GameState, venue: Venue, now: datetime) -> list[Segment]:
    """All played time, an open game's up to `now`."""
    now = _now(state, now)
    open_part = split(venue, state.context, state.running_since, now) if state.running_since else []
    return [*state.segments, *open_part]


def current_rate(state: GameState, venue: Venue, now: datetime) -> Rate | None:
    """The rate the table runs at now; None while paused or stopped."""
    now = _now(state, now)
    return rate_at(venue, state.context, now) if state.state == "running" else None


def prepaid_remaining(state: GameState, now: datetime) -> timedelta | None:
    """Prepaid play left (never negative); None for an open-ended game."""
    now = _now(state, now)
    if state.prepaid_until is None:
        return None
    ref = {"running": now, "paused": state.paused_at, "stopped": state.stopped_at}[state.state]
    assert ref is not None  # _pause sets paused_at, _stop stopped_at
    return max(timedelta(0), state.prepaid_until - ref)


def _correction_lines(state: GameState) -> list[BillLine]:
    return [
        BillLine(
            kind="correction",
            description=f"Korekcia ({c.actor}): {c.reason}",
            description_en=f"Correction ({c.actor}): {c.reason}",
            reason="manual",
            amount_cents=c.amount_cents,
            start=c.at,
            unit_cents=c.amount_cents,
        )
        for c in state.corrections
    ]


def bill(state: GameState, venue: Venue, now: datetime) -> Bill:
    """The bill of the game's table time (and a manager's corrections); an open game is billed up
    to `now`, a stopped one ignores it. What was put on the game's tab (extras, drinks) is the tab's."""
    played = time_lines(segments(state, venue, now), venue)
    minimum = minimum_line(played, venue.billing.minimum_cents)
    lines = [*played, *([minimum] if minimum else []), *_correction_lines(state)]
    return make_bill(lines, venue.billing.vat_percent)


def bill_now(state: GameState, venue: Venue, now: datetime) -> Bill:
    """The bill staff see at `now`: an open game's up to now (never before its last op, should the
    clock have gone back), a stopped one's as it stopped."""
    return bill(state, venue, max(now, state.last_at) if state.is_open else state.last_at)
