"""The README's security section is a list of guarantees, each naming the test that proves it.

This keeps that list honest: every test it names exists (a renamed or deleted test fails here,
not silently in the README), and every guarantee the code keeps in
tests/faults/test_http_security.py GUARANTEES is in the README too.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from tests.faults.test_http_security import GUARANTEES

README = Path(__file__).resolve().parents[2] / "README.md"
_REF = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")


def _security_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Security\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _rows(section: str) -> list[str]:
    return [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| guarantee") and "`tests/" in line]


def test_every_test_the_security_section_names_exists() -> None:
    section = _security_section()
    refs = _REF.findall(section)
    assert len(refs) >= 60, f"only {len(refs)} test references in the README's security section"
    missing = []
    for path, name in refs:
        if not (README.parent / path).is_file():
            missing.append(path)
            continue
        if name:
            module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
            if not callable(getattr(module, name, None)):
                missing.append(f"{path}::{name}")
    assert missing == []


def test_every_row_names_a_test() -> None:
    section = _security_section()
    table_rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith(("| guarantee", "| ---"))]
    assert table_rows and table_rows == _rows(section), [r for r in table_rows if r not in _rows(section)]


def test_the_code_kept_guarantees_are_in_the_readme() -> None:
    section = _security_section()
    named = {f"{p}::{n}" for p, n in _REF.findall(section) if n}
    absent = [where for tests in GUARANTEES.values() for where in tests if where not in named]
    assert absent == []
