"""Every JSON answer of the API has a real shape in the OpenAPI document, not `{}`.

Walks app.openapi(): each 2xx response of every route must declare application/json content
with a schema that names a model or a typed array/object, except the downloads listed below.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from dashboard.api import create_app
from dashboard.api.app import api_routes

if TYPE_CHECKING:
    from broker.hall.hub import Hub


# Not JSON: files a spreadsheet or a calendar app opens.
DOWNLOADS = {("get", "/api/members/export"), ("get", "/api/calendar/{token}.ics"), ("get", "/api/tournaments/{tournament_id}/export.csv")}


def _empty(schema: dict[str, Any]) -> bool:
    """{} or an array/object of anything: the document says nothing about the shape."""
    if not schema:
        return True
    if schema.get("type") == "array":
        return _empty(schema.get("items") or {})
    if schema.get("type") == "object" and not schema.get("properties") and "$ref" not in schema:
        extra = schema.get("additionalProperties")
        return not isinstance(extra, dict) or _empty(extra)
    return False


def untyped(doc: dict[str, Any]) -> list[str]:
    out = []
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            if (method, path) in DOWNLOADS:
                continue
            for status, response in op.get("responses", {}).items():
                if not str(status).startswith("2") or status == "204":
                    continue
                content = response.get("content") or {}
                schema = (content.get("application/json") or {}).get("schema")
                if schema is None or _empty(schema):
                    out.append(f"{method.upper()} {path} {status}: {sorted(content) or 'no content'} {schema}")
    return out


def test_every_json_answer_has_a_schema(service: Hub) -> None:
    doc = create_app(service).openapi()
    assert untyped(doc) == []
    assert len(doc["paths"]) >= 20  # the walk saw the API, not an empty document


def test_the_walk_finds_an_untyped_answer() -> None:
    doc = {
        "paths": {
            "/api/x": {
                "get": {
                    "responses": {
                        "200": {
                            "content": {
                                "application/json": {"schema": {"type": "array", "items": {"type": "object", "additionalProperties": True}}}
                            }
                        }
                    }
                }
            }
        }
    }
    assert untyped(doc) == [
        "GET /api/x 200: ['application/json'] {'type': 'array', 'items': {'type': 'object', 'additionalProperties': True}}"
    ]


# What the API answers with that is no read model's view (dashboard/api/responses.py says why).
NOT_VIEWS = {"HealthOut", "TariffsOut", "ExtraOut", "CheckoutOut", "GridOut", "DoneOut", "PrintedOut", "TestOut"}
# The tournaments' answers to a command (a draw's order, a check-in's fee tab, a rack's score, a start moved to now, a TV
# link's token: facts, their views inside) and CueScore's file format (another program's shape).
NOT_VIEWS |= {"DrawOut", "CheckInOut", "MatchAnswerOut", "RackOut", "TvLinkOut", "CueTournamentOut", "StartedNowOut"}


def _classes(annotation: Any) -> Iterator[type]:
    """The classes a response_model names, inside list[...], unions and Annotated."""
    if typing.get_origin(annotation) in (list, tuple, typing.Union, types.UnionType, typing.Annotated):
        args = typing.get_args(annotation)
        for arg in args[:1] if typing.get_origin(annotation) is typing.Annotated else args:
            yield from _classes(arg)
    elif isinstance(annotation, type):
        yield annotation


def test_the_api_answers_with_the_read_models_own_views() -> None:
    """Views once (issue 18, item 8): a thing has one shape, the hub's frozen view, for the pages
    and the API alike; the API adds no second, hand-written model of it."""
    answers = {c for _, _, route in api_routes() for c in _classes(route.response_model)}
    models = {c.__name__ for c in answers if issubclass(c, BaseModel)}
    assert models == NOT_VIEWS  # a new ...Out beside a view: answer with the view instead
    views = {c for c in answers if dataclasses.is_dataclass(c)}
    assert all(c.__module__.startswith("broker.") for c in views), sorted(
        c.__qualname__ for c in views if not c.__module__.startswith("broker.")
    )
    assert {c.__name__ for c in views} >= {
        "GameView",
        "GameBrief",
        "LiveTable",
        "NodeStatus",
        "MemberView",
        "TabView",
        "Receipt",
        "ZReport",
    }
