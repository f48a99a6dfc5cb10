"""A game's log holds table time only (broker.domain.floor.game_ops): the extras and voids of an old log,
moved onto the game's tab by migration 0012, are read and ignored; a correction's reason is checked."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from broker.domain.floor.game_ops import REASON_MAX, GameError, Op, bill, bill_reason, correction_op, replay, start_op, stop_op
from tests.broker.domain.test_tariffs import LAVOS, bratislava

T0 = bratislava(2026, 11, 30, 18, 0)


def mins(n: float) -> datetime:
    return T0 + timedelta(minutes=n)


def _old_log() -> list[Op]:
    """A log as the hub wrote it before extras were tab items: 2 toppings (op 2), a box (op 3), the toppings voided."""
    return [
        start_op(T0, "pool-01"),
        Op("extra", mins(5), {"extra": "topping", "quantity": 2, "unit_cents": 60}, "jana"),
        Op("extra", mins(6), {"extra": "pizza_box", "quantity": 1, "unit_cents": 40}, "jana"),
        Op("void", mins(7), {"extra_op": 2}, "jana", "zadané dvakrát"),
        stop_op(mins(60)),
        Op("extra", mins(61), {"extra": "gone_from_the_venue_file", "quantity": 1, "unit_cents": 500}, "jana"),
    ]


def test_an_old_logs_extras_and_voids_are_ignored_the_bill_is_table_time() -> None:
    state = replay(_old_log(), LAVOS)
    b = bill(state, LAVOS, state.last_at)
    assert [(x.kind, x.reason, x.amount_cents) for x in b.lines] == [("time", "standard", 600)]
    assert b.total_cents == 600 and state.op_count == 6
    # An extra the venue file no longer has does not break the replay any more (it did: "no extra").


def test_a_correction_after_an_old_extra_still_applies() -> None:
    state = replay([*_old_log(), correction_op(mins(70), -100, "stôl sa kýval", actor="boss")], LAVOS)
    assert bill(state, LAVOS, state.last_at).total_cents == 500


@pytest.mark.parametrize("reason", [None, "", "   ", "ab", "x" * (REASON_MAX + 1)])
def test_a_correction_needs_a_real_reason(reason: Any) -> None:
    with pytest.raises(GameError):
        bill_reason(reason)


def test_the_reason_is_trimmed() -> None:
    assert bill_reason("  typed twice \n") == "typed twice"
