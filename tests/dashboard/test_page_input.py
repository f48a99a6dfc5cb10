"""What the pages take: text without control characters, on every page route, checked once
(dashboard.web.input_text), as the JSON API's bodies are (dashboard.api.schemas)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from broker.storage.models import AuditEntry, Tab
from dashboard.web.app import web_routes
from tests.dashboard.conftest import sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture

if TYPE_CHECKING:
    from tests.dashboard.pages_client import Pages


pytestmark = sqlite_only  # the check runs before any route or database


def _tabs(pages: Any) -> list[str]:
    with pages.service.store.reader() as db:
        return list(db.scalars(select(Tab.label)))


def test_a_nul_typed_into_a_walk_in_tabs_name_is_refused_and_nothing_is_stored(pages: Pages) -> None:
    before = _tabs(pages)
    r = pages.post("/tabs", {"label": "Bar A\x00B"}, client=pages.staff)
    assert r.status_code == 400
    assert "Meno: obsahuje riadiaci znak" in r.text.replace("\u00a0", " ")
    assert _tabs(pages) == before
    r = pages.post("/tabs", {"label": "Bar A\x1bB"}, client=pages.staff)  # ESC, or any other control character
    assert r.status_code == 400 and _tabs(pages) == before
    # Without it the name goes through.
    assert pages.post("/tabs", {"label": "Bar A B"}, client=pages.staff).status_code == 303
    assert _tabs(pages) == [*before, "Bar A B"]


def test_a_control_character_in_the_address_or_a_hidden_field_is_said_in_slovak_without_a_code_name(pages: Pages) -> None:
    """Issue 29's independent check: `GET /tables/pool-01%00` said "table_id: obsahuje riadiaci znak",
    the route's parameter name on a Slovak page. The address is the address; a field of a form
    that has no label (a hidden one) is the form's field; a field people fill in keeps its label."""
    for path in ("/tables/pool-01%00", "/tables/pool-01?next=%1B"):
        r = pages.staff.get(path)
        assert r.status_code == 400 and _details(r.text) == ["Adresa obsahuje riadiaci znak"], path
    r = pages.post("/tabs", {"label": "Bar", "next": "/\x00"}, client=pages.staff)
    assert r.status_code == 400 and _details(r.text) == ["Pole formulára obsahuje riadiaci znak"]
    r = pages.manager.get("/members?q=a%00b")
    assert r.status_code == 400 and _details(r.text) == ["Hľadať: obsahuje riadiaci znak"]


def _details(html: str) -> list[str]:
    """What the error page lists as wrong."""
    box = html.split('class="error-box"')[1].split("</ul>")[0]
    return [" ".join(re.sub(r"<[^>]+>", "", li).split()) for li in box.split("<li>")[1:]]


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "1", path)


def test_every_page_refuses_a_control_character_in_any_form_field_or_query_before_it_runs(pages: Pages) -> None:
    def audit() -> int:
        with pages.service.store.reader() as db:
            return db.scalar(select(func.count()).select_from(AuditEntry)) or 0

    before = audit()
    routes = sorted({(m, p) for m, p, _ in web_routes() if m in ("GET", "POST")})
    let_through = []
    for method, path in routes:
        url = _concrete(path)
        if method == "GET":
            answers = [pages.manager.get(f"{url}?q=a%00b"), pages.manager.get(f"{url}?next=%7F")]
        else:
            answers = [
                pages.post(url, {"name": "Bar A\x00B"}),
                pages.post(url, {"note": "riadok\nriadok", "reason": "\x85"}),  # a C1 control (NEL) too
            ]
        let_through += [f"{method} {path} → {r.status_code}" for r in answers if r.status_code != 400]
    assert let_through == []
    assert len(routes) > 80  # the walk saw the pages
    assert audit() == before
