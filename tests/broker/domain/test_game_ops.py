"""Sessions replayed from their ops: the issue's billing examples, every op, garbage, and properties."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from math import floor
from typing import TYPE_CHECKING, Any, cast

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from broker.domain.floor.game_ops import (
    GameError,
    MemberSnapshot,
    Op,
    apply,
    bill,
    card_op,
    card_removed_op,
    correction_op,
    current_rate,
    extend_op,
    pause_op,
    prepaid_remaining,
    replay,
    resume_op,
    segments,
    start_op,
    stop_op,
    transfer_op,
)
from tests.broker.domain.test_tariffs import BRATISLAVA, HAPPY, LAVOS, PAID, UNPAID, bratislava, venue_with

if TYPE_CHECKING:
    from broker.domain.billing import Bill
    from broker.domain.floor.game_ops import GameState


T0 = bratislava(2026, 11, 30, 17, 0)  # a Monday evening


def mins(n: float) -> datetime:
    return T0 + timedelta(minutes=n)


def billed(ops: list[Op], venue: Any = LAVOS, now: datetime | None = None) -> Bill:
    state = replay(ops, venue)
    return bill(state, venue, now or state.last_at)


def shape(b: Any) -> list[tuple[Any, ...]]:
    return [(line.kind, line.reason, line.amount_cents) for line in b.lines]


# --- the examples ---


def test_standard_90_minutes_is_9_eur() -> None:
    b = billed([start_op(T0, "pool-01"), stop_op(mins(90))])
    assert shape(b) == [("time", "standard", 900)]
    assert (b.total_cents, b.vat_cents, b.net_cents, b.vat_percent) == (900, 168, 732, 23)


def test_club_card_95_minutes_on_a_club_card_table_is_6_33() -> None:
    b = billed([start_op(T0, "pool-05", member=PAID), stop_op(mins(95))])
    assert shape(b) == [("time", "club_card", 633)]
    assert b.lines[0].tariff_id == "club_card" and b.lines[0].rate_cents_per_hour == 400


def test_card_shown_after_20_of_60_minutes_is_two_lines_4_67() -> None:
    b = billed([start_op(T0, "pool-05"), card_op(mins(20), PAID), stop_op(mins(60))])
    assert shape(b) == [("time", "standard", 200), ("time", "club_card", 267)]
    assert b.total_cents == 467
    assert [(line.start, line.end, line.billed_seconds) for line in b.lines] == [(T0, mins(20), 1200), (mins(20), mins(60), 2400)]


@pytest.mark.parametrize(
    "table, member, reason, note",
    [
        ("pool-01", PAID, "card_table_not_eligible", "na tomto stole klubová zľava neplatí"),
        ("pool-05", UNPAID, "card_unpaid", "nie je zaplatený"),
    ],
)
def test_card_not_honoured_bills_standard_with_the_reason(table: Any, member: Any, reason: Any, note: Any) -> None:
    b = billed([start_op(T0, table, member=member), stop_op(mins(60))])
    assert shape(b) == [("time", reason, 600)]
    assert b.lines[0].tariff_id == "standard" and note in b.lines[0].description


def test_card_shown_on_a_table_without_card_rate_is_its_own_line() -> None:
    b = billed([start_op(T0, "pool-01"), card_op(mins(20), PAID), stop_op(mins(60))])
    assert shape(b) == [("time", "standard", 200), ("time", "card_table_not_eligible", 400)]


# --- every operation ---


def test_training_starts_only_within_hours_and_continues_at_standard_after_19() -> None:
    with pytest.raises(GameError, match=r"The rate Training can only start between 15:00–19:00; it is 14:59 now"):
        replay([start_op(bratislava(2026, 7, 1, 14, 59), "pool-01", tariff="training")], LAVOS)
    b = billed([start_op(bratislava(2026, 7, 1, 18, 0), "pool-01", tariff="training"), stop_op(bratislava(2026, 7, 1, 20, 0))])
    assert shape(b) == [("time", "training", 1500), ("time", "training_hours_ended", 600)]
    assert b.lines[1].start == bratislava(2026, 7, 1, 19, 0)


def test_training_may_start_before_opening() -> None:
    assert (
        billed([start_op(bratislava(2026, 7, 1, 15, 0), "carom-01", tariff="training"), stop_op(bratislava(2026, 7, 1, 16, 0))]).total_cents
        == 1500
    )


def test_transfer_between_tables_with_different_rates_itemises_each() -> None:
    ops = [start_op(T0, "pool-05", member=PAID), transfer_op(mins(30), "pool-01"), transfer_op(mins(45), "pool-06"), stop_op(mins(75))]
    b = billed(ops)
    assert shape(b) == [("time", "club_card", 200), ("time", "card_table_not_eligible", 150), ("time", "club_card", 200)]
    assert [line.description.split(":")[0] for line in b.lines] == ["Pool 5", "Pool 1", "Pool 6"]
    assert replay(ops, LAVOS).table == "pool-06"


def test_a_transfer_starts_a_line_even_at_the_same_rate_so_a_card_never_costs_more() -> None:
    # Lines are rounded up one by one; were the card-less session one merged line, the card's
    # extra line could round up to more than the card saves (17 against 10 cents here).
    ops = [start_op(T0, "pool-05"), transfer_op(T0 + timedelta(seconds=10), "pool-01"), stop_op(T0 + timedelta(seconds=50))]
    assert shape(billed(ops)) == [("time", "standard", 10), ("time", "standard", 10)]
    with_card = [start_op(T0, "pool-05", member=PAID), *ops[1:]]
    assert shape(billed(with_card)) == [("time", "club_card", 7), ("time", "card_table_not_eligible", 10)]


def test_card_removed_returns_to_standard() -> None:
    b = billed([start_op(T0, "pool-05", member=PAID), card_removed_op(mins(30)), stop_op(mins(60))])
    assert shape(b) == [("time", "club_card", 200), ("time", "standard", 300)]


def test_another_members_card_or_a_fee_just_paid_updates_the_snapshot() -> None:
    paid_now = MemberSnapshot(UNPAID.member_id, UNPAID.name, fee_paid=True, year=2026)
    b = billed([start_op(T0, "pool-05", member=UNPAID), card_op(mins(30), paid_now), stop_op(mins(60))])
    assert shape(b) == [("time", "card_unpaid", 300), ("time", "club_card", 200)]


def test_time_band_splits_a_session_across_the_dst_change() -> None:
    # Night of 2026-10-25, clocks go from 03:00 back to 02:00: the band 01:00-04:00 lasts 4 real hours.
    night = {"tariff": "standard", "days": ["sun"], "start": "01:00", "end": "04:00", "rate_cents_per_hour": 300, "name": "noc"}
    venue = venue_with([night])
    start, end = bratislava(2026, 10, 25, 0, 0), datetime(2026, 10, 25, 4, 0, tzinfo=UTC)  # 05:00 CET
    b = billed([start_op(start, "pool-01"), stop_op(end)], venue)
    assert shape(b) == [("time", "standard", 600), ("time", "band:noc", 1200), ("time", "standard", 600)]
    assert [line.billed_seconds for line in b.lines] == [3600, 4 * 3600, 3600]
    assert "pásmo noc" in b.lines[1].description


def test_pause_is_not_billed_and_pushes_prepaid_time_back() -> None:
    ops = [start_op(T0, "pool-01", prepaid_minutes=60), pause_op(mins(20)), resume_op(mins(35))]
    state = replay(ops, LAVOS)
    assert state.prepaid_until == mins(75)
    assert prepaid_remaining(state, mins(45)) == timedelta(minutes=30)
    b = bill(state, LAVOS, mins(75))
    assert shape(b) == [("time", "standard", 600)]  # one line: 20 + 40 played minutes
    paused = replay(ops[:2], LAVOS)
    assert prepaid_remaining(paused, mins(30)) == timedelta(minutes=40)
    assert current_rate(paused, LAVOS, mins(30)) is None
    rate = current_rate(state, LAVOS, mins(40))
    assert rate is not None and rate.rate_cents_per_hour == 600


def test_extend_adds_minutes_and_after_expiry_counts_from_now() -> None:
    state = replay([start_op(T0, "pool-01", prepaid_minutes=30), extend_op(mins(10), 30)], LAVOS)
    assert state.prepaid_until == mins(60)
    state = apply(state, extend_op(mins(90), 15), LAVOS)  # expired 30 min ago, expiry "continue"
    assert state.prepaid_until == mins(105)
    assert prepaid_remaining(state, mins(200)) == timedelta(0)
    assert prepaid_remaining(replay([start_op(T0, "pool-01")], LAVOS), mins(1)) is None


def test_stop_while_paused_keeps_the_remaining_prepaid_time() -> None:
    state = replay([start_op(T0, "pool-01", prepaid_minutes=60), pause_op(mins(20)), stop_op(mins(50))], LAVOS)
    assert prepaid_remaining(state, mins(500)) == timedelta(minutes=40)
    assert bill(state, LAVOS, mins(500)).total_cents == 200


def test_minimum_charge_tops_up_short_sessions() -> None:
    venue = venue_with(minimum_cents=300)
    assert shape(billed([start_op(T0, "pool-01"), stop_op(mins(10))], venue)) == [("time", "standard", 100), ("minimum", "minimum", 200)]
    assert shape(billed([start_op(T0, "pool-01"), stop_op(mins(40))], venue)) == [("time", "standard", 400)]


def test_unit_of_five_minutes_is_per_line() -> None:
    venue = venue_with(unit_s=300)
    b = billed([start_op(T0, "pool-05"), card_op(mins(1), PAID), stop_op(mins(7))], venue)
    assert [(line.billed_seconds, line.amount_cents) for line in b.lines] == [(300, 50), (600, 67)]


def test_corrections_need_a_reason_and_the_bill_never_goes_below_zero() -> None:
    ops = [start_op(T0, "pool-01"), stop_op(mins(30)), correction_op(mins(31), -100, "svetlo nesvietilo", actor="manager:eva")]
    b = billed(ops)
    assert shape(b) == [("time", "standard", 300), ("correction", "manual", -100)]
    assert "svetlo nesvietilo" in b.lines[1].description and "manager:eva" in b.lines[1].description
    b = billed([*ops, correction_op(mins(32), -1000, "pozvánka", actor="manager:eva")])
    assert shape(b)[-1] == ("correction", "floor_zero", 800) and b.total_cents == 0


def test_open_session_is_billed_up_to_now_and_stop_at_now_bills_the_same() -> None:
    state = replay([start_op(T0, "pool-05", member=PAID)], LAVOS)
    assert bill(state, LAVOS, mins(95)).total_cents == 633
    assert bill(apply(state, stop_op(mins(95)), LAVOS), LAVOS, mins(500)).total_cents == 633


def test_ops_survive_json_and_a_restart_replays_the_same_bill() -> None:
    ops = [
        start_op(T0, "pool-05", prepaid_minutes=90, actor="staff:jana"),
        card_op(mins(20), PAID),
        pause_op(mins(30)),
        resume_op(mins(40)),
        transfer_op(mins(50), "pool-02"),
        extend_op(mins(55), 30),
        correction_op(mins(57), -50, "zlé tágo", actor="manager:eva"),
    ]
    stored = json.loads(json.dumps([op.to_dict() for op in ops]))
    restored = [Op.from_dict(d) for d in stored]
    assert restored == ops
    assert replay(restored, LAVOS) == replay(ops, LAVOS)
    assert bill(replay(restored, LAVOS), LAVOS, mins(80)) == bill(replay(ops, LAVOS), LAVOS, mins(80))


def test_op_times_are_normalised_to_utc() -> None:
    op = stop_op(datetime(2026, 11, 30, 18, 0, tzinfo=BRATISLAVA))
    assert op.at.tzinfo is UTC and op.at == datetime(2026, 11, 30, 17, 0, tzinfo=UTC)


# --- garbage: every invalid sequence is a GameError that says what is wrong ---

S = start_op(T0, "pool-01")
SP = start_op(T0, "pool-05", prepaid_minutes=30)


@pytest.mark.parametrize(
    "ops, message",
    [
        ([], "no operations to replay"),
        ([stop_op(T0)], "operation 1 \\(stop\\): a game begins with start, not stop"),
        ([S, S], "already started"),
        ([S, stop_op(mins(1)), stop_op(mins(2))], "The game has already ended; it was stopped at 17:01"),
        ([S, stop_op(mins(1)), pause_op(mins(2))], "The game has already ended"),
        ([S, resume_op(mins(1))], "The game is not paused; it is running"),
        ([S, pause_op(mins(1)), pause_op(mins(2))], "The game is already paused"),
        ([S, stop_op(mins(-1))], "earlier than the previous operation"),
        ([S, transfer_op(mins(1), "foos-01")], "Foosball 1 is not billed by time; only pool and carom tables are"),
        ([S, transfer_op(mins(1), "pool-01")], "The game is already on Pool 1"),
        ([S, transfer_op(mins(1), "pool-99")], "no table 'pool-99'"),
        ([start_op(T0, "darts-01")], "Darts is not billed by time"),
        ([start_op(T0, "pool-01", tariff="vip")], "no tariff 'vip'"),
        ([start_op(T0, "pool-05", tariff="club_card")], "needs a member's club card"),
        (
            [start_op(mins(150), "pool-01", tariff="training")],
            "The rate Training can only start between 15:00–19:00; it is 19:30 now",
        ),
        ([start_op(T0, "pool-01", prepaid_minutes=0)], "start.prepaid_minutes must be a whole number from 1 to 1440, got 0"),
        ([S, card_removed_op(mins(1))], "There is no club card on this game to take off"),
        ([start_op(T0, "pool-05", member=PAID), card_op(mins(1), PAID)], "The club card of .* is already on this game"),
        ([S, extend_op(mins(1), 10)], "The game has no prepaid time, so there is nothing to extend"),
        ([SP, extend_op(mins(1), 0)], "extend.minutes must be a whole number"),
        ([SP, Op("extend", mins(1), {"minutes": "10"})], "extend.minutes must be a whole number"),
        ([S, Op("extra", mins(1), {"extra": "topping", "quantity": 0, "unit_cents": 60})], "extra.quantity must be a whole number from 1"),
        ([S, Op("extra", mins(1), {"extra": "topping", "quantity": 1})], "extra data is missing 'unit_cents'"),
        ([S, correction_op(mins(1), -100, "  ", actor="manager:eva")], "a correction's reason must be non-empty text"),
        ([S, Op("correction", mins(1), {"amount_cents": -100}, "manager:eva")], "a correction's reason must be non-empty"),
        ([S, correction_op(mins(1), 0, "nič", actor="manager:eva")], "must not be 0"),
        ([S, correction_op(mins(1), 100, "prečo", actor="system")], "A correction is made by a person"),
        ([S, Op("correction", mins(1), {"amount_cents": 1.5}, "m", "r")], "amount_cents must be a whole number"),
        ([Op("start", T0, {"table": "pool-01", "colour": "red"})], "start data has unexpected key\\(s\\) 'colour'"),
        ([Op("start", T0, {"tariff": "standard"})], "start data is missing 'table'"),
        ([Op("start", T0, {"table": 5})], "start.table must be non-empty text, got 5"),
        (
            [Op("start", T0, {"table": "pool-05", "member": {"member_id": 1, "name": "A", "fee_paid": "yes"}})],
            "fee_paid must be true or false",
        ),
        (
            [Op("start", T0, {"table": "pool-05", "member": {"member_id": True, "name": "A", "fee_paid": True}})],
            "member_id must be a whole number",
        ),
        ([Op("start", T0, {"table": "pool-05", "member": "7"})], "start.member must be an object"),
        ([S, Op("card", mins(1), {})], "card data is missing 'member'"),
        ([S, Op("stop", mins(1), {"now": True})], "stop data has unexpected key"),
        ([S, "stop"], "expected an Op, got str"),
    ],
)
def test_invalid_sequences_are_refused_with_a_clear_message(ops: Any, message: Any) -> None:
    with pytest.raises(GameError, match=message):
        replay(ops, LAVOS)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: start_op(datetime(2026, 11, 30, 17, 0), "pool-01"), "start time 2026-11-30T17:00:00 has no timezone"),
        (lambda: stop_op("2026-11-30T17:00:00Z"), "stop time must be a datetime, got str"),
        (lambda: Op(cast(Any, "explode"), T0), "unknown operation 'explode'"),  # garbage on purpose
        (lambda: Op("stop", T0, cast(Any, ["x"])), "stop data must be a JSON object"),  # garbage on purpose
        (lambda: Op("stop", T0, {}, ""), "needs an actor"),
        (lambda: Op("stop", T0, {}, "system", cast(Any, 5)), "reason must be text"),  # garbage on purpose
        (lambda: Op.from_dict({"kind": "stop", "at": "yesterday"}), "not an ISO-8601 timestamp"),
        (lambda: Op.from_dict({"kind": "stop", "at": "2026-11-30T17:00:00"}), "has no timezone"),
        (lambda: Op.from_dict(["stop"]), "a stored operation is an object"),
        (lambda: bill(replay([S], LAVOS), LAVOS, datetime(2026, 11, 30, 18, 0)), "now 2026-11-30T18:00:00 has no timezone"),
        (lambda: bill(replay([S], LAVOS), LAVOS, mins(-5)), "now .* is before the game's last operation"),
        (lambda: prepaid_remaining(replay([SP], LAVOS), datetime(2026, 11, 30, 18, 0)), "has no timezone"),
    ],
)
def test_garbage_values_are_refused(make: Any, message: Any) -> None:
    with pytest.raises(GameError, match=message):
        make()


def test_session_error_is_a_value_error() -> None:
    assert issubclass(GameError, ValueError)


# --- properties over generated sessions ---

BILLIARD = [t.id for t in LAVOS.tables if t.kind.billed]
BANDED = venue_with(
    [HAPPY, {"tariff": "club_card", "days": ["sat", "sun"], "start": "22:00", "end": "02:00", "rate_cents_per_hour": 300, "name": "noc"}],
    unit_s=300,
    minimum_cents=250,
)
members = st.builds(MemberSnapshot, member_id=st.integers(1, 3), name=st.just("Člen"), fee_paid=st.booleans())
starts = st.datetimes(datetime(2026, 1, 1), datetime(2027, 12, 31), timezones=st.just(UTC))
STEP_KINDS = ["pause", "resume", "transfer", "card", "card_removed", "extend", "stop"]


def _step_op(kind: str, at: datetime, table: str, member: MemberSnapshot, venue: Any) -> Op:
    return {
        "pause": lambda: pause_op(at),
        "resume": lambda: resume_op(at),
        "transfer": lambda: transfer_op(at, table),
        "card": lambda: card_op(at, member),
        "card_removed": lambda: card_removed_op(at),
        "extend": lambda: extend_op(at, 15),
        "stop": lambda: stop_op(at),
    }[kind]()


@st.composite
def sessions(draw: Any, venue: Any = LAVOS, kinds: Any = STEP_KINDS, member: Any = st.none() | members) -> tuple[list[Op], GameState]:
    """Ops of a valid session, as the live service builds them: each validated by apply before it is appended."""
    at = draw(starts)
    ops = [start_op(at, draw(st.sampled_from(BILLIARD)), member=draw(member), prepaid_minutes=draw(st.none() | st.integers(1, 180)))]
    state = apply(None, ops[0], venue)
    for _ in range(draw(st.integers(0, 8))):
        # Short gaps too: per-line rounding only shows when a line lasts a unit or two.
        at += timedelta(seconds=draw(st.integers(0, 180) | st.integers(0, 3 * 3600)), microseconds=draw(st.integers(0, 999_999)))
        op = _step_op(draw(st.sampled_from(kinds)), at, draw(st.sampled_from(BILLIARD)), draw(members), venue)
        try:
            state = apply(state, op, venue)
        except GameError:
            continue
        ops.append(op)
    return ops, state


venues = st.sampled_from([LAVOS, BANDED])
later = st.integers(0, 5 * 3600).map(lambda s: timedelta(seconds=s))


def half_up(x: Fraction) -> int:
    return floor(x + Fraction(1, 2))


@settings(deadline=None)
@given(st.data(), venues, later)
def test_bill_is_the_sum_of_its_lines_rounded_exactly(data: Any, venue: Any, wait: Any) -> None:
    _ops, state = data.draw(sessions(venue))
    b = bill(state, venue, state.last_at + wait)
    assert b.total_cents == sum(line.amount_cents for line in b.lines) >= 0
    assert b.vat_cents + b.net_cents == b.total_cents
    for line in b.lines:
        if line.kind == "time":
            assert line.amount_cents == half_up(
                Fraction(cast(int, line.rate_cents_per_hour) * cast(int, line.billed_seconds), 3600)
            )  # set on a time line


@settings(deadline=None)
@given(st.data(), venues, later, later)
def test_bill_never_decreases_as_the_session_gets_longer(data: Any, venue: Any, first: Any, more: Any) -> None:
    _ops, state = data.draw(sessions(venue, [k for k in STEP_KINDS if k != "stop"]))
    early, late = state.last_at + first, state.last_at + first + more
    assert bill(state, venue, early).total_cents <= bill(state, venue, late).total_cents
    # Stopping at `early` bills exactly what the open session showed at `early`.
    assert bill(apply(state, stop_op(early), venue), venue, late) == bill(state, venue, early)


@settings(deadline=None)
@given(st.data(), st.builds(MemberSnapshot, member_id=st.just(1), name=st.just("Člen"), fee_paid=st.just(True)), later)
def test_club_card_never_costs_more_than_standard(data: Any, member: Any, wait: Any) -> None:
    ops, state = data.draw(sessions(LAVOS, [k for k in STEP_KINDS if not k.startswith("card")], st.none()))
    with_card = [Op("start", ops[0].at, {**ops[0].data, "member": member.to_dict()}), *ops[1:]]
    now = state.last_at + wait
    assert bill(replay(with_card, LAVOS), LAVOS, now).total_cents <= bill(state, LAVOS, now).total_cents


@settings(deadline=None)
@given(st.data(), venues, later)
def test_replay_equals_applying_one_by_one(data: Any, venue: Any, wait: Any) -> None:
    ops, state = data.draw(sessions(venue))
    now = state.last_at + wait
    assert replay(ops, venue) == state
    cut = data.draw(st.integers(1, len(ops)))
    resumed = replay(ops[:cut], venue)  # a restart after `cut` ops, then the rest arrives live
    for op in ops[cut:]:
        resumed = apply(resumed, op, venue)
    assert resumed == state and bill(resumed, venue, now) == bill(state, venue, now)


@settings(deadline=None)
@given(st.data(), st.integers(1, len(STEP_KINDS)), st.integers(1, 4 * 3600))
def test_paused_time_is_never_billed(data: Any, where: Any, pause_s: Any) -> None:
    # Year-less snapshots and no bands: shifting play by the pause must not change the rates.
    ops, state = data.draw(sessions(LAVOS, member=st.none() | members))
    where = min(where, len(ops))
    before = replay(ops[:where], LAVOS)
    assume(before.state == "running")
    at, gap = ops[where - 1].at, timedelta(seconds=pause_s)
    shifted = [Op(op.kind, op.at + gap, op.data, op.actor, op.reason) for op in ops[where:]]
    paused = [*ops[:where], pause_op(at), resume_op(at + gap), *shifted]
    end = state.last_at + timedelta(hours=1)
    with_pause, without = bill(replay(paused, LAVOS), LAVOS, end + gap), bill(state, LAVOS, end)
    assert with_pause.total_cents == without.total_cents
    assert [line.billed_seconds for line in with_pause.lines] == [line.billed_seconds for line in without.lines]


@settings(deadline=None)
@given(st.data(), venues, later)
def test_billed_time_is_played_time_rounded_up_per_line(data: Any, venue: Any, wait: Any) -> None:
    _ops, state = data.draw(sessions(venue))
    now = state.last_at + wait
    time_lines = [line for line in bill(state, venue, now).lines if line.kind == "time"]
    played = sum((s.end - s.start for s in segments(state, venue, now)), timedelta())
    billed_total = sum(cast(int, line.billed_seconds) for line in time_lines)  # set on a time line
    unit = venue.billing.unit_s
    assert all(line.billed_seconds % unit == 0 for line in time_lines)
    assert played <= timedelta(seconds=billed_total) < played + timedelta(seconds=unit * len(time_lines)) or not time_lines


# --- when a running game's amount moves by itself (issue 19, item 20: pages follow the clock) ---


@settings(deadline=None)
@given(st.data(), venues, later, st.integers(0, 10**6 - 1))
def test_the_amount_moves_exactly_when_the_server_says(data: Any, venue: Any, wait: Any, micro: Any) -> None:
    from broker.domain.floor.amount_clock import HORIZON, amount_moves_at

    _ops, state = data.draw(sessions(venue, [k for k in STEP_KINDS if k != "stop"]))
    now = state.last_at + wait + timedelta(microseconds=micro)
    at = amount_moves_at(state, venue, now)
    if state.state != "running":
        assert at is None  # a paused game's amount never moves by itself
        return
    assert at is not None and now < at <= now + HORIZON
    before = bill(state, venue, now).total_cents
    if at < now + HORIZON:
        assert bill(state, venue, at).total_cents > before  # it has moved then...
    # ...and not a moment earlier (checked at the instant before and along the way).
    for probe in (at - timedelta(microseconds=1), now + (at - now) / 2, now + (at - now) / 4):
        if now <= probe < at:
            assert bill(state, venue, probe).total_cents == before


def test_a_carom_game_moves_at_each_started_minute_and_a_paused_one_never() -> None:
    from broker.domain.floor.amount_clock import amount_moves_at

    state = replay([start_op(T0, "carom-01")], LAVOS)
    assert amount_moves_at(state, LAVOS, T0) == T0 + timedelta(microseconds=1)  # the first minute is billed at once
    assert amount_moves_at(state, LAVOS, mins(0.5)) == mins(1) + timedelta(microseconds=1)
    assert amount_moves_at(state, LAVOS, mins(1)) == mins(1) + timedelta(microseconds=1)
    paused = replay([start_op(T0, "carom-01"), pause_op(mins(3))], LAVOS)
    assert amount_moves_at(paused, LAVOS, mins(10)) is None
