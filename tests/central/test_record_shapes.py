"""The contract of the hall's records (broker.domain.central_records), as properties, without a database:
whatever JSON arrives, a record is either taken or refused with a reason (never another error), and
whatever is taken can be counted by the Z report's own function (the centre's daily takings) without
an error, each method's figure summing to the payments' amounts. And the contract names every field
of what it stands for, so a field added to the hall's payment record cannot be forgotten at the centre."""

from __future__ import annotations

import contextlib
import dataclasses
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.domain.central_records import (
    DATA,
    FIRST_YEAR,
    LAST_YEAR,
    MAX_KEY,
    LineData,
    PaymentData,
    RecordRefused,
    check,
    check_record,
    payment_doc,
)
from broker.domain.euros import MAX_AMOUNT_CENTS
from broker.domain.till.receipt import ReceiptLine
from broker.domain.till.revenue import PaymentRecord
from broker.domain.till.zreport import DayOpening, Method, z_report

if TYPE_CHECKING:
    from broker.domain.till.zreport import ZReport


DAY = date(2026, 12, 4)
AT = datetime(2026, 12, 4, 19, tzinfo=UTC)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(["2026-12-04", "2026-12-04T19:00:00+00:00", "9999-12-31T23:59:00-12:00", "0001-01-01", "Bar A\x00B"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
amounts = st.integers(min_value=-MAX_AMOUNT_CENTS - 2, max_value=MAX_AMOUNT_CENTS + 2)
words = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=40)  # what a page takes; the rest is mutated in


@st.composite
def lines(draw: Any) -> ReceiptLine:
    amount = draw(amounts)
    shares = draw(st.lists(st.tuples(st.sampled_from(["table_time", "drinks", "food", ""]), amounts), max_size=3))
    return ReceiptLine(
        draw(words),
        "en",
        draw(st.integers(min_value=-3, max_value=10)),
        draw(st.none() | amounts),
        amount,
        draw(st.sampled_from([0, 5, 19, 23, 100])),
        draw(st.sampled_from(["table_time", "drinks", "partial_payment", "unassigned", ""])),
        tuple(shares),
    )


@st.composite
def payment_docs(draw: Any) -> dict[str, Any]:
    reversal = draw(st.booleans())
    amount = draw(amounts)
    if draw(st.integers(0, 3)):  # mostly the sign the till gives it
        amount = -abs(amount) if reversal else abs(amount)
    rec = PaymentRecord(
        id=draw(st.integers(min_value=0, max_value=MAX_KEY + 1)),
        method=draw(st.sampled_from(["cash", "card", "voucher"])),
        amount_cents=amount,
        staff="jana",
        at=AT,
        receipt_no=draw(st.none() | st.integers(min_value=1, max_value=10)),
        tab=draw(words),
        tab_id=1,
        lines=tuple(draw(st.lists(lines(), max_size=4))),
        reverses_id=3 if reversal else None,
        day=DAY,
        rounding_cents=draw(st.integers(min_value=-2, max_value=2)),
    )
    doc = payment_doc(rec, business_day=DAY, method_name="Hotovosť", method_name_en="Cash", cash=rec.method == "cash", fallback_vat=23)
    if not draw(st.integers(0, 3)):  # now and then any JSON in place of a field, or a field left out
        key = draw(st.sampled_from(sorted(doc)))
        if draw(st.booleans()):
            doc[key] = draw(json_values)
        else:
            del doc[key]
    return doc


def _day_of(p: PaymentData) -> ZReport:
    methods = [Method(p.method, p.method_name, p.method_name_en, p.cash)]
    return z_report(DayOpening(p.business_day, None, "", 0), [p.record()], methods, made_at=AT, fallback_vat=p.fallback_vat)


@settings(max_examples=150, deadline=None)
@given(payment_docs())
def test_a_payment_is_taken_or_refused_with_a_reason_and_what_is_taken_counts(doc: Any) -> None:
    try:
        p = check("payment", doc)
    except RecordRefused as e:
        assert str(e)
        return
    assert isinstance(p, PaymentData) and 0 < abs(p.amount_cents) <= MAX_AMOUNT_CENTS
    z = _day_of(p)
    assert z.total_cents == p.amount_cents == sum(m.net_cents for m in z.by_method)
    assert sum(v.gross_cents for v in z.by_vat) == p.amount_cents == sum(c.net_cents for c in z.by_category)
    assert check("payment", p.model_dump(mode="json")) == p  # what the centre keeps reads back as the same record


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(DATA)), json_values, st.one_of(st.none(), st.integers(), st.text(max_size=5), json_values))
def test_any_json_as_any_record_is_taken_or_refused_never_an_error(kind: Any, data: Any, seq: Any) -> None:
    for record in (data, {"seq": seq, "kind": kind, "ref": "x", "at": "2026-12-04T19:00:00+00:00", "data": data}):
        with contextlib.suppress(RecordRefused):
            check_record(record)
    with contextlib.suppress(RecordRefused):
        check(kind, data)


def test_the_contract_names_every_field_of_the_hall_s_payment_record() -> None:
    assert {f.name for f in dataclasses.fields(PaymentRecord)} <= set(PaymentData.model_fields)
    assert {f.name for f in dataclasses.fields(ReceiptLine)} == set(LineData.model_fields)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("business_day", f"{FIRST_YEAR - 1}-12-31"),
        ("business_day", f"{LAST_YEAR + 1}-01-01"),
        ("at", "2026-12-04T19:00:00"),  # no zone
        ("day", "2026-12-05"),  # not its business day
        ("fallback_vat", 101),
        ("staff", "x" * 65),
        ("method", "m" * 33),
    ],
)
def test_a_payment_outside_the_hall_s_rules_is_refused(field: Any, value: Any) -> None:
    rec = PaymentRecord(1, "cash", 100, "jana", AT, 1, "Pool 1", 1, (), day=DAY)
    doc = payment_doc(rec, business_day=DAY, method_name="H", method_name_en="C", cash=True, fallback_vat=23)
    check("payment", doc)
    with pytest.raises(RecordRefused, match=field):
        check("payment", doc | {field: value})
