"""A request body makes its command (dashboard.api.schemas.Body.to): its fields are declared once,
carried under the command's names, and a field the command does not take is refused, not dropped."""

from __future__ import annotations

from typing import ClassVar

import pytest

from broker.core.commands import Command, command
from dashboard.api.schemas import Body


@command
class _Rename(Command[None]):
    tab: int
    product: int
    form_key: str | None = None
    actor: str


class _ItemIn(Body):
    renamed: ClassVar[dict[str, str]] = {"product_id": "product", "request_id": "form_key"}

    product_id: int
    request_id: str | None = None


class _Stray(Body):
    product: int
    colour: str = "red"


def test_a_body_makes_its_command_under_the_commands_names() -> None:
    made = _ItemIn(product_id=7, request_id="k-12345678").to(_Rename, tab=3, actor="jana")
    assert made == _Rename(tab=3, product=7, form_key="k-12345678", actor="jana")


def test_the_route_decides_over_the_body() -> None:
    assert _ItemIn(product_id=7).to(_Rename, tab=3, product=9, actor="jana").product == 9


def test_a_field_the_command_does_not_take_is_refused_not_dropped() -> None:
    with pytest.raises(TypeError, match=r"_Stray has fields \['colour'\] that _Rename does not take"):
        _Stray(product=7).to(_Rename, tab=3, actor="jana")
