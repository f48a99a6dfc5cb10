"""Sending push notifications through Apprise, on a thread of its own (never the hub's writer).

The thread takes due messages from the spool (broker.adapters.notify_spool), sends each to its
target's Apprise URL and marks it sent right after (spool first, send, mark: see the spool for
the one-duplicate window). A target that fails waits (backoff) while the others go on. A message
that goes out more than `late_after` after it was made says so: "(oneskorené, 20:31)".

Apprise URLs hold passwords and tokens: Apprise's own log lines are captured (never passed to
our log) and only our masked reason ("not delivered", the masked host) is kept in the history.

Closing: the thread writes the spool (marks what it sent), so the spool is closed only once the
thread has finished. `close(release)` stops it and waits `close_wait_s` for it; a send still in
flight then (a slow receiver can hold one for minutes: Apprise's timeouts are per socket read) is
not waited for: the thread runs `release` itself as its last act, after marking that message, so
no close ever races its write and a hub's shutdown is not held by a receiver.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from broker.adapters.notify_spool import NotifySpool

log = logging.getLogger("lavos.notify")

LATE = {"sk": "(oneskorené, {at})", "en": "(late, {at})"}


def _silence_apprise() -> None:
    """Apprise logs the full URL it loads (passwords, tokens) and urllib3 (used here only by
    Apprise's requests) logs the path (an ntfy topic is the secret): neither reaches the hall's
    log, at any level. Called after importing apprise, which sets its logger up on import."""
    logging.getLogger("apprise").disabled = True
    logging.getLogger("urllib3.connectionpool").disabled = True


def mask_url(url: str) -> str:
    """What staff may see of a target: scheme and host, never the user, password, token or path."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
    except ValueError:
        return "…"
    secret = "…@" if (parts.username or parts.password) else ""
    if "." not in host and ":" not in host and host != "localhost":
        host = "…"  # not a host name: a token in the host's place (tgram://<bot token>/…)
    return f"{parts.scheme}://{secret}{host}" + ("/…" if parts.path.strip("/") or parts.query else "")


def valid_url(url: str) -> bool:
    """Does Apprise know this URL's service (no network)?"""
    import apprise

    _silence_apprise()
    return bool(apprise.Apprise().add(url.strip()))


def send(url: str, title: str, body: str) -> str | None:
    """Send one message; None when delivered, else why not (no secret in it)."""
    import apprise

    _silence_apprise()
    a = apprise.Apprise()
    if not a.add(url):
        return "not an Apprise URL"
    try:
        ok = bool(a.notify(title=title, body=body))
    except Exception as e:  # noqa: BLE001 - a plugin's bug must not kill the thread
        return f"not delivered ({type(e).__name__}) to {mask_url(url)}"
    return None if ok else f"not delivered to {mask_url(url)}"


class Notifier:
    poll_s = 2.0
    backoff_s: tuple[float, ...] = (2.0, 5.0, 15.0, 30.0, 60.0)
    late_after = timedelta(seconds=60)
    close_wait_s = 15.0  # how long close() waits for a send in flight before handing `release` to the thread

    def __init__(
        self,
        spool: NotifySpool,
        url_of: Callable[[str], str | None],
        clock: Callable[[], datetime],
        every_round: Callable[[], None] | None = None,
    ) -> None:
        self.spool = spool
        self._every_round = every_round  # the hall's own check each round (the day cut's summary)
        self._url_of = url_of
        self._clock = clock
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._retry: dict[str, tuple[float, int]] = {}  # target -> (monotonic time, failures)
        # Who runs close()'s `release` (closing the spool): close() if the thread has finished by then,
        # else the thread as its last act. _gate orders the two; _finished / _release are under it.
        self._gate = threading.Lock()
        self._finished = False
        self._release: Callable[[], None] | None = None

    def start(self) -> None:
        self._stop.clear()
        self._finished, self._release = False, None
        self._thread = threading.Thread(target=self._run, name="notify-sender", daemon=True)
        self._thread.start()
        self._wake.set()  # resume whatever was left pending

    def wake(self) -> None:
        self._wake.set()

    def close(self, release: Callable[[], None] | None = None) -> bool:
        """Stop the thread; `release` (closing what the thread writes: the spool) runs once the thread
        has finished, exactly once: here, if it finishes within close_wait_s, else on the thread when
        its send in flight returns. True when the thread had finished here."""
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=self.close_wait_s)
        with self._gate:
            done = thread is None or self._finished
            if not done:
                self._release = release
        if done and release is not None:
            release()
        if not done:
            log.warning("a notification was still being sent at shutdown; the sender closes its spool when that send ends")
        return done

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self._wake.wait(self.poll_s)
                self._wake.clear()
                if self._stop.is_set():
                    break
                try:
                    if self._every_round is not None:
                        self._every_round()
                    self._round()
                except Exception:
                    log.exception("notification round failed")
        finally:
            with self._gate:
                self._finished = True
                release, self._release = self._release, None
            if release is not None:  # close() gave up waiting for us: we are the spool's last writer
                try:
                    release()
                except Exception:
                    log.exception("closing the notification spool failed")

    def _round(self) -> None:
        blocked: set[str] = set()
        for m in self.spool.due(self._clock()):
            if self._stop.is_set():
                return
            if m.target in blocked:
                continue
            retry_at, failures = self._retry.get(m.target, (0.0, 0))
            if time.monotonic() < retry_at:
                blocked.add(m.target)
                continue
            url = self._url_of(m.target)
            if url is None:
                self.spool.drop_target(m.target, "target removed")
                continue
            now = self._clock()
            late = now - m.created_at > self.late_after
            body = f"{m.body}\n{LATE.get(m.lang, LATE['en']).format(at=m.created_local)}" if late else m.body
            error = send(url, m.title, body)
            if error is None:
                self.spool.mark_sent(m.id, self._clock(), late)  # right after the send: the duplicate window
                self._retry.pop(m.target, None)
            else:
                self.spool.mark_failed_attempt(m.id, error)
                self._retry[m.target] = (time.monotonic() + self.backoff_s[min(failures, len(self.backoff_s) - 1)], failures + 1)
                blocked.add(m.target)
                if failures == 0:  # once per outage, not once per retry
                    log.warning("notification %d not delivered (%s), will retry", m.id, error)

    def reset_backoff(self) -> None:
        self._retry.clear()
        self._wake.set()
