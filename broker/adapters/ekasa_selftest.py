"""`lavos ekasa selftest`: what the club's Portos client answers, against what the adapter expects.

broker.adapters.ekasa was built from NineDigit's public material and tested against a simulator;
two of its shapes are ASSUMED (not found in that material): the paragón's path and the look-up of a
request by its externalId. The installer runs this once against the real client in its TEST mode,
before the first fiscal evening: one test receipt, the look-up of that receipt by its externalId,
the look-up of an externalId the client never saw, one test paragón, and, when the client stores a
receipt offline (its internet unplugged), that answer. Each step prints the request, what came back
and what the adapter expects, read by the adapter's own code (registration_of, _checked,
problem_text): so the first run on the real device says which shape holds and which differs.

Why the look-up matters most: the follow-up (broker.till.fiscal) asks by externalId before it
sends a receipt again after a timeout. A client whose look-up path differs answers 404 to every
question, which the adapter reads as "never registered": every timeout would then register a
sale twice. So a look-up that cannot find the receipt just registered is a failure here, whatever
else works.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from broker.adapters.ekasa import (
    RECEIPT_NOT_FOUND,
    Item,
    PortosClient,
    ReceiptRequest,
    Registration,
    Unreachable,
    checked,
    problem_text,
    request_body,
)

Verdict = Literal["ok", "differs", "refused", "not seen"]
SHOWN = 700  # characters of an unexpected answer printed (enough to see its shape)
DOCUMENTED, ASSUMED = "documented", "ASSUMED"
# The adapter's two assumed shapes, and the steps that try each.
SHAPES = {
    "the look-up by externalId (GET /api/v1/requests/receipts?externalId=…)": ("look-up by externalId", "look-up of an unknown externalId"),
    "the paragón (POST /api/v1/requests/receipts/paragon)": ("test paragón",),
}


@dataclass(frozen=True)
class Step:
    name: str
    basis: str  # DOCUMENTED or ASSUMED: where the adapter's expectation comes from
    request: str  # e.g. "GET /api/v1/connectivity/status"
    saw: str
    expected: str
    verdict: Verdict
    raw: str = ""  # the answer as it came, when it was not what the adapter expects

    @property
    def failed(self) -> bool:
        return self.verdict in ("differs", "refused")


def _short(doc: object) -> str:
    text = json.dumps(doc, ensure_ascii=False) if doc is not None else "(not JSON)"
    return text if len(text) <= SHOWN else text[:SHOWN] + " …"


def _said(reg: Registration) -> str:
    if reg.outcome == "registered":
        return f"registered online, id {reg.receipt_id}" + (f", OKP {reg.okp}" if reg.okp else "")
    if reg.outcome == "offline":
        return f"stored offline, OKP {reg.okp}"
    return f"refused by the eKasa system: {reg.error} (code {reg.code})"


def _read(status: int, doc: object, external_id: str) -> tuple[Registration | None, str]:
    """The adapter's reading of a registration's (or look-up's) answer: (registration, why not)."""
    if status >= 400:
        why, code = problem_text(doc, status)
        return None, f"HTTP {status}: {why}" + (f" (code {code})" if code is not None else "")
    if not isinstance(doc, dict):
        return None, f"HTTP {status}, not a JSON object"
    try:
        return checked(doc, external_id), ""
    except Unreachable as e:
        return None, f"HTTP {status}, but {e.why}"


class Selftest:
    """The steps, in order, against one client; `run()` answers them all."""

    def __init__(
        self,
        client: PortosClient,
        *,
        cash_register_code: str = "",
        paragon: bool = True,
        offline: bool = False,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.client = client
        self.code = cash_register_code
        self.paragon = paragon
        self.offline = offline
        self.clock = clock
        self.tag = secrets.token_hex(5)
        self.seen_offline: list[str] = []

    def _request(self, external_id: str, paragon_number: int | None = None) -> ReceiptRequest:
        # One cent by card: no cash rounding, nothing for the drawer; a test mode's receipt is not fiscal.
        return ReceiptRequest(
            external_id=external_id,
            items=(Item(type="Positive", name="Lavos selftest", price_cents=1, quantity=1, vat_percent=23),),
            payments=(("Karta", 1),),
            cash_register_code=self.code,
            paragon_number=paragon_number,
            paragon_at=self.clock() if paragon_number is not None else None,
        )

    def run(self) -> list[Step]:
        steps = [self.connectivity()]
        receipt_id = f"lavos-selftest-{self.tag}"
        receipt = self.register("test receipt", DOCUMENTED, self._request(receipt_id))
        steps += [receipt, self.lookup(receipt_id, registered=receipt.verdict == "ok"), self.lookup_unknown()]
        if self.paragon:
            number = int(self.tag, 16) % 4_000_000_000 + 1
            steps.append(self.register("test paragón", ASSUMED, self._request(f"lavos-selftest-p-{self.tag}", number)))
        steps.append(self.offline_step())
        return steps

    def connectivity(self) -> Step:
        request = "GET /api/v1/connectivity/status"
        expected = "HTTP 200 with state Up, Down or Unknown (the client's link to the tax authority)"
        try:
            status, doc = self.client.call("GET", "/v1/connectivity/status")
        except Unreachable as e:
            return Step("connectivity", DOCUMENTED, request, f"no answer: {e.why}", expected, "differs")
        state = doc.get("state") if isinstance(doc, dict) else None
        if status == 200 and state in ("Up", "Down", "Unknown"):
            return Step("connectivity", DOCUMENTED, request, f"HTTP 200, state {state}", expected, "ok")
        return Step("connectivity", DOCUMENTED, request, f"HTTP {status}", expected, "differs", _short(doc))

    def register(self, name: str, basis: str, req: ReceiptRequest) -> Step:
        request = f"POST /api/v1/requests/receipts/{req.kind} (externalId {req.external_id})"
        expected = "HTTP 200: isSuccessful true (an id) or null (stored offline, an OKP), request.externalId as sent"
        try:
            status, doc = self.client.call("POST", f"/v1/requests/receipts/{req.kind}", json=request_body(req))
        except Unreachable as e:
            return Step(name, basis, request, f"no answer: {e.why}", expected, "differs")
        reg, why = _read(status, doc, req.external_id)
        if reg is None:
            if status == 400:  # the documented problem shape: our request is refused, e.g. a field it wants
                return Step(name, basis, request, why, expected, "refused", _short(doc))
            return Step(name, basis, request, why, expected, "differs", _short(doc))
        if reg.outcome == "offline":
            self.seen_offline.append(req.external_id)
        verdict: Verdict = "refused" if reg.outcome == "failed" else "ok"
        return Step(name, basis, request, f"HTTP {status}, {_said(reg)}", expected, verdict, _short(doc) if verdict != "ok" else "")

    def lookup(self, external_id: str, *, registered: bool) -> Step:
        request = f"GET /api/v1/requests/receipts?externalId={external_id}"
        expected = "HTTP 200, the same shape as the registration's answer, about this externalId"
        if not registered:
            return Step("look-up by externalId", ASSUMED, request, "not asked: the test receipt was not taken", expected, "not seen")
        try:
            status, doc = self.client.call("GET", "/v1/requests/receipts", params={"externalId": external_id})
        except Unreachable as e:
            return Step("look-up by externalId", ASSUMED, request, f"no answer: {e.why}", expected, "differs")
        reg, why = _read(status, doc, external_id)
        if reg is None:
            if status == 404 or (isinstance(doc, dict) and doc.get("code") == RECEIPT_NOT_FOUND):
                why += (
                    ": the client says it has no request it has just taken. The look-up is not where or what the adapter"
                    " assumes; after a timeout the hub would register the sale again. Do not turn eKasa on."
                )
            return Step("look-up by externalId", ASSUMED, request, why, expected, "differs", _short(doc))
        if reg.outcome == "offline" and external_id not in self.seen_offline:
            self.seen_offline.append(external_id)
        return Step("look-up by externalId", ASSUMED, request, f"HTTP {status}, {_said(reg)}", expected, "ok")

    def lookup_unknown(self) -> Step:
        external_id = f"lavos-selftest-none-{self.tag}"
        request = f"GET /api/v1/requests/receipts?externalId={external_id}"
        expected = f"HTTP 404, or code {RECEIPT_NOT_FOUND} (receipt not found): a request the client never saw"
        try:
            status, doc = self.client.call("GET", "/v1/requests/receipts", params={"externalId": external_id})
        except Unreachable as e:
            return Step("look-up of an unknown externalId", ASSUMED, request, f"no answer: {e.why}", expected, "differs")
        code = doc.get("code") if isinstance(doc, dict) else None
        if status == 404 or code == RECEIPT_NOT_FOUND:
            saw = f"HTTP {status}" + (f", code {code}" if code is not None else "")
            return Step("look-up of an unknown externalId", ASSUMED, request, saw, expected, "ok")
        saw = f"HTTP {status}"
        if status == 200:
            saw += ": an answer about a request it never saw (another one's?): the hub would take it for this one"
        return Step("look-up of an unknown externalId", ASSUMED, request, saw, expected, "differs", _short(doc))

    def offline_step(self) -> Step:
        expected = "isSuccessful null with an OKP (five groups of eight hex digits) when the client's internet is down"
        if self.seen_offline:
            return Step(
                "stored offline", DOCUMENTED, "(the answers above)", f"stored offline: {', '.join(self.seen_offline)}", expected, "ok"
            )
        if self.offline:
            saw = "every receipt was registered online: unplug the till's internet (the client's state Down) and run again"
            return Step("stored offline", DOCUMENTED, "(the answers above)", saw, expected, "differs")
        saw = "not seen: the client registered online (to see it, unplug the till's internet and run with --offline)"
        return Step("stored offline", DOCUMENTED, "(the answers above)", saw, expected, "not seen")


def report(steps: list[Step], url: str) -> tuple[list[str], int]:
    """The printout and the exit status: 0 every step as expected, 1 one differs or was refused."""
    mark = {"ok": "ok", "differs": "DIFFERS", "refused": "REFUSED", "not seen": "not seen"}
    lines = [f"eKasa selftest against {url}"]
    for s in steps:
        lines.append(f"[{mark[s.verdict]}] {s.name} ({s.basis}): {s.request}")
        lines.append(f"    saw:      {s.saw}")
        lines.append(f"    expected: {s.expected}")
        if s.raw:
            lines.append(f"    answer:   {s.raw}")
    by_name = {s.name: s for s in steps}
    lines.append("")
    lines.append("The adapter's two assumed shapes, on this client:")
    for shape, names in SHAPES.items():
        tried = [by_name[n] for n in names if n in by_name]
        if any(s.failed for s in tried):
            word = "DIFFERENT (see above)"
        elif tried and all(s.verdict == "ok" for s in tried):
            word = "as assumed"
        else:
            word = "not checked"
        lines.append(f"  {shape}: {word}")
    failed = [s for s in steps if s.failed]
    if failed:
        lines.append(
            f"{len(failed)} step(s) not as the adapter expects: keep eKasa off, and send this printout with the client's version"
            " to whoever maintains Lavos."
        )
    else:
        lines.append("Everything the client answered is what the adapter expects.")
    return lines, 1 if failed else 0


def run_selftest(url: str, *, timeout_s: float = 10.0, **options: Any) -> tuple[list[str], int]:
    client = PortosClient(url, timeout_s=timeout_s)
    try:
        return report(Selftest(client, **options).run(), url)
    finally:
        client.close()
