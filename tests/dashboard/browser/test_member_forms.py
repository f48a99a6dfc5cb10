"""Issue 11 item 8 (the member page's forms), in Chromium at tablet and phone size on the Slovak UI.

A refused card or fee stays on the member page: the reason next to the form, what was typed kept
(not a 400 page whose only button says "Späť na stoly"); an error page's button goes back to the
form that was refused; the card capture offers only tables with a reader (the foosball tables);
the "Aktívny" checkbox sits beside its word at a checkbox's size.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.web import log_in
from tests.dashboard.conftest import MANAGER

if TYPE_CHECKING:
    from tests.support.web import ServedHub


NODE_TABLES = ()  # nothing at the tables is needed


@pytest.fixture(scope="module")
def members(lavos: ServedHub) -> tuple[Any, Any]:
    api = lavos.api
    owner = api("POST", "/api/members", MANAGER, status=201, json={"name": "Zadražil Miro"})["id"]
    other = api("POST", "/api/members", MANAGER, status=201, json={"name": "Bača Lubo"})["id"]
    api("POST", f"/api/members/{owner}/cards", MANAGER, status=201, json={"uid": "04a3f1c2"})
    return owner, other


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_a_refused_card_stays_on_the_member_page_with_what_was_typed(
    lavos: ServedHub, members: tuple[Any, Any], open_page: Callable[..., Any], size: Any
) -> None:
    page = open_page(TABLET) if size == "tablet" else open_page(PHONE, mobile=True)
    _owner, other = members
    log_in(page, lavos, MANAGER, f"/members/{other}")
    page.fill("#assign-card input[name=uid]", "04:A3:F1:C2")
    with page.expect_navigation():
        page.locator("#assign-card button[type=submit]").tap()
    assert re.search(rf"/members/{other}/cards$", page.url), page.url  # the member page, drawn again
    error = page.locator("#assign-card-error")
    assert error.is_visible() and error.inner_text() == "Karta 04a3f1c2 patrí členovi Zadražil Miro; najprv mu ju odoberte."
    assert page.locator("#assign-card input[name=uid]").input_value() == "04:A3:F1:C2"
    assert page.locator("h1").inner_text() == "Bača Lubo" and not page.locator(".error-box").count()
    assert "Späť na stoly" not in page.locator("main").inner_text()
    box, viewport = error.bounding_box(), page.viewport_size
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"] + 1, box  # readable, not off-screen

    page.fill("#record-fee input[name=year]", "2026")
    page.fill("#record-fee input[name=amount]", "desať eur")
    with page.expect_navigation():
        page.locator("#record-fee button[type=submit]").tap()
    assert page.locator("#record-fee-error").inner_text() == "desať eur nie je suma: napíšte ju ako 10,00."
    assert page.locator("#record-fee input[name=amount]").input_value() == "desať eur"


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_card_capture_offers_only_tables_with_a_reader_and_the_checkbox_sits_by_its_word(
    lavos: ServedHub, members: tuple[Any, Any], open_page: Callable[..., Any], size: Any
) -> None:
    page = open_page(TABLET) if size == "tablet" else open_page(PHONE, mobile=True)
    owner, _ = members
    log_in(page, lavos, MANAGER, f"/members/{owner}")
    options = page.locator("#capture-card select[name=table] option").all_inner_texts()
    assert options == ["Futbal 1", "Futbal 2"], options
    assert page.locator("#capture-card button").inner_text() == "Načítať kartu z čítačky"
    box = page.locator("#edit-member input[name=active]").bounding_box()
    word = page.locator("#edit-member label.check-label span").bounding_box()
    assert box and word and box["width"] <= 32 and box["height"] <= 32, box  # a checkbox, not a 44 px wide input
    assert abs((box["y"] + box["height"] / 2) - (word["y"] + word["height"] / 2)) < 8 and word["x"] > box["x"], (box, word)


def test_a_refused_account_form_says_why_at_the_form(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    """Issue 19, item 22: the refusal is said at the form on the same page, what was typed kept
    (never a password), no status code for staff; earlier it was an error page with a way back."""
    page = open_page(TABLET)
    log_in(page, lavos, MANAGER, "/users")
    form = page.locator("#add-user")
    form.locator("input[name=username]").fill("fero")
    form.locator("input[name=password]").fill("dlhé-heslo-1")
    form.locator("input[name=repeat]").fill("iné-heslo-2")
    with page.expect_navigation():
        form.locator("button[type=submit]").tap()
    error = page.locator("#add-user-error")
    assert error.is_visible() and "(400)" not in error.inner_text(), error.inner_text()
    assert page.locator("#add-user input[name=username]").input_value() == "fero"
    assert page.locator("#add-user input[name=password]").input_value() == ""
    assert page.locator("a[href='/users/fero']").count() == 0  # nothing made
