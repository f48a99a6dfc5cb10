"""What staff are told, per alert kind: cause key (one open alert per cause), severity, text.

Slovak first (the bar), English second. Pure: no I/O. A spec holds the text without the table;
the alert book puts the table's display name in front when it opens the alert (`worded`), so
staff read "Pool 9: …" while the cause key, the API's table field and the log keep the id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Foosball without a member is the one the club cares about most ("LEN PRE REGISTROVANÝCH ČLENOV"):
# the banner and the live push shout these.
LOUD_KINDS = frozenset({"foosball_no_member"})


@dataclass(frozen=True)
class AlertSpec:
    kind: str
    cause_key: str
    table_id: str | None
    severity: str
    text: str
    text_en: str

    def worded(self, name: str | None = None, name_en: str | None = None) -> tuple[str, str]:
        """(Slovak, English) message as stored and shown, led by the table's name (default: its id)."""
        sk, en = name or self.table_id, name_en or name or self.table_id
        if not sk:
            return self.text, self.text_en
        return f"{sk}: {self.text}", f"{en}: {self.text_en}"

    @property
    def message(self) -> str:
        return self.worded()[0]

    @property
    def message_en(self) -> str:
        """For the log: led by the table id."""
        return self.worded()[1]


_POCKET = re.compile(r"^pocket-(\d+)$")
_SENSOR_PLACES = {
    "goal-home": ("pri bránke domácich", "at the home goal"),
    "goal-away": ("pri bránke hostí", "at the away goal"),
    "activity": ("automatu", "of the dart machine"),
}


def sensor_place(sensor: str) -> tuple[str, str]:
    """Where a beam sensor is, as people say it: pocket-0 → ("v kapse 1", "in pocket 1").

    The wire names pockets from 0 (devices.kinds.pocket_sensor); the pages number them from 1.
    """
    if m := _POCKET.match(sensor):
        n = int(m.group(1)) + 1
        return f"v kapse {n}", f"in pocket {n}"
    return _SENSOR_PLACES.get(sensor, (sensor, sensor))


# -- cause keys: one open alert per cause. Opening and settling must spell a key the same way,
# so each is built here only (the hub, the ingest rules, the watchdog and the dashboard use these).


def play_without_session_key(table: str) -> str:
    return f"play_without_session:{table}"


def idle_session_key(table: str) -> str:
    return f"idle_session:{table}"


def light_without_session_key(table: str) -> str:
    return f"light_without_session:{table}"


def node_offline_key(table: str) -> str:
    return f"node_offline:{table}"


def node_contract_key(table: str) -> str:
    return f"node_contract:{table}"


def sensor_fault_key(table: str, sensor: str) -> str:
    return f"sensor_fault:{table}:{sensor}"


def outbox_stuck_key(table: str) -> str:
    return f"outbox_stuck:{table}"


def foosball_no_member_key(table: str) -> str:
    return f"foosball_no_member:{table}"


def card_refused_key(table: str) -> str:
    return f"card_refused:{table}"


def prepaid_expired_key(table: str) -> str:
    return f"prepaid_expired:{table}"


def open_after_closing_key(table: str) -> str:
    return f"open_after_closing:{table}"


def play_without_session(table: str) -> AlertSpec:
    return AlertSpec(
        "play_without_session",
        play_without_session_key(table),
        table,
        "warning",
        "padajú gule, ale hra nie je zapnutá",
        "balls are being potted but no game is running",
    )


def idle_session(table: str, minutes: int) -> AlertSpec:
    return AlertSpec(
        "idle_session",
        idle_session_key(table),
        table,
        "info",
        f"hra beží, ale {minutes} min nepadla žiadna guľa",
        f"a game is running but no ball has been potted for {minutes} min",
    )


# Why a light is on with no game: the node's light cause (devices.contract.LightCause), or
# "dashboard" for staff switching it by hand (broker.floor.table_service).
_LIGHT_CAUSES = {
    "button": ("zapnuté tlačidlom pri stole", "switched on with the button at the table"),
    "boot": ("zapnuté po spustení modulu", "switched on when the module started"),
    "dashboard": ("zapnuté z obrazovky obsluhy", "switched on from the dashboard"),
    "command": ("zapnuté príkazom hubu", "switched on by the hub's command"),
    "failsafe": ("zapnuté bezpečnostným režimom modulu", "switched on by the module's failsafe"),
}


