"""Push notifications: which alert goes to which target, once, rate-limited, in its language.

The manager keeps the targets (table `settings`, key "notify"): each an Apprise URL (a secret:
never logged, shown masked, audited without it), the alert kinds it wants (empty: all), the
minimum severity, quiet hours and the language. The rules, each in one place here:
- one open alert = one message per target (the spool's key "open:<target>:<alert id>"); its
  resolution a follow-up ("Vyriešené: …"), only to the targets that were told it opened;
- the rate limit per target and cause: at most `rate_max` messages in `rate_window_min`
  minutes; the rest are counted into one summary ("… a ešte 17-krát") sent when the window ends;
- quiet hours (local time, e.g. 23:00–07:00): warnings and critical alerts are HELD and go out
  when the quiet hours end; info is dropped;
- the daily summary after the business day is closed (the "day" close push of the close-out);
- a table offered to a waiting party (broker.bookings.waiting_list): to the staff's targets that want
  kind "waiting_list" (info), and, when the party agreed and left a number, one SMS to that
  number through a guest-SMS target: a target whose URL has `{phone}` where the number goes
  (e.g. an SMS gateway's Apprise URL). Such a target gets nothing else. The number is never in the
  spool, the history or the log: the spool names the party, and the sender's thread reads the
  number from the database only to build the URL it hands to Apprise (`_url_of`).
Everything is spooled first (broker.adapters.notify_spool), sent by the sender's thread
(broker.adapters.notify). The hooks run on the hub's writer after the commit; they only touch
the local spool file (a sub-millisecond SQLite commit), never the network.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from sqlalchemy import func, select

from broker.adapters.notify import Notifier, mask_url, send, valid_url
from broker.adapters.notify_spool import Message, NotifySpool
from broker.bookings.waiting_list import OfferMade
from broker.core.commands import Command, command, handles
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.euros import euros
from broker.domain.refusals import N_, Refusal
from broker.domain.schedule import business_day, business_day_bounds
from broker.domain.till.zreport import ZReport
from broker.storage.audit import record_audit
from broker.storage.models import Alert, Game, Setting, WaitingParty

log = logging.getLogger("lavos.hub")

SETTINGS_KEY = "notify"
PHONE = "{phone}"  # where a guest-SMS target's URL takes the guest's number
SAMPLE_PHONE = "+421900000000"  # what such a URL is checked with
GUEST = "/party:"  # a spool target "<target id>/party:<id>": the guest's SMS, the number looked up when sent
OFFER = {"sk": "{table} voľný → {name}, {size} (do {until})", "en": "{table} free → {name}, {size} (until {until})"}
GUEST_SMS = "{venue}: stôl {table} je pre vás voľný. Podržíme ho do {until}."
SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}
LANGS = ("sk", "en")
RESOLVED = {"sk": "Vyriešené: {m}", "en": "Resolved: {m}"}
MORE = {"sk": "{m} — a ešte {n}-krát", "en": "{m} — and {n} more times"}
TITLE = {"sk": "Lavos: {m}", "en": "Lavos: {m}"}
# What the spool keeps of a running "…and N more" summary, read back at start (_windows_from_spool).
_MORE_KEY = re.compile(r"^more:[^:]+:(?P<cause>.+):\d{4}-\d\d-\d\dT[\d:.+-]+$")  # more:target:cause:ISO time
_MORE_COUNT = re.compile(r" — (?:a ešte (?P<n>\d+)-krát|and (?P<n_en>\d+) more times)$")


class NotifyRefusal(Refusal):
    pass


def _hhmm(text: str) -> time | None:
    text = text.strip()
    if not text:
        return None
    try:
        h, m = text.split(":")
        return time(int(h), int(m))
    except ValueError:
        raise NotifyRefusal(N_("Quiet hours are times like 23:00 and 07:00.")) from None


@dataclass(frozen=True)
class Target:
    id: str
    url: str  # the secret
    kinds: tuple[str, ...] = ()  # empty: every kind
    min_severity: str = "info"
    quiet_from: str = ""  # "23:00"; both empty: no quiet hours
    quiet_to: str = ""
    lang: str = "sk"
    label: str = ""

    @property
    def masked(self) -> str:
        return mask_url(self.url)

    @property
    def for_guests(self) -> bool:
        """A guest-SMS target: its URL says where the guest's number goes; it gets only their offers."""
        return PHONE in self.url

    def wants(self, kind: str, severity: str) -> bool:
        if self.for_guests:
            return False
        return (not self.kinds or kind in self.kinds) and SEVERITY_RANK.get(severity, 1) >= SEVERITY_RANK[self.min_severity]

    def quiet_end(self, local: datetime) -> datetime | None:
        """When the quiet hours that hold `local` end (local time), or None when it is not quiet."""
        start, end = _hhmm(self.quiet_from), _hhmm(self.quiet_to)
        if start is None or end is None or start == end:
            return None
        t = local.time()
        inside = (start <= t < end) if start < end else (t >= start or t < end)
        if not inside:
            return None
        day = local.date() if t < end else local.date() + timedelta(days=1)
        return datetime.combine(day, end, tzinfo=local.tzinfo)

    def validated(self) -> Target:
        url = self.url.strip()
        if "PHONE0" in urlsplit(url.replace(PHONE, "PHONE0")).netloc:  # the host would carry it into messages and logs
            raise NotifyRefusal(N_("The guest's number ({phone}) goes in the address's path or query, not in its host."))
        if not url or not valid_url(url.replace(PHONE, SAMPLE_PHONE)):
            raise NotifyRefusal(N_("This is not a notification address Apprise knows (e.g. ntfy://…, mailto://…, json://…)."))
        if self.min_severity not in SEVERITY_RANK:
            raise NotifyRefusal(N_("The minimum severity is info, warning or critical."))
        if self.lang not in LANGS:
            raise NotifyRefusal(N_("The language is Slovak or English."))
        if bool(self.quiet_from.strip()) != bool(self.quiet_to.strip()):
            raise NotifyRefusal(N_("Quiet hours need both a start and an end."))
        _hhmm(self.quiet_from), _hhmm(self.quiet_to)
        return replace(self, url=url, quiet_from=self.quiet_from.strip(), quiet_to=self.quiet_to.strip(), label=self.label.strip()[:60])

    def audited(self) -> dict[str, Any]:
        """For the audit log: everything but the secret."""
        doc = asdict(self)
        doc["url"] = self.masked
        return doc


