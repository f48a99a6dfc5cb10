"""Members' money on the staff pages (SQLite; the SQL of both backends is in tests/broker/wallet): the
member's credit page and its forms, refusals in Slovak that keep what was typed and change nothing,
the manager's refund, and "Z kreditu" / "Z balíka" on the pay page and the floor card."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest
from sqlalchemy import func, select

from broker.floor.games import StartGame, StopGame
from broker.hall.facade import HubFacade
from broker.people.members import AddMember
from broker.storage.models import Tab, WalletEntry
from broker.wallet.wallet import SellPackage, TopUpCredit
from tests.dashboard.conftest import FakeClock, sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.hub import started_hub
from tests.support.matching import found, some

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from tests.dashboard.pages_client import Pages

pytestmark = sqlite_only


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(db_url: str, clock: FakeClock) -> Iterator[Hub]:
    with started_hub(db_url, clock=clock, watchdog=False) as hub:
        yield hub


def _key(html: str, suffix: str = "") -> str:
    return found(rf'name="request_id" value="([^"]+{suffix})"', html).group(1)


def _land(pages: Pages, r: httpx.Response) -> str:
    """The page a staff user's 303 lands on (with its flash message)."""
    assert r.status_code == 303, f"{r.status_code} {r.text[:2000]}"
    return pages.page(r.headers["location"], client=pages.staff)


def _entries(hub: Hub) -> int:
    with hub.store.reader() as db:
        return db.scalar(select(func.count()).select_from(WalletEntry)) or 0


def test_staff_top_up_and_sell_on_the_credit_page_and_a_refused_form_changes_nothing(pages: Pages) -> None:
    hub = pages.service
    member = hub.execute(AddMember(name="Kováč Ján", actor="boss")).id
    html = pages.page(f"/wallet/{member}", client=pages.staff)
    assert "Kredit: Kováč Ján" in html and "Dobiť kredit" in html and "viacúčelový poukaz" in html
    assert "Vrátiť nevyčerpaný kredit" not in html  # the manager's
    r = pages.post(f"/wallet/{member}/top-up", {"amount": "abc", "method": "cash", "request_id": _key(html, "-t")}, client=pages.staff)
    assert r.status_code == 400 and "Zadajte sumu v eurách" in r.text and 'value="abc"' in r.text
    r = pages.post(f"/wallet/{member}/top-up", {"amount": "20", "method": "bitcoin", "request_id": _key(html, "-t")}, client=pages.staff)
    assert r.status_code == 400 and "nie je spôsob platby" in r.text
    assert _entries(hub) == 0
    form = {"amount": "20,00", "method": "cash", "request_id": _key(html, "-t")}
    page = _land(pages, pages.post(f"/wallet/{member}/top-up", form, client=pages.staff))
    assert "Kredit dobitý." in page and "20,00" in found(r'id="wallet-credit">([^<]+)<', page).group(1)
    receipt = found(r'href="/receipts/(\d+)"', page).group(1)  # the top-up's receipt: no VAT row, the § 9a note
    text = pages.page(f"/receipts/{receipt}", client=pages.staff)
    assert "Viacúčelový poukaz: pri predaji ani vrátení nepodlieha DPH" in text and "Základ DPH" not in text
    again = pages.post(f"/wallet/{member}/top-up", form, client=pages.staff)  # a double tap: the same row
    assert again.status_code == 303 and _entries(hub) == 1
    sold = pages.post(
        f"/wallet/{member}/package",
        {"kind": "hours", "quantity": "10", "price": "50", "method": "card", "request_id": _key(html, "-p")},
        client=pages.staff,
    )
    page = _land(pages, sold)
    assert "Balík predaný." in page and "ostáva 10:00 z 10 h" in page and "dobitie" in page and "predaj balíka" in page
    pages.refused_to_others("POST", f"/wallet/{member}/refund", {"amount": "5", "method": "cash", "reason": "odchod"})
    html = pages.page(f"/wallet/{member}")
    r = pages.post(f"/wallet/{member}/refund", {"amount": "50", "method": "cash", "reason": "odchod", "request_id": _key(html, "-r")})
    assert r.status_code == 400 and "má 20,00\u00a0€ kreditu" in r.text
    page = pages.follow(
        pages.post(f"/wallet/{member}/refund", {"amount": "5", "method": "cash", "reason": "odchod", "request_id": _key(html, "-r")})
    )
    assert "Kredit vrátený." in page and "vrátenie kreditu: odchod" in page
    member_page = pages.page(f"/members/{member}").replace("\u00a0", " ")
    assert "Kredit a balíky" in member_page and "kredit 15,00 €" in member_page and "10:00 h stola" in member_page
    # The manager's Z report: credit sold (20 € less 5 € given back) is taken but is not revenue.
    z = pages.page("/day").replace("\u00a0", " ")
    assert "Mínus predaný kredit" in z and found(r'id="z-voucher-sales">([^<]+)<', z).group(1) == "-15,00 €"
    assert found(r'id="z-total">([^<]+)<', z).group(1) == "50,00 €"  # the package, revenue when sold
    csv = pages.manager.get(f"/days/{HubFacade(hub).reads.today().isoformat()}.csv")
    assert csv.status_code == 200 and "Predaný kredit (viacúčelový poukaz: nie je tržba, bez DPH)" in csv.text and "15,00" in csv.text


