"""docs/wiring-pool.svg is what deploy/pi/wiring.py draws from the pins the agent drives (issue 30, item 5)."""

from __future__ import annotations

import runpy
import xml.etree.ElementTree as ET

from devices.kinds import Kind, default_pins
from tests.support.hub import REPO

SVG = REPO / "docs" / "wiring-pool.svg"


def test_the_diagram_in_docs_is_the_one_drawn_from_the_default_pins() -> None:
    drawn = runpy.run_path(str(REPO / "deploy" / "pi" / "wiring.py"))["svg"]()
    assert SVG.read_text() == drawn, "run: .venv/bin/python deploy/pi/wiring.py > docs/wiring-pool.svg"
    texts = {t.text for t in ET.fromstring(drawn).iter("{http://www.w3.org/2000/svg}text")}
    pins = default_pins(Kind.POOL)
    assert {f"GPIO {p}" for p in [pins.light, pins.button, *pins.pockets]} <= texts
    assert {"pin 11", "pin 13", "pin 29", "pin 40"} <= texts  # GPIO 17, 27, 5, 21 on the header


def test_the_pi_readme_shows_it() -> None:
    assert "../../docs/wiring-pool.svg" in (REPO / "deploy" / "pi" / "README.md").read_text()
