"""Issue 9 item 17: the club card over New Year's midnight, and over the DST nights.

The rule: the card rate applies at an instant when the fee of that instant's calendar year
(local, Europe/Bratislava) is paid. The snapshot taken when the card is shown carries the fee
of that year and of the next one, the only two a session can meet.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from broker.domain.floor.game_ops import GameError, Op, bill, card_op, replay, start_op, stop_op
from broker.domain.tariffs import MemberSnapshot, RateContext, rate_at
from tests.broker.domain.test_tariffs import LAVOS, bratislava

if TYPE_CHECKING:
    from broker.domain.billing import Bill


BOTH = MemberSnapshot(7, "Ambra Tomáš", fee_paid=True, year=2026, next_year_paid=True)
THIS_ONLY = MemberSnapshot(7, "Ambra Tomáš", fee_paid=True, year=2026, next_year_paid=False)
NEXT_ONLY = MemberSnapshot(7, "Ambra Tomáš", fee_paid=False, year=2026, next_year_paid=True)
EVE, NEW_YEAR = bratislava(2026, 12, 31, 23, 0), bratislava(2027, 1, 1, 1, 0)
MIDNIGHT = bratislava(2027, 1, 1, 0, 0)
CLUB_TABLE = "pool-05"  # a club-card table in the shipped venue


def billed(member: MemberSnapshot, start: Any = EVE, end: Any = NEW_YEAR) -> Bill:
    return bill(replay([start_op(start, CLUB_TABLE, member=member), stop_op(end)], LAVOS), LAVOS, end)


def lines(b: Any) -> list[tuple[Any, ...]]:
    return [(line.reason, line.start, line.amount_cents) for line in b.lines]


def test_both_years_paid_is_two_hours_at_the_club_rate() -> None:
    b = billed(BOTH)
    assert lines(b) == [("club_card", EVE, 800)]
    assert b.total_cents == 800


def test_next_year_unpaid_is_the_standard_rate_from_midnight_with_its_reason() -> None:
    b = billed(THIS_ONLY)
    assert lines(b) == [("club_card", EVE, 400), ("card_unpaid", MIDNIGHT, 600)]
    assert b.total_cents == 1000
    unpaid = b.lines[1]
    assert "členský príspevok za tento rok nie je zaplatený" in unpaid.description
    assert "this year's membership fee is not paid" in unpaid.description_en


def test_a_fee_paid_only_for_next_year_gives_the_club_rate_from_midnight() -> None:
    assert lines(billed(NEXT_ONLY)) == [("card_unpaid", EVE, 600), ("club_card", MIDNIGHT, 400)]


def test_midnight_is_local_not_utc() -> None:
    # 23:30 UTC on 31 Dec is 00:30 on 1 Jan in Bratislava: already next year's fee.
    ctx = RateContext(CLUB_TABLE, member=THIS_ONLY)
    assert rate_at(LAVOS, ctx, datetime(2026, 12, 31, 22, 59, tzinfo=UTC)).reason == "club_card"
    assert rate_at(LAVOS, ctx, datetime(2026, 12, 31, 23, 0, tzinfo=UTC)).reason == "card_unpaid"


def test_a_year_the_snapshot_does_not_know_counts_as_unpaid() -> None:
    assert [BOTH.paid_for(y) for y in (2025, 2026, 2027, 2028)] == [False, True, True, False]
    assert lines(billed(BOTH, EVE, bratislava(2028, 1, 1, 1, 0)))[-1] == ("card_unpaid", bratislava(2028, 1, 1, 0, 0), 600)


def test_the_card_shown_after_midnight_is_judged_by_the_new_year() -> None:
    shown = MemberSnapshot(7, "Ambra Tomáš", fee_paid=True, year=2027)
    ops = [start_op(EVE, CLUB_TABLE), card_op(bratislava(2027, 1, 1, 0, 30), shown), stop_op(NEW_YEAR)]
    b = bill(replay(ops, LAVOS), LAVOS, NEW_YEAR)
    assert [(x.reason, x.amount_cents) for x in b.lines] == [("standard", 900), ("club_card", 200)]


def test_ops_stored_before_next_year_paid_existed_replay_as_billed_then() -> None:
    old = {"member_id": 7, "name": "Ambra Tomáš", "fee_paid": True, "year": 2026}
    state = replay([Op("start", EVE, {"table": CLUB_TABLE, "member": old}), stop_op(NEW_YEAR)], LAVOS)
    assert state.member == THIS_ONLY
    assert [x.amount_cents for x in bill(state, LAVOS, NEW_YEAR).lines] == [400, 600]
    assert replay([start_op(EVE, CLUB_TABLE, member=BOTH)], LAVOS).member == BOTH  # round trip through to_dict


def test_garbage_next_year_paid_is_refused() -> None:
    bad = {"member_id": 7, "name": "A", "fee_paid": True, "year": 2026, "next_year_paid": "yes"}
    with pytest.raises(GameError, match="next_year_paid must be true or false"):
        replay([Op("start", EVE, {"table": CLUB_TABLE, "member": bad})], LAVOS)


@pytest.mark.parametrize(
    "start, end, real_hours",
    [
        # 29 March 2026: 02:00 CET jumps to 03:00 CEST, so 01:00-04:00 local is 2 real hours.
        (bratislava(2026, 3, 29, 1, 0), bratislava(2026, 3, 29, 4, 0), 2),
        # 25 October 2026: 03:00 CEST falls back to 02:00 CET; 01:00 CEST to 04:00 CET is 4 real hours.
        (bratislava(2026, 10, 25, 1, 0), bratislava(2026, 10, 25, 4, 0), 4),
    ],
)
def test_dst_nights_bill_real_time_at_the_club_rate_without_a_cut(start: Any, end: Any, real_hours: Any) -> None:
    member = MemberSnapshot(7, "Ambra Tomáš", fee_paid=True, year=2026)  # next year unpaid: no cut in spring or autumn
    b = billed(member, start, end)
    assert [(x.reason, x.billed_seconds, x.amount_cents) for x in b.lines] == [("club_card", real_hours * 3600, real_hours * 400)]
