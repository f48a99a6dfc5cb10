"""The receipt in Portos' shape (broker.adapters.ekasa): the documented limits and rules, pure."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.adapters.ekasa import (
    MAX_ITEMS,
    PortosClient,
    ReceiptRequest,
    Unreachable,
    Unsendable,
    clean_name,
    items_of,
    problem_text,
    registration_of,
    request_body,
)
from broker.domain.till.receipt import ReceiptLine


def line(amount: int, qty: int = 1, name: str = "Kofola", vat: int = 23) -> ReceiptLine:
    return ReceiptLine(name, name, qty, None, amount, vat, "drinks")


@given(price=st.integers(-10_000_000, 10_000_000).filter(bool), qty=st.integers(1, 1000))
def test_price_is_unit_price_times_quantity_to_the_cent(price: Any, qty: Any) -> None:
    body: Any = request_body(ReceiptRequest("x", items_of([line(price, qty)]), (("Hotovosť", price),)))  # JSON, of the documented shape
    item = body["request"]["data"]["items"][0]
    unit, amount = item["unitPrice"], item["quantity"]["amount"]
    assert len(unit.split(".")[1]) == 6 and len(item["price"].split(".")[1]) == 2
    assert round(float(unit) * float(amount) * 100) == price
    assert int(item["price"].replace(".", "")) == price


def test_names_are_cleaned_and_cut_to_255() -> None:
    assert clean_name("Pivo\x07 0,5\tl") == "Pivo  0,5 l"
    assert len(clean_name("x" * 300)) == 255
    assert clean_name("\x01") == "-"


def test_a_sale_is_positive_a_void_a_discount_zero_lines_left_out_a_refund_returned_naming_the_original() -> None:
    assert [i.type for i in items_of([line(300), line(-100), line(0)])] == ["Positive", "Discount"]
    refund = items_of([line(-300)], refund_of="O-ABC")
    assert [(i.type, i.reference_id) for i in refund] == [("Returned", "O-ABC")]


def test_limits_are_refused_before_anything_is_sent() -> None:
    with pytest.raises(Unsendable):
        items_of([line(1)] * (MAX_ITEMS + 1))
    with pytest.raises(Unsendable):
        items_of([line(0)])


def test_answers_registered_offline_refused_and_problems() -> None:
    ok = registration_of({"isSuccessful": True, "request": {"data": {"okp": "K"}}, "response": {"data": {"id": "O-1"}}})
    assert (ok.outcome, ok.receipt_id, ok.okp) == ("registered", "O-1", "K")
    off = registration_of({"isSuccessful": None, "request": {"data": {"okp": "K"}}, "response": None})
    assert (off.outcome, off.okp) == ("offline", "K")
    no = registration_of({"isSuccessful": False, "error": {"message": "Certifikát expiroval", "code": -302}})
    assert (no.outcome, no.error, no.code) == ("failed", "Certifikát expiroval", -302)
    why, code = problem_text({"title": "Invalid", "code": -900, "errors": {"items[0].name": ["too long"]}}, 400)
    assert why == "Invalid — items[0].name: too long" and code == -900
    assert problem_text("<html>", 502) == ("HTTP 502", None)


def test_an_unclear_lookup_answer_is_never_taken_for_not_found() -> None:
    # A 403 or a 400 to the look-up is not "I do not have it": sending then could register twice.
    client = PortosClient("http://ekasa.test", transport=httpx.MockTransport(lambda r: httpx.Response(403, json={"title": "Forbidden"})))
    with pytest.raises(Unreachable):
        client.lookup("lavos-lavos-1")
    gone = PortosClient("http://ekasa.test", transport=httpx.MockTransport(lambda r: httpx.Response(404, json={"code": -104})))
    assert gone.lookup("lavos-lavos-1") is None
