"""The Slovak UI end to end, in Chromium against `lavos server` as a real process: every page and
every refusal a person can meet through the forms, read as the visitor sees it (innerText), must
hold no English sentence and no raw table or pocket id.

What counts as English is a list of common English words that are not Slovak words (ENGLISH):
a Slovak page has none of them, while any English sentence has several. Literal machine values
(a card UID, an MQTT topic, a CSV column name) sit in <code> on the pages and are left out.
Raw ids are `pool-01`, `foos-01`, `carom-01`, `darts-01`, `pocket-1`: people see "Pool 1",
"Futbal 1", "Karambol", "Šípky", "v kapse 2"; the ids stay in the API and the log.

The walk collects every finding and fails once at the end with all of them (page, what, where),
so one run lists everything that is left to fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from broker.domain.central_records import RecordRefused, check
from broker.outbox.records import OutboxRefused
from broker.storage.models import OutboxRecord
from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.hall import drop_balls, goal
from tests.dashboard.browser.web import log_in
from tests.dashboard.conftest import MANAGER, PASSWORD, STAFF
from tests.support.hub import on_writer
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from edge.agent import EdgeNode
    from tests.support.web import ServedHub


NODE_TABLES = ("pool-01", "foos-01")  # alerts to read: balls potted with no game; foosball with nobody checked in

# Common English words that are not Slovak words (nor part of a name on these pages). Not in the
# list: words Slovak shares ("to", "no", "a", "pool"), and product or format names.
ENGLISH = [
    "the",
    "of",
    "and",
    "or",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "has",
    "have",
    "not",
    "one",
    "with",
    "without",
    "from",
    "into",
    "onto",
    "for",
    "this",
    "that",
    "these",
    "those",
    "there",
    "here",
    "which",
    "who",
    "what",
    "when",
    "where",
    "why",
    "how",
    "can",
    "cannot",
    "must",
    "should",
    "would",
    "will",
    "shall",
    "may",
    "might",
    "please",
    "already",
    "first",
    "again",
    "only",
    "also",
    "just",
    "yet",
    "still",
    "session",
    "sessions",
    "table",
    "tables",
    "card",
    "cards",
    "member",
    "members",
    "fee",
    "fees",
    "error",
    "errors",
    "line",
    "lines",
    "file",
    "unknown",
    "invalid",
    "running",
    "stopped",
    "paused",
    "open",
    "closed",
    "busy",
    "free",
    "pick",
    "choose",
    "assign",
    "assigned",
    "start",
    "started",
    "stop",
    "stopped",
    "transfer",
    "extend",
    "balls",
    "ball",
    "drops",
    "dropped",
    "light",
    "node",
    "nodes",
    "offline",
    "online",
    "sensor",
    "sensors",
    "pocket",
    "pockets",
    "goal",
    "goals",
    "game",
    "games",
    "bill",
    "bills",
    "rate",
    "rates",
    "tariff",
    "extra",
    "extras",
    "correction",
    "reason",
    "password",
    "username",
    "account",
    "accounts",
    "wrong",
    "input",
    "found",
    "page",
    "back",
    "go",
    "try",
    "again",
    "reload",
    "loading",
    "sent",
    "send",
]
ENGLISH_WORD = re.compile(r"(?<![\w-])(" + "|".join(sorted(set(ENGLISH), key=len, reverse=True)) + r")(?![\w-])", re.IGNORECASE)
RAW_ID = re.compile(r"\b(?:pool|foos|carom|darts)-\d\d\b|\bpocket-\d\b")
# The staff's words (shared/ux/slovak-wording.md, issue 19 item 19): games and bills are numbered
# "č. 7", never "#7"; one word for what is put on a bill ("položka"); "senzor", not "snímač"; the
# pause and resume messages say what was paused.
WORDING = [
    (re.compile(r"#\s?\d"), "a number with #, not č."),
    (re.compile(r"\bdoplnk|\bdoplnok", re.IGNORECASE), "doplnok: one word for items, položka"),
    (re.compile(r"sníma[čc]", re.IGNORECASE), "snímač: the word is senzor"),
    (re.compile(r"^(Pozastavené|Pokračuje sa)\.$"), "pause/resume: Hra pozastavená. / Hra pokračuje."),
]

# The visible text of the page, without literal machine values (<code>), as a person reads it.
VISIBLE_TEXT = """() => {
  const copy = document.body.cloneNode(true);
  copy.querySelectorAll('code, script, style, template').forEach(e => e.remove());
  // innerText of a detached node ignores CSS; hidden parts are removed from the live page's view:
  document.body.appendChild(copy); copy.style.position = 'absolute'; copy.style.left = '-99999px';
  const text = copy.innerText; copy.remove(); return text;
}"""
# Attributes a person meets too: placeholders, titles, the confirm() questions.
VISIBLE_ATTRS = """() => Array.from(document.querySelectorAll('[placeholder], [title], [aria-label], [data-confirm]'))
  .flatMap(e => ['placeholder', 'title', 'aria-label', 'data-confirm'].map(a => e.getAttribute(a)).filter(Boolean))"""


@dataclass
class Findings:
    found: list[str] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)

    def check(self, page: Any, where: str) -> None:
        text = page.evaluate(VISIBLE_TEXT) + "\n" + "\n".join(page.evaluate(VISIBLE_ATTRS))
        for line in (x.strip() for x in text.splitlines()):
            if not line:
                continue
            words = {m.group(1).lower() for m in ENGLISH_WORD.finditer(line)}
            # One English word in a Slovak line may be a name; two or more are a sentence (or a
            # lone English label, when the line is nothing else).
            english = len(words) >= 2 or (words and len(line.split()) <= 3)
            ids = RAW_ID.findall(line)
            wording = [why for rule, why in WORDING if rule.search(line)]
            for what, hit in (("English", english), ("raw id", bool(ids)), *((f"wording ({why})", True) for why in wording)):
                if hit and (what, line) not in self.seen:
                    self.seen.add((what, line))
                    self.found.append(
                        f"{where}: {what}: {line[:160]!r}" + (f" (words: {', '.join(sorted(words))})" if what == "English" else "")
                    )


def _goto(page: Any, base: str, path: str) -> None:
    page.goto(base + path)
    page.wait_for_load_state("domcontentloaded")


def _post_form(page: Any, path: str, fields: dict[str, str]) -> None:
    """Submit a form to `path` as the page's own forms do (its CSRF token, a real navigation):
    the way a second tablet's stale form or a double tap reaches the server."""
    with page.expect_navigation():
        page.evaluate(
            """([path, fields]) => {
              const f = document.createElement('form'); f.method = 'post'; f.action = path;
              const token = document.querySelector('meta[name=csrf-token]').content;
              for (const [k, v] of Object.entries({...fields, csrf_token: token})) {
                const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i);
              }
              document.body.appendChild(f); f.submit();
            }""",
            [path, fields],
        )


