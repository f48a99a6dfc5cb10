"""The tournament's hub tests run over the real hub and API of tests/dashboard (SQLite and PostgreSQL)."""

from tests.dashboard.conftest import api, clock, service  # noqa: F401  (fixtures)
