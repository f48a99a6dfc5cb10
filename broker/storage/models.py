"""The tables of the central store, as SQLAlchemy 2 typed declarative models.

Money is integer cents, times are aware UTC (see UTCDateTime). Changing a model means writing an
Alembic revision in broker/storage/migrations/versions: the server only ever upgrades to head.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column, relationship

from broker.domain.euros import VAT_RATES
from broker.domain.people.membership import MEMBER_KINDS
from broker.domain.stock.rules import MOVEMENT_KINDS as STOCK_MOVEMENT_KINDS
from broker.domain.stock.rules import UNITS as STOCK_UNITS
from broker.storage.types import JSONDoc, UTCDateTime, utcnow

# Explicit constraint names: Alembic needs them to alter or drop a constraint later, and SQLite
# batch migrations rebuild tables by name.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ROLES = ("staff", "manager")
SESSION_STATES = ("running", "paused", "stopped")
CHECKIN_BY = ("card", "staff")


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime(), dict[str, Any]: JSONDoc}


# --- members -------------------------------------------------------------------------------


class Member(Base):
    __tablename__ = "members"
    __table_args__ = (CheckConstraint(_one_of("kind", MEMBER_KINDS), name="kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    # Casefolded, accents stripped: lets "zadrazil" find "Zadražil Miro" on any backend.
    name_key: Mapped[str] = mapped_column(String(200), index=True)
    kind: Mapped[str] = mapped_column(String(16), default="individual")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    cards: Mapped[list[MemberCard]] = relationship(back_populates="member", cascade="all, delete-orphan", order_by="MemberCard.uid")
    fees: Mapped[list[FeePayment]] = relationship(back_populates="member", cascade="all, delete-orphan", order_by="FeePayment.year")

    def __repr__(self) -> str:
        return f"Member({self.id}, {self.name!r}, {self.kind})"


class MemberCard(Base):
    __tablename__ = "member_cards"

    uid: Mapped[str] = mapped_column(String(32), primary_key=True)  # lowercase hex
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    member: Mapped[Member] = relationship(back_populates="cards")


class FeePayment(Base):
    __tablename__ = "fee_payments"
    __table_args__ = (UniqueConstraint("member_id", "year"), CheckConstraint("amount_cents >= 0", name="amount"))

    id: Mapped[int] = mapped_column(primary_key=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="CASCADE"))
    year: Mapped[int] = mapped_column(Integer)
    amount_cents: Mapped[int] = mapped_column(Integer)
    paid_at: Mapped[datetime] = mapped_column(default=utcnow)
    recorded_by: Mapped[str] = mapped_column(String(64))

    member: Mapped[Member] = relationship(back_populates="fees")


# --- staff accounts --------------------------------------------------------------------------


class User(Base):
    __tablename__ = "users"
    __table_args__ = (CheckConstraint(_one_of("role", ROLES), name="role"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Set when a manager hands out a password: the dashboard lets the user do nothing but change it.
    must_change_password: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    # sha256 of the token: a stolen database backup must not be a set of working credentials.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    username: Mapped[str] = mapped_column(ForeignKey("users.username", ondelete="CASCADE", onupdate="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)


# --- games and the audit trail -------------------------------------------------------------


class Game(Base):
    """A billed use of a table. Its history (and so its bill) is its session_ops, in seq order."""

    __tablename__ = "sessions"
    __table_args__ = (
        CheckConstraint(_one_of("state", SESSION_STATES), name="state"),
        Index("ix_sessions_table_id_state", "table_id", "state"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(16), default="running")
    started_at: Mapped[datetime]
    stopped_at: Mapped[datetime | None] = mapped_column(index=True)
    total_cents: Mapped[int | None]  # set when the game is stopped
    member_id: Mapped[int | None] = mapped_column(ForeignKey("members.id", ondelete="SET NULL"), index=True)
    # The warnings the players were given by a blink of the light, kept so that a hub that takes
    # over (a failover, a restart) does not blink the same warning again: the closing time warned
    # of, and the prepaid end warned of (an extension moves the end, so it is warned of anew).
    closing_warned_for: Mapped[datetime | None]
    prepaid_warned_for: Mapped[datetime | None]

    ops: Mapped[list[GameOp]] = relationship(back_populates="game", order_by="GameOp.seq")


class GameOp(Base):
    """Append-only: never updated, never deleted. It is both the event source and the audit log."""

    __tablename__ = "session_ops"
    __table_args__ = (UniqueConstraint("session_id", "seq"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("sessions.id", ondelete="RESTRICT"))
    seq: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime]
    kind: Mapped[str] = mapped_column(String(32))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    actor: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str | None] = mapped_column(Text)

    game: Mapped[Game] = relationship(back_populates="ops")


class AuditEntry(Base):
    """Who changed what, when and why, for everything that is not a game."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    actor: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(200))
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    reason: Mapped[str | None] = mapped_column(Text)


# --- ingest ----------------------------------------------------------------------------------


