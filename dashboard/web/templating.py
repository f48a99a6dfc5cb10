"""The Jinja2 environment of the pages and `render()`, which every page route answers with.

Templates get: `_()` / `gettext` / `ngettext` (and {% trans %}), `csrf_input()`, `csrf_token()`,
filters `local` (a room/tariff/extra's name in this language), `tariff` (id → name),
`money` (cents → 6,00 €), `when` (30. 11. 2026 18:05, venue time), `clock` (18:05),
`day`, `duration` (1:05), `hms` (1:05:09, a ticking timer), `number`. Whatever a page prints,
money and dates come with no-break spaces (`_unbreakable`), so "0,60 €" or "1. 12. 2026"
never breaks across two lines; and in the context `request`, `user` (None on the login page),
`lang`, `langs`, `nav` (the links this user may follow) and `nav_current` (this page's), `may("tabs.run")` (whether this user's role
has a capability of dashboard.access), `new_form_key()` (a form's one-time key), `open_alerts` (for the banner),
`flashes` (messages left by `flash()` before a redirect), `hall` (the hub's read models: venue, tables, clock).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from zoneinfo import ZoneInfo

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, pass_context, select_autoescape
from markupsafe import Markup

from broker.accounts.staff import role_at_least
from dashboard.access import allows
from dashboard.api.deps import get_reads
from dashboard.web import csrf, i18n
from dashboard.web.tab_parts import new_form_key

TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class NavLink:
    """A link in the top bar. `label` is an English message id marked with N_() (translated when shown).

    The staff's links stand in the bar; a manager's pages (role "manager") are in its "Správa" menu,
    so the bar stays one row at 1280 px whatever pages are added. A link with a `fragment` is shown
    only while it has something to say (the waiting list while a party waits): the bar draws that
    template in its place and app.js draws it again from `src` when one of `topics` is pushed."""

    path: str
    label: str
    role: str = "staff"
    order: int = 50
    fragment: str = ""
    src: str = ""
    topics: str = ""


_nav: list[NavLink] = []


def register_nav(links: list[NavLink]) -> None:
    for link in links:
        if link not in _nav:
            _nav.append(link)
    _nav.sort(key=lambda x: (x.order, x.path))


def nav_for(user: Any) -> list[NavLink]:
    if user is None:
        return []
    return [x for x in _nav if role_at_least(user.role, x.role)]


def nav_current(links: list[NavLink], path: str) -> NavLink | None:
    """The link of the page at `path` (the longest that leads to it): the bar marks it."""
    here = [x for x in links if path == x.path or (x.path != "/" and path.startswith(x.path))]
    return max(here, key=lambda x: len(x.path), default=None)


def _venue_tz(ctx: Any) -> ZoneInfo | None:
    request = ctx.get("request")
    return get_reads(request).venue.tz if request is not None else None


NBSP = "\u00a0"
# Text that must not break across lines, wherever it was formatted (a filter, a bill line from
# the billing code, a flash message): money (1 234,56 €), dates (1. 12. 2026, 1 Dec 2026) and
# "16:00 h". `_unbreakable` gives their spaces as no-break spaces in every {{ ... }} of every page.
_HOLD_TOGETHER = re.compile(
    r"-?\d{1,3}(?:[ \u00a0]\d{3})*,\d\d[ \u00a0]€"  # Slovak money
    r"|\b\d{1,2}\.[ \u00a0]\d{1,2}\.[ \u00a0]\d{4}\b"  # Slovak date
    r"|\b\d{1,2}[ \u00a0](?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[ \u00a0]\d{4}\b"  # English date
    r"|\b\d{1,2}:\d\d[ \u00a0]h\b"  # 16:00 h
)


def _hold(m: re.Match[str]) -> str:
    return m.group(0).replace(" ", NBSP)


def _unbreakable(value: Any) -> Any:
    """Jinja's finalize: every printed value passes here (Markup stays Markup, so nothing is escaped twice)."""
    if isinstance(value, Markup):
        return Markup(_HOLD_TOGETHER.sub(_hold, str(value)))
    if isinstance(value, str):
        return _HOLD_TOGETHER.sub(_hold, value)
    return value


@pass_context
def _when(ctx: Any, dt: Any) -> str:
    return i18n.when(dt, _venue_tz(ctx))


