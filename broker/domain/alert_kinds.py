"""What staff are told, per alert kind: cause key (one open alert per cause), severity, text.

Slovak first (the bar), English second. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AlertSpec:
    kind: str
    cause_key: str
    table_id: str | None
    severity: str
    message: str
    message_en: str


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
        f"{table}: padajú gule, ale stôl nemá spustenú hru",
        f"{table}: balls are dropping but no session is running",
    )


def idle_session(table: str, minutes: int) -> AlertSpec:
    return AlertSpec(
        "idle_session",
        idle_session_key(table),
        table,
        "info",
        f"{table}: hra beží, ale {minutes} min nepadla žiadna guľa",
        f"{table}: session running but no ball dropped for {minutes} min",
    )


def light_without_session(table: str, cause: str) -> AlertSpec:
    return AlertSpec(
        "light_without_session",
        light_without_session_key(table),
        table,
        "warning",
        f"{table}: svetlo svieti bez spustenej hry ({cause})",
        f"{table}: light is on without a session ({cause})",
    )


def node_offline(table: str) -> AlertSpec:
    return AlertSpec(
        "node_offline",
        node_offline_key(table),
        table,
        "critical",
        f"{table}: stolový modul je offline počas hry",
        f"{table}: table node went offline during a session",
    )


def sensor_fault(table: str, sensor: str, kind: str) -> AlertSpec:
    sk = {"stuck": "zablokovaný senzor", "chatter": "senzor hlási rušenie"}.get(kind, kind)
    en = {"stuck": "sensor stuck", "chatter": "sensor chattering"}.get(kind, kind)
    return AlertSpec(
        "sensor_fault", sensor_fault_key(table, sensor), table, "warning", f"{table}: {sk} ({sensor})", f"{table}: {en} ({sensor})"
    )


def outbox_stuck(table: str, depth: int) -> AlertSpec:
    return AlertSpec(
        "outbox_stuck",
        outbox_stuck_key(table),
        table,
        "warning",
        f"{table}: modul neodoslal {depth} udalostí",
        f"{table}: node has {depth} events waiting to be sent",
    )


def foosball_no_member(table: str) -> AlertSpec:
    return AlertSpec(
        "foosball_no_member",
        foosball_no_member_key(table),
        table,
        "critical",
        f"{table}: hrá sa stolný futbal bez prihláseného člena!",
        f"{table}: foosball played without a checked-in member!",
    )


def card_refused(table: str, code: str, reason_sk: str, reason_en: str) -> AlertSpec:
    """One cause per table, not per card: a node inventing UIDs would otherwise open an alert each.

    Every refusal touches the open alert (count, newest reason). An unknown card's text names no
    UID: a UID is a credential, and this text is on every bar screen and in the log.
    """
    if code == "unknown":
        reason_sk, reason_en = "neznáma karta", "unknown card"
    return AlertSpec(
        "card_refused",
        card_refused_key(table),
        table,
        "warning",
        f"{table}: karta odmietnutá — {reason_sk}",
        f"{table}: card refused — {reason_en}",
    )


def prepaid_expired(table: str) -> AlertSpec:
    return AlertSpec(
        "prepaid_expired",
        prepaid_expired_key(table),
        table,
        "warning",
        f"{table}: predplatený čas vypršal, hra pokračuje za bežnú sadzbu",
        f"{table}: prepaid time ran out, play continues at the open rate",
    )


def open_after_closing(table: str) -> AlertSpec:
    return AlertSpec(
        "open_after_closing",
        open_after_closing_key(table),
        table,
        "warning",
        f"{table}: po zatváracej hodine stále beží hra",
        f"{table}: session still running after closing time",
    )