def _submit(page: Any, form: str, **fields: str) -> None:
    """Fill `fields` of the page's form `form` (a selector) and send it, as staff do."""
    for name, value in fields.items():
        page.fill(f"{form} input[name={name}]", value)
    with page.expect_navigation():
        page.locator(f"{form} button[type=submit]").tap()


def _flash(page: Any) -> str:
    return " ".join(page.locator(".flash-error, .flash-ok, .error-box, .form-error, [role=alert]").all_inner_texts())


@pytest.fixture(scope="module")
def hall(lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]]) -> Any:
    """An evening in progress: members, a bill, a running game, open alerts with table names."""
    api = lavos.api
    zadrazil = api("POST", "/api/members", MANAGER, status=201, json={"name": "Zadražil Miro"})["id"]
    baca = api("POST", "/api/members", MANAGER, status=201, json={"name": "Bača Lubo"})["id"]
    api("POST", f"/api/members/{zadrazil}/cards", MANAGER, status=201, json={"uid": "04a3f1c2"})
    api("POST", f"/api/members/{zadrazil}/fees", MANAGER, status=201, json={"year": 2026})
    billed = api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-02"})["id"]
    api("POST", f"/api/sessions/{billed}/extras", STAFF, json={"extra": "topping", "quantity": 2})
    # The till: the game's tab with a drink and a voided one, and a walk-in's drinks merged onto it.
    tab = api("GET", f"/api/sessions/{billed}/tab", STAFF)["id"]
    products = {p["name"]: p["id"] for p in api("GET", "/api/products", STAFF)}
    api("POST", f"/api/tabs/{tab}/items", STAFF, status=201, json={"product_id": products["Pivo 0,5 l"], "quantity": 2})
    voided = api("POST", f"/api/tabs/{tab}/items", STAFF, status=201, json={"product_id": products["Kofola 0,5 l"]})["item_id"]
    api("POST", f"/api/tabs/{tab}/items/{voided}/void", STAFF, json={"reason": "zadané omylom"})
    walk_in = api("POST", "/api/tabs", STAFF, status=201, json={"label": "Peter pri bare"})["id"]
    api("POST", f"/api/tabs/{walk_in}/items", STAFF, status=201, json={"product_id": products["Borovička 4 cl"]})
    api("POST", f"/api/tabs/{tab}/merge", STAFF, json={"tab_id": walk_in})
    api("POST", f"/api/sessions/{billed}/stop", STAFF)
    # A paid game (its receipt) on the carom table, which is free again for the walk.
    paid = api("POST", "/api/sessions", STAFF, status=201, json={"table": "carom-01"})["id"]
    api("POST", f"/api/sessions/{paid}/stop", STAFF)
    paid_tab = api("GET", f"/api/sessions/{paid}/tab", STAFF)
    owed = api("GET", f"/api/tabs/{paid_tab['id']}/payments", STAFF)["owed_cents"]
    payment = api("POST", f"/api/tabs/{paid_tab['id']}/payments", STAFF, status=201, json={"method": "card", "amount_cents": owed})["id"]
    day = api("GET", "/api/days/current", MANAGER)["day"]
    running = api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-03"})["id"]
    prepaid = api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-05", "prepaid_minutes": 60})["id"]
    drop_balls(nodes, "pool-01", 0, 2)  # potted with no game: an alert naming Pool 1
    goal(nodes, "foos-01")  # foosball with nobody checked in: an alert naming Futbal 1

    def alerts() -> set[str]:
        return {a["kind"] for a in api("GET", "/api/alerts", MANAGER)}

    wait_until(lambda: {"play_without_session", "foosball_no_member"} <= alerts(), timeout=30, what="the two alerts")
    # A tournament drawn (issue 21): its pages and the TV. No table of its own: every table has its
    # part in this walk already (a tournament's call on a floor card: tests/tournaments/test_tournament_pages.py).
    cup = api(
        "POST",
        "/api/tournaments",
        MANAGER,
        status=201,
        json={
            "name": "Lavosliga II",
            "starts_at": "2026-12-06T14:00:00+01:00",
            "league_group": "II",
            "discipline": "10-ball",
            "format": "double",
            "tables": [],
        },
    )["id"]
    for player in ("Bača Lubo", "Novák", "Kováč", "Horváth", "Varga"):
        api("POST", f"/api/tournaments/{cup}/entrants", STAFF, status=201, json={"name": player, "check_in": True})
    api("POST", f"/api/tournaments/{cup}/draw", STAFF)
    tv = api("POST", f"/api/tournaments/{cup}/tv-link", STAFF, status=201)["path"]
    set_aside(lavos.hub)
    shift = api("POST", "/api/shifts/clock-in", STAFF, status=201)["id"]  # issue 32: the bartender on shift
    return {
        "shift": shift,
        "cup": cup,
        "tv": tv,
        "zadrazil": zadrazil,
        "baca": baca,
        "billed": billed,
        "running": running,
        "prepaid": prepaid,
        "tab": tab,
        "walk_in": walk_in,
        "payment": payment,
        "day": day,
    }


