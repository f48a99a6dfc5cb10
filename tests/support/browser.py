"""The browser the tests and bench/staff_action.py drive through Playwright: Debian's Chromium.

Its headless shell (`chromium-headless-shell`, the package Debian builds from the same Chromium
source; Playwright's own default for headless runs), not the whole browser run headless: the same
Blink renders the same pages, without the browser's own layers around them. Measured on one
browser module run alone (tests/dashboard/browser/test_table_page.py, 16 tests): Chromium's CPU
41 s with `chromium --headless`, 15 s with the shell; the browser modules spent a quarter of the
whole suite's CPU in Chromium. LAVOS_CHROMIUM names another binary (e.g. /usr/bin/chromium) to
compare.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = "chromium-headless-shell"
CHROMIUM = Path(os.environ.get("LAVOS_CHROMIUM", "/usr/bin/chromium-headless-shell"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def missing() -> str | None:
    """What to do when the browser is not installed, or None."""
    if CHROMIUM.exists():
        return None
    return f"{CHROMIUM} is missing: run ./run test (it installs the Debian package {PACKAGE}) or apt-get install {PACKAGE}"
