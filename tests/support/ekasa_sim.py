"""A simulator of NineDigit Portos eKasa's local REST API (see broker.adapters.ekasa for the shapes
and what is assumed), run as a real HTTP server on loopback for the tests.

It keeps its registrations in a JSON file (a restart keeps them), counts registrations per
externalId (a second one is a double fiscalisation: the count is what the tests check), and
behaves as told (`sim.mode = ...`):
- "success": registered online, an "O-..." id;
- "offline": stored offline (isSuccessful null, an OKP), sent later: on `back_online()`, or on its
  own `auto_online_s` seconds after it was stored;
- "invalid": a validation problem (HTTP 400, code -900), nothing stored;
- "error500": HTTP 500, nothing stored;
- "slow": stores it (registered) and answers only `slow_s` later, after the client's timeout:
  the case the follow-up must ask about before it sends again.
`stop()` / `start()` take it down and bring it back on the same port (`restart()` both).
The two shapes the adapter assumes can be made to differ, as a real client might (the selftest,
broker.adapters.ekasa_selftest, must tell): `sim.lookup = "missing"` (no look-up at that path: 404
without a code) or "list" (it answers a page of requests, {"items": [...]}); `sim.paragon = False`
(no paragón path: 404).
A duplicate externalId is registered AGAIN (counted): the simulator does not protect the tests
from a follow-up that sends twice.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


class EkasaSimulator:
    def __init__(self, data_dir: Path, *, port: int = 0) -> None:
        self.path = Path(data_dir) / "ekasa-sim.json"
        self.port = port
        self.mode = "success"
        self.slow_s = 2.0
        self.auto_online_s: float | None = None
        self.lookup = "query"  # the assumed GET /api/v1/requests/receipts?externalId=..., or "missing" / "list"
        self.paragon = True  # the assumed POST /api/v1/requests/receipts/paragon
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, in order
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._records: dict[str, dict[str, Any]] = {}  # externalId -> the latest stored request
        self._counts: dict[str, int] = {}
        self._conns: set[socket.socket] = set()  # kept-alive connections: a stop cuts them too
        if self.path.exists():
            doc = json.loads(self.path.read_text())
            self._records, self._counts = doc["records"], doc["counts"]

    # -- the server ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> EkasaSimulator:
        sim = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with sim._lock:
                    sim._conns.add(self.connection)

            def finish(self) -> None:
                with sim._lock:
                    sim._conns.discard(self.connection)
                super().finish()

            def do_GET(self) -> None:
                sim._serve(self, "GET")

            def do_POST(self) -> None:
                sim._serve(self, "POST")

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="ekasa-sim", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for c in conns:  # a client's kept-alive connection would otherwise still be served
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
                c.close()

    def restart(self) -> None:
        """Down and up again on the same port; its registrations are read back from disk."""
        self.stop()
        again = EkasaSimulator(self.path.parent, port=self.port)
        self._records, self._counts = again._records, again._counts
        self.start()

    # -- what the tests look at --------------------------------------------------------------

    def count(self, external_id: str) -> int:
        with self._lock:
            return self._counts.get(external_id, 0)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def record(self, external_id: str) -> dict[str, Any] | None:
        with self._lock:
            self._flip_due()
            return self._records.get(external_id)

    def back_online(self) -> None:
        """The client's internet is back: everything stored offline is sent (and gets its id)."""
        with self._lock:
            for rec in self._records.values():
                if rec["isSuccessful"] is None:
                    self._send(rec)
            self._save()

    # -- the API -----------------------------------------------------------------------------

    def _serve(self, h: BaseHTTPRequestHandler, method: str) -> None:
        url = urlsplit(h.path)
        self.requests.append((method, url.path))
        body = None
        if method == "POST":
            n = int(h.headers.get("Content-Length") or 0)
            try:
                body = json.loads(h.rfile.read(n) or b"null")
            except ValueError:
                return self._answer(h, 400, {"title": "not JSON", "status": 400, "code": -900})
        if method == "GET" and url.path == "/api/v1/connectivity/status":
            return self._answer(h, 200, {"requestDate": _now(), "state": "Down" if self.mode == "offline" else "Up"})
        if method == "GET" and url.path == "/api/v1/requests/receipts" and self.lookup != "missing":
            ext = (parse_qs(url.query).get("externalId") or [""])[0]
            with self._lock:
                self._flip_due()
                rec = self._records.get(ext)
            if self.lookup == "list":
                return self._answer(h, 200, {"items": [rec] if rec else [], "total": 1 if rec else 0})
            if rec is None:
                return self._answer(h, 404, {"title": "Receipt not found", "status": 404, "code": -104})
            return self._answer(h, 200, rec)
        paths = ["/api/v1/requests/receipts/cash_register"] + (["/api/v1/requests/receipts/paragon"] if self.paragon else [])
        if method == "POST" and url.path in paths:
            return self._register(h, url.path.rsplit("/", 1)[1], body)
        return self._answer(h, 404, {"title": "Not found", "status": 404})

    def _register(self, h: BaseHTTPRequestHandler, kind: str, body: Any) -> None:
        mode = self.mode
        if mode == "error500":
            return self._answer(h, 500, {"title": "Internal server error", "status": 500, "code": -100})
        problems = _validate(kind, body)
        if mode == "invalid":
            problems = problems or {"request.data.items[0].name": ["Názov obsahuje nepovolené znaky."]}
        if problems:
            return self._answer(
                h, 400, {"title": "One or more validation errors occurred.", "status": 400, "code": -900, "errors": problems}
            )
        request = body["request"]
        ext = request["externalId"]
        rec = {
            "isSuccessful": None,
            "request": {"externalId": ext, "kind": kind, "data": {**request["data"], "okp": _okp()}},
            "response": None,
            "error": None,
            "storedAt": time.time(),
        }
        with self._lock:
            if mode != "offline":
                self._send(rec)
            self._records[ext] = rec
            self._counts[ext] = self._counts.get(ext, 0) + 1
            self._save()
        if mode == "slow":
            time.sleep(self.slow_s)  # stored and registered, but the caller has given up by now
        self._answer(h, 200, rec)

    def _send(self, rec: dict[str, Any]) -> None:
        rec["isSuccessful"] = True
        rec["response"] = {"data": {"id": "O-" + uuid.uuid4().hex.upper()}}

    def _flip_due(self) -> None:
        if self.auto_online_s is None:
            return
        for rec in self._records.values():
            if rec["isSuccessful"] is None and time.time() - rec["storedAt"] >= self.auto_online_s:
                self._send(rec)
        self._save()

    def _save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"records": self._records, "counts": self._counts}))
        tmp.replace(self.path)

    @staticmethod
    def _answer(h: BaseHTTPRequestHandler, status: int, doc: Any) -> None:
        data = json.dumps(doc).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json; charset=utf-8")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except OSError:
            pass  # the caller hung up (it timed out): what was stored stays stored


