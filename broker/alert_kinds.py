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


def play_without_session(table: str) -> AlertSpec:
    return AlertSpec("play_without_session", f"play_without_session:{table}", table, "warning",
                     f"{table}: padajú gule, ale stôl nemá spustenú hru", f"{table}: balls are dropping but no session is running")


def idle_session(table: str, minutes: int) -> AlertSpec:
    return AlertSpec("idle_session", f"idle_session:{table}", table, "info",
                     f"{table}: hra beží, ale {minutes} min nepadla žiadna guľa", f"{table}: session running but no ball dropped for {minutes} min")


def light_without_session(table: str, cause: str) -> AlertSpec:
    return AlertSpec("light_without_session", f"light_without_session:{table}", table, "warning",
                     f"{table}: svetlo svieti bez spustenej hry ({cause})", f"{table}: light is on without a session ({cause})")


def node_offline(table: str) -> AlertSpec:
    return AlertSpec("node_offline", f"node_offline:{table}", table, "critical",
                     f"{table}: stolový modul je offline počas hry", f"{table}: table node went offline during a session")


def sensor_fault(table: str, sensor: str, kind: str) -> AlertSpec:
    sk = {"stuck": "zablokovaný senzor", "chatter": "senzor hlási rušenie"}.get(kind, kind)
    en = {"stuck": "sensor stuck", "chatter": "sensor chattering"}.get(kind, kind)
    return AlertSpec("sensor_fault", f"sensor_fault:{table}:{sensor}", table, "warning",
                     f"{table}: {sk} ({sensor})", f"{table}: {en} ({sensor})")


def outbox_stuck(table: str, depth: int) -> AlertSpec:
    return AlertSpec("outbox_stuck", f"outbox_stuck:{table}", table, "warning",
                     f"{table}: modul neodoslal {depth} udalostí", f"{table}: node has {depth} events waiting to be sent")


def foosball_no_member(table: str) -> AlertSpec:
    return AlertSpec("foosball_no_member", f"foosball_no_member:{table}", table, "critical",
                     f"{table}: hrá sa stolný futbal bez prihláseného člena!", f"{table}: foosball played without a checked-in member!")


def card_refused(table: str, code: str, reason_sk: str, reason_en: str) -> AlertSpec:
    """One cause per table, not per card: a node inventing UIDs would otherwise open an alert each.

    Every refusal touches the open alert (count, newest reason). An unknown card's text names no
    UID: a UID is a credential, and this text is on every bar screen and in the log.
    """
    if code == "unknown":
        reason_sk, reason_en = "neznáma karta", "unknown card"
    return AlertSpec("card_refused", f"card_refused:{table}", table, "warning",
                     f"{table}: karta odmietnutá — {reason_sk}", f"{table}: card refused — {reason_en}")


def prepaid_expired(table: str) -> AlertSpec:
    return AlertSpec("prepaid_expired", f"prepaid_expired:{table}", table, "warning",
                     f"{table}: predplatený čas vypršal, hra pokračuje za bežnú sadzbu", f"{table}: prepaid time ran out, play continues at the open rate")


def open_after_closing(table: str) -> AlertSpec:
    return AlertSpec("open_after_closing", f"open_after_closing:{table}", table, "warning",
                     f"{table}: po zatváracej hodine stále beží hra", f"{table}: session still running after closing time")