def _hms(seconds: Any) -> str:
    """1:05:09: hours, minutes, seconds of a running clock (app.js ticks it in the same format)."""
    if seconds is None:
        return ""
    if hasattr(seconds, "total_seconds"):
        seconds = seconds.total_seconds()
    s = max(0, int(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


@pass_context
def _clock(ctx: Any, dt: Any) -> str:
    return i18n.clock(dt, _venue_tz(ctx))


def _local(obj: Any) -> str:
    """The name of a venue thing (room, tariff, extra) in the language being rendered."""
    name: str = obj.name if i18n.current_lang() == "sk" else getattr(obj, "name_en", None) or obj.name
    return name


@pass_context
def _tariff(ctx: Any, tariff_id: str | None) -> str:
    if not tariff_id:
        return ""
    try:
        return _local(ctx["hall"].venue.tariff(tariff_id))
    except (KeyError, ValueError):
        return tariff_id


@pass_context
def _csrf_input(ctx: Any) -> Any:
    return csrf.hidden_input(ctx["request"])


@pass_context
def _csrf_token(ctx: Any) -> str:
    return csrf.token(ctx["request"])


@pass_context
def _moves_ms(ctx: Any, *games: int | None) -> int | None:
    """In how many milliseconds the amount of these games' bills (a card's, a tab's) changes by
    itself; None when none of them runs. app.js fetches what shows it again then (data-moves-ms):
    the server stays the clock, the page shows what the API says."""
    reads = ctx["hall"]
    times = [at for g in games if g is not None and (at := reads.floor.amount_moves_at(g)) is not None]
    if not times:
        return None
    return max(0, int((min(times) - reads.clock()).total_seconds() * 1000))


def make_env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html", "svg", "xml"]),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_unbreakable,
    )
    cast(Any, env).install_gettext_callables(i18n.gettext, i18n.ngettext, newstyle=True)  # added by jinja2.ext.i18n at run time
    env.globals.update(
        csrf_input=_csrf_input, csrf_token=_csrf_token, lang_names=i18n.LANG_NAMES, moves_ms=_moves_ms, new_form_key=new_form_key
    )
    env.filters.update(
        money=i18n.money,
        when=_when,
        clock=_clock,
        day=i18n.day,
        duration=i18n.duration,
        hms=_hms,
        number=i18n.number,
        local=_local,
        tariff=_tariff,
        refusal=i18n.refusal_text,  # a kept refusal (broker.domain.refusals) in the page's language
    )
    return env


env = make_env()


def _open_alerts(request: Request) -> list[Any]:
    from dashboard.web.alerts_view import banner_alerts  # the banner's own query, one per page

    return banner_alerts(request.app.state.hub.reads)


def flash(request: Request, text: str, level: str = "info") -> None:
    """A message for the next page this visitor sees (after a redirect): level info, ok or error."""
    request.session["flash"] = [*request.session.get("flash", []), [level, text]][-5:]


def render(
    request: Request, template: str, context: dict[str, Any] | None = None, *, status: int = 200, headers: dict[str, str] | None = None
) -> HTMLResponse:
    """Render a template in the visitor's language. Full pages extend base.html; fragments need not."""
    lang = i18n.lang_of(request)
    token = i18n.use_lang(lang)
    try:
        user = getattr(request.state, "user", None)
        nav = nav_for(user)
        ctx: dict[str, Any] = {
            "request": request,
            "user": user,
            "lang": lang,
            "langs": i18n.LANGS,
            "nav": nav,
            "nav_current": nav_current(nav, request.url.path),
            "may": lambda capability: user is not None and allows(user.role, capability),  # dashboard.access
            "hall": request.app.state.hub.reads,  # venue, tables and clock for the templates
        }
        context = context or {}
        if not template.startswith("_"):  # a full page, not a fragment fetched by app.js
            # A page fetched again by app.js (its parts that move with time) leaves the messages
            # for the next page the visitor opens.
            fetched = request.headers.get("x-requested-with") == "fetch"
            ctx["flashes"] = request.session.pop("flash", []) if "session" in request.scope and not fetched else []
            if user is not None and "open_alerts" not in context:
                ctx["open_alerts"] = _open_alerts(request)
        ctx.update(context)
        html = env.get_template(template).render(ctx)
    finally:
        i18n.reset_lang(token)
    return HTMLResponse(html, status_code=status, headers=headers)
