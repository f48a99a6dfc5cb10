"""broker.domain.euros.parse_euros: the one reader of amounts people type (issue 18, item 7), and
what it reads only when it cannot mean two amounts (issue 19: "0.10" is 0,10 €, "1.234" is refused
with the format); every form that takes euros refuses such text in Slovak and writes nothing."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import func, select

from broker.domain.euros import MAX_AMOUNT_CENTS, euros, parse_euros
from broker.storage.members import add_member
from broker.storage.models import Base
from tests.dashboard.conftest import sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.hub import on_writer
from tests.support.matching import some
from tests.till.payments_support import STAFF, clock, facade, played_tab, service  # noqa: F401

if TYPE_CHECKING:
    from broker.hall.facade import HubFacade
    from tests.dashboard.conftest import FakeClock
    from tests.dashboard.pages_client import Pages


@pytest.mark.parametrize(
    "text,cents",
    [
        ("12,50", 1250),
        ("12.50", 1250),
        ("12,5 €", 1250),
        ("1 234,50", 123450),
        ("7", 700),
        ("100 000,00 €", MAX_AMOUNT_CENTS),
        # A decimal point is read where it cannot be a thousands point: one or two digits follow it.
        ("0.10", 10),
        ("12.5", 1250),
        ("1234.56", 123456),
        ("1 234.56", 123456),
        ("€12.50", 1250),  # as the English pages write it
        ("12,50\u00a0€", 1250),  # as the Slovak pages write it (a no-break space)
        ("1\u202f234,50", 123450),  # a narrow no-break space between thousands
        (" 3,5 ", 350),
    ],
)
def test_what_a_bartender_types_is_read_as_cents(text: Any, cents: Any) -> None:
    assert parse_euros(text) == cents


@pytest.mark.parametrize(
    "text",
    # an exponent, other scripts' digits, a sign or a point alone, a third decimal, a thousands point, words, nothing, over the cap
    ["1e3", "1E2", "２０", "+5", ".5", "5.", "10,001", "1.234,50", "ten", "", " ", "NaN", "Infinity", "100 000,01", "0x10"],
)
def test_anything_else_is_not_an_amount(text: Any) -> None:
    assert parse_euros(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "1.234",  # 1 234 € with a thousands point, or 1,234 €?
        "1.000",
        "1,234",
        "1.234,56",  # a point and a comma: which is the decimal one?
        "1,234.56",
        "12 50",  # 12,50 € or 1 250 €? (read as 1 250 € before)
        "1 23,45",  # a space that groups no thousands (123,45 € before)
        "1 2 3",
        "12€50",  # a euro sign inside the number (1 250 € before)
        "€12,50 €",
        "1,2 3",
        "1..5",
        "12.50.",
    ],
)
def test_an_amount_that_could_mean_two_is_refused(text: Any) -> None:
    assert parse_euros(text) is None


def test_bounds_are_the_callers_and_the_cap_is_everyones() -> None:
    assert parse_euros("0") is None and parse_euros("0", low=0) == 0
    assert parse_euros("0", low=0, zero=False) is None
    assert parse_euros("-2,50") is None and parse_euros("-2,50", low=-500) == -250
    assert parse_euros("-€2.50", low=-500) == -250
    assert parse_euros("50", high=4_000) is None
    assert parse_euros("200 000", high=10**9) is None  # a caller cannot lift the 100 000 € cap


@given(st.integers(min_value=1, max_value=MAX_AMOUNT_CENTS))
def test_every_amount_shown_reads_back_as_itself(cents: Any) -> None:
    assert parse_euros(euros(cents)) == cents


def _grouped(whole: int) -> str:
    return f"{whole:,}".replace(",", " ")


@given(st.integers(min_value=1, max_value=MAX_AMOUNT_CENTS), st.sampled_from([",", "."]), st.booleans(), st.sampled_from(["", " €", "€"]))
def test_every_way_of_writing_an_amount_with_a_decimal_comma_or_point_reads_the_same(
    cents: Any, mark: Any, grouped: Any, sign: Any
) -> None:
    whole, part = divmod(cents, 100)
    number = (_grouped(whole) if grouped else str(whole)) + f"{mark}{part:02d}"
    assert parse_euros(number + sign) == cents
    assert parse_euros(("€" if sign else "") + number) == cents
    if part % 10 == 0:
        assert parse_euros((_grouped(whole) if grouped else str(whole)) + f"{mark}{part // 10}") == cents  # "12,5"


@given(
    st.integers(min_value=0, max_value=999),
    st.integers(min_value=0, max_value=999),
    st.sampled_from([",", "."]),
    st.text("0123456789,. ", max_size=4),
)
def test_three_digits_after_a_point_or_a_comma_or_both_marks_are_never_read(whole: Any, three: Any, mark: Any, tail: Any) -> None:
    assert parse_euros(f"{whole}{mark}{three:03d}{tail}") is None
    assert parse_euros(f"{whole}.{three:03d},{tail}") is None and parse_euros(f"{whole},{three:03d}.{tail}") is None


@given(st.lists(st.integers(min_value=0, max_value=9999), min_size=2, max_size=4))
def test_spaces_inside_a_number_only_group_thousands(groups: Any) -> None:
    text = " ".join(str(g) for g in groups)
    thousands = 1 <= len(str(groups[0])) <= 3 and all(len(str(g)) == 3 for g in groups[1:])
    if not thousands:
        assert parse_euros(text, high=MAX_AMOUNT_CENTS) is None
    elif int("".join(str(g) for g in groups)) * 100 <= MAX_AMOUNT_CENTS:
        assert parse_euros(text) == int("".join(str(g) for g in groups)) * 100


# --- every form that takes euros, in Slovak ----------------------------------------------------

EXAMPLE = re.compile(r"(?:napr\.|ako) [^<]{0,12}\d,\d\d")  # the format staff should use: "napr. 12,50", "napr. 20 alebo 20,00"


def _rows(service: Any) -> dict[str, int]:
    """The number of rows of every table: what a refused form must leave alone."""
    with service.store.reader() as db:
        return {t.name: int(db.scalar(select(func.count()).select_from(t)) or 0) for t in Base.metadata.sorted_tables}


@sqlite_only
@pytest.mark.parametrize("text", ["1.234", "12 50"])
def test_every_euro_form_refuses_an_amount_that_could_mean_two_in_slovak_with_the_format(
    pages: Pages, facade: HubFacade, clock: FakeClock, text: Any
) -> None:
    tab = played_tab(facade, clock)
    game = some(facade.reads.till.tab_payments(tab)).game_id

    member = on_writer(pages.service, lambda db: add_member(db, "Zadražil Miro", actor="test").id)
    forms = [
        (pages.staff, f"/tabs/{tab}/pay", {"method": "cash", "amount": text}),
        (pages.staff, f"/tabs/{tab}/pay", {"method": "cash", "amount": "9", "tendered": text}),
        (pages.staff, "/day/open", {"float_eur": text}),
        (pages.staff, "/day/close", {"counted_eur": text, "day": facade.reads.till.day_overview().day.isoformat()}),
        (pages.manager, "/products", {"name": "Kofola", "price": text, "vat": "19", "category": "drinks"}),
        (pages.manager, f"/members/{member}/fee", {"year": "2026", "amount": text}),
        (pages.manager, f"/bills/{game}/correct", {"amount": text, "reason": "zlý čas"}),
    ]
    if " " not in text:  # the split form's parts are separated by spaces: there "12 50" is two parts (refused: not the bill)
        forms.append((pages.staff, f"/tabs/{tab}/split", {"mode": "amounts", "amounts": f"4,00; {text}"}))
    before = _rows(pages.service)
    for client, path, form in forms:
        r = pages.post(path, form, client=client)
        assert r.status_code == 400, (path, r.status_code, r.text[-2000:])
        assert EXAMPLE.search(r.text), (path, re.findall(r"role=\"alert\"[^>]*>([^<]*)", r.text))  # says how to write it, in Slovak
    assert _rows(pages.service) == before
