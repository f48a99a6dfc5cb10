"""Receipts straight to an ESC/POS thermal printer on the network (what bars have), optional.

python-escpos (a kept library) turns the receipt into ESC/POS bytes in memory (its Dummy
printer: code pages for Slovak letters and "€" chosen by it, bold, alignment, the cut), and one
TCP connection hands them to the printer (port 9100, "raw" printing, as every network thermal
printer takes). Formatting first and sending once means a printer that dies mid-way gets
nothing half-printed from us, and the bytes can be tested without a printer.

Printing is an effect: it runs on the caller's thread (a page's request), never on the hub's
writer, and never after anything depends on it: the payment is committed before. A printer that
is not set up, refuses or does not answer in PRINT_TIMEOUT_S raises PrinterError saying so.

The printed receipt is Slovak (the legal document of a Slovak hall); its words are here, once.
"""

from __future__ import annotations

import socket
from datetime import tzinfo
from urllib.parse import urlsplit

from broker.domain.euros import euros
from broker.domain.refusals import N_
from broker.domain.till.payment_rules import PaymentRefused
from broker.domain.till.receipt import Receipt

__all__ = ["PRINT_TIMEOUT_S", "WIDTH", "PrinterError", "print_receipt", "receipt_bytes"]

WIDTH = 42  # characters per line of an 80 mm printer's font A (48 on some; 42 fits all)
PRINT_TIMEOUT_S = 5.0
NOT_FISCAL = "Toto nie je pokladničný doklad"
STATE_WORDS = {
    "pending": "Čaká na registráciu v eKase",
    "offline": "Uložený v eKase offline, zatiaľ neodoslaný",
    "failed": "Registrácia v eKase zlyhala",
    "paragon": "Náhradný doklad (paragón)",
}


class PrinterError(PaymentRefused):
    """The receipt printer is not set up or did not take the receipt (the payment stays taken)."""


def _pair(left: str, right: str) -> str:
    room = WIDTH - len(right) - 1
    if len(left) > room:
        left = left[: max(room, 0)]
    return f"{left:<{room}} {right}"


def receipt_bytes(r: Receipt, tz: tzinfo) -> bytes:
    """The receipt as ESC/POS: header, lines, VAT per rate, total, payment, fiscal status, cut."""
    # Imported when a receipt is printed, not with the hub: python-escpos caches its printer
    # profiles in the temporary directory at import, which a hall without a printer never needs.
    from escpos.printer import Dummy

    p = Dummy()
    p.set(align="center", bold=True)
    p.textln(r.issuer.name or "?")
    p.set(align="center", bold=False)
    p.textln(r.issuer.address or "adresa: chýba")
    p.textln(f"IČO: {r.issuer.ico or 'chýba'}  DIČ: {r.issuer.dic or 'chýba'}")
    if r.issuer.ic_dph:
        p.textln(f"IČ DPH: {r.issuer.ic_dph}")
    p.set(align="left")
    p.textln("-" * WIDTH)
    title = f"Vrátenie k dokladu č. {r.reverses_number}" if r.reverses_number is not None else "Doklad"
    p.set(bold=True)
    p.textln(_pair(title, f"č. {r.number}"))
    p.set(bold=False)
    p.textln(_pair(r.issued_at.astimezone(tz).strftime("%d.%m.%Y %H:%M"), f"Obsluha: {r.staff}"[:24]))
    if r.table_name:
        p.textln(r.table_name + (f", časť {r.part}" if r.part else ""))
    p.textln("-" * WIDTH)
    for line in r.lines:
        p.textln(line.description[:WIDTH])
        unit = f"{line.quantity} x {euros(line.unit_cents)}" if line.unit_cents is not None and line.quantity != 1 else ""
        p.textln(_pair(f"  {unit}", f"{euros(line.amount_cents)} {line.vat_percent}%"))
    p.textln("-" * WIDTH)
    for v in r.vat:
        p.textln(_pair(f"Základ DPH {v.vat_percent} %", euros(v.net_cents)))
        p.textln(_pair(f"DPH {v.vat_percent} %", euros(v.vat_cents)))
    p.set(bold=True, double_height=True)
    p.textln(_pair("SPOLU", euros(r.total_cents)))
    p.set(bold=False, double_height=False, normal_textsize=True)
    if r.rounding_cents:  # cash rounding: its own line, outside the VAT base above
        p.textln(_pair("Zaokrúhlenie", f"{'+' if r.rounding_cents > 0 else ''}{euros(r.rounding_cents)}"))
        p.set(bold=True)
        p.textln(_pair("Spolu po zaokrúhlení", euros(r.paid_cents)))
        p.set(bold=False)
    p.textln(_pair(r.method_name, euros(r.paid_cents)))
    if r.tendered_cents is not None and r.tendered_cents != r.paid_cents:
        p.textln(_pair("Prijaté", euros(r.tendered_cents)))
        p.textln(_pair("Vrátené", euros(r.change_cents)))
    if r.reason:
        p.textln(f"Dôvod: {r.reason}"[: WIDTH * 2])
    p.textln("-" * WIDTH)
    p.set(align="center", bold=True)
    if r.fiscal:
        p.textln(f"eKasa: {r.fiscal_id}")
    else:
        if r.fiscal_state in STATE_WORDS:
            p.textln(STATE_WORDS[r.fiscal_state])
        if r.paragon_no:
            p.textln(f"Paragón č. {r.paragon_no}")
        p.textln(NOT_FISCAL)
    p.set(align="left", bold=False)
    p.cut()
    return bytes(p.output)


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme != "tcp" or not parts.hostname or not parts.port:
        raise PrinterError(N_("The receipt printer's address %(address)s is not tcp://host:port; fix it in the venue file."), address=url)
    return parts.hostname, parts.port


def print_receipt(url: str | None, r: Receipt, tz: tzinfo, timeout: float = PRINT_TIMEOUT_S) -> None:
    """Send the receipt to the printer at `url` ("tcp://host:9100"); PrinterError when it cannot."""
    if not url:
        raise PrinterError(N_("No receipt printer is set up; print through the browser (Print), or set [till] printer in the venue file."))
    host, port = _address(url)
    data = receipt_bytes(r, tz)
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(data)
    except OSError:
        raise PrinterError(
            N_(
                "The receipt printer at %(address)s does not answer; check it is on and has paper, or print through the browser. The payment is saved."
            ),
            address=f"{host}:{port}",
        ) from None
