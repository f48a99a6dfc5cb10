"""docs/architecture.md lists every command with the part that handles it, and each command
exists, says what it does and has exactly one handler (issue 18: commands as data)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from broker.core.commands import Command, Handlers, all_commands, command, handles
from broker.hall import hub as _hub  # noqa: F401 - importing the hub imports every part with its commands

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
_SECTION = re.compile(r"^\*\*`(broker/[\w/]+)\.py`\*\*$")
_ROW = re.compile(r"^\| `(\w+)` \|")


def documented() -> dict[str, str]:
    """command name -> the module the page says it is in."""
    out: dict[str, str] = {}
    module = ""
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if m := _SECTION.match(line):
            module = m.group(1).replace("/", ".")
        elif (m := _ROW.match(line)) and module:
            out[m.group(1)] = module
    return out


def test_the_page_lists_exactly_the_commands_with_their_modules() -> None:
    assert documented() == {k.__name__: k.__module__ for k in all_commands()}


@pytest.mark.parametrize("kind", all_commands(), ids=lambda k: k.__name__)
def test_every_command_says_what_it_does_and_is_frozen(kind: Any) -> None:
    assert "__doc__" in kind.__dict__ and not kind.__doc__.startswith(f"{kind.__name__}("), f"{kind.__name__} has no docstring of its own"
    assert kind.__dataclass_params__.frozen


def test_a_command_without_a_handler_or_with_two_is_refused_when_the_hub_is_built() -> None:
    @command
    class Orphan(Command[None]):
        """A command nobody handles."""

    class One:
        @handles(Orphan)
        def run(self, c: Orphan) -> None: ...

    # (The prefix keeps the hub's own check to the hub's commands: this one lives in the tests.)
    with pytest.raises(TypeError, match=r"without a handler: .*Orphan"):
        Handlers([], prefix=__name__)
    assert Handlers([One()], prefix=__name__).kinds() == [Orphan]
    with pytest.raises(TypeError, match="Orphan has two handlers"):
        Handlers([One(), One()], prefix=__name__)
