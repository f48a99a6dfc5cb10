"""Issue 19, item 23: the hub believes only an eKasa answer about the receipt it asked for, read
whole within the call's deadline and no larger than 1 MB, with ids that are eKasa's.

Against a real HTTP server on loopback that answers as a broken or hostile client would: about
another shop's receipt, the same answer whatever is asked, a byte every half second, 16 MB, ids
that are not ids. Before, the first two marked our payment registered, the trickle held a 1 s
call 14 s, and the 16 MB answer was stored and shown to staff."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from broker.adapters.ekasa import Item, PortosClient, ReceiptRequest, Unreachable
from tests.support.waiting import wait_until

OKP = "0A1B2C3D-4E5F6071-8293A4B5-C6D7E8F9-01234567"


def _doc(external_id: str, *, okp: str = OKP, receipt_id: str = "O-" + "AB" * 16) -> dict[str, Any]:
    return {
        "isSuccessful": True,
        "request": {"externalId": external_id, "data": {"okp": okp}},
        "response": {"data": {"id": receipt_id}},
    }


@contextmanager
def client_answering(answer: Callable[[BaseHTTPRequestHandler], None]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            answer(self)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            answer(self)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _json(doc: object) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(h: BaseHTTPRequestHandler) -> None:
        body = json.dumps(doc).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return answer


REQUEST = ReceiptRequest("pay-7", (Item("Positive", "Pivo", 250, 1, 23),), (("Hotovosť", 250),), cash_register_code="88812345678900001")


def test_an_answer_about_another_receipt_or_one_that_ignores_the_query_is_not_believed() -> None:
    with client_answering(_json(_doc("another-shop-41"))) as url:
        client = PortosClient(url, timeout_s=2)
        with pytest.raises(Unreachable, match="another request"):
            client.lookup("pay-7")
        with pytest.raises(Unreachable, match="another request"):
            client.register(REQUEST)
    with client_answering(_json(_doc("pay-7"))) as url:  # the same answer whatever is asked
        client = PortosClient(url, timeout_s=2)
        same = client.lookup("pay-7")
        assert same is not None and same.outcome == "registered"
        with pytest.raises(Unreachable, match="another request"):
            client.lookup("pay-8")


@pytest.mark.parametrize(
    ("okp", "receipt_id", "says"),
    [("K", "O-1", "OKP"), (OKP, "<script>alert(1)</script>", "receipt id"), (OKP, "O-" + "A" * 100, "receipt id")],
)
def test_ids_that_are_not_ekasas_are_not_stored(okp: Any, receipt_id: Any, says: Any) -> None:
    with client_answering(_json(_doc("pay-7", okp=okp, receipt_id=receipt_id))) as url, pytest.raises(Unreachable, match=says):
        PortosClient(url, timeout_s=2).lookup("pay-7")


def test_a_trickling_answer_ends_at_the_whole_call_deadline() -> None:
    """A byte every half second never lets a per-read timeout fire; the answer here trickles until
    the test ends, so a call that ends at all ends at its own deadline for the whole call."""
    stop = threading.Event()

    def trickle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.end_headers()
        try:
            while not stop.wait(0.5):
                h.wfile.write(b" ")
                h.wfile.flush()
        except OSError:
            pass  # the hub hung up, as it should

    with client_answering(trickle) as url:
        ended: list[BaseException] = []

        def call() -> None:
            try:
                PortosClient(url, timeout_s=1).lookup("pay-7")
            except BaseException as e:  # noqa: BLE001 - handed to the test's thread
                ended.append(e)

        threading.Thread(target=call, daemon=True).start()
        try:
            wait_until(lambda: ended, what="the call to end while the answer still trickles")
        finally:
            stop.set()
        assert isinstance(ended[0], Unreachable) and "timeout" in str(ended[0]), ended


def test_a_huge_answer_is_cut_at_one_megabyte() -> None:
    def huge(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(16 * 1024 * 1024))
        h.end_headers()
        try:
            chunk = b"x" * 65536
            for _ in range(256):
                h.wfile.write(chunk)
        except OSError:
            pass

    with client_answering(huge) as url, pytest.raises(Unreachable, match="larger than 1024 kB"):
        PortosClient(url, timeout_s=5).lookup("pay-7")
