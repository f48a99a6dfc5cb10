"""Every date and time the API and the pages take goes through the hall's one parser
(broker.domain.dates, dashboard.api.dates), on every route that takes one.

The API's date inputs are found, not listed: every query, path and body field whose type is a date
or a datetime. Each gets the edges that answered 500 before (issue 29: year 1 and 9999, with far
offsets, the spring night's missing hour) and the hall's range's neighbours; each must answer 422
naming the field, with the parser's own words, and the range's first and last day must pass. The
pages' date fields are listed (forms are text), and a page route with a date-like field that the
list lacks fails the walk."""

from __future__ import annotations

import re
import types
import typing
from datetime import date, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from pydantic import BaseModel

from broker.hall.facade import HubFacade
from dashboard.api.app import api_routes
from dashboard.web.app import web_routes
from tests.dashboard.conftest import sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture

if TYPE_CHECKING:
    from tests.dashboard.conftest import Api
    from tests.dashboard.pages_client import Pages


# SQLite only (sqlite_only on each test with a hub): the parser answers before any query; the routes' SQL is tested on both elsewhere.

# The hub's clock: 10 November 2026 (tests/dashboard/conftest.py START), so the range is 2016-01-01 .. 2028-12-31.
EDGES = [
    "0001-01-01",
    "9999-12-30",
    "9999-12-31",
    "9999-12-31T23:59:00+00:00",
    "9999-12-31T23:00:00-12:00",
    "0001-01-01T00:00:00+14:00",
    "0001-01-01T00:00:00",
    "2027-03-28T02:30:00",  # the spring night skips 02:00-03:00 at the hall
    "2015-12-31",
    "2029-01-01T00:00:00+01:00",
    "1970-01-01T00:00:00Z",
    "yesterday",
]


def _has_date(annotation: object) -> bool:
    if annotation in (date, datetime):
        return True
    return any(_has_date(arg) for arg in typing.get_args(annotation) if not isinstance(arg, str | int | bool | types.NoneType))


def api_date_inputs() -> list[tuple[str, str, str, str]]:
    """(method, path, where: query/path/body, name) of every API input that is a date or a time."""
    found = []
    for method, path, route in api_routes():
        for where, params in (("query", route.dependant.query_params), ("path", route.dependant.path_params)):
            found += [(method, path, where, p.alias) for p in params if _has_date(p.field_info.annotation)]
        for param in route.dependant.body_params:
            for model in typing.get_args(param.field_info.annotation) or (param.field_info.annotation,):
                if isinstance(model, type) and issubclass(model, BaseModel):
                    found += [(method, path, "body", n) for n, f in model.model_fields.items() if _has_date(f.annotation)]
    return sorted(set(found))


INPUTS = api_date_inputs()

# An input is a date or a time when it is named so ("year" is a year: the fee's and the season's own
# range): the API's must be typed as one, the pages read theirs as text with the hall's parser.
DATE_FIELDS = {"day", "month", "time", "start", "end", "at_time", "starts_at", "from", "to", "at"}


def _call(api: Any, method: str, path: str, where: str, name: str, value: str) -> Any:
    url = (
        re.sub(r"\{[^}]+\}", "1", path.replace("{" + name + "}", quote(value, safe="")))
        if where == "path"
        else re.sub(r"\{[^}]+\}", "1", path)
    )
    kw: dict[str, Any] = {}
    if where == "query":
        kw["params"] = {name: value}
    elif where == "body":
        kw["json"] = {name: value}
    return api.client.request(method, url, headers=api.manager, **kw)


def _field(where: str, name: str) -> str:
    return name if where == "body" else f"{where}.{name}"


def _said(r: Any, where: str, name: str) -> set[str]:
    """What a 4xx answer says about this one field."""
    if r.status_code < 400 or not r.headers.get("content-type", "").startswith("application/json"):
        return set()
    return {e["message"] for e in r.json().get("errors", []) if e.get("field") == _field(where, name)}


def _refusals(api: Any, value: str) -> set[str]:
    """What the parser says about `value`, read as a day, a time or either."""
    from broker.domain.dates import DateRefused  # here: the module imports on a tree without it (the test then fails, not errors)

    dates = HubFacade(api.service).reads.dates()
    said = set()
    for read in (dates.day, dates.moment, dates.day_or_moment):
        try:
            read(value)
        except DateRefused as e:
            said.add(str(e))
    return said