@dataclass(frozen=True)
class NotifySettings:
    targets: tuple[Target, ...] = ()
    rate_max: int = 3  # messages per target and cause ...
    rate_window_min: int = 15  # ... in this many minutes

    @classmethod
    def from_json(cls, doc: dict[str, Any] | None) -> NotifySettings:
        doc = doc or {}
        targets = tuple(
            Target(
                id=str(t["id"]),
                url=str(t["url"]),
                kinds=tuple(t.get("kinds") or ()),
                min_severity=str(t.get("min_severity") or "info"),
                quiet_from=str(t.get("quiet_from") or ""),
                quiet_to=str(t.get("quiet_to") or ""),
                lang=str(t.get("lang") or "sk"),
                label=str(t.get("label") or ""),
            )
            for t in doc.get("targets") or ()
        )
        return cls(targets, int(doc.get("rate_max") or 3), int(doc.get("rate_window_min") or 15))

    def to_json(self) -> dict[str, Any]:
        return {
            "targets": [asdict(t) | {"kinds": list(t.kinds)} for t in self.targets],
            "rate_max": self.rate_max,
            "rate_window_min": self.rate_window_min,
        }

    def target(self, target_id: str) -> Target | None:
        return next((t for t in self.targets if t.id == target_id), None)


@command
class SaveNotifySettings(Command[NotifySettings]):
    """All push targets and the rate limit at once (audited without the URLs)."""

    settings: NotifySettings


