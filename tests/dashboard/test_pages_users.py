"""The account forms (issue 19, item 22): every refusal is shown at its form on the same page, in
the staff's language, with what was typed kept (never a password) and no raw field names; nothing
is changed. Over the real hub, as a browser's forms send them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from tests.dashboard.conftest import MANAGER, PASSWORD, STAFF, sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.matching import found

if TYPE_CHECKING:
    from tests.dashboard.pages_client import Pages


pytestmark = sqlite_only

RAW_NAMES = re.compile(r"\b(username|repeat|must_change|current|active|role)\b\s*:")


def _visible(html: str) -> str:
    body = html[html.index("<main") :]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))


def _typed(html: str, form: str, name: str) -> str | None:
    m = re.search(rf'id="{form}".*?name="{name}"[^>]*?value="([^"]*)"', html, re.S)
    return m.group(1) if m else None


def _in_place(r: Any, status: int, form: str, says: str) -> str:
    assert r.status_code == status, (r.status_code, _visible(r.text)[:600])
    html = r.text
    error = found(rf'id="{form}-error"[^>]*>([^<]*)<', html).group(1)
    assert says in error, error
    assert f'id="{form}"' in html and '<div class="error-box">' not in html  # the form's own page, not the error page
    assert not RAW_NAMES.search(_visible(html)), RAW_NAMES.search(_visible(html))
    assert PASSWORD not in html and "Tajné-heslo-9" not in html  # a password is never sent back
    result: str = html
    return result


@pytest.mark.parametrize(
    ("form", "says"),
    [
        ({"username": "Jana Nová!", "role": "manager", "password": "Tajné-heslo-9", "repeat": "Tajné-heslo-9"}, "Prihlasovacie meno"),
        ({"username": STAFF, "role": "manager", "password": "Tajné-heslo-9", "repeat": "Tajné-heslo-9"}, "už existuje"),
        ({"username": "peter", "role": "manager", "password": "krátke", "repeat": "krátke"}, "aspoň"),
        ({"username": "peter", "role": "manager", "password": "Tajné-heslo-9", "repeat": "Tajné-heslo-0"}, "líšia"),
        ({"username": "peter", "role": "boss", "password": "Tajné-heslo-9", "repeat": "Tajné-heslo-9"}, "rolu"),
        ({}, "Prihlasovacie meno"),  # nothing filled in: said in words, not as field names
    ],
)
def test_a_refused_new_account_is_shown_at_the_form_with_what_was_typed(pages: Pages, form: Any, says: Any) -> None:
    before = pages.page("/users")
    html = _in_place(pages.post("/users", form), 400, "add-user", says)
    assert _typed(html, "add-user", "username") == form.get("username", "")
    if form.get("role") == "manager":
        assert re.search(r'<option value="manager" selected>', html)
    assert 'name="must_change" value="on" class="check"' in html  # unticked stays unticked
    assert re.findall(r'data-user="([^"]+)"', pages.page("/users")) == re.findall(r'data-user="([^"]+)"', before)


def test_refusals_on_an_account_page_stay_at_their_form(pages: Pages) -> None:
    html = _in_place(pages.post(f"/users/{STAFF}/password", {"password": "Tajné-heslo-9", "repeat": "iné"}), 400, "set-password", "líšia")
    assert 'name="must_change" value="on" class="check"' in html  # it was not ticked: still not
    _in_place(pages.post(f"/users/{MANAGER}/role", {"role": "staff"}), 400, "change-role", "jediný aktívny vedúci")
    _in_place(pages.post(f"/users/{MANAGER}/active", {"active": "0"}), 400, "actions", "jediný aktívny vedúci")
    _in_place(pages.post(f"/users/{STAFF}/active", {"active": "maybe"}), 400, "actions", "Zvoľte")
    _in_place(pages.post(f"/users/{STAFF}/tokens/999/revoke", {}), 404, "tokens", "taký token")
    _in_place(pages.post(f"/users/{STAFF}/sessions/999999/end", {}), 404, "logins", "už skončilo")


def test_a_refused_own_password_stays_on_the_form(pages: Pages) -> None:
    _in_place(
        pages.post("/account/password", {"current": "zlé", "password": "Tajné-heslo-9", "repeat": "Tajné-heslo-9"}, client=pages.staff),
        403,
        "own-password",
        "Súčasné heslo nie je správne",
    )
    _in_place(pages.post("/account/password", {}, client=pages.staff), 400, "own-password", "aspoň")