def set_aside(hub: Any) -> None:
    """A record for the centre that it refused, set aside with the contract's own reason (issue 29:
    the Modules page showed the centre's English): on /monitoring."""
    with pytest.raises(RecordRefused) as why:
        check("payment", {"id": 777, "business_day": "2026-12-01", "amount_cents": 100})

    def write(db: Any) -> None:
        db.add(OutboxRecord(seq=7, hall="lavos", kind="payment", ref="payment:777", at=hub.clock(), record={"id": 777}, size=11))

    on_writer(hub, write)
    assert hub.execute(OutboxRefused(refused=((7, why.value),), actor="system")) == 1


PAGES = [
    "/",
    "/tables/pool-01",  # a free pool table
    "/tables/pool-03",  # a playing one
    "/tables/carom-01",
    "/tables/foos-01",
    "/tables/darts-01",
    "/tournaments",
    "/tournaments/season",
    "/foosball",
    "/alerts",
    "/reports",
    "/monitoring",
    "/members",
    "/members/import",
    "/products",
    "/bills",
    "/closing",  # the manager's stop-all confirmation
    "/day",
    "/days",
    "/ekasa",
    "/notifications",
    "/bookings",
    "/bookings/new?table=pool-04",
    "/waiting",
    "/users",
    f"/users/{STAFF}",
    "/account/password",
    "/no-such-page",  # the 404 page
    "/members/999999",  # a 404 from a route
    "/monitoring?table=nope",  # a 400 from a route
    "/stock",  # the bar's stock (issue 32)
    "/stock/write-offs",
    "/stock/deliveries",
    "/stock/count",
    "/stock/recipes",
    "/stock/report",
]