@dataclass(frozen=True, kw_only=True)
class _TargetFields:
    """A target's fields as a form sends them (the URL is a secret: never shown in a repr)."""

    url: str = field(repr=False)
    kinds: tuple[str, ...] = ()
    min_severity: str = "info"
    quiet_from: str = ""
    quiet_to: str = ""
    lang: str = "sk"
    label: str = ""

    def target(self, target_id: str) -> Target:
        return Target(target_id, self.url, tuple(self.kinds), self.min_severity, self.quiet_from, self.quiet_to, self.lang, self.label)


@command
class AddNotifyTarget(_TargetFields, Command[str]):
    """A new push target; answers its id."""


@command
class UpdateNotifyTarget(_TargetFields, Command[None]):
    """Change a target; an empty `url` keeps the stored one (the page never has it)."""

    target_id: str


@command
class RemoveNotifyTarget(Command[None]):
    """Remove a push target (audited)."""

    target_id: str


@dataclass
class _Window:
    sent: deque[datetime] = field(default_factory=deque)
    suppressed: int = 0
    summary_key: str | None = None
    summary_text: str = ""


def _key_parts(key: str) -> tuple[str, str, str]:
    """A spool key's kind, target and the rest (open:t0:17 → "open", "t0", "17"; see _alert_changed)."""
    kind, target, rest = ([*key.split(":", 2), "", ""])[:3]
    return kind, target, rest


