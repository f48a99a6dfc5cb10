"""bench/stock.py keeps running (small: 2 rounds, 3 products, 50 sales): its three sales go through
the bar-sale page and the hub, and the stock report of the generated year reads back what was sold.
Figures only, no timing asserted (bench/ prints them)."""

from __future__ import annotations

import pytest

from bench.stock import run

pytestmark = pytest.mark.slow  # a hub, the app and two logins: a few CPU-seconds, most of them shared with other modules in a full run


def test_the_stock_bench_runs_and_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    run(None, rounds=2, warm=0, products=3, sales=50)
    out = capsys.readouterr().out
    assert "pizza + 3 toppings" in out and "p95 added by stock" in out and "reads.stock.report(2025)" in out, out
    assert "margin rows (product × month)" in out and "GET /stock/report/margins.csv?year=2025" in out, out