# GET routes that are not pages of their own, and where what they show is read instead.
NOT_PAGES = {
    "/alerts/banner": "the alert strip: part of every page walked",
    "/floor/rooms": "the floor's rooms: part of /",
    "/tables/{table_id}/card": "a floor card: part of /",
    "/foosball/tables": "part of /foosball",
    "/monitoring/nodes-fragment": "part of /monitoring",
    "/day/figures": "the day's running figures: part of /day",
    "/events": "the live update stream",
    "/tournaments/{tournament_id}/board": "the live part of /tournaments/{id}",
    "/tv/{token}/board": "the live part of /tv/{token}",
    "/tv/{token}/events": "the TV's live update stream",
    "/waiting/panel": "the waiting list: part of / and /waiting",
    "/waiting/link": "the top bar's link to the waiting list: part of every page",
    "/sessions/{game_id}/tab": "a redirect to the game's tab (walked)",
    "/login": "walked signed out, below",
    "/members/export.csv": "a download",
    "/reports/{name}.csv": "a download",
    "/reports/lavos.xlsx": "a download",
    "/days/{day}.csv": "a download",
    "/days/{day}.xlsx": "a download",
    "/shifts/hours.csv": "a download (its Slovak header: tests/dashboard/test_pages_shifts.py)",
    "/stock/report/{export}.csv": "a download (its Slovak header: tests/dashboard/test_pages_stock.py)",
    "/stock/report.xlsx": "a download",
    "/tournaments/{tournament_id}/export.csv": "a download (its Slovak header: tests/tournaments/test_tournament_pages.py)",
}


def _paths(hall: dict[str, Any]) -> list[str]:
    """What the walk reads: the static pages, and each page of one thing at one of the evening's."""
    return [
        *PAGES,
        f"/members/{hall['zadrazil']}",
        f"/members/{hall['zadrazil']}/capture?table=foos-01&wait=1",  # nobody taps: "no card within 1 s"
        "/wallet?q=zadrazil",
        f"/wallet/{hall['zadrazil']}",
        f"/sessions/{hall['billed']}/bill",
        f"/tabs/{hall['tab']}",
        f"/tabs/{hall['walk_in']}",
        f"/tabs/{hall['tab']}/pay",
        f"/receipts/{hall['payment']}",
        f"/day/{hall['day']}/report",
        f"/reports?day={hall['day']}",
        f"/tournaments/{hall['cup']}",
        f"/tournaments/{hall['cup']}/matches/W1-2",  # W1-1 is the first seed's bye
        f"/tournaments/{hall['cup']}/print",
        hall["tv"],
        "/shift",
        "/shifts",
        f"/shifts/{hall['shift']}",
    ]


def _walk(page: Any, base: str, hall: dict[str, Any], findings: Findings, size: str) -> None:
    for path in _paths(hall):
        _goto(page, base, path)
        findings.check(page, f"{size} {path}")