def light_without_session(table: str, cause: str) -> AlertSpec:
    sk, en = _LIGHT_CAUSES.get(cause, (cause, cause))
    return AlertSpec(
        "light_without_session",
        light_without_session_key(table),
        table,
        "warning",
        f"svetlo svieti bez hry ({sk})",
        f"the light is on with no game ({en})",
    )


def node_offline(table: str) -> AlertSpec:
    return AlertSpec(
        "node_offline",
        node_offline_key(table),
        table,
        "critical",
        "modul pri stole sa počas hry odpojil",
        "the table's module went offline during a game",
    )


def node_contract(table: str, node_speaks: int, hub_speaks: int) -> AlertSpec:
    return AlertSpec(
        "node_contract",
        node_contract_key(table),
        table,
        "critical",
        f"modul hovorí protokolom v{node_speaks}, hub v{hub_speaks}: jeho správy sa odmietajú, kým obaja nebežia na verziách "
        "s rovnakým protokolom (aktualizujte moduly z hubu)",
        f"the module speaks wire contract v{node_speaks}, the hub v{hub_speaks}: its messages are refused until both run "
        "versions that speak the same one (update the modules from the hub)",
    )


def sensor_fault(table: str, sensor: str, kind: str) -> AlertSpec:
    sk = {"stuck": "zaseknutý senzor", "chatter": "rušený senzor"}.get(kind, kind)
    en = {"stuck": "sensor stuck", "chatter": "sensor chattering"}.get(kind, kind)
    where_sk, where_en = sensor_place(sensor)
    return AlertSpec("sensor_fault", sensor_fault_key(table, sensor), table, "warning", f"{sk} {where_sk}", f"{en} {where_en}")


def outbox_stuck(table: str, depth: int) -> AlertSpec:
    return AlertSpec(
        "outbox_stuck",
        outbox_stuck_key(table),
        table,
        "warning",
        f"modul neodoslal {depth} {_udalost(depth)}",
        f"the module has {depth} {'event' if depth == 1 else 'events'} waiting to be sent",
    )


def _udalost(n: int) -> str:
    """1 udalosť / 2–4 udalosti / 5 udalostí: the stored text is Slovak, so its plural is chosen here."""
    return "udalosť" if n == 1 else "udalosti" if 2 <= n <= 4 else "udalostí"


def foosball_no_member(table: str) -> AlertSpec:
    return AlertSpec(
        "foosball_no_member",
        foosball_no_member_key(table),
        table,
        "critical",
        "hrá sa stolný futbal bez prihláseného člena!",
        "foosball is being played with no member checked in!",
    )


def card_refused(table: str, code: str, member: str | None = None, year: int | None = None) -> AlertSpec:
    """One cause per table, not per card: a node inventing UIDs would otherwise open an alert each.

    Every refusal touches the open alert (count, newest reason). `code` is the card check's
    verdict (broker.storage.members.is_valid_card: "unknown", "inactive", "unpaid"). An unknown
    card's text names no UID: a UID is a credential, and this text is on every bar screen and in the log.
    """
    if code == "inactive":
        reason_sk, reason_en = f"{member}: členstvo nie je aktívne", f"{member}: membership is inactive"
    elif code == "unpaid":
        reason_sk, reason_en = f"{member}: nezaplatený členský príspevok za rok {year}", f"{member}: fee unpaid for {year}"
    else:
        reason_sk, reason_en = "neznáma karta", "unknown card"
    return AlertSpec(
        "card_refused",
        card_refused_key(table),
        table,
        "warning",
        f"karta odmietnutá — {reason_sk}",
        f"card refused — {reason_en}",
    )


def prepaid_expired(table: str) -> AlertSpec:
    return AlertSpec(
        "prepaid_expired",
        prepaid_expired_key(table),
        table,
        "warning",
        "predplatený čas vypršal, hra pokračuje za bežnú sadzbu",
        "the prepaid time has run out; play goes on at the standard rate",
    )