class Notifications(Part):
    as_service_error = (NotifyRefusal,)

    def __init__(self, hall: HallState, data_dir: Path | None, report_of: Callable[[date], ZReport | None]) -> None:
        self.h = hall
        self._report_of = report_of
        self._data_dir = data_dir
        self._settings = NotifySettings()
        self._windows: dict[tuple[str, str], _Window] = {}
        self.spool: NotifySpool | None = None
        self._day_seen: date | None = None  # the business day the sender's thread last saw (day_cut)
        self.sender: Notifier | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def started(self) -> None:
        with self.h.store.reader() as db:
            row = db.get(Setting, SETTINGS_KEY)
            self._settings = NotifySettings.from_json(row.value if row else None)
        self.spool = NotifySpool(self._data_dir)
        self._windows = self._windows_from_spool()
        # The day before today as "last seen": the first round then sums up yesterday if nobody
        # closed it, so a hub that was down over the day cut still sends that summary (the
        # spool's key keeps it to once, across restarts too).
        self._day_seen = business_day(self.h.clock(), self.h.venue) - timedelta(days=1)
        self.sender = Notifier(self.spool, self._url_of, self.h.clock, every_round=self.day_cut)
        self.sender.start()
        self.h.listeners.subscribe(self._on_push)

    def stopped(self) -> None:
        """After the hub's writer has stopped (Hub.close): no hook can spool any more. The spool is
        closed once the sender's thread is done with it (broker.adapters.notify.Notifier.close)."""
        self.h.listeners.unsubscribe(self._on_push)
        sender, spool = self.sender, self.spool
        self.sender = self.spool = None
        if sender is not None:
            sender.close(release=spool.close if spool is not None else None)
        elif spool is not None:
            spool.close()

    @property
    def settings(self) -> NotifySettings:
        return self._settings

    def _url_of(self, target_id: str) -> str | None:
        if GUEST in target_id:
            return self._guest_url(target_id)
        t = self._settings.target(target_id)  # the thread reads the reference the writer swaps
        return t.url if t else None

    def _guest_url(self, spool_target: str) -> str | None:
        """The guest-SMS target's URL with the party's number in it, read now (the sender's thread):
        None when the target is gone, or the party withdrew their number or consent (dropped then)."""
        target_id, _, party = spool_target.partition(GUEST)
        t = self._settings.target(target_id)
        if t is None or not t.for_guests or not party.isdigit():
            return None
        with self.h.store.reader() as db:
            row = db.get(WaitingParty, int(party))
            phone = row.phone if row is not None and row.sms_ok and row.anonymised_at is None else None
        return t.url.replace(PHONE, quote(phone)) if phone else None

    # -- the hooks (the writer, after the commit) -------------------------------------------------

    def alert_changed(self, event: str, alert: dict[str, Any]) -> None:
        """An alert opened or was resolved (broker.core.alert_book). Never raises into the writer."""
        try:
            self._alert_changed(event, alert)
        except Exception:
            log.exception("notification of alert %s failed", alert.get("id"))

    def _alert_changed(self, event: str, alert: dict[str, Any]) -> None:
        if self.spool is None:
            return
        now = self.h.clock()
        for t in self._settings.targets:
            if not t.wants(alert["kind"], alert["severity"]):
                continue
            open_key = f"open:{t.id}:{alert['id']}"
            said = alert["message"] if t.lang == "sk" else alert.get("message_en") or alert["message"]
            if event == "resolved":
                if not self.spool.has(open_key):
                    continue  # the target was never told it opened (suppressed, or added since)
                key, text = f"resolved:{t.id}:{alert['id']}", RESOLVED[t.lang].format(m=said)
            else:
                key, text = open_key, said
            if not self._within_rate(t, alert["cause"], said, now):
                continue
            self._put(t, key, text, now, hold=alert["severity"] != "info", drop_if_quiet=alert["severity"] == "info")

    def _windows_from_spool(self) -> dict[tuple[str, str], _Window]:
        """The rate limit's windows as the spool's recent messages make them: a hub restarted in a
        flapping storm goes on counting instead of sending a fresh `rate_max` of the same alert."""
        assert self.spool is not None
        now, window = self.h.clock(), timedelta(minutes=self._settings.rate_window_min)
        recent = sorted((m for m in self.spool.history(limit=2000) if now - m.created_at < window), key=lambda m: m.id)
        keyed = [(m, *_key_parts(m.key)) for m in recent]  # (message, kind, target, rest)
        alert_ids = {int(rest) for _, kind, _, rest in keyed if kind in ("open", "resolved") and rest.isdigit()}
        with self.h.store.reader() as db:
            rows = db.execute(select(Alert.id, Alert.cause_key).where(Alert.id.in_(alert_ids))).all() if alert_ids else []
        causes = {str(r.id): r.cause_key for r in rows}
        windows: dict[tuple[str, str], _Window] = {}
        for m, kind, target, rest in keyed:
            if kind in ("open", "resolved") and rest in causes:
                windows.setdefault((target, causes[rest]), _Window()).sent.append(m.created_at)
            elif kind == "more" and m.state == "pending" and (found := _MORE_KEY.match(m.key)) and (n := _MORE_COUNT.search(m.body)):
                w = windows.setdefault((target, found["cause"]), _Window())
                w.summary_key, w.summary_text, w.suppressed = m.key, m.body, int(n["n"] or n["n_en"])
        return windows

    def _within_rate(self, t: Target, cause: str, text: str, now: datetime) -> bool:
        w = self._windows.setdefault((t.id, cause), _Window())
        window = timedelta(minutes=self._settings.rate_window_min)
        while w.sent and now - w.sent[0] >= window:
            w.sent.popleft()
        if not w.sent:
            w.suppressed, w.summary_key = 0, None
        if len(w.sent) < self._settings.rate_max:
            w.sent.append(now)
            return True
        # Over the limit: one summary, sent when the window of the first counted message ends.
        w.suppressed += 1
        w.summary_text = MORE[t.lang].format(m=text, n=w.suppressed)
        assert self.spool is not None
        if w.summary_key is None:
            w.summary_key = f"more:{t.id}:{cause}:{w.sent[0].isoformat()}"
            self._put(t, w.summary_key, w.summary_text, now, not_before=w.sent[0] + window)
        else:
            self.spool.replace_pending(w.summary_key, w.summary_text)
        return False

    def _put(
        self,
        t: Target,
        key: str,
        text: str,
        now: datetime,
        *,
        not_before: datetime | None = None,
        hold: bool = True,
        drop_if_quiet: bool = False,
    ) -> None:
        assert self.spool is not None and self.sender is not None
        tz = self.h.venue.tz
        local = now.astimezone(tz) if now.tzinfo else now.replace(tzinfo=tz)
        end = t.quiet_end(local)
        if end is not None:
            if drop_if_quiet or not hold:
                return  # info during quiet hours: dropped, by design
            quiet_until = end.astimezone(now.tzinfo) if now.tzinfo else end.replace(tzinfo=None)
            not_before = max(not_before, quiet_until) if not_before else quiet_until
        if self.spool.put(
            key, t.id, TITLE[t.lang].format(m=text.split("\n")[0][:80]), text, t.lang, now, local.strftime("%H:%M"), not_before
        ):
            self.sender.wake()

    def offer_made(self, offer: OfferMade) -> None:
        """A table was offered to a waiting party (the writer, after the commit). Never raises into the writer."""
        try:
            self._offer_made(offer)
        except Exception:
            log.exception("notification of the offer to party %d failed", offer.party)

    def _offer_made(self, o: OfferMade) -> None:
        if self.spool is None or self.sender is None:
            return
        now = self.h.clock()
        until = o.until.astimezone(self.h.venue.tz).strftime("%H:%M")
        local = now.astimezone(self.h.venue.tz).strftime("%H:%M")
        table = self.h.tables[o.table]
        for t in self._settings.targets:
            key = f"{o.party}:{o.table}:{o.until.isoformat()}"
            if t.for_guests:
                if not o.sms:
                    continue
                text = GUEST_SMS.format(venue=self.h.venue.venue.name, table=table.name, until=until)
                # Not held by quiet hours (they are the staff's); the number is looked up when it is sent.
                if self.spool.put(f"sms:{t.id}:{key}", f"{t.id}{GUEST}{o.party}", text, text, "sk", now, local):
                    self.sender.wake()
            elif t.wants("waiting_list", "info"):
                name = table.name if t.lang == "sk" else (table.name_en or table.name)
                text = OFFER[t.lang].format(table=name, name=o.name, size=o.size, until=until)
                self._put(t, f"offer:{t.id}:{key}", text, now, hold=False, drop_if_quiet=True)

    def _on_push(self, topic: str, data: dict[str, Any]) -> None:
        if topic == "day" and data.get("action") == "close":
            try:
                self.day_closed(date.fromisoformat(data["day"]))
            except Exception:
                log.exception("daily summary failed")

    def day_closed(self, day: date) -> None:
        """The daily summary: to every target that wants info (the Z report's figures)."""
        if self.spool is None:
            return
        report = self._summary(day)
        if report is None:
            return
        now = self.h.clock()
        for t in self._settings.targets:
            if SEVERITY_RANK[t.min_severity] > 0:
                continue
            self._put(t, f"day:{t.id}:{day.isoformat()}", report[t.lang], now, hold=True)

    def day_cut(self) -> None:
        """The sender's thread, every round: at the day cut, the summary of a day nobody closed
        (its running figures, said to be not closed). The spool's key makes it once per day, and
        a close-out later sends nothing more for that day."""
        today = business_day(self.h.clock(), self.h.venue)
        before, self._day_seen = self._day_seen, today
        if before is None or before >= today:
            return
        z = self._report_of(before)
        if z is not None and z.closed_at is None:
            self.day_closed(before)

    def _summary(self, day: date) -> dict[str, str] | None:
        """The day's figures in both languages: takings by method, games, alerts, misbehaving nodes."""
        z = self._report_of(day)
        if z is None:
            return None
        # A day nobody opened counts from its cut (midnight would be naive, and the wrong hour).
        start, end = z.opened_at or business_day_bounds(day, self.h.venue)[0], z.made_at
        with self.h.store.reader() as db:
            games = db.scalar(select(func.count()).select_from(Game).where(Game.started_at >= start, Game.started_at < end))
            alerts = db.scalars(select(Alert).where(Alert.opened_at >= start, Alert.opened_at < end)).all()
        offline = sorted(
            {self.h.tables[a.table_id].name if a.table_id in self.h.tables else str(a.table_id) for a in alerts if a.kind == "node_offline"}
        )
        eur = euros
        closed = z.closed_at is not None
        sk = [f"Deň {day:%d.%m.%Y} {'uzavretý' if closed else 'NEUZAVRETÝ'}: tržba {eur(z.total_cents)}"]
        en = [f"Day {day:%d.%m.%Y} {'closed' if closed else 'NOT CLOSED'}: takings {eur(z.total_cents)}"]
        for m in z.by_method:
            sk.append(f"  {m.name}: {eur(m.net_cents)} ({m.count}×)")
            en.append(f"  {m.name_en}: {eur(m.net_cents)} ({m.count}×)")
        sk.append(f"Hier: {games or 0}, upozornení: {len(alerts)}")
        en.append(f"Games: {games or 0}, alerts: {len(alerts)}")
        if offline:
            sk.append("Výpadky uzlov: " + ", ".join(offline))
            en.append("Nodes offline: " + ", ".join(offline))
        return {"sk": "\n".join(sk), "en": "\n".join(en)}

    # -- staff actions (the commands' handlers, on the writer) ---------------------------------

    @handles(SaveNotifySettings)
    def save(self, c: SaveNotifySettings) -> NotifySettings:
        return self._save(c.settings, c.actor)

    def _save(self, settings: NotifySettings, actor: str) -> NotifySettings:
        new = replace(settings, targets=tuple(t.validated() for t in settings.targets))
        if not 1 <= new.rate_max <= 100 or not 1 <= new.rate_window_min <= 24 * 60:
            raise NotifyRefusal(N_("The rate limit is 1 to 100 messages in 1 to 1440 minutes."))
        before = self._settings
        with self.h.store.session() as db:
            row = db.get(Setting, SETTINGS_KEY)
            if row is None:
                db.add(Setting(key=SETTINGS_KEY, value=new.to_json(), updated_by=actor, updated_at=self.h.clock()))
            else:
                row.value, row.updated_by, row.updated_at = new.to_json(), actor, self.h.clock()
            record_audit(
                db,
                actor,
                "notify.settings",
                "settings:notify",
                {"before": [t.audited() for t in before.targets], "after": [t.audited() for t in new.targets]},
                at=self.h.clock(),
            )
        self._settings = new
        if self.sender is not None:
            self.sender.reset_backoff()
        return new

    @handles(AddNotifyTarget)
    def add_target(self, c: AddNotifyTarget) -> str:
        t = replace(c.target(""), id=secrets.token_hex(4)).validated()
        self._save(replace(self._settings, targets=(*self._settings.targets, t)), c.actor)
        return t.id

    @handles(UpdateNotifyTarget)
    def update_target(self, c: UpdateNotifyTarget) -> None:
        old = self._settings.target(c.target_id)
        if old is None:
            raise NotifyRefusal(N_("This notification target no longer exists."))
        target = c.target(c.target_id)
        new = replace(target, url=target.url.strip() or old.url)  # an empty URL field keeps the secret
        self._save(replace(self._settings, targets=tuple(new if t.id == old.id else t for t in self._settings.targets)), c.actor)

    @handles(RemoveNotifyTarget)
    def remove_target(self, c: RemoveNotifyTarget) -> None:
        if self._settings.target(c.target_id) is None:
            raise NotifyRefusal(N_("This notification target no longer exists."))
        self._save(replace(self._settings, targets=tuple(t for t in self._settings.targets if t.id != c.target_id)), c.actor)

    def send_test(self, target_id: str) -> str | None:
        """Send a test message now (the caller's thread, never the writer's); None when delivered."""
        t = self._settings.target(target_id)
        if t is None:
            raise NotifyRefusal(N_("This notification target no longer exists."))
        text = {"sk": "Skúšobná správa z haly Lavos", "en": "Test message from the Lavos hall"}[t.lang]
        return send(t.url, TITLE[t.lang].format(m=text), text)

    def history(self, limit: int = 100) -> list[Message]:
        return self.spool.history(limit) if self.spool else []

    def counts(self) -> tuple[int, int]:
        return self.spool.counts() if self.spool else (0, 0)
