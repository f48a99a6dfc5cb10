"""The ESC/POS receipt printer against a real TCP server on loopback (what a network thermal printer
is: it takes raw bytes on port 9100): the receipt's text and the cut arrive; a dead printer or none
set up gives staff a clear refusal and the payment stays."""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pytest

from broker.adapters.receipt_printer import PrinterError, print_receipt, receipt_bytes
from broker.domain.till.money import vat_rows
from broker.domain.till.receipt import Issuer, Receipt, ReceiptLine
from broker.domain.venue import load_venue
from broker.hall.facade import HubFacade, ServiceError
from broker.storage.engine import open_store
from broker.till.payments import PayTab
from tests.dashboard.conftest import CHEAP, PASSWORD, FakeClock
from tests.dashboard.pages_client import logged_in
from tests.support.hub import VENUE, fresh_login, started_hub
from tests.support.matching import found, some
from tests.support.web import add_users, bound_app
from tests.till.payments_support import STAFF, played_tab, rows

if TYPE_CHECKING:
    from pathlib import Path

    from broker.hall.hub import Hub
    from sim.mosquitto import Mosquitto


CUT = b"\x1dV"  # GS V: the paper cut (python-escpos's full cut is GS V 0)
TZ = ZoneInfo("Europe/Bratislava")