def test_the_walk_reads_every_page() -> None:
    """A page added later is walked too, or is said here not to be a page of its own."""
    from dashboard.web.app import web_routes

    def pattern(template: str) -> re.Pattern[str]:
        return re.compile(re.sub(r"\\\{[^}]+\\\}", "[^/?]+", re.escape(template)) + r"(\?.*)?$")

    walked = _paths({**dict.fromkeys(("zadrazil", "billed", "tab", "walk_in", "payment", "day", "cup", "shift"), 1), "tv": "/tv/token"})
    gets = sorted({path for method, path, _ in web_routes() if method == "GET"})
    missing = [t for t in gets if t not in NOT_PAGES and not any(pattern(t).match(p) for p in walked)]
    assert not missing, f"pages the Slovak walk does not read: {missing} (walk them, or say in NOT_PAGES why not)"
    stale = [t for t in NOT_PAGES if t not in gets]
    assert not stale, f"NOT_PAGES names routes that are gone: {stale}"


def _refusals(page: Any, base: str, hall: dict[str, Any], findings: Findings) -> None:
    """Every refusal converted to a message id, met through the pages' forms."""

    def seen(where: str, expect: str) -> None:
        findings.check(page, f"refusal {where}")
        assert expect in _flash(page), f"{where}: expected {expect!r} on the page, got {_flash(page)!r}"

    # The floor: a table page's start form.
    _goto(page, base, "/tables/pool-04")
    _submit(page, "#start-form", card_uid="deadbeef")
    seen("unknown card", "Neznáma karta deadbeef")
    _goto(page, base, "/tables/pool-06")  # a second tablet started a game there meanwhile
    lavos_api(page, base, "pool-06")
    _submit(page, "#start-form")
    seen("table busy", "Na stole Pool 6 už beží hra č.")
    _goto(page, base, "/tables/pool-07")
    _submit(page, "#start-form", card_uid="04a3f1c2")  # Zadražil's card is free: a game starts
    _goto(page, base, "/tables/pool-08")
    _submit(page, "#start-form", card_uid="04a3f1c2")
    seen("card on another table", "Pool 7")

    # Session actions: a stale form for a game that has ended, extending an open game, moving onto a busy table.
    _goto(page, base, "/tables/pool-03")
    _post_form(page, f"/sessions/{hall['billed']}/pause", {"next": "/tables/pool-03"})
    seen("game not running", f"Hra č. {hall['billed']} už nebeží.")
    _post_form(page, f"/sessions/{hall['running']}/extend", {"next": "/tables/pool-03", "minutes": "30"})
    seen("nothing to extend", "Hra nemá predplatený čas, nie je čo predĺžiť.")
    _post_form(page, f"/sessions/{hall['running']}/transfer", {"next": "/tables/pool-03", "table": "pool-05"})
    seen("transfer to a busy table", "Na stole Pool 5 sa hrá")
    _post_form(page, f"/sessions/{hall['running']}/transfer", {"next": "/tables/pool-03", "table": "pool-03"})
    seen("transfer onto itself", "Hra už je na stole Pool 3.")
    _post_form(page, f"/sessions/{hall['running']}/resume", {"next": "/tables/pool-03"})
    seen("resume a running game", "Hra nie je pozastavená")
    _post_form(page, f"/sessions/{hall['running']}/pause", {"next": "/tables/pool-03"})
    seen("paused", "Hra pozastavená.")
    _post_form(page, f"/sessions/{hall['running']}/resume", {"next": "/tables/pool-03"})
    seen("resumed", "Hra pokračuje.")
    _post_form(page, f"/sessions/{hall['running']}/transfer", {"next": "/tables/pool-03", "table": "darts-01"})
    seen("transfer to darts", "Šípky")
    _post_form(page, f"/sessions/{hall['prepaid']}/extend", {"next": "/tables/pool-05", "minutes": "99999"})  # past the form's max
    seen("a field out of range", "najviac 720")
    _goto(page, base, "/tables/pool-03")  # and a move that works: the message names the table
    page.select_option("form[action$='/transfer'] select[name=table]", "pool-09")
    with page.expect_navigation():
        page.locator("form[action$='/transfer'] button").tap()
    seen("moved", "Hra presunutá na stôl Pool 9.")

    # Members: each refusal at its form, what was typed kept.
    _goto(page, base, f"/members/{hall['baca']}")
    _submit(page, "#assign-card", uid="04a3f1c2")
    seen("card of another member", "Karta 04a3f1c2 patrí členovi Zadražil Miro; najprv mu ju odoberte.")
    assert page.locator("#assign-card input[name=uid]").input_value() == "04a3f1c2"  # kept
    _submit(page, "#assign-card", uid="xyz!")
    seen("not a card number", "nie je číslo karty")
    _goto(page, base, f"/members/{hall['zadrazil']}")
    _submit(page, "#record-fee", year="2026")
    seen("fee recorded twice", "Príspevok za rok 2026 je pre člena Zadražil Miro už zapísaný.")
    _submit(page, "#record-fee", amount="desať")
    seen("not an amount", "nie je suma")
    _goto(page, base, "/members")
    _submit(page, "#add-member", name="Bača Lubo")
    seen("member twice", "Člen s menom Bača Lubo už existuje")
    assert page.locator("#add-member input[name=name]").input_value() == "Bača Lubo"

    # A CSV file with errors on several lines.
    _goto(page, base, "/members/import")
    bad = "name,kind,cards,fees_paid,active,note\nA,vip,,,,\nB,,zz,20x6,maybe,\nA,,,,,\n"
    page.set_input_files("input[type=file]", files=[{"name": "bad.csv", "mimeType": "text/csv", "buffer": bad.encode()}])
    with page.expect_navigation():
        page.locator("form.panel button[type=submit]").tap()
    seen("bad CSV", "V súbore bad.csv sú 2 chyby.")

    # The till's tab page: each refusal in place, in Slovak.
    _goto(page, base, f"/tabs/{hall['tab']}")
    _post_form(page, f"/tabs/{hall['tab']}/merge", {"other": str(hall["tab"])})
    seen("merge into itself", "Účet sa nedá zlúčiť sám so sebou.")
    _post_form(page, f"/tabs/{hall['tab']}/split", {"mode": "amounts", "amounts": "1,00 2,00"})
    seen("split that does not sum", "Časti dávajú spolu 3,00")
    _post_form(page, f"/tabs/{hall['walk_in']}/items", {"product_id": "1", "quantity": "1"})
    seen("an item on a merged tab", "je zlúčený do účtu Pool 2, hra č.")
    _post_form(page, f"/tabs/{hall['tab']}/items", {"product_id": "1", "quantity": "0"})
    seen("quantity 0", "Množstvo je celé číslo od 1 do 99.")

    # Accounts.
    _goto(page, base, "/users")
    form = page.locator("#add-user")
    form.locator("input[name=username]").fill(STAFF)
    form.locator("input[name=password]").fill(PASSWORD)
    form.locator("input[name=repeat]").fill(PASSWORD)
    with page.expect_navigation():
        form.locator("button[type=submit]").tap()
    seen("account twice", STAFF)
    _goto(page, base, f"/users/{MANAGER}")
    _post_form(page, f"/users/{MANAGER}/role", {"role": "staff"})
    seen("the last manager", MANAGER)


