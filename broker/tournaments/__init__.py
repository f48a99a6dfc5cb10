"""Tournaments: setup, calls, results, season, state and their reads."""