class FakeThermalPrinter:
    """A TCP listener on loopback that keeps every byte a connection sends, until it closes."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                chunks = []
                while data := conn.recv(65536):
                    chunks.append(data)
                self.received.append(b"".join(chunks))

    def close(self) -> None:
        # shutdown first: a plain close leaves the thread blocked in accept() listening on Linux.
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self._thread.join(timeout=5)


@pytest.fixture
def printer() -> Iterator[FakeThermalPrinter]:
    p = FakeThermalPrinter()
    yield p
    p.close()


def _receipt(**kw: Any) -> Receipt:
    lines = (
        ReceiptLine("Pool 1: Štandard, 90 min", "Pool 1: Standard, 90 min", 1, 900, 900, 23, "table_time"),
        ReceiptLine("Kofola 0,5 l", "Kofola 0.5 l", 2, 250, 500, 19, "drinks"),
    )
    base = dict(
        payment_id=7,
        number=42,
        issued_at=datetime(2026, 11, 10, 21, 5, tzinfo=UTC),
        staff="jana",
        issuer=Issuer("ŠBK Lavos, o. z.", "Pekná cesta 2, 831 52 Bratislava", "12345678", "2020123456", ""),
        lines=lines,
        vat=vat_rows(lines),
        total_cents=1400,
        method="cash",
        method_name="Hotovosť",
        method_name_en="Cash",
        tendered_cents=2000,
        change_cents=600,
        tab_id=3,
        table_name="Pool 1",
    )
    return Receipt(**{**base, **kw})


CODE_PAGES = {0: "cp437", 16: "cp1252", 18: "cp852"}  # ESC t n: the pages python-escpos picks for Slovak and "€"


def _text(data: bytes) -> str:
    """What the printer prints: each run decoded in the code page the last ESC t n chose."""
    out, page = [], "cp437"
    for n, chunk in enumerate(re.split(rb"\x1bt(.)", data, flags=re.DOTALL)):
        if n % 2:
            page = CODE_PAGES[chunk[0]]
        else:
            out.append(chunk.decode(page, errors="replace"))
    return "".join(out)


def test_the_receipt_arrives_with_its_text_and_the_cut(printer: FakeThermalPrinter) -> None:
    print_receipt(f"tcp://127.0.0.1:{printer.port}", _receipt(), TZ)
    for _ in range(100):
        if printer.received:
            break
        threading.Event().wait(0.02)
    [data] = printer.received
    text = _text(data)
    for word in (
        "Lavos",
        "IČO: 12345678",
        "DIČ: 2020123456",
        "č. 42",
        "10.11.2026 22:05",
        "Obsluha: jana",
        "Kofola",
        "2 x 2,50",
        "Základ DPH 23 %",
        "DPH 19 %",
        "SPOLU",
        "14,00",
        "Hotovosť",
        "Prijaté",
        "20,00",
        "Vrátené",
        "6,00",
        "Toto nie je pokladni",
    ):
        assert word in text, word
    assert data.rstrip().endswith(CUT + b"\x00") or CUT in data[-8:]


def test_a_reversal_and_a_registered_receipt_say_so() -> None:
    rev = _text(
        receipt_bytes(_receipt(number=43, reverses_number=42, total_cents=-1400, tendered_cents=None, change_cents=0, reason="omyl"), TZ)
    )
    assert "Vrátenie k dokladu č. 42" in rev and "Dôvod: omyl" in rev and "-14,00" in rev
    fiscal = _text(receipt_bytes(_receipt(fiscal_state="registered", fiscal_id="O-123-ABC"), TZ))
    assert "eKasa: O-123-ABC" in fiscal and "nie je pokladni" not in fiscal
    missing = _text(receipt_bytes(_receipt(issuer=Issuer("ŠBK Lavos", "", "", "", "")), TZ))
    assert "IČO: chýba" in missing and "DIČ: chýba" in missing


def test_no_printer_or_a_dead_one_is_a_clear_refusal() -> None:
    with pytest.raises(PrinterError, match="No receipt printer is set up"):
        print_receipt(None, _receipt(), TZ)
    with pytest.raises(PrinterError, match="not tcp://host:port"):
        print_receipt("http://printer:9100", _receipt(), TZ)
    dead = socket.create_server(("127.0.0.1", 0))
    port = dead.getsockname()[1]
    dead.close()  # nothing listens there now: refused at once
    with pytest.raises(PrinterError, match="does not answer") as e:
        print_receipt(f"tcp://127.0.0.1:{port}", _receipt(), TZ, timeout=1)
    assert e.value.params["address"] == f"127.0.0.1:{port}"


@pytest.fixture
def printing_hall(mosquitto: Mosquitto, tmp_path: Path, printer: FakeThermalPrinter) -> Iterator[tuple[Hub, HubFacade, FakeClock]]:
    """A hub whose venue file names the loopback printer ([till] printer), and its facade."""
    venue = load_venue(VENUE)
    venue = venue.model_copy(update={"till": venue.till.model_copy(update={"printer": f"tcp://127.0.0.1:{printer.port}"})})
    url = f"sqlite:///{tmp_path / 'lavos.db'}"
    open_store(url).close()
    clock = FakeClock()
    with started_hub(url, mosquitto=mosquitto, clock=clock, venue=venue, client_id=fresh_login(), watchdog=False) as svc:
        yield svc, HubFacade(svc), clock


def _arrived(printer: FakeThermalPrinter, n: int = 1) -> str:
    for _ in range(250):
        if len(printer.received) >= n:
            break
        threading.Event().wait(0.02)
    return _text(printer.received[n - 1])


def test_through_the_facade_a_paid_receipt_prints_and_a_dead_printer_loses_nothing(
    printing_hall: tuple[Hub, HubFacade, FakeClock], printer: FakeThermalPrinter
) -> None:
    _svc, facade, clock = printing_hall
    tab = played_tab(facade, clock)
    taken = facade.execute(PayTab(tab=tab, method="cash", amount_cents=900, tendered_cents=1000, actor=STAFF))
    facade.print_receipt(taken.payment_id)
    text = _arrived(printer)
    assert "SPOLU" in text and "Vrátené" in text
    printer.close()  # the printer dies
    before = rows(facade)
    with pytest.raises(ServiceError, match="does not answer"):
        facade.print_receipt(taken.payment_id)
    assert rows(facade) == before and some(facade.reads.till.tab_payments(tab)).status == "paid"


def test_the_payment_page_prints_on_the_thermal_printer_and_falls_back_to_the_browser(
    printing_hall: tuple[Hub, HubFacade, FakeClock], printer: FakeThermalPrinter
) -> None:
    svc, facade, clock = printing_hall
    add_users(svc, {STAFF: "staff"}, PASSWORD, CHEAP)
    browser = logged_in(bound_app(svc), STAFF)
    tab = played_tab(facade, clock)
    html = browser.get(f"/tabs/{tab}/pay").text
    key = found(r'name="request_id" value="([^"]+)"', html).group(1)
    form = {"method": "card", "amount": "9", "request_id": key}
    r = browser.post(f"/tabs/{tab}/pay", form)
    assert r.status_code == 303 and "print=1" not in r.headers["location"]  # printed: no browser dialog
    assert "Karta" in _arrived(printer)
    printer.close()
    other = played_tab(facade, clock, table="pool-02")
    html = browser.get(f"/tabs/{other}/pay").text
    key = found(r'name="request_id" value="([^"]+)"', html).group(1)
    r = browser.post(f"/tabs/{other}/pay", {**form, "request_id": key})
    assert r.status_code == 303 and r.headers["location"].endswith("?print=1")  # the browser prints instead
    page = browser.get(r.headers["location"]).text
    assert "neodpovedá" in page and "Platba je uložená" in page
    assert some(facade.reads.till.tab_payments(other)).status == "paid"


def test_a_rounded_cash_receipt_prints_the_rounding_on_its_own_line_after_the_vat() -> None:
    """17,33 € in cash: the total, then "Zaokrúhlenie +0,02 €" outside the VAT base, then 17,35 € paid."""
    lines = (
        ReceiptLine("Pool 1: Štandard, 90 min", "Pool 1: Standard, 90 min", 1, 900, 900, 23, "table_time"),
        ReceiptLine("Pivo", "Beer", 1, 833, 833, 19, "drinks"),
    )
    r = _receipt(lines=lines, vat=vat_rows(lines), total_cents=1733, rounding_cents=2, tendered_cents=1800, change_cents=65)
    text = _text(receipt_bytes(r, TZ))
    at = {word: text.index(word) for word in ("DPH 19 %", "SPOLU", "Zaokrúhlenie", "Spolu po zaokrúhlení", "Hotovosť", "Vrátené")}
    assert list(at) == sorted(at, key=at.__getitem__), text  # in this order
    for pair in (
        ("SPOLU", "17,33"),
        ("Zaokrúhlenie", "+0,02"),
        ("Spolu po zaokrúhlení", "17,35"),
        ("Hotovosť", "17,35"),
        ("Vrátené", "0,65"),
    ):
        line = next(x for x in text.splitlines() if pair[0] in x)
        assert pair[1] in line, (pair, line)
    assert "Zaokr" not in _text(receipt_bytes(_receipt(), TZ))  # a receipt with nothing to round has no such line