def lavos_api(page: Any, base: str, table: str) -> None:
    """A game started on `table` by someone else (the API, as another tablet's page would)."""
    r = page.request.post(
        base + "/api/sessions",
        data={"table": table},
        headers={"X-CSRF-Token": page.locator("meta[name=csrf-token]").get_attribute("content")},
    )
    assert r.status == 201, r.text()


def test_no_english_and_no_raw_ids_on_the_slovak_pages(lavos: ServedHub, hall: Any, open_page: Callable[..., Any]) -> None:
    findings = Findings()
    tablet = open_page(TABLET)
    log_in(tablet, lavos, MANAGER, "/")
    _walk(tablet, lavos.base_url, hall, findings, "tablet")
    _refusals(tablet, lavos.base_url, hall, findings)
    phone = open_page(PHONE, mobile=True)
    log_in(phone, lavos, STAFF, "/")
    for path in (
        "/",
        "/tables/pool-03",
        "/alerts",
        "/foosball",
        f"/sessions/{hall['billed']}/bill",
        f"/tabs/{hall['tab']}",
        f"/tabs/{hall['tab']}/pay",
        f"/receipts/{hall['payment']}",
        "/bills",
        "/day",
        "/members",
    ):  # staff: /members is a 403
        _goto(phone, lavos.base_url, path)
        findings.check(phone, f"phone {path}")
    anonymous = open_page(TABLET)
    _goto(anonymous, lavos.base_url, "/login")
    findings.check(anonymous, "/login")
    anonymous.fill("input[name=username]", "nikto")
    anonymous.fill("input[name=password]", "zlé heslo")
    with anonymous.expect_navigation():
        anonymous.locator(".login-box button[type=submit]").tap()
    findings.check(anonymous, "/login refused")
    assert not findings.found, f"{len(findings.found)} English or raw-id texts on the Slovak UI:\n" + "\n".join(findings.found)


