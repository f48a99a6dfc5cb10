"""The manager's account page in Chromium, against `lavos server` as a real process.

A manager disables a staff user and the tablet that user is logged in on is logged out at its next
request; a new account with a handed-out password must choose its own before anything else; the
account's history shows who did what and when.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tests.dashboard.browser.conftest import PHONE
from tests.dashboard.browser.web import log_in
from tests.dashboard.conftest import MANAGER, PASSWORD, STAFF

if TYPE_CHECKING:
    from tests.support.web import ServedHub


NODE_TABLES = ()  # no table node needed: accounts only
HANDED_OUT, CHOSEN = "Dočasné-heslo-1", "Moje-vlastné-heslo-2"


def _login_form(page: Any, base_url: str, username: str, password: str) -> None:
    page.goto(base_url + "/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.locator(".login-box button[type=submit]").tap()


def test_disabling_a_staff_user_logs_their_tablet_out(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    bar, office = open_page(), open_page()
    log_in(bar, lavos, STAFF, "/alerts")
    log_in(office, lavos, MANAGER, "/users")
    assert office.locator(f"#accounts tr[data-user={STAFF}]").is_visible()
    office.locator(f"#accounts a[href='/users/{STAFF}']").tap()
    office.wait_for_url(re.compile(f"/users/{STAFF}$"))
    assert office.locator("#logins tr[data-login]").count() == 1  # the bar tablet's login is listed
    with office.expect_navigation():
        office.locator("#disable button").tap()  # confirm() is accepted by the fixture
    assert "zablokovaný" in office.locator(".flash-ok").inner_text()
    assert office.locator("#enable button").is_visible()
    assert office.locator("#logins tr[data-login]").count() == 0

    bar.reload()  # the tablet's next request: its session is over
    assert re.search(r"/login(\?|$)", bar.url), bar.url
    _login_form(bar, lavos.base_url, STAFF, PASSWORD)
    assert "/login" in bar.url and bar.locator(".login-box").is_visible()  # disabled: no way back in

    with office.expect_navigation():
        office.locator("#enable button").tap()
    log_in(bar, lavos, STAFF, "/alerts")  # enabled again: works

    # Who did it and when: the history on the account page, newest first.
    rows = office.locator("#audit tbody tr").all_inner_texts()
    active = office.locator("#audit tbody tr:has(td[data-action='user.active'])").all_inner_texts()  # a sentence, the id kept aside
    assert any(MANAGER in r and "Účet odblokovaný." in r for r in active), active
    assert any(MANAGER in r and "Účet zablokovaný." in r for r in active), active
    assert re.search(r"\d{1,2}\.\u00a0\d{1,2}\.\u00a020\d\d \d{1,2}:\d\d", rows[0]), rows[0]  # the local time, Slovak style


def test_a_handed_out_password_must_be_changed_before_anything_else(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    office, bar = open_page(), open_page()
    log_in(office, lavos, MANAGER, "/users")
    form = office.locator("#add-user")
    form.locator("input[name=username]").fill("fero")
    form.locator("input[name=password]").fill(HANDED_OUT)
    form.locator("input[name=repeat]").fill(HANDED_OUT)
    assert form.locator("input[name=must_change]").is_checked()
    with office.expect_navigation():
        form.locator("button[type=submit]").tap()
    assert office.url.endswith("/users/fero"), office.url
    assert "zmeniť heslo" in office.locator("#account-state").inner_text()

    _login_form(bar, lavos.base_url, "fero", HANDED_OUT)
    assert bar.url.endswith("/account/password"), bar.url
    assert bar.locator("#forced").is_visible()
    for elsewhere in ("/", "/alerts", "/foosball"):  # nothing else opens until it is done
        bar.goto(lavos.base_url + elsewhere)
        assert bar.url.endswith("/account/password"), (elsewhere, bar.url)
    api = bar.request.get(lavos.base_url + "/api/tables")
    assert api.status == 403 and "must change the password" in api.json()["detail"]

    bar.fill("input[name=current]", HANDED_OUT)
    bar.fill("input[name=password]", CHOSEN)
    bar.fill("input[name=repeat]", CHOSEN + "x")
    with bar.expect_navigation():
        bar.locator("#own-password button[type=submit]").tap()
    assert "líšia" in bar.locator("main").inner_text()  # the two differ: refused in Slovak, nothing changed
    bar.goto(lavos.base_url + "/account/password")
    bar.fill("input[name=current]", HANDED_OUT)
    bar.fill("input[name=password]", CHOSEN)
    bar.fill("input[name=repeat]", CHOSEN)
    with bar.expect_navigation():
        bar.locator("#own-password button[type=submit]").tap()
    assert bar.url == lavos.base_url + "/", bar.url  # done: the floor, still logged in on this tablet
    assert bar.locator(".flash-ok").is_visible()
    assert bar.request.get(lavos.base_url + "/api/tables").status == 200

    office.reload()
    assert "zmeniť heslo" not in office.locator("#account-state").inner_text()
    password = office.locator("#audit tbody tr:has(td[data-action='user.password'])").all_inner_texts()
    added = office.locator("#audit tbody tr:has(td[data-action='user.add'])").all_inner_texts()
    assert any("fero" in r and "Heslo nastavené." in r for r in password), password  # the user did it themself
    assert any(MANAGER in r and "Musí si zvoliť vlastné heslo." in r for r in added), added


def test_an_ended_login_keeps_the_form_and_what_was_typed(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    """Issue 19, item 17: the manager ends the bar tablet's logins while a start form is half filled
    in; sending it leads to the login page, which says why, and logging in again to the same form
    with what was typed (and no game started meanwhile). Issue 29, item 38: the prepaid time chosen
    with a preset shows chosen again on the preset, not "Bez limitu"."""
    bar, office = open_page(), open_page()
    log_in(bar, lavos, STAFF, "/tables/pool-04")
    bar.fill("#start-form input[name=card_uid]", "0a1b2c3d")
    bar.locator("#start-form .preset[data-minutes='60']").tap()
    log_in(office, lavos, MANAGER, f"/users/{STAFF}")
    with office.expect_navigation():
        office.locator("#end-logins button").tap()

    if "/tables/pool-04" in bar.url:  # else a background refresh met the ended login first and took the tablet there
        with bar.expect_navigation():
            bar.locator("#start").tap()
    bar.wait_for_url(re.compile(r"/login\?next=/tables/pool-04$"))
    assert "Vaše prihlásenie vypršalo" in bar.locator("#login-ended").inner_text()
    bar.fill("input[name=username]", STAFF)
    bar.fill("input[name=password]", PASSWORD)
    with bar.expect_navigation():
        bar.locator(".login-box button[type=submit]").tap()
    assert bar.url == lavos.base_url + "/tables/pool-04"
    assert bar.locator("#start-form input[name=card_uid]").input_value() == "0a1b2c3d"
    assert bar.locator("#start-form input[name=prepaid_minutes]").input_value() == "60"
    pressed = bar.locator("#start-form .preset[aria-pressed=true]")
    assert pressed.count() == 1 and pressed.get_attribute("data-minutes") == "60", pressed.all_inner_texts()
    assert lavos.api("GET", "/api/tables/pool-04", STAFF)["session"] is None
    bar.reload()  # the work was put back once; a page loaded again starts empty
    assert bar.locator("#start-form input[name=card_uid]").input_value() == ""


def test_a_refused_account_form_stays_with_what_was_typed(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    """Issue 19, item 22: on the manager's phone, a refused new account is said at the form, in
    Slovak, with the name, the role and the tick kept (the passwords are typed again)."""
    office = open_page(PHONE, mobile=True)
    log_in(office, lavos, MANAGER, "/users")
    form = office.locator("#add-user")
    form.locator("input[name=username]").fill("peter.novy")
    form.locator("select[name=role]").select_option("manager")
    form.locator("input[name=password]").fill("Tajné-heslo-9")
    form.locator("input[name=repeat]").fill("Iné-heslo-9")
    form.locator("input[name=must_change]").uncheck()
    with office.expect_navigation():
        form.locator("button[type=submit]").tap()
    assert office.url == lavos.base_url + "/users"
    assert "Heslá sa líšia" in office.locator("#add-user-error").inner_text()
    assert form.locator("input[name=username]").input_value() == "peter.novy"
    assert form.locator("select[name=role]").input_value() == "manager"
    assert not form.locator("input[name=must_change]").is_checked()
    assert form.locator("input[name=password]").input_value() == "" == form.locator("input[name=repeat]").input_value()
    office.goto(lavos.base_url + "/users")
    assert office.locator("#accounts tr[data-user='peter.novy']").count() == 0  # nothing was made
