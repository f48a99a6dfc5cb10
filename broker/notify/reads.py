"""The push notifications' reads (`reads.notify` on the dashboard): the targets (URLs masked) and
what was sent, what waits and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from broker.notify.notifications import Notifications


@dataclass(frozen=True)
class NotifyTargetView:
    id: str
    url: str  # masked
    kinds: tuple[str, ...]
    min_severity: str
    quiet_from: str
    quiet_to: str
    lang: str
    label: str


@dataclass(frozen=True)
class NotifyMessageView:
    id: int
    target: str  # its label or masked URL
    text: str
    created_at: datetime
    state: str  # pending, sent, dropped
    attempts: int
    last_error: str | None
    sent_at: datetime | None
    late: bool
    not_before: datetime | None


@dataclass(frozen=True)
class NotifyHistoryView:
    pending: int
    dropped: int
    messages: list[NotifyMessageView]


class NotifyReads:
    """The notifications' settings and history as views; none of them writes."""

    def __init__(self, notifications: Notifications) -> None:
        self._notifications = notifications

    def targets(self) -> list[NotifyTargetView]:
        """The push targets, their URLs masked (scheme and host only: the rest is a secret)."""
        return [
            NotifyTargetView(t.id, t.masked, t.kinds, t.min_severity, t.quiet_from, t.quiet_to, t.lang, t.label)
            for t in self._notifications.settings.targets
        ]

    def history(self, limit: int = 100) -> NotifyHistoryView:
        """What was sent, what waits and why, newest first; how many the bound dropped."""
        names = {t.id: t.label or t.masked for t in self._notifications.settings.targets}
        pending, dropped = self._notifications.counts()
        rows = [
            NotifyMessageView(
                m.id, names.get(m.target, "—"), m.body, m.created_at, m.state, m.attempts, m.last_error, m.sent_at, m.late, m.not_before
            )
            for m in self._notifications.history(limit)
        ]
        return NotifyHistoryView(pending, dropped, rows)
