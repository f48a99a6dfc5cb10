"""Request bodies: strict (a JSON string is not a number), no unknown keys, bounded.

The bounds are the game rules' own (broker.domain.floor.game_ops) or tighter, so bad input is refused
here with a 422 that names the field, before it reaches the hub or the database. Text is
refused when it holds control characters or lone surrogates (broker.domain.plain_text, the rule
the pages' forms follow too): PostgreSQL rejects NUL bytes and UTF-8 cannot encode a lone
surrogate, and either would otherwise surface as a server error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Annotated, Any, ClassVar, Self, TypeVar

from annotated_types import GroupedMetadata
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from broker.core.commands import Command
from broker.domain.euros import MAX_AMOUNT_CENTS
from broker.domain.people.membership import FIRST_YEAR, LAST_YEAR, MemberKind
from broker.domain.plain_text import unprintable
from broker.domain.refusals import Refusal
from dashboard.api.deps import MAX_ID
from dashboard.api.errors import value_refused

MAX_MINUTES = 24 * 60
C = TypeVar("C", bound=Command[Any])


def _printable(value: str) -> str:
    problem = unprintable(value)
    if problem is not None:  # in the client's language, as a date's refusal (dashboard.api.errors)
        raise value_refused(Refusal(problem))
    return value


@dataclass(frozen=True)
class _Text(GroupedMetadata):
    """Plain text's rules for pydantic: trimmed, min_length to max_length characters, printable."""

    max_length: int
    min_length: int

    def __iter__(self) -> Iterator[object]:
        yield from StringConstraints(strip_whitespace=True, min_length=self.min_length, max_length=self.max_length)
        yield AfterValidator(_printable)


def text(max_length: int, min_length: int = 1) -> _Text:
    """A text field: `Annotated[str, text(200)]` (a type mypy can read; a call in a type it cannot)."""
    return _Text(max_length, min_length)


TableId = Annotated[str, text(32)]
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
Minutes = Annotated[int, Field(ge=1, le=MAX_MINUTES, description="Whole minutes, 1 to 1440")]


class Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    # A body field whose command field has another name (the API's words stay as clients know
    # them): {"product_id": "product"}.
    renamed: ClassVar[Mapping[str, str]] = {}

    def to(self, kind: type[C], /, **context: object) -> C:
        """The command `kind` from this body's fields (under their command names) and `context`
        (the path's ids, the actor, what the route decides): the body's fields are declared once,
        never copied one by one. A field the command does not take is a bug, refused here."""
        takes = {f.name for f in fields(kind)}  # a command is a dataclass (broker.core.commands.command)
        values = {self.renamed.get(name, name): getattr(self, name) for name in type(self).model_fields}
        stray = sorted((values.keys() - takes) - context.keys())
        if stray:
            raise TypeError(f"{type(self).__name__} has fields {stray} that {kind.__name__} does not take")
        return kind(**{**values, **context})


class _CardOrMember(Body):
    card_uid: Annotated[str, text(64)] | None = None
    member_id: Id | None = None

    @model_validator(mode="after")
    def _one_way(self) -> Self:
        if self.card_uid is not None and self.member_id is not None:
            raise ValueError("give card_uid or member_id, not both")
        return self


class GameStart(_CardOrMember):
    table: TableId
    tariff: Annotated[str, text(32)] | None = None
    prepaid_minutes: Minutes | None = None


class GameCard(_CardOrMember):
    """A club card on a running game; neither field (or both null) takes the card off."""


class OutOfServiceIn(Body):
    reason: Annotated[str, text(200, min_length=0)] = ""


class LightIn(Body):
    on: bool


class Transfer(Body):
    table: TableId


class Extend(Body):
    minutes: Minutes


class ExtraIn(Body):
    extra: Annotated[str, text(32)]
    quantity: int = Field(1, ge=1, le=99, description="At most 99 at once, as on a tab")


class CorrectionIn(Body):
    amount_cents: int = Field(ge=-MAX_AMOUNT_CENTS, le=MAX_AMOUNT_CENTS, description="Negative lowers the bill")
    reason: Annotated[str, text(500)]

    @model_validator(mode="after")
    def _not_zero(self) -> Self:
        if self.amount_cents == 0:
            raise ValueError("amount_cents must not be 0: a correction changes the bill")
        return self


class VoidIn(Body):
    item: Id = Field(description="What is voided: extras[].item in the game (an item on the game's tab)")
    reason: Annotated[str, text(500)]


class MemberIn(Body):
    name: Annotated[str, text(200)]
    kind: MemberKind = "individual"
    note: Annotated[str, text(2000, 0)] = ""
    active: bool = True


class MemberPatch(Body):
    name: Annotated[str, text(200)] | None = None
    kind: MemberKind | None = None
    note: Annotated[str, text(2000, 0)] | None = None
    active: bool | None = None
    reason: Annotated[str, text(500)] | None = None

    @model_validator(mode="after")
    def _something(self) -> Self:
        if all(v is None for v in (self.name, self.kind, self.note, self.active)):
            raise ValueError("nothing to change: give name, kind, note or active")
        return self


class FeeIn(Body):
    year: int = Field(ge=FIRST_YEAR, le=LAST_YEAR)
    amount_cents: int = Field(1000, ge=0, le=100_000)


class CardIn(Body):
    uid: Annotated[str, text(64)]


class CheckinIn(Body):
    member_id: Id


class AckIn(Body):
    close: bool = False
