"""eKasa: the certified client that registers a sale with the tax authority, and its one
implementation, NineDigit Portos eKasa's local REST API (it runs on the till machine).

NOT RUN AGAINST A REAL PORTOS INSTALL: no certified device is reachable where this was written.
It was built from NineDigit's public material and tested against tests/support/ekasa_sim.py,
a simulator of the same shapes. What is documented and what is assumed:

Documented (ekasa.ninedigit.sk "Web API quick start"; NineDigit's public client libraries
ninedigit/ekasa-clientphp and ninedigit/ninedigit-ekasa-quickstart):
- base address `http://localhost:3010`, the API under `/api`; JSON, UTF-8;
- `POST /api/v1/requests/receipts/cash_register` with
  `{"request": {"data": {"items": [...], "payments": [...], "cashRegisterCode": ...}, "externalId": ...}, "print": ...}`;
  an item: type (Positive, Returned, Discount, ...), name (≤ 255 characters, no control
  characters), price (2 decimals, = unitPrice × quantity), unitPrice (6 decimals), quantity
  {amount (4 decimals), unit}, vatRate, referenceReceiptId (the original receipt's id, or its OKP
  when it has none, on a Returned/Correction item); ≤ 500 items; a payment {name, amount}, change
  given back as a negative payment; externalId ≤ 40 characters; `roundingAmount` (2 decimals) on
  a cash-register receipt or a paragón, the cash rounding to 0,05 € (NineDigit's wiki, "Receipt
  rounding": VAT is counted before rounding, only the part paid in cash is rounded);
- the answer: `isSuccessful` true (registered online: `response.data.id`), false (the eKasa
  system refused: `error {message, code}`), null (stored offline in the CHDU, not yet sent:
  `request.data.okp` stands in for the id);
- errors as RFC 7807 problem details {type, title, status, detail, code}, validation errors with
  an `errors` map; codes such as -900 (validation), -104 (receipt not found);
- a paragón is a receipt of type Paragon with `paragonNumber` (1 to 4294967295) and `issueDate`
  (ISO 8601, when it was written by hand);
- `GET /api/v1/connectivity/status` → {requestDate, state: Up | Down | Unknown}.

- a single-purpose voucher's exchange (výmena jednoúčelového poukazu): an item of type `Voucher`,
  negative, with `voucherNumber` (1 to 50 characters; NineDigit's client library, ReceiptItemType
  and ReceiptItemDto): the receipt lists what was handed over (Positive) and the voucher's value
  against it, so it bears no VAT again. A voucher's sale is a Positive item at the service's rate.

ASSUMED (not found in the material reachable here; check against a real install):
- a multi-purpose voucher's sale (members' credit: not a supply, zákon o DPH § 9a) is not sent at
  all; the material reachable here does not say how eKasa records it (see README, "Members' money");
- the paragón's path, by analogy with cash_register: `POST /api/v1/requests/receipts/paragon`;
- looking a request up by its externalId: `GET /api/v1/requests/receipts?externalId=<id>`,
  answering the same shape as the registration (its current state: a request stored offline
  turns isSuccessful true once sent), or 404 / code -104 when the client has no such request;
- VAT rates are sent as the venue's percent ("23.00", "19.00", "5.00": the 2025 rates).
`lavos ekasa selftest` (broker.adapters.ekasa_selftest) tries both on the club's client in its
test mode and says which holds.

The adapter never decides whether to send again: it says what happened (Registered, or
`Unreachable` when the outcome is unknown: a timeout, a refused connection, a 5xx) and the
follow-up (broker.till.fiscal) asks by externalId before it sends again.
"""

from __future__ import annotations

import json as json_module
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

import httpx

from broker.domain.json_shape import every_field_sent
from broker.domain.till.receipt import ReceiptLine

MAX_ITEMS = 500
MAX_NAME = 255
MAX_EXTERNAL_ID = 40
MAX_PARAGON_NUMBER = 4294967295
DEFAULT_URL = "http://localhost:3010"
RECEIPT_NOT_FOUND = -104
_CONTROL = re.compile(r"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]")