def test_the_pay_page_pays_from_credit_in_one_tap_and_from_a_package(pages: Pages, clock: FakeClock) -> None:
    hub = pages.service
    member = hub.execute(AddMember(name="Horák Eva", actor="boss")).id
    hub.execute(TopUpCredit(member_id=member, amount_cents=2000, method="cash", actor="jana"))
    package = hub.execute(SellPackage(member_id=member, kind="hours", quantity=1, price_cents=500, method="card", actor="jana")).package_id
    game = hub.execute(StartGame(table="pool-01", member_id=member, actor="jana"))
    clock.advance(minutes=90)
    floor = pages.page("/", client=pages.staff).replace("\u00a0", " ")
    card = floor[floor.find("Horák Eva") - 200 :][:1200]
    assert "kredit 20,00" in floor and "1:00 h stola" in floor, card  # on the floor card, where they play
    hub.execute(StopGame(game=game, actor="jana"))
    with hub.store.reader() as db:
        tab = db.scalar(select(Tab.id).where(Tab.session_id == game))
    html = pages.page(f"/tabs/{tab}/pay", client=pages.staff).replace("\u00a0", " ")
    owed = found(r'id="pay-owed">([^<]+)<', html).group(1)
    assert "Z kreditu" in html and "Z balíka č. B-" in html and "kredit 20,00" in html
    # The package first: 60 minutes at its rate; the rest stays on the bill.
    r = pages.post(f"/tabs/{tab}/pay/package", {"package_id": str(package), "request_id": "pkg-key-0001"}, client=pages.staff)
    page = _land(pages, r)
    assert "Zaplatené čiastočne" in page and found(r'id="pay-owed">([^<]+)<', page).group(1) != owed
    expect = found(r'name="expect" value="(\d+)"', page).group(1)
    amount = found(r'name="amount" value="([^"]+)"', page[page.find('id="wallet-pay"') :]).group(1)
    r = pages.post(
        f"/tabs/{tab}/pay/credit",
        {"member_id": str(member), "amount": amount, "expect": expect, "request_id": "credit-key-0001"},
        client=pages.staff,
    )
    receipt = _land(pages, r)
    assert "Z kreditu" in receipt and re.search(r"Doklad</strong> č\. \d+", receipt)
    assert some(HubFacade(hub).reads.wallet.member(member)).balance_cents == 2000 - int(expect)
    paid = HubFacade(hub).reads.till.tab_payments(some(tab))
    assert paid is not None and paid.status == "paid" and 'id="wallet-pay"' not in pages.page(f"/tabs/{tab}/pay", client=pages.staff)
