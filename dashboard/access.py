"""Who may do what: the one role table for the pages and the JSON API alike.

A route declares the capability it serves (`can("members.read")` in dashboard.api.auth,
`page_can("members.read")` in dashboard.web.auth); this table says which role that needs. A
route whose answer depends on its query asks for a second capability inside (e.g. stopped games
need "games.history"), so the API never shows staff what the pages keep from them.

The rule: staff behind the bar run the evening (floor, games and bills, open alerts, foosball
check-ins, finding a member by name to put on a game); everything about money over time, the
member registry itself (notes, card UIDs, export), the nodes and the accounts is the manager's.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker.accounts.staff import ROLES, role_at_least

STAFF, MANAGER = "staff", "manager"


@dataclass(frozen=True)
class Capability:
    role: str
    what: str  # for the README's table and the test's messages


CAPABILITIES: dict[str, Capability] = {
    "floor.view": Capability(STAFF, "tables and their live state, tariffs, extras, the floor page, live updates"),
    "games.run": Capability(STAFF, "start, stop, pause, resume, move, extend a game, extras, card; a game's bill"),
    "games.open": Capability(STAFF, "the list of open games"),
    "games.stop_all": Capability(MANAGER, "stop every game at once at closing (one confirmation); their tabs stay open to be paid"),
    "games.history": Capability(MANAGER, "stopped games with their totals (revenue), games by day"),
    "tables.service": Capability(STAFF, "take a table out of service (cleaning, repair) and put it back"),
    "tables.light": Capability(STAFF, "switch a table's light by hand (audited; an alert when no game runs)"),
    "games.correct": Capability(MANAGER, "correct a bill by an amount, with a reason (on a running game or an issued bill)"),
    # An extra is an item on the game's tab: staff void it by the tab's rule (before any payment on
    # the tab; after one, tabs.void_paid: the manager's), as any item.
    "games.void": Capability(STAFF, "void an extra added by mistake on a game's tab, with a reason, before the tab has a payment"),
    "bills.today": Capability(STAFF, "today's bills (the business day), to find one again and reprint it"),
    # The till (issue 12): staff run tabs and take money; what changes money already taken, the
    # product list, closed days and the eKasa client are the manager's.
    "tabs.run": Capability(STAFF, "tabs: open a walk-in tab, put items on a tab, void an item before payment, merge and split"),
    "tabs.void_paid": Capability(MANAGER, "void an item on a tab already paid (in part or in full)"),
    "products.edit": Capability(MANAGER, "the product list: add, change prices and VAT, deactivate"),
    # The bar's stock (issue 32 §1): the bar sees the levels and writes off what broke; what costs
    # money (purchase prices, deliveries, stocktakes, returns, recipes, the report) is the manager's.
    "stock.view": Capability(STAFF, "the stock's levels and low stock; write off what broke, expired or staff drank, with a reason"),
    "stock.manage": Capability(
        MANAGER, "stock items and recipes, deliveries with purchase prices, stocktakes, returning a sold item's stock, the stock report"
    ),
    "payments.take": Capability(STAFF, "take a payment (cash with change, card, other methods); print the receipt"),
    "payments.reverse": Capability(MANAGER, "reverse (refund) a payment, with a reason"),
    # Members' money (issue 32 §2): the bar sells credit and packages and takes them as payment;
    # giving money back and undoing a row are the manager's.
    "wallet.run": Capability(STAFF, "a member's credit and packages: see them, top up, sell a package, pay from them, a lesson taken"),
    "wallet.refund": Capability(MANAGER, "give a member's unused credit back, undo a row of credit or a package, with a reason"),
    "day.run": Capability(STAFF, "open the business day with a float; close it (the Z report) with the counted cash"),
    "day.history": Capability(MANAGER, "closed business days, their Z reports and exports"),
    # A blind count: staff type the counted cash before they see what the drawer should hold; the
    # manager sees the expected cash and the takings of the day at any time.
    "day.expected": Capability(MANAGER, "the expected cash and the takings of a business day still open (staff count blind)"),
    # Shifts (issue 32 §3): staff clock themselves in and out and count the drawer at a shift
    # change (blind: the difference shows once counted); everyone's shifts and money are the manager's.
    "shifts.own": Capability(STAFF, "clock oneself in and out; count the drawer at a shift change"),
    "shifts.manage": Capability(
        MANAGER,
        "everyone's shifts: the shift report (takings, voids, the drawer), corrections with a reason, "
        "ending another's shift, the hours per month (CSV)",
    ),
    "ekasa.run": Capability(STAFF, "see eKasa states of receipts; record a hand-written paragón when the eKasa client is down"),
    "ekasa.settings": Capability(MANAGER, "the eKasa client: on or off, its address, a test; registering paragóny"),
    "notify.settings": Capability(MANAGER, "push notifications: targets (their addresses are secrets), a test message, the history"),
    # Bookings and the waiting list (issue 20): staff take phone bookings, seat and mark no-shows;
    # blocks (tournaments, private parties) and what happens to a paid deposit are the manager's.
    "bookings.read": Capability(STAFF, "bookings with the guests' phone numbers, the day view, the waiting list, one's own iCal link"),
    "bookings.run": Capability(
        STAFF, "book, confirm, move, cancel a booking; guests arrived (start the game), no-show; the waiting list and its offers"
    ),
    "bookings.availability": Capability(STAFF, "free tables by kind and time, no personal data (what a public booking page would ask)"),
    "bookings.blocks": Capability(MANAGER, "block tables for a tournament, training, a private party or maintenance"),
    "bookings.deposits": Capability(MANAGER, "keep a booking's paid deposit or give it back"),
    "alerts.open": Capability(STAFF, "open alerts, the banner, acknowledging"),
    "alerts.history": Capability(MANAGER, "closed alerts"),
    "foosball.checkin": Capability(STAFF, "foosball check-ins and checking a member in"),
    "members.search": Capability(STAFF, "find a member by name: id, name, kind, active, fee paid (no notes, no cards)"),
    "members.read": Capability(MANAGER, "the registry: notes, card UIDs, fee payments, one member, the CSV export"),
    "members.edit": Capability(MANAGER, "add, edit, import members; fees; give and take cards; card capture"),
    "nodes.view": Capability(MANAGER, "table nodes: online, versions, telemetry (monitoring)"),
    # vmalert's account (deploy/vmalert/): its token posts the monitoring rules' alerts.
    "monitoring.report": Capability(
        MANAGER, "post the monitoring rules' alerts (vmalert, as to an Alertmanager): they open and close hall alerts"
    ),
    "reports.view": Capability(MANAGER, "revenue, utilisation, drops, foosball reports and their CSVs"),
    "users.admin": Capability(MANAGER, "staff accounts: passwords, roles, disabling, lockouts, tokens, logins"),
    "account.own": Capability(STAFF, "change one's own password"),
    # Tournaments (issue 21): staff run the day; what is set up, overruled or taken away is the manager's.
    "tournaments.view": Capability(STAFF, "tournaments, their entrants, brackets, tables, standings and the season's ranking"),
    "tournaments.run": Capability(
        STAFF,
        "a tournament's day: entrants, check-in (the fee on a tab), the draw, starting before the planned start, calls and recalls, "
        "scores, results, walkovers, "
        "withdrawals, the TV link, the A4 bracket to print (on a Sunday the director is usually staff)",
    ),
    "tournaments.manage": Capability(MANAGER, "create tournaments, force a correction that resets later matches, exports (CSV, JSON)"),
}

# Routes anybody may call: logging in needs a page before the login, and so does choosing the
# language; health is for monitors, the schema for API clients. Each is also checked by the tests.
PUBLIC_ROUTES = frozenset(
    {
        ("GET", "/api/health"),
        ("GET", "/openapi.json"),
        ("GET", "/login"),
        ("POST", "/login"),
        ("POST", "/logout"),
        ("POST", "/lang"),
        # A tournament's TV and the players' phones: a read-only link whose token is the key
        # (revocable, stored hashed: broker.tournaments.setup); a wrong or revoked one is a 404.
        ("GET", "/tv/{token}"),
        ("GET", "/tv/{token}/board"),
        ("GET", "/tv/{token}/events"),
        # A private iCal feed: the unguessable link is the key (revoked on the bookings page).
        ("GET", "/api/calendar/{token}.ics"),
    }
)

assert all(c.role in ROLES for c in CAPABILITIES.values())


def role_for(capability: str) -> str:
    try:
        return CAPABILITIES[capability].role
    except KeyError:
        raise KeyError(f"capability {capability!r} is not in dashboard.access.CAPABILITIES: add it with its role") from None


def allows(role: str, capability: str) -> bool:
    return role_at_least(role, role_for(capability))


def counts_blind(role: str, day_closed: bool) -> bool:
    """A blind count: staff see neither the expected cash nor the takings of a day still open
    (they type what they counted first); the pages and the API ask here alike."""
    return not day_closed and not allows(role, "day.expected")