Outcome = Literal["registered", "offline", "failed"]


# The largest answer read: the client's answers are a few kB; a bigger one is not eKasa's.
MAX_ANSWER_BYTES = 1024 * 1024


class Unreachable(Exception):
    """The client did not answer, or answered 5xx: whether it registered the receipt is unknown."""

    def __init__(self, why: str, *, server_error: bool = False) -> None:
        super().__init__(why)
        self.why = why
        self.server_error = server_error


class Unsendable(ValueError):
    """The receipt cannot be put in the API's shape (e.g. more than 500 items): failed, with why."""


@dataclass(frozen=True)
class Item:
    type: str  # Positive, Discount, Returned
    name: str
    price_cents: int
    quantity: int
    vat_percent: int
    reference_id: str | None = None
    voucher_number: str | None = None  # a Voucher item's: the single-purpose voucher exchanged


@dataclass(frozen=True)
class ReceiptRequest:
    """One registration request: a cash-register receipt, or a paragón written by hand."""

    external_id: str
    items: tuple[Item, ...]
    payments: tuple[tuple[str, int], ...]  # (name, cents); change as a negative one
    cash_register_code: str = ""
    # Cash rounding to 0,05 € (broker.domain.cash_rounding): the payments are the items plus this.
    rounding_cents: int = 0
    paragon_number: int | None = None
    paragon_at: datetime | None = None

    @property
    def kind(self) -> str:
        return "paragon" if self.paragon_number is not None else "cash_register"


@dataclass(frozen=True)
class Registration:
    """What the client says of a request: registered (id), stored offline (okp), or refused (why)."""

    outcome: Outcome
    receipt_id: str | None = None
    okp: str | None = None
    error: str | None = None
    code: int | None = None


@every_field_sent
@dataclass(frozen=True)
class ClientStatus:
    reachable: bool
    internet: str | None = None  # Up, Down, Unknown (the client's own link to the tax authority)
    detail: str | None = None


class EkasaClient(Protocol):
    """A certified eKasa client (the till side); blocking calls, run off the hub's writer."""

    def register(self, request: ReceiptRequest) -> Registration: ...

    def lookup(self, external_id: str) -> Registration | None:
        """What the client has for this externalId; None: it has no such request (safe to send)."""
        ...

    def status(self) -> ClientStatus: ...


# --- the receipt in the API's shape ------------------------------------------------------------


def clean_name(name: str) -> str:
    """A product name as the API takes it: no control characters, at most 255 characters, not empty."""
    return (_CONTROL.sub(" ", name).strip() or "-")[:MAX_NAME]


def items_of(lines: Sequence[ReceiptLine], *, refund_of: str | None = None, voucher: str | None = None) -> tuple[Item, ...]:
    """The receipt's items: a sale's lines Positive (a negative line, a void or a discount, as
    Discount); a refund's lines Returned, naming the original receipt. Zero lines are left out.
    With `voucher` (a single-purpose voucher exchanged for what the lines hold: a package's table
    time), each VAT rate's lines are followed by a Voucher item of the same value, negative."""
    out = []
    if voucher is not None:
        by_rate: dict[int, int] = {}
        for line in lines:
            by_rate[line.vat_percent] = by_rate.get(line.vat_percent, 0) + line.amount_cents
        positive = items_of(lines)
        vouchers = tuple(
            Item(
                type="Voucher",
                name=clean_name(f"Poukaz č. {voucher}"),
                price_cents=-cents,
                quantity=1,
                vat_percent=rate,
                voucher_number=voucher[:50],
            )
            for rate, cents in sorted(by_rate.items(), reverse=True)
            if cents
        )
        return positive + vouchers
    for line in lines:
        if line.amount_cents == 0:
            continue
        if refund_of is not None:
            kind = "Returned" if line.amount_cents < 0 else "Positive"
        else:
            kind = "Positive" if line.amount_cents > 0 else "Discount"
        out.append(
            Item(
                type=kind,
                name=clean_name(line.description),
                price_cents=line.amount_cents,
                quantity=max(1, line.quantity),
                vat_percent=line.vat_percent,
                reference_id=refund_of if kind == "Returned" else None,
            )
        )
    if not out:
        raise Unsendable("the receipt has no lines")
    if len(out) > MAX_ITEMS:
        raise Unsendable(f"the receipt has {len(out)} lines; eKasa takes at most {MAX_ITEMS}")
    return tuple(out)