def open_after_closing(table: str) -> AlertSpec:
    return AlertSpec(
        "open_after_closing",
        open_after_closing_key(table),
        table,
        "warning",
        "po záverečnej sa na stole stále hrá",
        "a game is still running after closing time",
    )


# -- eKasa (broker.till.fiscal): hall alerts, no table --------------------------------------


def ekasa_unreachable_key() -> str:
    return "ekasa_unreachable"


def ekasa_offline_overdue_key() -> str:
    return "ekasa_offline_overdue"


def ekasa_unreachable(minutes: int) -> AlertSpec:
    return AlertSpec(
        "ekasa_unreachable",
        ekasa_unreachable_key(),
        None,
        "critical",
        f"eKasa neodpovedá už {minutes} min: bloky sa neevidujú, pri výpadku píšte paragóny",
        f"eKasa has not answered for {minutes} min: receipts are not being registered; write paragóny while it is down",
    )


def ekasa_offline_overdue(count: int, hours: int) -> AlertSpec:
    word = "doklad" if count == 1 else "doklady" if 2 <= count <= 4 else "dokladov"
    return AlertSpec(
        "ekasa_offline_overdue",
        ekasa_offline_overdue_key(),
        None,
        "warning",
        f"{count} {word} v eKase čaká na odoslanie už {hours} h (zákon dáva 96 h): skontrolujte internet pokladnice",
        f"{count} {'receipt has' if count == 1 else 'receipts have'} been waiting in eKasa to be sent for {hours} h "
        "(the law allows 96 h): check the till's internet",
    )


# -- the records waiting for the central reporting hub (broker.outbox.records) -----------------------


def central_backlog_key() -> str:
    return "central_backlog"


def central_refused_key() -> str:
    return "central_refused"


def central_refused(seq: int, ref: str) -> AlertSpec:
    """The centre refused a record of the hall as not what a hall sends (or the hall's own check did,
    broker.domain.central_records): it is set aside in the hall's outbox, kept, and the records after
    it go on. One open alert for every such record (it counts them); the manager's Modules page lists them."""
    return AlertSpec(
        "central_refused",
        central_refused_key(),
        None,
        "warning",
        f"centrála odmietla záznam {ref} (č. {seq}): zostáva v herni, ďalšie záznamy idú ďalej; zoznam je na stránke Moduly",
        f"the centre refused record {ref} (no. {seq}): it stays in the hall, the records after it go on; the Modules page lists it",
    )


def central_backlog(percent: int, megabytes: int, full: bool) -> AlertSpec:
    """The hall's records for the centre are piling up (the link is down): `percent` of the bound.

    Nothing is lost at 100 % either: the hall keeps taking money and keeps every record, past the
    bound (broker.outbox.records says why); the alert only turns critical, because the disk is next."""
    if full:
        return AlertSpec(
            "central_backlog",
            central_backlog_key(),
            None,
            "critical",
            f"záznamy pre centrálu zaberajú {megabytes} MB, nad limitom: skontrolujte spojenie s centrálou, inak sa zaplní disk",
            f"records for the centre take {megabytes} MB, over the limit: check the link to the centre before the disk fills",
        )
    return AlertSpec(
        "central_backlog",
        central_backlog_key(),
        None,
        "warning",
        f"záznamy pre centrálu sa hromadia ({percent} % limitu): spojenie s centrálou nefunguje",
        f"records for the centre are piling up ({percent} % of the limit): the link to the centre is down",
    )


# -- the hub box itself (broker.floor.box_watch): its clock, its backups, its certificates ----------


def clock_unsynced_key() -> str:
    return "clock_unsynced"


def clock_jump_key() -> str:
    return "clock_jump"


def backup_failed_key() -> str:
    return "backup_failed"


def backup_missing_key() -> str:
    return "backup_missing"


def cert_expiring_key(name: str) -> str:
    return f"cert_expiring:{name}"


