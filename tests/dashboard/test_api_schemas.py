"""Every JSON answer of the API has a real shape in the OpenAPI document, not `{}`.

Walks app.openapi(): each 2xx response of every route must declare application/json content
with a schema that names a model or a typed array/object, except the downloads listed below.
"""

from __future__ import annotations

from typing import Any

from dashboard.api import create_app

# Not JSON: files a spreadsheet or a calendar app opens.
DOWNLOADS = {("get", "/api/members/export"), ("get", "/api/calendar/{token}.ics")}


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


def test_every_json_answer_has_a_schema(service) -> None:
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