def _eur(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def _unit_price(price_cents: int, quantity: int) -> str:
    # price = unitPrice × quantity to the cent; 6 decimals say it exactly for any whole quantity
    # up to 10^4 (a price that does not divide is rounded at the 6th decimal, below a cent).
    micro = round(price_cents * 10_000 / quantity)  # in millionths of a euro
    sign = "-" if micro < 0 else ""
    return f"{sign}{abs(micro) // 1_000_000}.{abs(micro) % 1_000_000:06d}"


def request_body(req: ReceiptRequest) -> dict[str, object]:
    data: dict[str, object] = {
        "items": [
            {
                "type": i.type,
                "name": i.name,
                "price": _eur(i.price_cents),
                "unitPrice": _unit_price(i.price_cents, i.quantity),
                "quantity": {"amount": f"{i.quantity}.0000", "unit": "x"},
                "vatRate": f"{i.vat_percent}.00",
                **({"referenceReceiptId": i.reference_id} if i.reference_id else {}),
                **({"voucherNumber": i.voucher_number} if i.voucher_number else {}),
            }
            for i in req.items
        ],
        "payments": [{"name": name, "amount": _eur(cents)} for name, cents in req.payments],
    }
    if req.rounding_cents:
        data["roundingAmount"] = _eur(req.rounding_cents)
    if req.cash_register_code:
        data["cashRegisterCode"] = req.cash_register_code
    if req.paragon_number is not None:
        data["paragonNumber"] = req.paragon_number
        data["issueDate"] = req.paragon_at.isoformat() if req.paragon_at else None
    return {"request": {"data": data, "externalId": req.external_id}, "print": None}


def registration_of(doc: dict[str, Any]) -> Registration:
    """The client's answer to a registration (or a look-up) as a Registration."""
    ok = doc.get("isSuccessful")
    request = (doc.get("request") or {}).get("data") or {}
    if ok is True:
        response = (doc.get("response") or {}).get("data") or {}
        return Registration("registered", receipt_id=response.get("id"), okp=request.get("okp"))
    if ok is None:
        return Registration("offline", okp=request.get("okp"))
    error = doc.get("error") or {}
    return Registration("failed", error=str(error.get("message") or "refused by the eKasa system"), code=error.get("code"))


def problem_text(doc: object, status: int) -> tuple[str, int | None]:
    """The reason of an RFC 7807 problem answer, its field errors included."""
    if not isinstance(doc, dict):
        return f"HTTP {status}", None
    parts = [str(doc.get("title") or doc.get("detail") or f"HTTP {status}")]
    errors = doc.get("errors")
    if isinstance(errors, dict):
        parts += [f"{field}: {'; '.join(map(str, msgs if isinstance(msgs, list) else [msgs]))}" for field, msgs in errors.items()]
    code = doc.get("code")
    return " — ".join(parts), code if isinstance(code, int) else None


# --- Portos -------------------------------------------------------------------------------------


class PortosClient:
    """NineDigit Portos eKasa over HTTP (see the module docstring for what is assumed)."""

    def __init__(self, url: str = DEFAULT_URL, *, timeout_s: float = 10.0, transport: httpx.BaseTransport | None = None) -> None:
        self._timeout_s = timeout_s
        self._http = httpx.Client(
            base_url=url.rstrip("/") + "/api",
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 3.0)),
            headers={"Accept": "application/json"},
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, *, json: object = None, params: dict[str, str] | None = None) -> _Answer:
        """One call, answered within the whole-call deadline (httpx's timeouts are per read: a client
        that sends a byte every half second would hold the caller forever) and at most MAX_ANSWER_BYTES."""
        deadline = time.monotonic() + self._timeout_s
        try:
            with self._http.stream(method, path, json=json, params=params) as r:
                body = bytearray()
                for chunk in r.iter_bytes():
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        raise Unreachable(f"the answer is larger than {MAX_ANSWER_BYTES // 1024} kB")
                    if time.monotonic() > deadline:
                        raise Unreachable(f"timeout: no whole answer within {self._timeout_s:g} s")
        except httpx.TimeoutException as e:
            raise Unreachable(f"timeout: {type(e).__name__}") from e
        except httpx.HTTPError as e:
            raise Unreachable(f"{type(e).__name__}: {e}") from e
        answer = _Answer(r.status_code, _json(bytes(body)))
        if answer.status >= 500:
            raise Unreachable(f"HTTP {answer.status}: {problem_text(answer.doc, answer.status)[0]}", server_error=True)
        return answer

    def call(self, method: str, path: str, *, json: object = None, params: dict[str, str] | None = None) -> tuple[int, object]:
        """One call under the same limits, answered as it came: (status, its JSON or None). No
        answer, or a 5xx, raises Unreachable. For the selftest, which looks at the answer itself."""
        answer = self._call(method, path, json=json, params=params)
        return answer.status, answer.doc

    def register(self, request: ReceiptRequest) -> Registration:
        r = self._call("POST", f"/v1/requests/receipts/{request.kind}", json=request_body(request))
        if r.status >= 400:
            why, code = problem_text(r.doc, r.status)
            return Registration("failed", error=why, code=code)
        if not isinstance(r.doc, dict):
            raise Unreachable(f"HTTP {r.status}: not a JSON answer")
        return checked(r.doc, request.external_id)

    def lookup(self, external_id: str) -> Registration | None:
        r = self._call("GET", "/v1/requests/receipts", params={"externalId": external_id})
        if r.status == 404 or (isinstance(r.doc, dict) and r.doc.get("code") == RECEIPT_NOT_FOUND):
            return None
        if r.status >= 400 or not isinstance(r.doc, dict):
            # Neither "have it" nor "do not have it": sending now could register twice.
            raise Unreachable(f"look-up answered HTTP {r.status}: {problem_text(r.doc, r.status)[0]}")
        return checked(r.doc, external_id)

    def status(self) -> ClientStatus:
        try:
            r = self._call("GET", "/v1/connectivity/status")
        except Unreachable as e:
            return ClientStatus(False, detail=e.why)
        if r.status >= 400 or not isinstance(r.doc, dict):
            return ClientStatus(False, detail=problem_text(r.doc, r.status)[0])
        return ClientStatus(True, internet=str(r.doc.get("state") or "Unknown")[:40])


