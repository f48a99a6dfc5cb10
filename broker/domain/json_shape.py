"""How a frozen view reads as JSON: the view is the API's answer, and these mark where its JSON differs.

The read models' frozen dataclasses (the domain's Bill and Receipt, broker.hall's game, member,
tab and payment views, …) are what the API answers with: FastAPI gives them to pydantic, which
takes an instance as it is (no copy, no second validation), writes it as JSON and describes it in
/openapi.json, all from the class's own annotations. So there is one class per thing, for the
pages and the API alike; where the JSON others already read says more or less than the fields,
one of these says so beside the field:

- `derived`: a property the JSON carries too (a pydantic computed field), e.g. "6,00 €" beside
  the cents; to Python (and mypy) it is a plain property;
- `HIDDEN`: a field the JSON leaves out (what only the pages use, the hub's own keys);
- `json_name("table")`: the JSON's name for a field whose Python name differs (the API keeps the
  spelling programs already read: docs/architecture.md, "One word per thing");
- `null_when("blind", int, "total_cents")`: fields the JSON sends as null while a flag of the view
  is set (a staff user's blind count of the Z report); the document says they may be null;
- `@every_field_sent` on a view with defaults: its JSON always has those fields too, so the
  document says they are required (pydantic would call a field with a default optional).

Pure: pydantic only describes; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, computed_field, field_serializer, with_config

__all__ = ["HIDDEN", "derived", "every_field_sent", "json_name", "null_when"]

HIDDEN: Any = Field(exclude=True)


every_field_sent = with_config(ConfigDict(json_schema_serialization_defaults_required=True))


def json_name(name: str) -> Any:
    """The field's name in the JSON (serialisation only: the view is built by its Python name)."""
    return Field(serialization_alias=name)


def null_when(flag: str, kind: Any, *fields: str) -> Any:
    """A serializer for `fields` (of type `kind`) that writes null while the view's `flag` is true."""

    def nulled(self: Any, value: Any) -> Any:  # `self`: pydantic passes the view to a method by that name
        return None if getattr(self, flag) else value

    # pydantic reads the JSON's type from the annotations: `kind`, or null.
    nulled.__annotations__ = {"value": kind, "return": kind | None}
    return field_serializer(*fields)(nulled)


if TYPE_CHECKING:
    derived = property
else:

    def derived(fn: Callable[[Any], Any]) -> Any:
        # pydantic's computed_field makes the property; its return annotation is the JSON's type.
        return computed_field(fn)
