"""What a table's own page needs besides its card: where a game may move and at what rate, the
notice a start owes staff right away, out of service, the light, and a darts table's use today.

One rule each, used by the table page (dashboard.web.pages_floor.table_panel) and the routes of
dashboard.web.pages_tables / pages_games.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Iterator
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse

from broker.domain.floor import game_ops
from broker.domain.floor.club_rate import start_warning
from broker.domain.tariffs import rate_at
from broker.floor.reads import TableUse
from broker.hall.facade import ServiceError
from broker.hall.read_models import HallReads
from dashboard.web import i18n
from dashboard.web.i18n import N_, gettext, money
from dashboard.web.tab_parts import tabs_panel
from dashboard.web.templating import flash
from devices.kinds import Kind

PREPAID_PRESETS = (30, 60, 120)  # minutes: the usual half hour, hour, two hours


@contextlib.contextmanager
def speaking(request: Request) -> Iterator[None]:
    """Messages made in a POST route in the visitor's language (render() sets it only for pages)."""
    token = i18n.use_lang(i18n.lang_of(request))
    try:
        yield
    finally:
        i18n.reset_lang(token)


def in_visitor_lang(route: Callable[..., Any]) -> Callable[..., Any]:
    """A POST route whose messages (flashes) are in the visitor's language; it must take `request`."""

    @functools.wraps(route)  # FastAPI reads the wrapped signature
    def run(*args: Any, **kwargs: Any) -> Any:
        with speaking(kwargs["request"]):
            return route(*args, **kwargs)

    return run


def do_then_back(request: Request, back: str, op: Callable[[], str]) -> RedirectResponse:
    """Run a staff action (`op` returns the message when done); a refusal says why. Back to `back` either way."""
    try:
        done = op()
    except ServiceError as e:
        flash(request, gettext("Not done: %(reason)s") % {"reason": refusal_text(e)}, "error")
    else:
        flash(request, done, "ok")
    return RedirectResponse(back, status_code=303)


def refusal_text(e: Exception) -> str:
    """A refusal in the staff's language (the one rule: dashboard.web.i18n.refusal_text)."""
    return i18n.refusal_text(e)


def start_notice(reads: HallReads, table: str) -> tuple[str, str]:
    """(level, text) to flash after a start: says now when a member does not get the club rate
    (broker.domain.floor.club_rate: the same warning the API's start answers with)."""
    name = reads.tables[table].name
    done = gettext("Game started on %(table)s.") % {"table": name}
    s = reads.floor.open_game(table)
    warning = start_warning(s.state, reads.venue, reads.clock()) if s is not None else None
    if warning is None:
        return "ok", done
    return "info", done + " " + i18n.refusal_text(warning)


def club_rate(reads: HallReads, table: str) -> dict[str, Any]:
    """What the start form says about the club rate on `table` before anything is chosen: whether it
    applies here, and the two hourly rates (the tariffs' own; a time band may change them)."""
    venue = reads.venue
    return {
        "applies": reads.tables[table].club_card,
        "member_cents": venue.tariff(venue.billing.member_tariff).rate_cents_per_hour,
        "standard_cents": venue.tariff(venue.billing.default_tariff).rate_cents_per_hour,
    }


def rate_on(reads: HallReads, state: game_ops.GameState, table: str) -> int:
    """The hourly rate this game would run at on `table` now."""
    ctx = dataclasses.replace(state.context, table=table)
    return rate_at(reads.venue, ctx, max(reads.clock(), state.last_at)).rate_cents_per_hour


def transfer_targets(reads: HallReads, table: str) -> list[dict[str, Any]]:
    """Billed tables a game may move to now (free, in service), each with the rate it would run at there."""
    hall = reads.floor.hall_snapshot()
    out_now = reads.floor.out_of_service()
    s = hall.open.get(table)
    here = rate_on(reads, s.state, table) if s is not None and s.state.state == "running" else None
    targets = []
    for t in reads.venue.tables:
        if not t.kind.billed or t.id == table or t.id in hall.open or t.id in out_now:
            continue
        rate = rate_on(reads, s.state, t.id) if s is not None and s.state.state == "running" else None
        targets.append({"id": t.id, "name": t.name, "rate_cents": rate, "differs": here is not None and rate != here})
    return targets


def transfer_notice(reads: HallReads, game_id: int, before_cents: int | None, table: str) -> tuple[str, str]:
    """(level, text) after a move: warns when the game runs at another rate there."""
    name = reads.tables[table].name
    done = gettext("Game moved to %(table)s.") % {"table": name}
    s = reads.floor.open_game(table)
    if s is None or before_cents is None or s.state.state != "running":
        return "ok", done
    after = rate_on(reads, s.state, table)
    if after == before_cents:
        return "ok", done
    return "info", done + " " + gettext("Mind the rate here: %(new)s/h instead of %(old)s/h.") % {
        "new": money(after),
        "old": money(before_cents),
    }


def use_today(reads: HallReads, table: str) -> list[TableUse]:
    """The table's use in today's business day (from the day cut, so a dart game at 00:30 is
    tonight's, not tomorrow's: calendar midnight to midnight hid everything after midnight)."""
    start, end = reads.reports.day_bounds(reads.today())
    return reads.floor.table_use(table, start, end)


USE_WORDS = {
    "activity": N_("Played (the machine's credit lamp)"),
    "button": N_("Button at the table pressed"),
    "table.out_of_service": N_("Taken out of service"),
    "table.in_service": N_("Back in service"),
    "foosball.checkin": N_("Member checked in"),
    "foosball.checkout": N_("Member checked out"),
}


def use_word(u: TableUse) -> str:
    if u.what == "table.light":
        return gettext("Light switched on from the dashboard") if u.on else gettext("Light switched off from the dashboard")
    return gettext(USE_WORDS.get(u.what, u.what))


def panel_context(reads: HallReads, table_id: str) -> dict[str, Any]:
    """The table page's own parts (the card comes from dashboard.web.floor)."""
    spec = reads.tables[table_id]
    node = reads.floor.node(table_id)
    presets, cap = reads.bookings.prepaid_presets(table_id, PREPAID_PRESETS)  # none past a booking ahead
    return {
        "oos": reads.floor.out_of_service().get(table_id),
        "light_on": node.light_on if node else None,
        "targets": transfer_targets(reads, table_id) if spec.kind.billed else [],
        "presets": presets,
        "prepaid_cap": cap,
        "club": club_rate(reads, table_id) if spec.kind.billed else None,
        "use": use_today(reads, table_id) if spec.kind is Kind.DARTS else [],
        "use_word": use_word,
        **tabs_panel(reads, table_id),  # the game's tab (products to put on it) or the last game's unpaid tab
    }