@dataclass(frozen=True)
class _Answer:
    status: int
    doc: object  # the JSON answer, None when it is not JSON


def _json(body: bytes) -> object:
    try:
        return json_module.loads(body)
    except ValueError:
        return None


_RECEIPT_ID = re.compile(r"[A-Za-z0-9-]{1,64}")
_OKP = re.compile(r"[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{8}){4}")  # five groups of eight hex digits


def checked(doc: dict[str, Any], external_id: str) -> Registration:
    """The answer as a Registration, if it is about `external_id` and its ids look like eKasa's.

    A look-up answered about another receipt (another shop's, or a client that ignores the query)
    would mark this payment registered: an answer that cannot be trusted is treated as none came,
    and the follow-up asks again. So is an id that is not one (it is stored and shown to staff)."""
    request = doc.get("request")
    asked = request.get("externalId") if isinstance(request, dict) else None
    if asked != external_id:
        raise Unreachable(f"the answer is about another request ({str(asked)[:40]!r}, not {external_id!r})")
    reg = registration_of(doc)
    if reg.receipt_id is not None and not (isinstance(reg.receipt_id, str) and _RECEIPT_ID.fullmatch(reg.receipt_id)):
        raise Unreachable("the answer's receipt id is not an eKasa id")
    if reg.okp is not None and not (isinstance(reg.okp, str) and _OKP.fullmatch(reg.okp)):
        raise Unreachable("the answer's OKP is not an eKasa OKP")
    return reg
