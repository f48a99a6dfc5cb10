"""Refusals a person reads: an English message id with named parameters, translated where shown.

The hub refuses in English (logs, the JSON API's `detail`); a page shows the same refusal in the
staff's language by looking `msgid` up in the dashboard's catalogues and filling in `params`.
`N_` only marks a literal for extraction (`python -m dashboard.web.i18n_tools` scans broker/ too).

    raise ServiceError(N_("%(table)s already has game no. %(game)d running; stop or move it first."),
                       table=table_name, game=game_id)

Pass names people know (a table's display name, a member's name), never ids.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from pydantic_core import CoreSchema, core_schema

if TYPE_CHECKING:
    from devices.tables import TableSpec


def N_(msgid: str) -> str:
    """Marks `msgid` for the catalogues; returns it unchanged (translation happens on display)."""
    return msgid


class Refusal(ValueError):
    """Base of every refusal a person may see. str() is the English text with `params` filled in."""

    def __init__(self, msgid: str, /, **params: object) -> None:
        self.msgid = msgid
        self.params = params
        super().__init__(msgid % params if params else msgid)

    @classmethod
    def like(cls, other: Refusal) -> Self:
        """The same refusal as another layer's (a GameError met by the hub becomes its ServiceError)."""
        return cls(other.msgid, **other.params)


class Name:
    """A name a refusal shows: the venue's own (Slovak) and, where it is a word, an English one.

    str() is the English form (the refusal's English text, the API's `detail`, the log); a page
    in Slovak shows `name` (dashboard.web.i18n.refusal_text picks by language).
    """

    __slots__ = ("name", "name_en")

    def __init__(self, name: str, name_en: str | None = None) -> None:
        self.name = name
        self.name_en = name_en

    def __str__(self) -> str:
        return self.name_en or self.name

    def __repr__(self) -> str:
        return f"Name({self.name!r}, {self.name_en!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Name) and (self.name, self.name_en) == (other.name, other.name_en)

    def __hash__(self) -> int:
        return hash((self.name, self.name_en))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> CoreSchema:
        """In a view's JSON (the API) a name is the venue's own, as its Slovak pages say it."""
        return core_schema.is_instance_schema(
            cls, serialization=core_schema.plain_serializer_function_ser_schema(lambda n: n.name, return_schema=core_schema.str_schema())
        )


def table_name(spec: TableSpec) -> Name:
    """A venue table as a refusal names it."""
    return Name(spec.name, spec.name_en)
