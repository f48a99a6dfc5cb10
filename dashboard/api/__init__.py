"""The JSON API over the hub: `create_app(hub)` → FastAPI app (OpenAPI at /openapi.json)."""

from dashboard.api.app import create_app

__all__ = ["create_app"]
