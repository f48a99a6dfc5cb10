"""Bills: the list of a business day's bills (to find one again and reprint it), and changing a bill
(voiding an extra added by mistake, a manager's correction) from the bill page.

Who may change a bill (dashboard.access): staff void an extra while the game runs, before the bill
is issued; once the game is stopped the bill is issued and only a manager voids or corrects it.
Both go through the hub's facade, which keeps every change as an op of the game (who, when,
why): money is never deleted, a void adds the same amount negative.

The list shows staff today's business day (a game after midnight is still the evening's); other
days are the manager's, like every look at money over time.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.euros import MAX_AMOUNT_CENTS, parse_euros
from broker.domain.refusals import Refusal
from broker.hall.facade import NotFound, ServiceError
from broker.hall.games import CorrectBill, VoidExtra
from broker.hall.read_models import HallReads, StoppedGame
from broker.hall.reports import ReportError
from dashboard.access import allows
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.web.auth import PageForbidden, page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.request_text import translated
from dashboard.web.tab_parts import new_form_key
from dashboard.web.templating import NavLink, flash, render

router = APIRouter(prefix="/bills")
NAV = [NavLink("/bills", N_("Bills"), order=25)]

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ReasonField = Annotated[str, Form(max_length=1000)]


def _day(request: Request, text: str | None, today: date) -> date:
    if not text:
        return today
    try:
        if not _DAY.match(text):
            raise ValueError
        d = date.fromisoformat(text)
    except ValueError:
        raise ReportError(translated(request, N_("%(value)s is not a date: give a day as 2026-11-30."), value=text[:20])) from None
    if d > today:
        raise ReportError(translated(request, N_("%(day)s has not come yet; reports go up to today."), day=d.isoformat()))
    return d


def _matches(s: StoppedGame, reads: HallReads, table: str, q: str) -> bool:
    if table and s.table != table:
        return False
    if not q:
        return True
    name = reads.tables[s.table].name if s.table in reads.tables else s.table
    return any(q in text.casefold() for text in (name, s.member or "", str(s.id)))


@router.get("")
def bills_page(
    request: Request,
    reads: Reads,
    user: Annotated[Staff, Depends(page_can("bills.today"))],
    day: Annotated[str | None, Query(max_length=20)] = None,
    table: Annotated[str, Query(max_length=40)] = "",
    q: Annotated[str, Query(max_length=80)] = "",
) -> Response:
    today = reads.today()
    shown = _day(request, day, today)
    if shown != today and not allows(user.role, "games.history"):
        raise PageForbidden(user, "manager")  # earlier days' takings are the manager's
    start, end = reads.day_bounds(shown)
    search = q.strip().casefold()
    bills = [s for s in reads.stopped_games(start, end) if _matches(s, reads, table, search)]
    bills.reverse()  # the latest first: the one asked for again is usually the last one
    history = allows(user.role, "games.history")
    billed = [t for t in reads.tables.values() if t.kind.billed]
    return render(
        request,
        "bills.html",
        {
            "bills": bills,
            "day": shown,
            "today": today,
            "prev_day": (shown - timedelta(days=1)).isoformat() if history else None,
            "next_day": (shown + timedelta(days=1)).isoformat() if history and shown < today else None,
            "table": table,
            "q": q,
            "billed_tables": billed,
            "total_cents": sum(s.total_cents or 0 for s in bills),
            # The till's tabs (dashboard/web/pages_tabs.py): unpaid ones first, and a walk-in tab's form.
            "unpaid": reads.unpaid_tabs() if shown == today else [],
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
        {"s": reads.game(game_id), "venue": reads.venue, "form_error": message, "form": form},
        status=status,
    )


def _euros_to_cents(text: str) -> int | None:
    """'-2,50', '-2.50', '3' → cents; None when it is not an amount (or 0, or absurd)."""
    return parse_euros(text, low=-MAX_AMOUNT_CENTS, zero=False)


@router.post("/{game_id}/void", dependencies=[Depends(verify_csrf)])
def void_extra(
    game_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("games.void"))],
    extra_op: Annotated[int, Form(ge=1, le=1_000_000)],
    reason: ReasonField = "",
) -> Response:
    form = {"kind": "void", "extra_op": extra_op, "reason": reason}
    try:
        hub.execute(
            VoidExtra(game=game_id, extra_op=extra_op, reason=reason, issued_ok=allows(user.role, "games.correct"), actor=user.username)
        )
    except NotFound:
        raise
    except ServiceError as e:
        return _bill_again(request, hub.reads, game_id, e, form, 409)
    flash(request, gettext("Extra voided; the bill shows it reversed."), "ok")
    return RedirectResponse(f"/sessions/{game_id}/bill", status_code=303)


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