def api_inputs_named_as_dates() -> set[tuple[str, str, str, str]]:
    named = set()
    for method, path, route in api_routes():
        for where, params in (("query", route.dependant.query_params), ("path", route.dependant.path_params)):
            named |= {(method, path, where, p.alias) for p in params if p.alias in DATE_FIELDS}
        for param in route.dependant.body_params:
            for model in typing.get_args(param.field_info.annotation) or (param.field_info.annotation,):
                if isinstance(model, type) and issubclass(model, BaseModel):
                    named |= {(method, path, "body", n) for n in model.model_fields if n in DATE_FIELDS}
    return named


def test_the_walk_finds_the_api_date_inputs_and_every_input_named_as_one_is_typed_as_one() -> None:
    assert api_inputs_named_as_dates() - set(INPUTS) == set()  # a date in a plain string would escape the parser
    names = {(p, n) for _m, p, _w, n in INPUTS}
    assert {
        ("/api/availability", "from"),
        ("/api/bookings", "start"),
        ("/api/tournaments", "starts_at"),
        ("/api/days/{day}", "day"),
    } <= names
    assert ("/api/reports/revenue", "from") in names and ("/api/sessions", "day") in names


@sqlite_only
def test_every_api_date_input_refuses_the_edges_with_a_422_in_the_parsers_words(api: Api) -> None:
    dates = HubFacade(api.service).reads.dates()
    wrong = []
    for method, path, where, name in INPUTS:
        here = f"{method} {path} {where}.{name}"
        for value in EDGES:
            r = _call(api, method, path, where, name, value)
            said = _said(r, where, name) if r.status_code == 422 else set()
            if not said or not said <= _refusals(api, value):
                wrong.append(f"{here}: {value} → {r.status_code} {r.text[:200]}")
        # The range's own ends pass the field, as a day or as a time (whatever else the route then says).
        for end in (dates.first, dates.last):
            passed = []
            for value in (end.isoformat(), f"{end}T12:00:00"):
                r = _call(api, method, path, where, name, value)
                said = _said(r, where, name)
                if r.status_code >= 500 or any("outside" in m for m in said):
                    wrong.append(f"{here}: {value} → {r.status_code} {said}")
                passed.append(not said)
            if not any(passed):
                wrong.append(f"{here}: {end} refused as a day and as a time")
    assert wrong == []


@sqlite_only
def test_a_booking_on_the_spring_nights_missing_hour_or_in_year_1_is_a_422(api: Api) -> None:
    body = {"table": "pool-04", "start": "2027-03-28T02:30:00", "end": "2027-03-28T04:00:00", "party_size": 2}
    r = api.client.post("/api/bookings", headers=api.manager, json=body)
    assert (
        r.status_code == 422
        and r.json()["detail"] == "start: 02:30 does not exist that night (the clocks go forward); choose another time."
    )
    r = api.client.post("/api/bookings", headers=api.manager, json={**body, "start": "0001-01-01T00:00:00"})
    assert r.status_code == 422 and r.json()["errors"][0] == {
        "field": "start",
        "message": "0001-01-01T00:00:00 is outside the dates the hall works with, 2016-01-01 to 2028-12-31.",
    }
    # (It was an unhandled error, after which uvicorn also dropped the client's keep-alive connection.)
    assert api.client.get("/api/availability", headers=api.manager, params={"from": "2026-11-10"}).status_code == 200


@sqlite_only
def test_the_api_says_a_refused_date_in_slovak_when_asked(pages: Pages) -> None:
    headers = {"X-CSRF-Token": pages.token(), "Accept-Language": "sk"}
    body = {"table": "pool-04", "start": "0001-01-01T00:00:00", "end": "2027-03-28T02:30:00", "party_size": 2}
    r = pages.manager.post("/api/bookings", headers=headers, json=body)
    assert r.status_code == 422 and r.json()["errors"] == [
        {"field": "start", "message": "0001-01-01T00:00:00 je mimo dátumov, s ktorými herňa pracuje: 1. 1. 2016 až 31. 12. 2028."},
        {"field": "end", "message": "02:30 v tú noc neexistuje (posúva sa čas dopredu); zvoľte iný čas."},
    ]


# -- the pages ------------------------------------------------------------------------------------

