"""systemd notifications for the unit's Type=notify and WatchdogSec (READY, WATCHDOG pings, STOPPING).

Silently nothing when not run by systemd."""

from __future__ import annotations

import os

import sdnotify


class SystemdNotify:
    def __init__(self) -> None:
        self._notifier = sdnotify.SystemdNotifier() if os.environ.get("NOTIFY_SOCKET") else None

    def _send(self, state: str) -> None:
        if self._notifier is not None:
            self._notifier.notify(state)

    def ready(self) -> None:
        self._send("READY=1")

    def ping(self) -> None:
        self._send("WATCHDOG=1")

    def stopping(self) -> None:
        self._send("STOPPING=1")