class Event(Base):
    """A raw event from a table node, kept for analytics until retention prunes it."""

    __tablename__ = "events"
    # (table, boot, seq) identifies an event on the wire: the unique key is what makes ingest
    # exactly-once (insert-or-ignore), across restarts and redeliveries.
    __table_args__ = (UniqueConstraint("table_id", "boot", "seq"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    table_id: Mapped[str] = mapped_column(String(32))
    boot: Mapped[str] = mapped_column(String(64))
    seq: Mapped[int] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(String(32))
    node_ts: Mapped[datetime]
    ts_synced: Mapped[bool] = mapped_column(Boolean)
    received_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)


class EventReject(Base):
    """How many messages were dropped, per topic and reason: counted, never stored in full."""

    __tablename__ = "event_rejects"

    topic: Mapped[str] = mapped_column(String(200), primary_key=True)
    reason: Mapped[str] = mapped_column(String(200), primary_key=True)
    count: Mapped[int] = mapped_column(BigInteger, default=0)
    last_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_error: Mapped[str] = mapped_column(Text, default="")


class Node(Base):
    """The last known state of a table's node (from status, light/state and telemetry)."""

    __tablename__ = "nodes"

    table_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    online: Mapped[bool] = mapped_column(Boolean, default=False)
    boot: Mapped[str | None] = mapped_column(String(64))
    version: Mapped[str | None] = mapped_column(String(64))
    last_seen_at: Mapped[datetime | None]
    online_since: Mapped[datetime | None]
    light_on: Mapped[bool | None] = mapped_column(Boolean)
    light_blink: Mapped[bool | None] = mapped_column(Boolean)
    light_cause: Mapped[str | None] = mapped_column(String(16))
    telemetry: Mapped[dict[str, Any]] = mapped_column(default=dict)
    telemetry_at: Mapped[datetime | None]
    reconnects: Mapped[int] = mapped_column(Integer, default=0)


# --- alerts and foosball ---------------------------------------------------------------------


class Alert(Base):
    __tablename__ = "alerts"
    __table_args__ = (
        # At most one open alert per cause: a flapping cause bumps count instead of flooding staff.
        # A partial unique index is the one form of this both SQLite and PostgreSQL enforce.
        Index(
            "uq_alerts_open_cause_key",
            "cause_key",
            unique=True,
            sqlite_where=text("closed_at IS NULL"),
            postgresql_where=text("closed_at IS NULL"),
        ),
        Index("ix_alerts_opened_at", "opened_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    table_id: Mapped[str | None] = mapped_column(String(32))
    cause_key: Mapped[str] = mapped_column(String(200))
    message: Mapped[str] = mapped_column(Text)  # Slovak, for staff
    message_en: Mapped[str] = mapped_column(Text)
    severity: Mapped[str] = mapped_column(String(16), default="warning")
    opened_at: Mapped[datetime]
    last_seen_at: Mapped[datetime]
    count: Mapped[int] = mapped_column(Integer, default=1)
    acked_at: Mapped[datetime | None]
    acked_by: Mapped[str | None] = mapped_column(String(64))
    closed_at: Mapped[datetime | None]


class FoosballCheckin(Base):
    __tablename__ = "foosball_checkins"
    __table_args__ = (
        CheckConstraint(_one_of("by", CHECKIN_BY), name="by"),
        Index("ix_foosball_checkins_table_id_ended_at", "table_id", "ended_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[str] = mapped_column(String(32))
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="RESTRICT"), index=True)
    checked_in_at: Mapped[datetime]
    last_goal_at: Mapped[datetime | None]
    goals: Mapped[int] = mapped_column(Integer, default=0)
    ended_at: Mapped[datetime | None]
    by: Mapped[str] = mapped_column(String(8))


# --- dashboard logins ----------------------------------------------------------------------


class LoginColumns:
    """A login kept on the server (broker/accounts/logins.py), for a hall's dashboard (`Login`) and
    the centre's pages (`CentralLogin`): the signed cookie carries only the random id; its SHA-256
    is stored, so a copied database is not a set of live logins. Ended rows stay, for the account page."""

    USERS: ClassVar[str]  # the table of the accounts the logins belong to

    id: Mapped[int] = mapped_column(primary_key=True)
    id_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]  # absolute: login + one shift, never moved
    client: Mapped[str] = mapped_column(String(64), default="")
    user_agent: Mapped[str] = mapped_column(String(200), default="")
    ended_at: Mapped[datetime | None]
    ended_by: Mapped[str | None] = mapped_column(String(64))
    end_reason: Mapped[str | None] = mapped_column(String(32))

    @declared_attr
    def username(cls) -> Mapped[str]:
        return mapped_column(ForeignKey(f"{cls.USERS}.username", ondelete="CASCADE", onupdate="CASCADE"))


class Login(LoginColumns, Base):
    """One dashboard login of a hall's staff user."""

    __tablename__ = "web_sessions"
    __table_args__ = (Index("ix_web_sessions_username_ended_at", "username", "ended_at"),)
    USERS = "users"


# --- what the nodes sent that the hub refused (broker.domain.floor.reject_tally) ---------------------------


class NodeRejectCount(Base):
    """Messages refused per table (or broker.domain.floor.reject_tally.UNKNOWN) and reason; bounded by the venue file."""

    __tablename__ = "node_reject_counts"

    table_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    reason: Mapped[str] = mapped_column(String(32), primary_key=True)
    count: Mapped[int] = mapped_column(BigInteger, default=0)
    first_at: Mapped[datetime]
    last_at: Mapped[datetime]


class NodeRejectSample(Base):
    """The last few refused messages per table, truncated: what a manager reads to see why."""

    __tablename__ = "node_reject_samples"
    __table_args__ = (Index("ix_node_reject_samples_table_id_id", "table_id", "id"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    table_id: Mapped[str] = mapped_column(String(32))
    at: Mapped[datetime]
    topic: Mapped[str] = mapped_column(String(250))
    reason: Mapped[str] = mapped_column(String(32))
    error: Mapped[str] = mapped_column(Text)
    excerpt: Mapped[str] = mapped_column(Text)


# --- tables taken out of service (cleaning, repair) ---------------------------------------------


class TableOutOfService(Base):
    """A table staff took out of service: no game starts on it and its light stays off.

    A row while it is out, deleted when it is back (the audit log keeps the history); the hub
    loads these at start, so the state survives a restart.
    """

    __tablename__ = "tables_out_of_service"

    table_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    since: Mapped[datetime]
    by: Mapped[str] = mapped_column(String(64))


# --- money: products, tabs, payments, business days (issue 12; rules in broker.till) ---------
# Nothing about money is ever deleted: an item is voided (who, when, why), a payment is reversed by
# a payment of the opposite sign that names it. Amounts are integer cents, VAT-inclusive.

FISCAL_STATES = ("none", "pending", "registered", "offline", "failed", "paragon")


class Product(Base):
    """What the hall sells (drinks, food, a game's extras), kept by the manager; a tab item copies
    name, price, VAT and category when added. `code` is the id of the venue file's [[extras]] entry
    the product stands for ("topping"): the file seeds the product, the API names it by that id."""

    __tablename__ = "products"
    __table_args__ = (
        CheckConstraint("price_cents >= 0", name="price_not_negative"),
        CheckConstraint(f"vat_percent IN ({', '.join(str(v) for v in VAT_RATES)})", name="vat_rate"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    name_en: Mapped[str | None] = mapped_column(String(120))
    price_cents: Mapped[int] = mapped_column(Integer)
    vat_percent: Mapped[int] = mapped_column(Integer)
    category: Mapped[str] = mapped_column(String(32), default="other")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    code: Mapped[str | None] = mapped_column(String(32), unique=True)


class Tab(Base):
    """A bill being run up: a table's (one per game, `session_id`) or a walk-in's at the bar (no table).

    Merged into another tab (`merged_into`), its lines count on that one. `split` is the plan staff
    chose for paying in parts (broker.domain.till.money); the money itself is only in `payments`.
    `holds`: a tab opened for one thing holds items of that category only and merges with no other
    (a player's tournament entry fee: its payments are the prize pot; a booking's deposit).
    """

    __tablename__ = "tabs"

    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[str | None] = mapped_column(String(32), index=True)
    session_id: Mapped[int | None] = mapped_column(ForeignKey("sessions.id", ondelete="RESTRICT"), unique=True)
    label: Mapped[str] = mapped_column(String(120), default="")
    opened_at: Mapped[datetime] = mapped_column(default=utcnow)
    opened_by: Mapped[str] = mapped_column(String(64))
    business_day: Mapped[date] = mapped_column(Date, index=True)
    merged_into: Mapped[int | None] = mapped_column(ForeignKey("tabs.id", ondelete="RESTRICT"), index=True)
    split: Mapped[dict[str, Any] | None] = mapped_column(JSONDoc, nullable=True)
    settled_at: Mapped[datetime | None] = mapped_column(index=True)  # set when paid in full (a cache of payments)
    form_key: Mapped[str | None] = mapped_column(String(64), unique=True)  # the opening form's one-time key (a double tap)
    holds: Mapped[str | None] = mapped_column(String(32))  # the one category it holds ("tournament_entry", "deposit"); None: any


class TabItem(Base):
    """One line on a tab: a product (copied at the time), a quantity; voided, never deleted."""

    __tablename__ = "tab_items"
    __table_args__ = (
        CheckConstraint("quantity > 0", name="quantity_positive"),
        CheckConstraint("unit_cents >= 0", name="unit_not_negative"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    tab_id: Mapped[int] = mapped_column(ForeignKey("tabs.id", ondelete="RESTRICT"), index=True)
    product_id: Mapped[int | None] = mapped_column(ForeignKey("products.id", ondelete="RESTRICT"))
    name: Mapped[str] = mapped_column(String(255))
    name_en: Mapped[str | None] = mapped_column(String(255))
    category: Mapped[str] = mapped_column(String(32), default="other")
    unit_cents: Mapped[int] = mapped_column(Integer)
    vat_percent: Mapped[int] = mapped_column(Integer)
    quantity: Mapped[int] = mapped_column(Integer, default=1)
    added_at: Mapped[datetime] = mapped_column(default=utcnow)
    added_by: Mapped[str] = mapped_column(String(64))
    voided_at: Mapped[datetime | None]
    voided_by: Mapped[str | None] = mapped_column(String(64))
    void_reason: Mapped[str | None] = mapped_column(Text)
    form_key: Mapped[str | None] = mapped_column(String(64), unique=True)  # the adding form's one-time key (a double tap)


class Payment(Base):
    """Money taken for a tab (or given back: a reversal has the opposite sign and names `reverses_id`).

    `amount_cents` is what counts against the bill; for cash `tendered_cents` is what the customer
    handed over, `change_cents` what went back and `rounding_cents` the cash rounding. `business_day` is the day whose close-out counts
    it: the open day, or the next one when that day is already closed. The fiscal columns follow
    the eKasa registration (broker.adapters.ekasa): state only, the money never changes.
    """

    __tablename__ = "payments"
    __table_args__ = (
        CheckConstraint("change_cents >= 0", name="change_not_negative"),
        CheckConstraint(_one_of("fiscal_state", FISCAL_STATES), name="fiscal_state"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    tab_id: Mapped[int] = mapped_column(ForeignKey("tabs.id", ondelete="RESTRICT"), index=True)
    part: Mapped[int | None] = mapped_column(Integer)  # which part of the tab's split, 1-based
    method: Mapped[str] = mapped_column(String(32))
    amount_cents: Mapped[int] = mapped_column(Integer)
    tendered_cents: Mapped[int | None] = mapped_column(Integer)
    change_cents: Mapped[int] = mapped_column(Integer, default=0)
    # Cash rounding (broker.domain.cash_rounding): what was handed over beyond `amount_cents` (+2 for
    # 17,33 € paid as 17,35 €; negative when less). Not revenue and outside VAT: the bill counts the
    # amount, the drawer the amount plus this. 0 for every other payment; a reversal negates it.
    rounding_cents: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    staff: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    business_day: Mapped[date] = mapped_column(Date, index=True)
    reverses_id: Mapped[int | None] = mapped_column(ForeignKey("payments.id", ondelete="RESTRICT"), unique=True)
    reason: Mapped[str | None] = mapped_column(Text)
    receipt_no: Mapped[int | None] = mapped_column(Integer, unique=True)
    # The form's one-time key: a double tap or a resent form finds the payment it already made.
    request_id: Mapped[str | None] = mapped_column(String(64), unique=True)
    # What this payment paid for, frozen when it was taken (broker.domain.till.receipt.lines_json): the
    # receipt's lines with their VAT rates and categories and its VAT rows. The receipt, its reprint,
    # the eKasa registration and the close-out all read this, so none of them can drift.
    lines: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # A package (a single-purpose voucher) this payment redeemed: its number, eKasa's voucherNumber (broker.wallet).
    voucher: Mapped[str | None] = mapped_column(String(50))
    fiscal_state: Mapped[str] = mapped_column(String(16), default="none")
    fiscal_id: Mapped[str | None] = mapped_column(String(120))
    fiscal_detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    fiscal_updated_at: Mapped[datetime | None]
    paragon_no: Mapped[str | None] = mapped_column(String(40))
    paragon_at: Mapped[datetime | None]


class WalletPackage(Base):
    """A package sold to a member (broker.wallet): `units` of table time (minutes, `rate_cents` per
    hour) or lessons (`rate_cents` each), a single-purpose voucher taxed when sold (the payment
    `payment_id`). What is left is the sum of its `wallet_entries` rows."""

    __tablename__ = "wallet_packages"
    __table_args__ = (
        CheckConstraint(_one_of("kind", ("hours", "lessons")), name="kind"),
        CheckConstraint("units > 0", name="units_positive"),
        CheckConstraint("rate_cents >= 0", name="rate_not_negative"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="RESTRICT"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(120))
    units: Mapped[int] = mapped_column(Integer)
    rate_cents: Mapped[int] = mapped_column(Integer)
    price_cents: Mapped[int] = mapped_column(Integer)
    vat_percent: Mapped[int] = mapped_column(Integer)
    sold_at: Mapped[datetime] = mapped_column(default=utcnow)
    sold_by: Mapped[str] = mapped_column(String(64))
    expires_on: Mapped[date | None] = mapped_column(Date)
    payment_id: Mapped[int | None] = mapped_column(ForeignKey("payments.id", ondelete="RESTRICT"))


class WalletEntry(Base):
    """One change of a member's credit (`cents`) or of one package (`package_id`, `units`): a
    top-up, a use, an expiry, a refund, a reversal, a package's sale. Never updated, never deleted:
    a balance is the sum of its rows."""

    __tablename__ = "wallet_entries"
    __table_args__ = (CheckConstraint(_one_of("kind", ("topup", "use", "expiry", "refund", "reversal", "sale")), name="kind"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="RESTRICT"), index=True)
    package_id: Mapped[int | None] = mapped_column(ForeignKey("wallet_packages.id", ondelete="RESTRICT"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    cents: Mapped[int] = mapped_column(Integer, default=0)
    units: Mapped[int] = mapped_column(Integer, default=0)
    at: Mapped[datetime] = mapped_column(default=utcnow)
    staff: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str | None] = mapped_column(Text)
    expires_on: Mapped[date | None] = mapped_column(Date)  # a top-up's last valid day
    tab_id: Mapped[int | None] = mapped_column(ForeignKey("tabs.id", ondelete="RESTRICT"))
    payment_id: Mapped[int | None] = mapped_column(ForeignKey("payments.id", ondelete="RESTRICT"))
    reverses_id: Mapped[int | None] = mapped_column(ForeignKey("wallet_entries.id", ondelete="RESTRICT"), unique=True)
    request_id: Mapped[str | None] = mapped_column(String(64), unique=True)  # the form's one-time key (a double tap)


class BusinessDay(Base):
    """A business day's shift: opened with a float, closed once with the counted cash (the Z report).

    `report` is the close-out frozen at closing: a closed day's numbers never change.
    """

    __tablename__ = "business_days"

    day: Mapped[date] = mapped_column(Date, primary_key=True)
    opened_at: Mapped[datetime] = mapped_column(default=utcnow)
    opened_by: Mapped[str] = mapped_column(String(64))
    float_cents: Mapped[int] = mapped_column(Integer, default=0)
    closed_at: Mapped[datetime | None]
    closed_by: Mapped[str | None] = mapped_column(String(64))
    counted_cents: Mapped[int | None] = mapped_column(Integer)
    report: Mapped[dict[str, Any] | None] = mapped_column(JSONDoc, nullable=True)


class Shift(Base):
    """A staff member's shift (broker.shifts): clocked in, clocked out, never overwritten.

    A manager's correction is a new row naming the row it replaces (`corrects_id`, its `reason`);
    the replaced row keeps its times and gets `replaced_at`, so the history shows every version and
    only the latest counts. One open shift per person: the partial unique index holds it even
    against a second process.
    """

    __tablename__ = "shifts"
    __table_args__ = (
        Index(
            "uq_shifts_one_open",
            "staff",
            unique=True,
            sqlite_where=text("ended_at IS NULL AND replaced_at IS NULL"),
            postgresql_where=text("ended_at IS NULL AND replaced_at IS NULL"),
        ),
        Index("ix_shifts_business_day", "business_day"),
        CheckConstraint("ended_at IS NULL OR ended_at > started_at", name="ends_after_start"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    staff: Mapped[str] = mapped_column(String(64))
    business_day: Mapped[date] = mapped_column(Date)
    started_at: Mapped[datetime]
    ended_at: Mapped[datetime | None]
    ended_by: Mapped[str | None] = mapped_column(String(64))
    made_at: Mapped[datetime] = mapped_column(default=utcnow)
    made_by: Mapped[str] = mapped_column(String(64))
    corrects_id: Mapped[int | None] = mapped_column(ForeignKey("shifts.id", ondelete="RESTRICT"), unique=True)
    reason: Mapped[str | None] = mapped_column(Text)
    replaced_at: Mapped[datetime | None]


class DrawerCount(Base):
    """The cash drawer counted at a shift change (broker.shifts): what it should hold, what it held.

    The next bartender starts from `counted_cents`; the close-out's count (business_days) ends the day.
    """

    __tablename__ = "drawer_counts"

    id: Mapped[int] = mapped_column(primary_key=True)
    business_day: Mapped[date] = mapped_column(Date, index=True)
    at: Mapped[datetime] = mapped_column(default=utcnow)
    counted_by: Mapped[str] = mapped_column(String(64))
    counted_cents: Mapped[int] = mapped_column(Integer)
    expected_cents: Mapped[int] = mapped_column(Integer)
    note: Mapped[str | None] = mapped_column(Text)


class Setting(Base):
    """A setting the manager changes on a page (e.g. the eKasa client's address), not in the venue file.

    Keyed by a dotted name ("ekasa.url"); the value is JSON. Changes are audited by their writer.
    """

    __tablename__ = "settings"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[dict[str, Any]] = mapped_column(default=dict)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_by: Mapped[str] = mapped_column(String(64))


# --- tournaments (issue 21; rules in broker.domain.tournaments, commands in broker.tournaments.setup) ---
# The bracket is never stored: who plays whom is worked out from the draw and the results
# (broker.domain.tournaments.progress). A result is voided and replaced by a correction, never deleted.

TOURNAMENT_GROUPS = ("", "I", "II")  # the Lavosliga's two groups; "" another event (a memorial, a pairs bracket)
SEEDINGS = ("random", "seeded")


class Tournament(Base):
    """A tournament: what is played (its rules), where (its tables), for what (fees, payouts), its draw."""

    __tablename__ = "tournaments"
    __table_args__ = (
        CheckConstraint(_one_of("league_group", TOURNAMENT_GROUPS), name="league_group"),
        CheckConstraint(_one_of("seeding", SEEDINGS), name="seeding"),
        CheckConstraint("club_share_percent BETWEEN 0 AND 100", name="club_share"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120))
    starts_at: Mapped[datetime] = mapped_column(index=True)
    league_group: Mapped[str] = mapped_column(String(8), default="")
    discipline: Mapped[str] = mapped_column(String(16))
    format: Mapped[str] = mapped_column(String(16))
    race_winners: Mapped[int] = mapped_column(Integer)
    race_losers: Mapped[int] = mapped_column(Integer)
    race_final: Mapped[int] = mapped_column(Integer)
    break_rule: Mapped[str] = mapped_column(String(16), default="alternate")
    grand_final_reset: Mapped[bool] = mapped_column(Boolean, default=True)
    group_size: Mapped[int] = mapped_column(Integer, default=4)
    advance: Mapped[int] = mapped_column(Integer, default=2)
    swiss_rounds: Mapped[int | None] = mapped_column(Integer)
    shot_clock_s: Mapped[int | None] = mapped_column(Integer)
    pairs: Mapped[bool] = mapped_column(Boolean, default=False)
    seeding: Mapped[str] = mapped_column(String(8), default="random")
    fee_member_product_id: Mapped[int | None] = mapped_column(ForeignKey("products.id", ondelete="RESTRICT"))
    fee_guest_product_id: Mapped[int | None] = mapped_column(ForeignKey("products.id", ondelete="RESTRICT"))
    club_share_percent: Mapped[int] = mapped_column(Integer, default=0)
    tariff: Mapped[str | None] = mapped_column(String(32))  # its matches' rate (None: the venue's default)
    # {"tables": [...], "payout_shares": [50, 30, 20], "season_points": {"1": 25, ...}}
    options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # The draw, stored the first time it is made, so drawing again gives the same bracket.
    draw_seed: Mapped[int | None] = mapped_column(BigInteger)
    draw_order: Mapped[dict[str, Any] | None] = mapped_column(JSONDoc, nullable=True)  # {"order": [entrant ids]}
    drawn_at: Mapped[datetime | None]
    drawn_by: Mapped[str | None] = mapped_column(String(64))
    finished_at: Mapped[datetime | None]  # its last match decided (a correction may clear it again)
    # The read-only link of the TV and players' pages: sha256 of its token (revoked: NULL).
    tv_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    created_by: Mapped[str] = mapped_column(String(64))


class TournamentEntrant(Base):
    """A player (or a pair) of a tournament: a member of the registry or a walk-in by name."""

    __tablename__ = "tournament_entrants"
    __table_args__ = (Index("ix_tournament_entrants_tournament_id", "tournament_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="RESTRICT"))
    name: Mapped[str] = mapped_column(String(200))
    member_id: Mapped[int | None] = mapped_column(ForeignKey("members.id", ondelete="SET NULL"))
    name2: Mapped[str] = mapped_column(String(200), default="")  # a pair's second player
    member2_id: Mapped[int | None] = mapped_column(ForeignKey("members.id", ondelete="SET NULL"))
    handicap: Mapped[int] = mapped_column(Integer, default=0)  # start score, below the race
    fee_tab_id: Mapped[int | None] = mapped_column(ForeignKey("tabs.id", ondelete="RESTRICT"))
    checked_in_at: Mapped[datetime | None]
    checked_in_by: Mapped[str | None] = mapped_column(String(64))
    added_at: Mapped[datetime] = mapped_column(default=utcnow)
    added_by: Mapped[str] = mapped_column(String(64))
    removed_at: Mapped[datetime | None]  # withdrew before the draw
    removed_by: Mapped[str | None] = mapped_column(String(64))
    withdrawn_at: Mapped[datetime | None]  # withdrew after the draw: every match of theirs not played is a walkover
    withdrawn_by: Mapped[str | None] = mapped_column(String(64))


class TournamentResult(Base):
    """A match's result as played (who, the scores, a walkover); a correction voids it (who, when,
    why) and a new row replaces it: one live result per match."""

    __tablename__ = "tournament_results"
    __table_args__ = (
        Index(
            "uq_tournament_results_live",
            "tournament_id",
            "match",
            unique=True,
            sqlite_where=text("voided_at IS NULL"),
            postgresql_where=text("voided_at IS NULL"),
        ),
        CheckConstraint("score_a >= 0 AND score_b >= 0", name="scores"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="RESTRICT"))
    match: Mapped[str] = mapped_column(String(16))
    a: Mapped[int] = mapped_column(ForeignKey("tournament_entrants.id", ondelete="RESTRICT"))
    b: Mapped[int] = mapped_column(ForeignKey("tournament_entrants.id", ondelete="RESTRICT"))
    score_a: Mapped[int] = mapped_column(Integer)
    score_b: Mapped[int] = mapped_column(Integer)
    walkover: Mapped[bool] = mapped_column(Boolean, default=False)
    table_id: Mapped[str | None] = mapped_column(String(32))
    finished_at: Mapped[datetime]
    entered_by: Mapped[str] = mapped_column(String(64))
    voided_at: Mapped[datetime | None]
    voided_by: Mapped[str | None] = mapped_column(String(64))
    void_reason: Mapped[str | None] = mapped_column(Text)


class TournamentCall(Base):
    """A match called to a table: its game (the light, the tournament's table time), when it began,
    its running score, the walkover offered when it did not begin in time; ended by its result."""

    __tablename__ = "tournament_calls"
    __table_args__ = (
        Index(
            "uq_tournament_calls_live_match",
            "tournament_id",
            "match",
            unique=True,
            sqlite_where=text("ended_at IS NULL"),
            postgresql_where=text("ended_at IS NULL"),
        ),
        Index(
            "uq_tournament_calls_live_table",
            "table_id",
            unique=True,
            sqlite_where=text("ended_at IS NULL"),
            postgresql_where=text("ended_at IS NULL"),
        ),
        Index("ix_tournament_calls_tournament_id", "tournament_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="RESTRICT"))
    match: Mapped[str] = mapped_column(String(16))
    table_id: Mapped[str] = mapped_column(String(32))
    game_id: Mapped[int | None] = mapped_column(ForeignKey("sessions.id", ondelete="RESTRICT"), index=True)
    a: Mapped[int] = mapped_column(ForeignKey("tournament_entrants.id", ondelete="RESTRICT"))  # who was called
    b: Mapped[int] = mapped_column(ForeignKey("tournament_entrants.id", ondelete="RESTRICT"))
    called_at: Mapped[datetime]
    called_by: Mapped[str] = mapped_column(String(64))
    started_at: Mapped[datetime | None]
    score_a: Mapped[int] = mapped_column(Integer, default=0)
    score_b: Mapped[int] = mapped_column(Integer, default=0)
    walkover_offered_at: Mapped[datetime | None]
    ended_at: Mapped[datetime | None]
    end_reason: Mapped[str | None] = mapped_column(String(16))


# --- records for the centre (several halls, docs/scaling.md; rules in broker.outbox.records) ---------


class OutboxRecord(Base):
    """A committed money or game record waiting for the central reporting hub to acknowledge it.

    Written in the same transaction as the record itself (broker.outbox.records), deleted only once
    the centre has applied it. `seq` is the hall's own numbering, gap-free (OutboxCounter), so the
    centre applies each (hall, seq) once and can tell a record it has from one it has not.
    """

    __tablename__ = "outbox"

    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    hall: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))
    ref: Mapped[str] = mapped_column(String(64))  # what it is in the hall: "payment:12", "day:2026-12-01"
    at: Mapped[datetime]
    record: Mapped[dict[str, Any]] = mapped_column(default=dict)
    size: Mapped[int] = mapped_column(Integer)  # bytes of the record as JSON: what the bound counts
    # Set aside: the centre refused it (or the hall's own check did, broker.domain.central_records);
    # kept here for people to see, never sent again, never deleted by an acknowledgement.
    refused_at: Mapped[datetime | None]
    refused_reason: Mapped[str | None] = mapped_column(Text)  # in English (the log's words)
    refused_why: Mapped[dict[str, Any] | None]  # the same as a refusal (broker.domain.refusals.to_doc): the page says it in its language


class OutboxCounter(Base):
    """The hall's last outbox seq and the bytes waiting: one row per hall id, changed only by the writer."""

    __tablename__ = "outbox_counter"

    hall: Mapped[str] = mapped_column(String(64), primary_key=True)
    last_seq: Mapped[int] = mapped_column(BigInteger, default=0)
    pending_bytes: Mapped[int] = mapped_column(BigInteger, default=0)


# --- the central reporting hub (`lavos central`, PostgreSQL; rules in broker.central) -------------
# A centre's database holds these; a hall's has them empty (one schema, one migration chain).

CENTRAL_ROLES = ("operator", "hall_manager")


class CentralHall(Base):
    """A hall reporting to the centre: its credential (hashed), how far its records got, its link."""

    __tablename__ = "central_halls"

    hall: Mapped[str] = mapped_column(String(64), primary_key=True)  # the hall's venue id
    name: Mapped[str] = mapped_column(String(120))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 of the hall's credential
    last_seq: Mapped[int] = mapped_column(BigInteger, default=0)
    received: Mapped[int] = mapped_column(BigInteger, default=0, server_default=text("0"))  # seqs held: last_seq - received are missing
    last_record_at: Mapped[datetime | None]
    # Records refused as not what a hall sends (broker.domain.central_records): how many, the last one's time and why.
    refused: Mapped[int] = mapped_column(BigInteger, default=0, server_default=text("0"))
    refused_at: Mapped[datetime | None]
    refused_detail: Mapped[str | None] = mapped_column(Text)  # in English (the log's words)
    refused_why: Mapped[dict[str, Any] | None]  # the first refused record and why (broker.domain.refusals.to_doc), for the page
    # The bridge's state as Mosquitto announces it (bridge notifications): None never heard.
    link_up: Mapped[bool | None] = mapped_column(Boolean)
    link_changed_at: Mapped[datetime | None]


class CentralRecord(Base):
    """Every record a hall delivered, applied once: (hall, seq) is the key a copy runs into."""

    __tablename__ = "central_records"
    __table_args__ = (UniqueConstraint("hall", "seq"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    hall: Mapped[str] = mapped_column(ForeignKey("central_halls.hall", ondelete="RESTRICT"))
    seq: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))
    ref: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime]  # when the hall wrote it
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    applied_at: Mapped[datetime] = mapped_column(default=utcnow)


class CentralPayment(Base):
    """A hall's payment or reversal as its Z report counts it (the record: broker.domain.till.zreport.PaymentRecord)."""

    __tablename__ = "central_payments"
    __table_args__ = (Index("ix_central_payments_hall_business_day", "hall", "business_day"),)

    hall: Mapped[str] = mapped_column(String(64), primary_key=True)
    payment_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    business_day: Mapped[date] = mapped_column(Date)
    amount_cents: Mapped[int] = mapped_column(Integer)
    record: Mapped[dict[str, Any]] = mapped_column(default=dict)


class CentralTakings(Base):
    """A hall's takings on a business day by one payment method, kept as its payment records arrive
    (in the transaction that applies them), by the Z report's own function: what the centre's
    pages read (broker.central.reads), never the records themselves."""

    __tablename__ = "central_takings"
    __table_args__ = (Index("ix_central_takings_day", "day"),)  # the operator's month of every hall

    hall: Mapped[str] = mapped_column(String(64), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    method: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(120))
    name_en: Mapped[str] = mapped_column(String(120))
    cash: Mapped[bool] = mapped_column(Boolean)
    count: Mapped[int] = mapped_column(BigInteger)  # payments, reversals not counted
    payments_cents: Mapped[int] = mapped_column(BigInteger)
    reversals_cents: Mapped[int] = mapped_column(BigInteger)  # negative or 0


class CentralDay(Base):
    """A hall's closed business day: its own frozen Z report, as the hall closed it."""

    __tablename__ = "central_days"

    hall: Mapped[str] = mapped_column(String(64), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    total_cents: Mapped[int] = mapped_column(BigInteger)
    report: Mapped[dict[str, Any]] = mapped_column(default=dict)


class CentralGame(Base):
    """A hall's stopped game (no member: the centre needs tables and takings, not who played)."""

    __tablename__ = "central_games"

    hall: Mapped[str] = mapped_column(String(64), primary_key=True)
    game_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    table_id: Mapped[str] = mapped_column(String(32))
    table_name: Mapped[str] = mapped_column(String(120))
    started_at: Mapped[datetime]
    stopped_at: Mapped[datetime | None] = mapped_column(index=True)
    total_cents: Mapped[int | None]


class CentralAlert(Base):
    """A hall's alert as last reported: opened, acknowledged, closed."""

    __tablename__ = "central_alerts"

    hall: Mapped[str] = mapped_column(String(64), primary_key=True)
    alert_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(32))
    table_id: Mapped[str | None] = mapped_column(String(32))
    severity: Mapped[str] = mapped_column(String(16))
    message: Mapped[str] = mapped_column(Text)
    message_en: Mapped[str] = mapped_column(Text)
    opened_at: Mapped[datetime]
    acked_at: Mapped[datetime | None]
    closed_at: Mapped[datetime | None] = mapped_column(index=True)


class CentralUser(Base):
    """Who may read the centre: an operator sees every hall, a hall manager only `hall`."""

    __tablename__ = "central_users"
    __table_args__ = (
        CheckConstraint(_one_of("role", CENTRAL_ROLES), name="role"),
        CheckConstraint("(role = 'operator') = (hall IS NULL)", name="hall_of_manager"),
    )

    username: Mapped[str] = mapped_column(String(64), primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))
    hall: Mapped[str | None] = mapped_column(ForeignKey("central_halls.hall", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class CentralLogin(LoginColumns, Base):
    """One login to the centre's pages (`lavos central serve`), kept on the server as a hall's dashboard
    logins are: logout and a new password (`lavos central add-user` again) end it, whoever holds the cookie."""

    __tablename__ = "central_logins"
    __table_args__ = (Index("ix_central_logins_username_ended_at", "username", "ended_at"),)
    USERS = "central_users"


# --- bookings, blocks and the waiting list (issue 20; rules in broker.domain.bookings, handlers in
# broker.bookings.bookings and broker.bookings.waiting_list). A phone number is personal data: only staff
# see it, it is never logged or audited, and it is removed with the name after the venue's
# retention (`anonymised_at`). ----------------------------------------------------------------------

BOOKING_STATES = ("held", "confirmed", "arrived", "seated", "no_show", "cancelled")
BOOKING_KINDS = ("pool", "pool9", "pool8", "carom")
BLOCK_KINDS = ("tournament", "training", "private", "maintenance")
WAITING_STATES = ("waiting", "offered", "seated", "left")
DEPOSIT_OUTCOMES = ("kept", "refunded")


class Booking(Base):
    """One table booked for [start_at, end_at). On PostgreSQL an exclusion constraint (migration
    0009) keeps two bookings of one table that hold it (held, confirmed, arrived, seated and not
    ended) from overlapping; on SQLite the hub's one writer checks it."""

    __tablename__ = "bookings"
    __table_args__ = (
        CheckConstraint(_one_of("state", BOOKING_STATES), name="state"),
        CheckConstraint(_one_of("kind", BOOKING_KINDS), name="kind"),
        CheckConstraint("end_at > start_at", name="span"),
        CheckConstraint("party_size > 0", name="party_size"),
        CheckConstraint("deposit_cents >= 0", name="deposit"),
        Index("ix_bookings_table_id_start_at", "table_id", "start_at"),
        Index("ix_bookings_state_start_at", "state", "start_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[str] = mapped_column(String(32))
    kind: Mapped[str] = mapped_column(String(8))  # what the guest asked for (any pool table, a 9-ft one, …)
    start_at: Mapped[datetime]
    end_at: Mapped[datetime]
    party_size: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(80))
    phone: Mapped[str | None] = mapped_column(String(20), index=True)  # +421903123456; staff only
    note: Mapped[str] = mapped_column(Text, default="")
    member_id: Mapped[int | None] = mapped_column(ForeignKey("members.id", ondelete="SET NULL"), index=True)
    state: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime]
    created_by: Mapped[str] = mapped_column(String(64))
    changed_at: Mapped[datetime]
    reason: Mapped[str | None] = mapped_column(Text)  # why it was cancelled
    # The game started from it ("Prišli"); once that game stops, `ended_at` frees the rest of its time.
    game_id: Mapped[int | None] = mapped_column(ForeignKey("sessions.id", ondelete="RESTRICT"))
    ended_at: Mapped[datetime | None]
    # A deposit (after too many no-shows) is a line on a tab of its own, paid at the till; the
    # manager keeps it or gives it back (a reversal of its payment).
    deposit_cents: Mapped[int] = mapped_column(Integer, default=0)
    deposit_tab_id: Mapped[int | None] = mapped_column(ForeignKey("tabs.id", ondelete="RESTRICT"))
    deposit_outcome: Mapped[str | None] = mapped_column(String(16))
    form_key: Mapped[str | None] = mapped_column(String(64), unique=True)  # the booking form's one-time key (a double tap)
    anonymised_at: Mapped[datetime | None]


class BookingBlock(Base):
    """Tables held for a tournament, training, a private party (a whole room) or maintenance."""

    __tablename__ = "booking_blocks"
    __table_args__ = (
        CheckConstraint(_one_of("kind", BLOCK_KINDS), name="kind"),
        CheckConstraint("end_at > start_at", name="span"),
        Index("ix_booking_blocks_end_at", "end_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    label: Mapped[str] = mapped_column(String(80), default="")
    start_at: Mapped[datetime]
    end_at: Mapped[datetime]
    tables: Mapped[list[str]] = mapped_column(JSONDoc)
    room: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime]
    created_by: Mapped[str] = mapped_column(String(64))
    removed_at: Mapped[datetime | None]
    removed_by: Mapped[str | None] = mapped_column(String(64))


class WaitingParty(Base):
    """A walk-in party waiting for a table of a kind; offered a table that frees, in turn."""

    __tablename__ = "waiting_parties"
    __table_args__ = (
        CheckConstraint(_one_of("state", WAITING_STATES), name="state"),
        CheckConstraint(_one_of("kind", BOOKING_KINDS), name="kind"),
        CheckConstraint("party_size > 0", name="party_size"),
        Index("ix_waiting_parties_state_joined_at", "state", "joined_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    party_size: Mapped[int] = mapped_column(Integer)
    phone: Mapped[str | None] = mapped_column(String(20))  # staff only; an SMS goes to it only with consent
    sms_ok: Mapped[bool] = mapped_column(Boolean, default=False)
    kind: Mapped[str] = mapped_column(String(8))
    note: Mapped[str] = mapped_column(Text, default="")
    state: Mapped[str] = mapped_column(String(16))
    joined_at: Mapped[datetime]
    joined_by: Mapped[str] = mapped_column(String(64))
    offered_table: Mapped[str | None] = mapped_column(String(32))
    offered_at: Mapped[datetime | None]
    offer_until: Mapped[datetime | None]
    passed_table: Mapped[str | None] = mapped_column(String(32))  # the table staff said it does not want ("Nechcú")
    lapsed_table: Mapped[str | None] = mapped_column(
        String(32)
    )  # the table whose offer lapsed unanswered (offered again when nobody else waits)
    misses: Mapped[int] = mapped_column(Integer, default=0)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("sessions.id", ondelete="RESTRICT"))
    left_at: Mapped[datetime | None]
    left_reason: Mapped[str | None] = mapped_column(String(32))
    form_key: Mapped[str | None] = mapped_column(String(64), unique=True)
    anonymised_at: Mapped[datetime | None]


class CalendarFeed(Base):
    """A private iCal feed of the bookings for one staff member; only the token's hash is kept, and
    a new link (or a revocation) ends the old one."""

    __tablename__ = "calendar_feeds"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(ForeignKey("users.username", ondelete="CASCADE", onupdate="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class StockItem(Base):
    """Something the bar keeps in stock (a bottle, a keg in litres, a pizza base), counted in
    thousandths of its unit (broker.domain.stock.rules). `level_milli` is the sum of its movements,
    kept with each movement in the same transaction on the writer (read by the bar's buttons without
    summing); `unit_cost_cents` the last delivery's price excl. VAT of one whole unit."""

    __tablename__ = "stock_items"
    __table_args__ = (
        CheckConstraint(_one_of("unit", STOCK_UNITS), name="unit"),
        CheckConstraint("threshold_milli >= 0", name="threshold_not_negative"),
        CheckConstraint("unit_cost_cents >= 0", name="cost_not_negative"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    unit: Mapped[str] = mapped_column(String(8), default="piece")
    threshold_milli: Mapped[int] = mapped_column(BigInteger, default=0)
    level_milli: Mapped[int] = mapped_column(BigInteger, default=0)
    unit_cost_cents: Mapped[int] = mapped_column(Integer, default=0)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class StockRecipeLine(Base):
    """What one of a product takes from stock: a bottle product one line (1 bottle), a pizza a base
    and its toppings. A product without lines is not tracked."""

    __tablename__ = "stock_recipes"
    __table_args__ = (
        UniqueConstraint("product_id", "item_id"),
        CheckConstraint("quantity_milli > 0", name="quantity_positive"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    product_id: Mapped[int] = mapped_column(ForeignKey("products.id", ondelete="RESTRICT"), index=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("stock_items.id", ondelete="RESTRICT"))
    quantity_milli: Mapped[int] = mapped_column(Integer)


class StockCount(Base):
    """A stocktake: who counted when; its differences are movements naming it, `counts` what was
    counted per item (an item counted right has no movement but is in here)."""

    __tablename__ = "stock_counts"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime]
    by: Mapped[str] = mapped_column(String(64))
    note: Mapped[str] = mapped_column(Text, default="")
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    form_key: Mapped[str | None] = mapped_column(String(64), unique=True)  # the form's one-time key (a double tap)


class StockMovement(Base):
    """One change of an item's stock, never changed or deleted: its level is their sum.

    `value_cents` is what it moved at the purchase price excl. VAT of that moment (signed like the
    quantity). A sale and its void name the tab item (and its product, for the margin); a delivery
    its supplier and prices; a write-off its reason; a stocktake's difference its count."""

    __tablename__ = "stock_movements"
    __table_args__ = (
        CheckConstraint(_one_of("kind", STOCK_MOVEMENT_KINDS), name="kind"),
        Index("ix_stock_movements_item_id_id", "item_id", "id"),
        Index("ix_stock_movements_kind_at", "kind", "at"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("stock_items.id", ondelete="RESTRICT"))
    kind: Mapped[str] = mapped_column(String(16))
    quantity_milli: Mapped[int] = mapped_column(BigInteger)
    value_cents: Mapped[int] = mapped_column(BigInteger, default=0)
    at: Mapped[datetime]
    actor: Mapped[str] = mapped_column(String(64))
    tab_item_id: Mapped[int | None] = mapped_column(ForeignKey("tab_items.id", ondelete="RESTRICT"), index=True)
    product_id: Mapped[int | None] = mapped_column(ForeignKey("products.id", ondelete="RESTRICT"))
    reason: Mapped[str | None] = mapped_column(String(16))  # a write-off's (broken, expired, staff_drink, other)
    note: Mapped[str | None] = mapped_column(Text)
    supplier: Mapped[str | None] = mapped_column(String(120))
    price_net_cents: Mapped[int | None] = mapped_column(Integer)  # a delivery's, for the whole line
    price_gross_cents: Mapped[int | None] = mapped_column(Integer)
    vat_percent: Mapped[int | None] = mapped_column(Integer)
    count_id: Mapped[int | None] = mapped_column(ForeignKey("stock_counts.id", ondelete="RESTRICT"), index=True)
    form_key: Mapped[str | None] = mapped_column(String(64), unique=True)  # the form's one-time key (a double tap)
