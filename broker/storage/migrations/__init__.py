"""Alembic migrations of the central store (a package so that installs ship them)."""
