"""Bills: the receipts journal of a business day (to find a receipt again and reprint it) with the
unpaid tabs and a sale at the bar on top, and a manager's correction of a game's bill from its
bill page.

The journal lists the receipts that count on the day (number, time, the tab's name, amount,
method; reversals negative), the newest first, searchable by receipt number, name (a table, a
game's number, a guest's name, a bar sale's "Bar 18:42", the game's member) and table. "Tlačiť"
prints the receipt itself (its lines with the drinks, the cash received and the change), not the
game's bill. Staff see the days they work with (CloseOut.days_at_hand, as the per-id reads of a
receipt or a tab do: issue 19 item 6); other days are the manager's, like every look at money
over time.

A game's bill is its table time (dashboard.access: a manager corrects it, "games.correct");
what was put on the game's tab, an extra too, is voided on the tab's page, by the tab's rule
(broker.till.tabs). The correction goes through the hub's facade, which keeps it as an op of
the game (who, when, why): money is never deleted.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.euros import MAX_AMOUNT_CENTS, parse_euros
from broker.domain.refusals import Refusal
from broker.floor.games import CorrectBill
from broker.hall.facade import NotFound, ServiceError
from broker.hall.read_models import HallReads
from broker.reports.reports import ReportError
from broker.till.payment_reads import journal_matches
from dashboard.access import allows
from dashboard.api.dates import WRITTEN_MAX
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.web.auth import PageForbidden, page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.request_text import translated
from dashboard.web.tab_parts import new_form_key
from dashboard.web.templating import NavLink, flash, render

router = APIRouter(prefix="/bills")
NAV = [NavLink("/bills", N_("Bills"), order=25)]

ReasonField = Annotated[str, Form(max_length=1000)]


def _day(request: Request, reads: HallReads, text: str | None, today: date) -> date:
    if not text:
        return today
    d = reads.dates().day(text)  # the hall's parser: its range, else a 400 page
    if d > today:
        raise ReportError(translated(request, N_("%(day)s has not come yet; reports go up to today."), day=d.isoformat()))
    return d


@router.get("")
def bills_page(
    request: Request,
    reads: Reads,
    user: Annotated[Staff, Depends(page_can("bills.today"))],
    day: Annotated[str | None, Query(max_length=WRITTEN_MAX)] = None,
    table: Annotated[str, Query(max_length=40)] = "",
    q: Annotated[str, Query(max_length=80)] = "",
) -> Response:
    today, at_hand = reads.till.till_days()  # the day payments count on now; the days staff work with
    shown = _day(request, reads, day, today)
    history = allows(user.role, "day.history")
    if shown not in at_hand and not history:
        raise PageForbidden(user, "manager")  # earlier days' takings are the manager's
    receipts = [r for r in reads.till.receipts_journal(shown) if journal_matches(r, q, table)]
    billed = [t for t in reads.tables.values() if t.kind.billed]
    return render(
        request,
        "bills.html",
        {
            "receipts": receipts,
            "day": shown,
            "today": today,
            "prev_day": (shown - timedelta(days=1)).isoformat() if history else None,
            "next_day": (shown + timedelta(days=1)).isoformat() if history and shown < today else None,
            "table": table,
            "q": q,
            "billed_tables": billed,
            "total_cents": sum(r.amount_cents for r in receipts),
            # The till's tabs (dashboard/web/pages_tabs.py): unpaid ones first, and a sale at the bar.
            "unpaid": reads.till.unpaid_tabs() if shown == today else [],
            "form_key": new_form_key,
        },
    )


# --- changing a bill -------------------------------------------------------------------------


def _bill_again(request: Request, reads: HallReads, game_id: int, error: Refusal | str, form: dict[str, Any], status: int) -> Response:
    """The bill page again with the refusal in the staff's language and what they typed kept."""
    message = translated(request, error.msgid, **error.params) if isinstance(error, Refusal) else error
    return render(
        request,
        "bill.html",
        {"s": reads.floor.game(game_id), "venue": reads.venue, "form_error": message, "form": form},
        status=status,
    )


def _euros_to_cents(text: str) -> int | None:
    """'-2,50', '-2.50', '3' → cents; None when it is not an amount (or 0, or absurd)."""
    return parse_euros(text, low=-MAX_AMOUNT_CENTS, zero=False)


@router.post("/{game_id}/correct", dependencies=[Depends(verify_csrf)])
def correct(
    game_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("games.correct"))],
    amount: Annotated[str, Form(max_length=40)] = "",
    reason: ReasonField = "",
) -> Response:
    form = {"kind": "correct", "amount": amount, "reason": reason}
    cents = _euros_to_cents(amount)
    if cents is None:
        message = translated(request, N_("Give the amount in euros, e.g. -2,50 to lower the bill or 1,20 to raise it (not 0)."))
        return _bill_again(request, hub.reads, game_id, message, form, 400)
    try:
        hub.execute(CorrectBill(game=game_id, amount_cents=cents, reason=reason, actor=user.username))
    except NotFound:
        raise
    except ServiceError as e:
        return _bill_again(request, hub.reads, game_id, e, form, 409)
    flash(request, gettext("Bill corrected."), "ok")
    return RedirectResponse(f"/sessions/{game_id}/bill", status_code=303)