def clock_unsynced() -> AlertSpec:
    """The decision (README, "The billing clock"): the hub goes on billing and taking payments with a
    clock never synchronised since boot (refusing would close a club whose internet is down), says so on
    every tablet, and marks every game that runs meanwhile."""
    return AlertSpec(
        "clock_unsynced",
        clock_unsynced_key(),
        None,
        "critical",
        "Hodiny hubu sa od spustenia nesynchronizovali (NTP): hry a platby idú ďalej, ale ich časy môžu byť posunuté. "
        "Hry, ktoré teraz bežia, sú označené: skontrolujte ich účty a pripojenie boxu na internet.",
        "The hub's clock has not been synchronised since it started (NTP): games and payments go on, but their times may be off. "
        "The games running now are marked: check their bills and the box's internet connection.",
    )


def clock_jump(sk_by: str, en_by: str) -> AlertSpec:
    return AlertSpec(
        "clock_jump",
        clock_jump_key(),
        None,
        "critical",
        f"Hodiny hubu skočili o {sk_by}: hry, ktoré vtedy bežali, sú označené; skontrolujte ich účty.",
        f"The hub's clock jumped by {en_by}: the games running then are marked; check their bills.",
    )


def backup_failed(when_sk: str, when_en: str, error: str, copy_only: bool) -> AlertSpec:
    if copy_only:
        return AlertSpec(
            "backup_failed",
            backup_failed_key(),
            None,
            "critical",
            f"Záloha z {when_sk} je len na boxe: kópia mimo boxu zlyhala ({error}). Skontrolujte USB kľúč / NAS.",
            f"The backup of {when_en} is on the box only: copying it off the box failed ({error}). Check the USB stick / NAS.",
        )
    return AlertSpec(
        "backup_failed",
        backup_failed_key(),
        None,
        "critical",
        f"Nočná záloha z {when_sk} zlyhala ({error}): pozrite journalctl -u lavos-backup.",
        f"The nightly backup of {when_en} failed ({error}): see journalctl -u lavos-backup.",
    )


def backup_missing(last_sk: str | None, last_en: str | None, hours: int) -> AlertSpec:
    if last_sk is None or last_en is None:
        sk, en = f"Box nemá žiadnu zálohu (hub beží {hours} h)", f"The box has no backup at all (the hub has run for {hours} h)"
    else:
        sk, en = f"Posledná záloha je z {last_sk}, pred {hours} h", f"The last backup is of {last_en}, {hours} h ago"
    return AlertSpec(
        "backup_missing",
        backup_missing_key(),
        None,
        "critical",
        f"{sk}: nočná záloha (lavos-backup.timer) nebeží. Pozrite systemctl status lavos-backup.timer.",
        f"{en}: the nightly backup (lavos-backup.timer) is not running. See systemctl status lavos-backup.timer.",
    )


def cert_expiring(name: str, until_sk: str, until_en: str, days: int) -> AlertSpec:
    gone = days < 0
    return AlertSpec(
        "cert_expiring",
        cert_expiring_key(name),
        None,
        "critical" if days < 7 else "warning",
        (f"Certifikát {name} vypršal {until_sk}" if gone else f"Certifikát {name} vyprší {until_sk} (o {days} d)")
        + ": moduly pri stoloch sa potom nepripoja. Obnovte ho: sudo /opt/lavos/deploy/hub/install.sh",
        (f"The certificate {name} expired on {until_en}" if gone else f"The certificate {name} expires on {until_en} (in {days} days)")
        + ": the table modules cannot connect after that. Renew it: sudo /opt/lavos/deploy/hub/install.sh",
    )


# -- the monitoring rules (vmalert over VictoriaMetrics: deploy/vmalert/lavos-rules.yml) -----------
# Their words are the rule file's own (annotations summary / summary_en); the hub keeps one open
# alert per rule and table (broker.floor.monitoring_rules), and a table's name leads the text as for
# every table alert.

MONITORING = "monitoring"


def monitoring_rule_key(rule: str, table: str | None) -> str:
    return f"rule:{rule}:{table}" if table else f"rule:{rule}"


def monitoring_rule(rule: str, table: str | None, severity: str, text: str, text_en: str, *, in_venue: bool = True) -> AlertSpec:
    """`in_venue` False: a table label the venue does not know (renamed since), named in the text, no table id."""
    if table and not in_venue:
        return AlertSpec(MONITORING, monitoring_rule_key(rule, table), None, severity, f"{table}: {text}", f"{table}: {text_en}")
    return AlertSpec(MONITORING, monitoring_rule_key(rule, table), table, severity, text, text_en)
