"""/ekasa in Chromium against the real server, at tablet and phone size, in Slovak: the manager's
settings with "Otestovať spojenie" (against the Portos simulator, tests/support/ekasa_sim.py), a
refused setting shown in place, the receipts not registered yet, and a paragón recorded while the
client is down and registered once it is back (exactly once, counted on the simulator).

Payments: m2's Payments.pay is not on this branch yet, so the payment is added to the server's
database the way it will be (a game's tab, frozen lines, fiscal_state "pending" as
Fiscal.payment_recorded leaves it with eKasa on); the server's own follow-up takes it from there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import func, select

from broker.domain.schedule import business_day
from broker.domain.till.receipt import lines_json
from broker.domain.venue import load_venue
from broker.storage.engine import open_store
from broker.storage.models import Payment, Tab
from broker.storage.types import utcnow
from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.web import eur, log_in, unfold_menu
from tests.dashboard.conftest import MANAGER, STAFF
from tests.support.ekasa_sim import EkasaSimulator
from tests.support.hub import VENUE
from tests.support.waiting import wait_until
from tests.till.payment_stand_in import DRINK, TIME

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.web import ServedHub


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[EkasaSimulator]:
    s = EkasaSimulator(tmp_path).start()
    yield s
    s.stop()


def _fits(page: Any, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the page is {scroll} px wide in a {width} px viewport"


def _pending_payment(lavos: Any, table: str) -> tuple[int, int]:
    """(payment id, receipt no.) of a 9 € payment for a game on `table`, left pending for eKasa."""
    sid = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": table})["id"]
    store = open_store(lavos.db_url)
    try:
        with store.session() as db:
            tab = db.scalar(select(Tab.id).where(Tab.session_id == sid))
            now = utcnow()
            no = (db.scalar(select(func.max(Payment.receipt_no))) or 0) + 1
            p = Payment(
                tab_id=tab,
                method="cash",
                amount_cents=900,
                change_cents=0,
                staff=STAFF,
                at=now,
                business_day=business_day(now, load_venue(VENUE)),
                receipt_no=no,
                lines=lines_json((TIME, DRINK)),
                fiscal_state="pending",
                fiscal_updated_at=now,
                fiscal_detail={"since": now.isoformat()},
            )
            db.add(p)
            db.flush()
            return p.id, no
    finally:
        store.close()


@pytest.mark.parametrize(("size", "table", "number"), [("tablet", "pool-05", 17), ("phone", "pool-06", 18)])
def test_settings_test_connection_and_a_paragon_while_eKasa_is_down(
    lavos: ServedHub, open_page: Callable[..., Any], sim: EkasaSimulator, size: Any, table: Any, number: Any
) -> None:
    viewport = TABLET if size == "tablet" else PHONE
    boss = open_page(viewport, mobile=size == "phone")
    before = lavos.api("GET", "/api/ekasa/settings", MANAGER)  # the first run leaves it on
    log_in(boss, lavos, MANAGER, "/ekasa")
    _fits(boss, viewport["width"])
    form = boss.locator("form.ekasa-settings")
    form.locator("input[name=url]").fill(sim.url)
    form.locator("input[name=timeout_s]").fill("2")
    with boss.expect_navigation():
        form.locator("button[value=test]").tap()
    assert "eKasa odpovedá" in boss.locator("#ekasa-tested").inner_text()
    assert boss.locator("form.ekasa-settings input[name=url]").input_value() == sim.url  # kept as typed

    form = boss.locator("form.ekasa-settings")
    form.locator("input[name=cash_register_code]").fill("88812-345")
    form.locator("input[name=enabled]").check()
    with boss.expect_navigation():
        form.locator("button[value=save]").tap()
    assert "iba číslice" in boss.locator("form.ekasa-settings .form-error").inner_text()  # in place, in Slovak
    assert boss.locator("form.ekasa-settings input[name=cash_register_code]").input_value() == "88812-345"
    assert lavos.api("GET", "/api/ekasa/settings", MANAGER) == before  # refused: nothing saved

    form = boss.locator("form.ekasa-settings")
    form.locator("input[name=cash_register_code]").fill("")
    with boss.expect_navigation():
        form.locator("button[value=save]").tap()
    assert "Nastavenia eKasy sú uložené" in boss.locator(".flash").inner_text()
    assert lavos.api("GET", "/api/ekasa/settings", MANAGER) == {"enabled": True, "url": sim.url, "timeout_s": 2, "cash_register_code": ""}

    sim.stop()  # the client goes down mid-evening
    pid, no = _pending_payment(lavos, table)
    bar = open_page(viewport, mobile=size == "phone")
    log_in(bar, lavos, STAFF, "/bills")
    with bar.expect_navigation():
        bar.locator("a[href='/ekasa']").tap()  # reached from the bills page
    _fits(bar, viewport["width"])
    assert bar.locator("#ekasa-settings").count() == 0  # staff: no settings
    row = bar.locator(f"li.ekasa-receipt[data-payment='{pid}']")
    assert f"Blok č. {no}" in row.inner_text() and eur(900) in row.inner_text().replace(" ", "\u00a0")
    assert "čaká na odoslanie" in row.inner_text()

    row.locator("input[name=number]").fill("17x")
    with bar.expect_navigation():
        row.locator("button[type=submit]").tap()
    row = bar.locator(f"li.ekasa-receipt[data-payment='{pid}']")
    assert "predtlačené" in row.locator(".form-error").inner_text()
    assert row.locator("input[name=number]").input_value() == "17x"

    row.locator("input[name=number]").fill(str(number))
    with bar.expect_navigation():
        row.locator("button[type=submit]").tap()
    assert f"Paragón č. {number} je zapísaný" in bar.locator(".flash").inner_text()
    row = bar.locator(f"li.ekasa-receipt[data-payment='{pid}']")
    assert "paragón, čaká na zaevidovanie" in row.inner_text() and f"Paragón č. {number}" in row.inner_text()
    _fits(bar, viewport["width"])

    sim.start()  # back: the server's follow-up registers the paragón by itself
    ext = f"lavos-lavos-{pid}"
    wait_until(lambda: sim.count(ext) == 1, 30, "the paragón registered")
    rec = sim.record(ext)
    assert rec is not None
    assert rec["request"]["kind"] == "paragon" and rec["request"]["data"]["paragonNumber"] == number

    def gone() -> bool:
        bar.reload()
        result: bool = bar.locator(f"li.ekasa-receipt[data-payment='{pid}']").count() == 0
        return result

    wait_until(gone, 20, "the receipt off the list", interval=0.5)
    time.sleep(1)
    assert sim.count(ext) == 1
    assert "Všetky bloky sú zaevidované" in bar.locator("#ekasa-none").inner_text()
    unfold_menu(bar)  # English: the phone folds the language behind the menu
    with bar.expect_navigation():
        bar.locator("form.lang button[value=en]").tap()
    assert bar.locator("#ekasa-none").inner_text() == "Every receipt is registered."
    assert bar.locator("#ekasa-receipts-h").inner_text() == "Receipts not registered yet"
