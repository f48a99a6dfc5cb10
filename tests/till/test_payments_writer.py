"""Payments and reversals through the facade on the hub's writer, on SQLite and PostgreSQL: the
rules, the frozen lines, receipt numbers, settled_at, the audit trail, refusals that change nothing,
and a resent form that never pays twice."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.domain.till.payment_rules import PARTIAL
from broker.floor.games import StartGame, StopGame
from broker.hall.facade import NotFound, ServiceError
from broker.storage.models import AuditEntry, Payment
from broker.till.payments import PayTab, ReversePayment
from tests.support.hub import on_writer
from tests.support.matching import some
from tests.till.payments_support import MANAGER, STAFF, add_item, clock, facade, played_tab, rows, service, set_split  # noqa: F401

if TYPE_CHECKING:
    from broker.hall.facade import HubFacade
    from broker.hall.hub import Hub
    from tests.dashboard.conftest import FakeClock


def _payment(facade: Any, pid: int) -> Payment:
    with facade._hub.store.reader() as db:
        p = db.get(Payment, pid)
        db.expunge(p)
        result: Payment = p
        return result


def test_cash_with_change_pays_the_tab_and_freezes_its_lines(facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)  # 9,00 €
    add_item(facade, tab, "Kofola 0,5 l", 250, 19, quantity=2)
    before = facade.reads.till.tab_payments(tab)
    assert before is not None
    assert (before.total_cents, before.owed_cents, before.status) == (1400, 1400, "open")
    taken = facade.execute(PayTab(tab=tab, method="cash", amount_cents=1400, tendered_cents=2000, request_id="form-0001", actor=STAFF))
    assert not taken.repeated
    p = _payment(facade, taken.payment_id)
    assert (p.amount_cents, p.tendered_cents, p.change_cents, p.method, p.staff, p.receipt_no) == (1400, 2000, 600, "cash", STAFF, 1)
    assert [x["description"] for x in p.lines["lines"]][-1] == "Kofola 0,5 l"
    assert {v["vat_percent"]: v["gross_cents"] for v in p.lines["vat"]} == {23: 900, 19: 500}
    assert p.business_day == facade.reads.today()
    after = facade.reads.till.tab_payments(tab)
    assert after is not None
    assert (after.paid_cents, after.owed_cents, after.status) == (1400, 0, "paid") and after.settled_at is not None
    with facade._hub.store.reader() as db:
        audit = db.scalars(select(AuditEntry).where(AuditEntry.action == "payment.take")).all()
    assert [(a.actor, a.target, a.detail["change_cents"]) for a in audit] == [(STAFF, f"tab:{tab}", 600)]
    r = facade.reads.till.receipt_of(taken.payment_id)
    assert r is not None
    assert (r.number, r.total_cents, r.tendered_cents, r.change_cents, r.method_name, r.fiscal_state) == (
        1,
        1400,
        2000,
        600,
        "Hotovosť",
        "none",
    )


def test_half_cash_half_card_then_paid_and_partial_lines_add_up_per_rate(facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)  # 900 at 23 %
    add_item(facade, tab, "Pivo", 215, 19)  # 215 at 19 %: 1115
    first = facade.execute(PayTab(tab=tab, method="cash", amount_cents=557, tendered_cents=1000, actor=STAFF))
    assert some(facade.reads.till.tab_payments(tab)).status == "partly_paid"
    second = facade.execute(PayTab(tab=tab, method="card", amount_cents=558, actor=STAFF))
    view = facade.reads.till.tab_payments(tab)
    assert view is not None
    assert (view.status, view.owed_cents) == ("paid", 0)
    a, b = _payment(facade, first.payment_id), _payment(facade, second.payment_id)
    assert a.receipt_no is not None and a.receipt_no + 1 == b.receipt_no and b.tendered_cents is None
    # A mixed payment: only the cash part is rounded (5,57 € is 5,55 € in cash), the card part never.
    assert (a.rounding_cents, a.change_cents, b.rounding_cents) == (-2, 445, 0)
    assert {x["category"] for x in a.lines["lines"] + b.lines["lines"]} == {PARTIAL}
    per_rate: dict[int, int] = {}
    for p in (a, b):
        assert sum(x["amount_cents"] for x in p.lines["lines"]) == p.amount_cents
        for v in p.lines["vat"]:
            per_rate[v["vat_percent"]] = per_rate.get(v["vat_percent"], 0) + v["gross_cents"]
    assert per_rate == {23: 900, 19: 215}  # the receipts add up to the bill per rate, to the cent
    assert "Čiastočná úhrada účtu" in a.lines["lines"][0]["description"]


def test_a_resent_form_and_a_double_tap_make_one_payment(facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)
    answers = []

    def tap() -> None:
        answers.append(facade.execute(PayTab(tab=tab, method="card", amount_cents=900, request_id="double-tap-1", actor=STAFF)))

    threads = [threading.Thread(target=tap) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({a.payment_id for a in answers}) == 1 and sorted(a.repeated for a in answers) == [False, True, True, True]
    pays, _, audits = rows(facade)
    assert len(pays) == 1 and audits == 1
    other = played_tab(facade, clock, table="pool-02")
    with pytest.raises(ServiceError, match="already used for another bill"):
        facade.execute(PayTab(tab=other, method="card", amount_cents=900, request_id="double-tap-1", actor=STAFF))


@pytest.mark.parametrize(
    ("method", "amount", "tendered", "says"),
    [
        ("cash", -100, None, "whole cents above zero"),
        ("cash", 0, None, "whole cents above zero"),
        ("cash", 12.5, None, "whole cents above zero"),
        ("cash", "garbage", None, "whole cents above zero"),
        ("cash", True, None, "whole cents above zero"),
        ("cash", 10**12, None, "whole cents above zero"),
        ("card", 801, None, "more than the"),
        ("cash", 801, 2000, "more than the"),
        ("cash", 800, 500, "less than"),
        ("cash", 800, -5, "received cash"),
        ("card", 800, 1000, "Only cash"),
        ("bitcoin", 800, None, "not a payment method"),
    ],
)
def test_bad_payments_are_refused_and_change_nothing(
    facade: HubFacade, clock: FakeClock, method: Any, amount: Any, tendered: Any, says: Any
) -> None:
    tab = played_tab(facade, clock)
    facade.execute(PayTab(tab=tab, method="card", amount_cents=100, actor=STAFF))  # 8,00 € left
    before = rows(facade)
    with pytest.raises(ServiceError, match=says):
        facade.execute(PayTab(tab=tab, method=method, amount_cents=amount, tendered_cents=tendered, request_id="bad-form-1", actor=STAFF))
    assert rows(facade) == before


def test_a_paid_tab_another_tabs_part_and_no_tab_are_refused(facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)
    facade.execute(PayTab(tab=tab, method="card", amount_cents=900, actor=STAFF))
    before = rows(facade)
    with pytest.raises(ServiceError, match="paid already"):
        facade.execute(PayTab(tab=tab, method="cash", amount_cents=100, actor=STAFF))
    with pytest.raises(NotFound):
        facade.execute(PayTab(tab=tab, method="card", amount_cents=100, part=1, actor=STAFF))  # not split
    with pytest.raises(NotFound):
        facade.execute(PayTab(tab=10_000, method="card", amount_cents=100, actor=STAFF))
    assert rows(facade) == before


def test_a_split_part_pays_its_own_lines_and_remaining(facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)
    lines = [
        {
            "description": "Čas",
            "description_en": "Time",
            "quantity": 1,
            "unit_cents": 450,
            "amount_cents": 450,
            "vat_percent": 23,
            "category": "table_time",
        }
    ]
    vat = [{"vat_percent": 23, "gross_cents": 450, "vat_cents": 84}]
    set_split(
        facade,
        tab,
        {
            "mode": "equal",
            "parts": [{"n": 1, "amount_cents": 450, "lines": lines, "vat": vat}, {"n": 2, "amount_cents": 450, "lines": lines, "vat": vat}],
        },
    )
    one = facade.execute(PayTab(tab=tab, method="cash", amount_cents=450, tendered_cents=500, part=1, actor=STAFF))
    assert _payment(facade, one.payment_id).lines["lines"] == lines
    before = rows(facade)
    with pytest.raises(ServiceError, match="Part 1 of Pool 1 is paid already"):
        facade.execute(PayTab(tab=tab, method="card", amount_cents=450, part=1, actor=STAFF))
    with pytest.raises(ServiceError, match="more than"):
        facade.execute(PayTab(tab=tab, method="card", amount_cents=451, part=2, actor=STAFF))
    with pytest.raises(NotFound, match="no part 3"):
        facade.execute(PayTab(tab=tab, method="card", amount_cents=1, part=3, actor=STAFF))
    assert rows(facade) == before
    facade.execute(PayTab(tab=tab, method="card", amount_cents=450, part=2, actor=STAFF))
    view = facade.reads.till.tab_payments(tab)
    assert view is not None
    assert view.status == "paid" and [p.owed_cents for p in view.parts] == [0, 0]


def test_a_running_game_paid_in_advance_is_paid_only_when_stopped(facade: HubFacade, clock: FakeClock) -> None:
    sid = facade.execute(StartGame(table="pool-03", actor=STAFF))
    clock.advance(minutes=60)  # 6,00 € so far
    tab = facade.reads.till.tab_payments(_tab_of(facade, sid))
    assert tab is not None
    facade.execute(PayTab(tab=tab.tab_id, method="card", amount_cents=600, actor=STAFF))
    view = facade.reads.till.tab_payments(tab.tab_id)
    assert view is not None
    assert view.status == "partly_paid" and view.settled_at is None  # the game runs: it can grow
    facade.execute(StopGame(game=sid, actor=STAFF))
    clock.advance(minutes=1)
    assert some(facade.reads.till.tab_payments(tab.tab_id)).status == "paid"
    # The stop's transaction told the till: the tab is settled with it.
    assert some(facade.reads.till.tab_payments(tab.tab_id)).settled_at is not None


def _tab_of(facade: Any, sid: int) -> int:
    from broker.storage.models import Tab

    with facade._hub.store.reader() as db:
        return int(db.scalar(select(Tab.id).where(Tab.session_id == sid)))


def test_a_reversal_gives_back_once_with_a_reason_and_reopens_the_tab(facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)
    taken = facade.execute(PayTab(tab=tab, method="cash", amount_cents=900, tendered_cents=1000, actor=STAFF))
    assert some(facade.reads.till.tab_payments(tab)).settled_at is not None
    before = rows(facade)
    with pytest.raises(ServiceError, match="Say why"):
        facade.execute(ReversePayment(payment=taken.payment_id, reason="  ", actor=MANAGER))
    assert rows(facade) == before
    back = facade.execute(ReversePayment(payment=taken.payment_id, reason="zlá suma", actor=MANAGER))
    r = _payment(facade, back.payment_id)
    assert (r.amount_cents, r.reverses_id, r.reason, r.receipt_no, r.change_cents, r.staff) == (
        -900,
        taken.payment_id,
        "zlá suma",
        2,
        0,
        MANAGER,
    )
    assert all(x["amount_cents"] < 0 for x in r.lines["lines"])
    view = facade.reads.till.tab_payments(tab)
    assert view is not None
    assert (view.status, view.owed_cents, view.paid_cents, view.settled_at) == ("open", 900, 0, None)
    assert view.payments[0].reversed_by_no == 2 and view.payments[1].reverses_no == 1
    receipt = facade.reads.till.receipt_of(back.payment_id)
    assert receipt is not None
    assert receipt.reverses_number == 1 and receipt.total_cents == -900 and receipt.reason == "zlá suma"
    before = rows(facade)
    with pytest.raises(ServiceError, match="reversed already"):
        facade.execute(ReversePayment(payment=taken.payment_id, reason="znova", actor=MANAGER))
    with pytest.raises(ServiceError, match="itself a reversal"):
        facade.execute(ReversePayment(payment=back.payment_id, reason="znova", actor=MANAGER))
    with pytest.raises(NotFound):
        facade.execute(ReversePayment(payment=99_999, reason="znova", actor=MANAGER))
    assert rows(facade) == before
    again = facade.execute(PayTab(tab=tab, method="card", amount_cents=900, actor=STAFF))  # paid again after the reversal
    assert _payment(facade, again.payment_id).receipt_no == 3 and some(facade.reads.till.tab_payments(tab)).status == "paid"
    with facade._hub.store.reader() as db:
        audit = db.scalars(select(AuditEntry).where(AuditEntry.action == "payment.reverse")).all()
    assert [(a.actor, a.reason) for a in audit] == [(MANAGER, "zlá suma")]


def test_a_merged_tab_is_paid_on_the_tab_it_was_merged_into(facade: HubFacade, clock: FakeClock) -> None:
    from broker.storage.models import Tab

    one, two = played_tab(facade, clock, table="pool-01"), played_tab(facade, clock, table="pool-02")

    def _write(db: Any) -> None:
        db.get(Tab, two).merged_into = one  # as m1's merge leaves it

    on_writer(facade._hub, _write)
    before = rows(facade)
    with pytest.raises(ServiceError, match="merged into Pool 1"):
        facade.execute(PayTab(tab=two, method="card", amount_cents=100, actor=STAFF))
    assert rows(facade) == before
    view = facade.reads.till.tab_payments(one)
    assert view is not None
    assert view.total_cents == 1800  # both games
    facade.execute(PayTab(tab=one, method="card", amount_cents=1800, actor=STAFF))
    assert some(facade.reads.till.tab_payments(one)).status == "paid"


def test_a_payment_is_pushed_live_after_its_commit_and_a_refusal_is_not(facade: HubFacade, clock: FakeClock, service: Hub) -> None:
    tab = played_tab(facade, clock)
    heard: list[tuple[str, dict[str, Any]]] = []
    service.subscribe(lambda topic, data: heard.append((topic, data)))
    with pytest.raises(ServiceError):
        facade.execute(PayTab(tab=tab, method="card", amount_cents=901, actor=STAFF))
    assert not [h for h in heard if h[0] == "tab"]
    facade.execute(PayTab(tab=tab, method="card", amount_cents=900, actor=STAFF))
    assert ("tab", {"tab": tab, "table": "pool-01", "action": "payment"}) in heard
    assert ("session", {"table": "pool-01", "action": "payment"}) in heard  # the floor's card of the table


def test_a_walk_in_tab_at_the_bar_is_paid_and_its_receipt_names_no_table(facade: HubFacade, clock: FakeClock) -> None:
    from broker.storage.models import Tab

    def _write(db: Any) -> int:
        tab = Tab(table_id=None, label="Bar: Peter", opened_by=STAFF, opened_at=clock(), business_day=facade.reads.today())
        db.add(tab)
        db.flush()
        tab_id = tab.id
        return tab_id

    tab_id = on_writer(facade._hub, _write)  # as m1's walk-in tab will open it
    add_item(facade, tab_id, "Espresso", 180, 19, quantity=2)
    before = rows(facade)
    with pytest.raises(ServiceError, match="Bar: Peter"):
        facade.execute(PayTab(tab=tab_id, method="card", amount_cents=361, actor=STAFF))
    assert rows(facade) == before
    taken = facade.execute(PayTab(tab=tab_id, method="cash", amount_cents=360, tendered_cents=500, actor=STAFF))
    r = facade.reads.till.receipt_of(taken.payment_id)
    assert r is not None
    assert (r.total_cents, r.change_cents, r.table_name, [x.quantity for x in r.lines]) == (360, 140, "Bar: Peter", [2])
    assert some(facade.reads.till.tab_payments(tab_id)).status == "paid"
