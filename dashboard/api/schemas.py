"""Request bodies: strict (a JSON string is not a number), no unknown keys, bounded.

The bounds are the game rules' own (broker.domain.floor.game_ops) or tighter, so bad input is refused
here with a 422 that names the field, before it reaches the hub or the database. Text is
refused when it holds control characters or lone surrogates (broker.domain.plain_text, the rule
the pages' forms follow too): PostgreSQL rejects NUL bytes and UTF-8 cannot encode a lone
surrogate, and either would otherwise surface as a server error.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from broker.domain.euros import MAX_AMOUNT_CENTS
from broker.domain.people.membership import FIRST_YEAR, LAST_YEAR, MEMBER_KINDS
from broker.domain.plain_text import unprintable
from broker.domain.refusals import Refusal
from dashboard.api.deps import MAX_ID
from dashboard.api.errors import value_refused

MAX_MINUTES = 24 * 60


def _printable(value: str) -> str:
    problem = unprintable(value)
    if problem is not None:  # in the client's language, as a date's refusal (dashboard.api.errors)
        raise value_refused(Refusal(problem))
    return value


def text(max_length: int, min_length: int = 1):
    return Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=min_length, max_length=max_length), AfterValidator(_printable)
    ]


TableId = text(32)
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
Minutes = Annotated[int, Field(ge=1, le=MAX_MINUTES, description="Whole minutes, 1 to 1440")]
MemberKind = Literal[MEMBER_KINDS]  # type: ignore[valid-type]


class Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class _CardOrMember(Body):
    card_uid: text(64) | None = None  # type: ignore[valid-type]
    member_id: Id | None = None

    @model_validator(mode="after")
    def _one_way(self):
        if self.card_uid is not None and self.member_id is not None:
            raise ValueError("give card_uid or member_id, not both")
        return self


class GameStart(_CardOrMember):
    table: TableId  # type: ignore[valid-type]
    tariff: text(32) | None = None  # type: ignore[valid-type]
    prepaid_minutes: Minutes | None = None


class GameCard(_CardOrMember):
    """A club card on a running game; neither field (or both null) takes the card off."""


class OutOfServiceIn(Body):
    reason: text(200, min_length=0) = ""  # type: ignore[valid-type]


class LightIn(Body):
    on: bool


class Transfer(Body):
    table: TableId  # type: ignore[valid-type]


class Extend(Body):
    minutes: Minutes


class ExtraIn(Body):
    extra: text(32)  # type: ignore[valid-type]
    quantity: int = Field(1, ge=1, le=99, description="At most 99 at once, as on a tab")


class CorrectionIn(Body):
    amount_cents: int = Field(ge=-MAX_AMOUNT_CENTS, le=MAX_AMOUNT_CENTS, description="Negative lowers the bill")
    reason: text(500)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _not_zero(self):
        if self.amount_cents == 0:
            raise ValueError("amount_cents must not be 0: a correction changes the bill")
        return self


class VoidIn(Body):
    item: Id = Field(description="What is voided: extras[].item in the game (an item on the game's tab)")
    reason: text(500)  # type: ignore[valid-type]


class MemberIn(Body):
    name: text(200)  # type: ignore[valid-type]
    kind: MemberKind = "individual"
    note: text(2000, 0) = ""  # type: ignore[valid-type]
    active: bool = True


class MemberPatch(Body):
    name: text(200) | None = None  # type: ignore[valid-type]
    kind: MemberKind | None = None
    note: text(2000, 0) | None = None  # type: ignore[valid-type]
    active: bool | None = None
    reason: text(500) | None = None  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _something(self):
        if all(v is None for v in (self.name, self.kind, self.note, self.active)):
            raise ValueError("nothing to change: give name, kind, note or active")
        return self


class FeeIn(Body):
    year: int = Field(ge=FIRST_YEAR, le=LAST_YEAR)
    amount_cents: int = Field(1000, ge=0, le=100_000)


class CardIn(Body):
    uid: text(64)  # type: ignore[valid-type]


class CheckinIn(Body):
    member_id: Id


class AckIn(Body):
    close: bool = False