def _validate(kind: str, body: Any) -> dict[str, list[str]]:
    """The documented limits, as field -> problems (empty: valid)."""
    out: dict[str, list[str]] = {}
    try:
        request = body["request"]
        data = request["data"]
        items = data["items"]
    except (TypeError, KeyError):
        return {"request": ["The request field is required."]}
    ext = request.get("externalId")
    if not isinstance(ext, str) or not 0 < len(ext) <= 40:
        out["request.externalId"] = ["Non-empty, at most 40 characters."]
    if not isinstance(items, list) or not 0 < len(items) <= 500:
        out["request.data.items"] = ["1 to 500 items."]
        return out
    total = 0
    for n, item in enumerate(items):
        price = _check_item(item, f"request.data.items[{n}]", out)
        total += price or 0
    if "roundingAmount" in data:  # the cash rounding: the payments are the items and it
        rounding = _cents(data["roundingAmount"])
        if rounding is None or abs(rounding) >= 5:
            out["request.data.roundingAmount"] = ["A number with at most 2 decimals, less than 0.05 either way."]
        total += rounding or 0
    paid = sum(_cents(p.get("amount")) or 0 for p in data.get("payments") or [])
    if data.get("payments") and (paid < total if total >= 0 else paid > total):
        out["request.data.payments"] = ["Payments must cover the items."]
    if kind == "paragon":
        number = data.get("paragonNumber")
        if not isinstance(number, int) or not 1 <= number <= 4294967295:
            out["request.data.paragonNumber"] = ["1 to 4294967295."]
        if not data.get("issueDate"):
            out["request.data.issueDate"] = ["Required for a paragon."]
    return out


def _check_item(item: Any, at: str, out: dict[str, list[str]]) -> int | None:
    """One item's documented limits into `out` (keys under `at`); its price in cents, if it has one."""
    name = item.get("name", "")
    if not isinstance(name, str) or not 0 < len(name) <= 255 or any(ord(c) < 32 and c not in "\r\n" for c in name):
        out[f"{at}.name"] = ["1 to 255 characters, no control characters."]
    price = _cents(item.get("price"))
    unit = item.get("unitPrice")
    qty: Any = (item.get("quantity") or {}).get("amount")  # JSON, anything: float() refuses what is no number
    if price is None:
        out[f"{at}.price"] = ["A number with at most 2 decimals."]
        return None
    try:
        if round(float(unit) * float(qty) * 100) != price:
            out[f"{at}.price"] = ["Price must equal unitPrice × quantity."]
    except (TypeError, ValueError):
        out[f"{at}.unitPrice"] = ["A number."]
    if item.get("type") == "Returned" and not item.get("referenceReceiptId"):
        out[f"{at}.referenceReceiptId"] = ["Required for a Returned item."]
    if item.get("type") == "Voucher":  # a single-purpose voucher's exchange (NineDigit's ReceiptItemDto)
        number = item.get("voucherNumber")
        if not isinstance(number, str) or not 0 < len(number) <= 50:
            out[f"{at}.voucherNumber"] = ["1 to 50 characters, required for a Voucher item."]
        if price >= 0:
            out[f"{at}.price"] = ["A Voucher item is negative."]
    elif "voucherNumber" in item and item["voucherNumber"] is not None:
        out[f"{at}.voucherNumber"] = ["Only a Voucher item has a voucherNumber."]
    return price


def _cents(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    whole, _, frac = value.lstrip("-").partition(".")
    if not whole.isdigit() or len(frac) > 2 or (frac and not frac.isdigit()):
        return None
    cents = int(whole) * 100 + int(frac.ljust(2, "0") or 0)
    return -cents if value.startswith("-") else cents


def _okp() -> str:
    h = (uuid.uuid4().hex + uuid.uuid4().hex).upper()[:40]  # 40 hex digits in five groups, as a real OKP
    return "-".join(h[i : i + 8] for i in range(0, 40, 8))


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
