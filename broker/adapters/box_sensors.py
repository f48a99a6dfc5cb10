"""What the hub box says about itself: is its clock synchronised, how did the last backup go, when
do its TLS certificates end. Read by broker.floor.box_watch in the watchdog's rounds.

The clock: "synchronised since boot" is the kernel's NTP status, which systemd-timesyncd and
chrony both keep and `timedatectl show -p NTPSynchronized` reports: adjtimex(2) answers
TIME_ERROR, or has STA_UNSYNC set, until a time server has set the clock. A Pi has no real-time
clock, so after a power cut without internet its clock is wherever fake-hwclock left it. With
`ntp-or-rtc`, a clock the kernel set at boot from a battery-backed RTC (an RTC hat:
/sys/class/rtc/rtc0/hctosys is 1) counts as right too: only whoever fitted the battery knows
there is one, so it is the installer's choice (deploy/hub/install.sh --rtc).

Each reading is cheap (a syscall, a stat); a certificate is parsed (by openssl, as make-certs.sh
made it) only when its file changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from broker.domain.floor.box_rules import BackupStatus

log = logging.getLogger("lavos.hub.box")

TIME_ERROR = 5  # adjtimex's answer while the clock is not synchronised
STA_UNSYNC = 0x0040
RTC_HCTOSYS = Path("/sys/class/rtc/rtc0/hctosys")


class _Timex(ctypes.Structure):
    # struct timex (linux/timex.h): only `status` is read; the padding covers the reserved ints.
    _fields_ = [
        ("modes", ctypes.c_uint),
        ("offset", ctypes.c_long),
        ("freq", ctypes.c_long),
        ("maxerror", ctypes.c_long),
        ("esterror", ctypes.c_long),
        ("status", ctypes.c_int),
        ("constant", ctypes.c_long),
        ("precision", ctypes.c_long),
        ("tolerance", ctypes.c_long),
        ("time_sec", ctypes.c_long),
        ("time_usec", ctypes.c_long),
        ("tick", ctypes.c_long),
        ("ppsfreq", ctypes.c_long),
        ("jitter", ctypes.c_long),
        ("shift", ctypes.c_int),
        ("stabil", ctypes.c_long),
        ("jitcnt", ctypes.c_long),
        ("calcnt", ctypes.c_long),
        ("errcnt", ctypes.c_long),
        ("stbcnt", ctypes.c_long),
        ("tai", ctypes.c_int),
        ("reserved", ctypes.c_int * 11),
    ]


def ntp_synchronised() -> bool:
    """The kernel's word (what timedatectl's NTPSynchronized says): a time server has set the clock."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    tx = _Timex()  # modes 0: read only
    state = libc.adjtimex(ctypes.byref(tx))
    if state < 0:
        raise OSError(ctypes.get_errno(), "adjtimex failed")
    return state != TIME_ERROR and not tx.status & STA_UNSYNC


def rtc_set_the_clock(hctosys: Path = RTC_HCTOSYS) -> bool:
    """The kernel set the system clock from the RTC at boot (an RTC with a battery keeps time)."""
    try:
        return hctosys.read_text().strip() == "1"
    except OSError:
        return False


def clock_check(kind: str) -> Callable[[], bool] | None:
    """The synchronisation test for `lavos server --clock-check` (off: none)."""
    if kind == "off":
        return None
    if kind == "ntp":
        return ntp_synchronised
    if kind == "ntp-or-rtc":
        return lambda: ntp_synchronised() or rtc_set_the_clock()
    raise ValueError(f"--clock-check {kind!r}: off, ntp or ntp-or-rtc")


def read_backup_status(path: Path) -> BackupStatus | str | None:
    """The last nightly backup's status; None when there is none yet; a str says why it is unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot read {path}: {e.strerror}"
    try:
        return BackupStatus.from_json(text)
    except ValueError as e:
        return f"{path}: {e}"


def certificate_end(path: Path) -> datetime:
    """The notAfter of a PEM certificate (openssl, which made it). OSError/ValueError when unreadable."""
    done = subprocess.run(["openssl", "x509", "-noout", "-enddate", "-in", str(path)], capture_output=True, text=True, timeout=10)
    if done.returncode != 0 or not done.stdout.startswith("notAfter="):
        raise ValueError(f"{path} is not a certificate openssl can read: {done.stderr.strip()[:200]}")
    text = done.stdout.strip().removeprefix("notAfter=")  # e.g. "Mar  9 10:00:00 2029 GMT"
    return datetime.strptime(" ".join(text.split()), "%b %d %H:%M:%S %Y %Z").replace(tzinfo=UTC)


@dataclass
class BoxSensors:
    """What the box watch reads; each part None when not watched (`lavos server` options).

    `synchronised`: the clock test (clock_check); `monotonic`: the clock the wall clock is held
    against for jumps. Tests give a fake clock test and a fake monotonic clock, never a real
    unsynchronised clock."""

    synchronised: Callable[[], bool] | None = None
    backup_status: Path | None = None
    certificates: tuple[Path, ...] = ()
    monotonic: Callable[[], float] = time.monotonic
    _certs: dict[Path, tuple[tuple[int, int], datetime | str]] = field(default_factory=dict)

    @property
    def watches_clock(self) -> bool:
        return self.synchronised is not None

    def clock_synchronised(self) -> bool | None:
        if self.synchronised is None:
            return None
        try:
            return self.synchronised()
        except OSError as e:
            log.warning("cannot read the clock's synchronisation: %s", e)
            return None

    def backup(self) -> BackupStatus | str | None:
        assert self.backup_status is not None
        return read_backup_status(self.backup_status)

    def certificate_ends(self) -> dict[str, datetime | str]:
        """Each watched certificate's end (its file name -> notAfter, or why it cannot be read)."""
        out: dict[str, datetime | str] = {}
        for path in self.certificates:
            try:
                st = os.stat(path)
            except OSError as e:
                out[path.name] = f"cannot read {path}: {e.strerror}"
                continue
            key = (st.st_mtime_ns, st.st_size)
            cached = self._certs.get(path)
            if cached is None or cached[0] != key:
                try:
                    value: datetime | str = certificate_end(path)
                except (OSError, ValueError, subprocess.SubprocessError) as e:
                    value = str(e)
                cached = (key, value)
                self._certs[path] = cached
            out[path.name] = cached[1]
        return out
