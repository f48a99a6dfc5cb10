"""Why a member's game does not run at the club rate, said to staff when it starts (issue 19, item 16).

A paid-up member plays at the club rate only on the tables the venue file marks `club_card`
(tariffs._tariff_choice decides); a member on another table, or one whose fee for this year is not
paid, plays at the standard rate. Staff are told before the start (the floor card's mark, the
start form) and again in the start's answer: the API's `warning`, the page's message, one rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from broker.domain.floor import game_ops
from broker.domain.refusals import N_, Name, table_name
from broker.domain.venue import Venue

# The rate's basis (tariffs.Rate.basis) → what staff are told.
_WARNINGS = {
    "card_table_not_eligible": N_("The club discount does not apply on %(table)s: %(member)s plays at the standard rate."),
    "card_unpaid": N_("%(member)s has not paid this year's membership fee: standard rate."),
}


@dataclass(frozen=True)
class RateWarning:
    """A message id with named parameters (translated where shown, as a refusal is); str() is English."""

    code: str  # the rate's basis: "card_table_not_eligible" or "card_unpaid"
    msgid: str
    params: dict[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.msgid % {k: str(v) for k, v in self.params.items()}


def start_warning(state: game_ops.GameState, venue: Venue, at: datetime) -> RateWarning | None:
    """What to tell staff about a game with a member that runs at the standard rate at `at`; None
    when it has no member or the member gets the club rate."""
    if state.member is None:
        return None
    rate = game_ops.current_rate(state, venue, max(at, state.last_at))
    if rate is None or rate.basis not in _WARNINGS:
        return None
    table: Name = table_name(venue.table(state.table))
    return RateWarning(rate.basis, _WARNINGS[rate.basis], {"table": table, "member": state.member.name})
