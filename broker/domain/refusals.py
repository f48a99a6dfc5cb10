"""Refusals a person reads: an English message id with named parameters, translated where shown.

The hub refuses in English (logs, the JSON API's `detail`); a page shows the same refusal in the
staff's language by looking `msgid` up in the dashboard's catalogues and filling in `params`.
`N_` only marks a literal for extraction (`python -m dashboard.web.i18n_tools` scans broker/ too).

    raise ServiceError(N_("%(table)s already has game no. %(game)d running; stop or move it first."),
                       table=table_name, game=game_id)

Pass names people know (a table's display name, a member's name), never ids. A parameter may be
a refusal itself (the reason inside a longer one): it is said in the same language.

A refusal kept or sent on (a record the centre refused, kept at both ends) travels as a document,
`to_doc` / `from_doc`: its msgid and params, so the page that shows it later says it in its own
language; the English text is kept beside it for the log and the API.
"""

from __future__ import annotations

import json
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


MAX_DOC_CHARS = 4000  # a refusal kept as a document: a few sentences, never a record's worth
_DEPTH = 4  # refusals inside refusals: a reason, its field's reason, ...


def to_doc(refusal: Refusal) -> dict[str, Any]:
    """A refusal as JSON (`{"msgid", "params"}`): a param that is a refusal or a Name stays one, anything else is its text or number."""
    return {"msgid": refusal.msgid, "params": {k: _param_doc(v) for k, v in refusal.params.items()}}


def _param_doc(value: object) -> object:
    if isinstance(value, Refusal):
        return {"refusal": to_doc(value)}
    if isinstance(value, Name):
        return {"name": value.name, "name_en": value.name_en}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def plain(text: str) -> Refusal:
    """A reason known only as its English text (a peer's older answer, a row kept before reasons
    were kept as documents): said as it came, in every language."""
    return Refusal("%(text)s", text=text)


def from_doc(doc: object, depth: int = _DEPTH) -> Refusal | None:
    """The refusal a document (`to_doc`, or another hall's or centre's) holds, or None when it is
    not one: a wrong shape, too deep or too long, or a msgid its params do not fill (it came over a wire)."""
    if depth == _DEPTH:
        try:
            if len(json.dumps(doc)) > MAX_DOC_CHARS:
                return None
        except (TypeError, ValueError, RecursionError):
            return None
    if depth <= 0 or not isinstance(doc, dict) or not isinstance(doc.get("msgid"), str) or not isinstance(doc.get("params"), dict):
        return None
    params: dict[str, object] = {}
    for key, value in doc["params"].items():
        if isinstance(value, dict) and set(value) == {"refusal"}:
            inner = from_doc(value["refusal"], depth - 1)
            if inner is None:
                return None
            params[str(key)] = inner
        elif isinstance(value, dict) and set(value) == {"name", "name_en"} and isinstance(value["name"], str):
            params[str(key)] = Name(value["name"], value["name_en"] if isinstance(value["name_en"], str) else None)
        elif value is None or isinstance(value, bool | int | float | str):
            params[str(key)] = value
        else:
            return None
    try:
        return Refusal(doc["msgid"], **params)
    except (KeyError, TypeError, ValueError):  # "%(x)s" without x, "%d" of a text: not a refusal this hall can say
        return None