# (method, path as the list below fills it, the field, other fields): every page that takes a date.
PAGE_CASES: list[tuple[str, str, str, dict[str, str]]] = [
    ("GET", "/bills", "day", {}),
    ("GET", "/bookings", "day", {}),
    ("GET", "/bookings/new", "day", {}),
    ("POST", "/bookings/new", "day", {"where": "pool-04", "time": "20:00", "name": "Novák", "party_size": "2"}),
    ("POST", "/bookings/blocks", "day", {"kind": "private", "start": "20:00", "end": "22:00"}),
    ("GET", "/day", "day", {}),
    ("POST", "/day/close", "day", {"counted_eur": "0"}),
    ("GET", "/day/{day}/report", "day", {}),
    ("GET", "/days/{day}.csv", "day", {}),
    ("GET", "/days/{day}.xlsx", "day", {}),
    ("GET", "/reports", "day", {}),
    ("GET", "/reports", "month", {}),
    ("GET", "/reports/lavos.xlsx", "day", {}),
    ("GET", "/reports/lavos.xlsx", "month", {}),
    ("GET", "/reports/{name}.csv", "day", {}),
    ("GET", "/reports/{name}.csv", "month", {}),
    ("POST", "/tournaments", "starts_at", {"name": "Lavosliga", "payout_shares": "100"}),
    ("GET", "/shifts", "day", {}),  # the shifts (issue 32): a day's report, a correction's times, the payroll's month
    ("POST", "/shifts/{shift}/correct", "start", {"end": "", "reason": "x"}),
    ("POST", "/shifts/{shift}/correct", "end", {"start": "2026-11-10T16:00", "reason": "x"}),
    ("GET", "/shifts/hours.csv", "month", {}),
    ("POST", "/shifts/record", "start", {"staff": "jana", "end": "2026-11-10T16:00", "reason": "x"}),
    ("POST", "/shifts/record", "end", {"staff": "jana", "start": "2026-11-10T16:00", "reason": "x"}),
]
# Date-like fields the list above need not send edges to, and why.
PAGE_TIMES = {
    ("GET", "/bookings/new", "time"): "a prefill of the form, read by the parser and dropped when it is no time",
    ("POST", "/bookings/new", "time"): "a time of day on the form's day: the spring-night case below",
    ("POST", "/bookings/blocks", "start"): "a time of day on the form's day: the spring-night case below",
    ("POST", "/bookings/blocks", "end"): "a time of day on the form's day",
    ("POST", "/ekasa/receipts/{payment_id}/paragon", "at_time"): "a time of day on the payment's day (HallDates.wall_clock)",
}


def test_the_list_of_the_pages_date_fields_is_complete() -> None:
    named = {
        (m, p, q.alias)
        for m, p, r in web_routes()
        for q in [*r.dependant.query_params, *r.dependant.path_params, *r.dependant.body_params]
        if q.alias in DATE_FIELDS
    }
    listed = {(m, p, f) for m, p, f, _ in PAGE_CASES} | set(PAGE_TIMES)
    assert named - listed == set()


def _page(pages: Any, method: str, path: str, field: str, value: str, others: dict[str, str]) -> Any:
    if "{" + field + "}" in path:
        url, form = path.replace("{" + field + "}", quote(value, safe="")), dict(others)
    else:
        url, form = path, {**others, field: value}
    url = url.replace("{name}", "revenue")
    if method == "GET":
        return pages.manager.get(url, params=form)
    return pages.post(url, form)


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split()).replace("\u00a0", " ")


# The parser's refusals in Slovak (and the tournament form's own for what is no date and time).
SLOVAK = (
    "je mimo dátumov, s ktorými herňa pracuje",
    "nie je dátum",
    "nie je mesiac",
    "v tú noc neexistuje",
    "Zadajte dátum a čas začiatku",
)


@sqlite_only
def test_every_page_date_field_refuses_the_edges_in_slovak(pages: Pages) -> None:
    wrong = []
    for method, path, field, others in PAGE_CASES:
        for value in EDGES if field != "month" else [*EDGES, "9999-12", "0000-01", "2026-13"]:
            r = _page(pages, method, path, field, value, others)
            shown = _text(pages.follow(r) if r.status_code == 303 else r.text)  # a block form: back to the day with the reason
            if r.status_code not in (400, 303) or not any(word in shown for word in SLOVAK):
                wrong.append(f"{method} {path} {field}={value} → {r.status_code} {shown[-300:]}")
    assert wrong == []


@sqlite_only
def test_the_spring_nights_missing_hour_is_refused_on_the_booking_and_block_forms(pages: Pages) -> None:
    r = pages.post("/bookings/new", {"where": "pool-04", "day": "2027-03-28", "time": "02:30", "name": "Novák", "party_size": "2"})
    assert r.status_code == 400 and "02:30 v tú noc neexistuje" in _text(r.text)
    r = pages.post("/bookings/blocks", {"kind": "private", "day": "2027-03-28", "start": "01:00", "end": "02:30"})
    assert r.headers["location"] == "/bookings?day=2027-03-28" and "02:30 v tú noc neexistuje" in _text(pages.follow(r))
    r = pages.post("/tournaments", {"name": "Lavosliga", "starts_at": "2027-03-28T02:30", "payout_shares": "100"})
    assert r.status_code == 400 and "02:30 v tú noc neexistuje" in _text(r.text)