def test_the_english_ui_says_the_same_in_english(lavos: ServedHub, hall: Any, open_page: Callable[..., Any]) -> None:
    """The same refusals and alerts on the English UI: English sentences, table names, no ids."""
    page = open_page(TABLET)
    log_in(page, lavos, MANAGER, "/alerts")
    page.context.add_cookies([{"name": "lavos_lang", "value": "en", "url": lavos.base_url}])
    page.reload()
    alerts = page.locator("main").inner_text()
    assert "Pool 1: balls are being potted but no game is running" in alerts and "Foosball 1: foosball is being played" in alerts, alerts
    _goto(page, lavos.base_url, "/tables/pool-10")
    lavos_api(page, lavos.base_url, "pool-10")
    _submit(page, "#start-form")
    assert "Pool 10 already has game no." in _flash(page), _flash(page)
    _goto(page, lavos.base_url, f"/members/{hall['baca']}")
    _submit(page, "#assign-card", uid="04a3f1c2")
    assert "Card 04a3f1c2 belongs to Zadražil Miro; take it away from them first." in _flash(page), _flash(page)
    assert not RAW_ID.search(page.evaluate(VISIBLE_TEXT))
    _goto(page, lavos.base_url, "/monitoring")  # table names translated where they are words
    sensors = page.locator("#sensors").inner_text()
    modules = page.locator("#nodes").inner_text()
    assert "Carom" in modules and "Darts" in modules and "Foosball 1" in sensors and "Karambol" not in modules, modules
    assert "Balls potted per pocket today" in sensors and not RAW_ID.search(page.evaluate(VISIBLE_TEXT))


def test_the_detector_sees_english_and_ids(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    """The check itself: an English sentence and a raw id are found, Slovak text is not."""
    page = open_page(TABLET)
    _goto(page, lavos.base_url, "/login")
    page.evaluate(
        """() => { const p = document.createElement('p');
          p.textContent = 'pool-04 already has a running session (25); stop or transfer it first';
          document.body.appendChild(p);
          const q = document.createElement('p'); q.textContent = 'Na stole Pool 4 už beží hra č. 25; najprv ju ukončite alebo presuňte.';
          document.body.appendChild(q);
          const c = document.createElement('code'); c.textContent = 'lavos/v1/table/pool-01/event'; document.body.appendChild(c); }"""
    )
    findings = Findings()
    findings.check(page, "probe")
    assert len(findings.found) == 2 and all("pool-04 already" in f for f in findings.found), findings.found
    for wrong in ("Hra #8", "Stornovať doplnok", "porucha snímača", "Pozastavené."):  # the staff's words, checked too
        page.evaluate("t => { const p = document.createElement('p'); p.textContent = t; document.body.appendChild(p); }", wrong)
    findings = Findings()
    findings.check(page, "probe")
    missed = [
        w
        for w in ("Hra #8", "Stornovať doplnok", "porucha snímača", "Pozastavené.")
        if not any("wording" in f and repr(w) in f for f in findings.found)
    ]
    assert not missed, findings.found
