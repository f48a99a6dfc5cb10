"""Voiding an extra (broker.domain.game_ops): a reversal op, never a deletion; the bill shows both lines."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from broker.domain.game_ops import (
    REASON_MAX,
    GameError,
    apply,
    bill,
    bill_reason,
    extra_op,
    replay,
    start_op,
    stop_op,
    void_op,
)
from tests.broker.test_tariffs import LAVOS, bratislava

T0 = bratislava(2026, 11, 30, 18, 0)


def mins(n: float) -> datetime:
    return T0 + timedelta(minutes=n)


def _tab():  # start (op 1), 2 toppings (op 2), a pizza box (op 3)
    return [
        start_op(T0, "pool-01"),
        extra_op(mins(5), "topping", 2, venue=LAVOS, actor="jana"),
        extra_op(mins(6), "pizza_box", 1, venue=LAVOS, actor="jana"),
    ]


def test_a_void_keeps_the_extra_and_adds_it_negative():
    ops = [*_tab(), void_op(mins(7), 2, "zadané dvakrát", actor="jana"), stop_op(mins(60))]
    state = replay(ops, LAVOS)
    b = bill(state, LAVOS, state.last_at)
    assert [(x.kind, x.reason, x.amount_cents) for x in b.lines] == [
        ("time", "standard", 600),
        ("extra", "extra:topping", 120),
        ("extra", "extra:pizza_box", 40),
        ("void", "void:topping", -120),
    ]
    assert b.total_cents == 640  # 6,00 + 0,40: the toppings are reversed, not gone
    void = b.lines[-1]
    assert "Storno" in void.description and "zadané dvakrát" in void.description and "jana" in void.description
    assert void.description_en.startswith("Voided: ")
    assert [e.op for e in state.extras] == [2, 3] and state.voided(state.extras[0]) and not state.voided(state.extras[1])


def test_an_issued_bill_can_still_have_an_extra_voided():
    state = replay([*_tab(), stop_op(mins(60)), void_op(mins(70), 3, "box not taken", actor="boss")], LAVOS)
    assert bill(state, LAVOS, state.last_at).total_cents == 720


@pytest.mark.parametrize(
    ("target", "message"),
    [(1, "no such extra"), (4, "no such extra"), (2, "already voided")],
)
def test_only_a_live_extra_can_be_voided(target, message):
    state = replay([*_tab(), void_op(mins(7), 2, "typed twice", actor="jana")], LAVOS)
    with pytest.raises(GameError, match=message):
        apply(state, void_op(mins(8), target, "again", actor="jana"), LAVOS)


@pytest.mark.parametrize("reason", [None, "", "   ", "ab", "x" * (REASON_MAX + 1)])
def test_a_void_needs_a_real_reason(reason):
    state = replay(_tab(), LAVOS)
    with pytest.raises(GameError, match=r"reason|Write why"):
        apply(state, void_op(mins(7), 2, reason, actor="jana"), LAVOS)
    with pytest.raises(GameError):
        bill_reason(reason)


def test_the_system_cannot_void():
    with pytest.raises(GameError, match="person"):
        apply(replay(_tab(), LAVOS), void_op(mins(7), 2, "automatic", actor="system"), LAVOS)


def test_the_reason_is_trimmed():
    assert bill_reason("  typed twice \n") == "typed twice"
