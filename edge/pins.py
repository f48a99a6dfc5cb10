"""The node's GPIO pins: gpiozero's lgpio factory on every Raspberry Pi, its MockFactory only when asked for.

Left to itself, gpiozero tries lgpio, then RPi.GPIO, pigpio and its native backend, and drives the
pins with the first that starts. Under the shipped unit lgpio could not start: at import it makes
the FIFO of its edge notifications (``.lgd-nfy<n>``) in its working directory, or in ``$LG_WD``, and
the unit's working directory was the read-only ``/`` (gpiozero#1106, joan2937/lg#22). The fallbacks
do not drive a Pi 5's pins at all, nor (RPi.GPIO's edge detection, on Bookworm's 6.6 kernel) the
older Pis' beams. So the agent names its factory, and when lgpio cannot start it stops with one
line saying why and what to do (:class:`PinsUnavailable`; the agent's exit status 3, which the unit
does not restart on: restarting would not fix any of these).

``GPIOZERO_PIN_FACTORY`` (gpiozero's own variable) says which: unset or ``lgpio`` on a Pi, ``mock``
for the demo and the tests; any other value is refused rather than half-honoured.
"""

from __future__ import annotations

import atexit
import contextlib
import grp
import os
import pwd
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpiozero.pins import Factory  # gpiozero ships no types: Any to mypy

EXIT_PINS = 3
FACTORY_ENV = "GPIOZERO_PIN_FACTORY"
LG_WD = "LG_WD"
# The label the kernel gives the GPIO controller behind the 40-pin header: Pi 5 (RP1), Pi 4 and
# 400 (BCM2711), Pi 3B+ and Zero 2 W (BCM2837, whose driver is the BCM2835's). Which gpiochip it is
# differs by model and kernel (a Pi 5's was gpiochip4 before kernel 6.6.45, gpiochip0 since).
HEADER_CHIP_LABELS = ("pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835")
UNIT_HINT = "the shipped unit gives it /run/lavos-edge (RuntimeDirectory=, deploy/systemd/lavos-edge.service)"


class PinsUnavailable(RuntimeError):
    """The pins cannot be driven here; the message says why and what to do, in one line."""


def open_pin_factory(dev: Path = Path("/dev")) -> Factory:
    """The factory the node's devices use: lgpio on the header's gpiochip, or MockFactory when asked for."""
    asked = os.environ.get(FACTORY_ENV, "").strip().lower()
    if asked == "mock":
        from gpiozero.pins.mock import MockFactory

        return MockFactory()
    if asked not in ("", "lgpio"):
        raise PinsUnavailable(
            f"{FACTORY_ENV}={asked}: the agent drives the pins with lgpio on every Raspberry Pi (leave {FACTORY_ENV} unset), "
            f"or with gpiozero's mock pins for a demo or a test ({FACTORY_ENV}=mock)"
        )
    lgpio = _import_lgpio()
    chip = _header_chip(lgpio, dev)
    from gpiozero.pins.lgpio import LGPIOFactory

    return LGPIOFactory(chip=chip)


def _who() -> str:
    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _import_lgpio() -> Any:
    """lgpio, imported where it can make its notification pipe: $LG_WD if set, else a private
    temporary directory (so `lavos edge test-sensors` works from any directory, as any user)."""
    wd = os.environ.get(LG_WD)
    if wd:
        if not (os.path.isdir(wd) and os.access(wd, os.W_OK | os.X_OK)):
            raise PinsUnavailable(
                f"{LG_WD}={wd} is not a directory {_who()} can write: lgpio makes its notification pipe there at start; "
                f"point {LG_WD} at one ({UNIT_HINT})"
            )
    else:
        try:
            wd = tempfile.mkdtemp(prefix="lavos-lgpio-")
        except OSError as e:
            raise PinsUnavailable(
                f"lgpio needs a writable directory for its notification pipe and {tempfile.gettempdir()} is not one ({e.strerror}): "
                f"set {LG_WD} to one ({UNIT_HINT})"
            ) from None
        atexit.register(shutil.rmtree, wd, ignore_errors=True)
        os.environ[LG_WD] = wd  # read by lgpio's C library when it loads
    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    try:
        import lgpio
    except ImportError as e:
        raise PinsUnavailable(
            f"the lgpio package is missing ({e}): install the node with deploy/pi/install.sh (pip install '.[edge]' on a Raspberry Pi)"
        ) from None
    except OSError as e:  # lgpio's own start: the FIFO could not be made or opened
        raise PinsUnavailable(
            f"lgpio cannot make its notification pipe in {LG_WD}={wd} ({e.strerror}): point {LG_WD} at a directory {_who()} can write ({UNIT_HINT})"
        ) from None
    finally:
        if cwd is not None:  # lgpio's C library changes into LG_WD when it loads
            with contextlib.suppress(OSError):
                os.chdir(cwd)
    return lgpio


def _chip_number(path: Path) -> int:
    suffix = path.name.removeprefix("gpiochip")
    return int(suffix) if suffix.isdigit() else 1 << 30


def _header_chip(lgpio: Any, dev: Path) -> int:
    """The number of the gpiochip behind the 40-pin header, found by its label."""
    chips = sorted((p for p in dev.glob("gpiochip*") if _chip_number(p) < 1 << 30), key=_chip_number)
    if not chips:
        try:  # what lgpio itself says: a Raspberry Pi always has a gpiochip0
            lgpio.gpiochip_close(lgpio.gpiochip_open(0))
            said = "it opened"
        except lgpio.error as e:
            said = str(e)
        raise PinsUnavailable(
            f"no GPIO chip: {dev}/gpiochip0 does not exist (lgpio: {said}): this is not a Raspberry Pi, or its kernel has no GPIO driver; "
            f"run the agent on the table's Pi (or with {FACTORY_ENV}=mock to try it without pins)"
        )
    denied: list[Path] = []
    seen: list[str] = []
    for path in chips:
        try:
            handle = lgpio.gpiochip_open(_chip_number(path))
        except lgpio.error as e:
            if not os.access(path, os.R_OK | os.W_OK):
                denied.append(path)
            seen.append(f"{path.name}: {e}")
            continue
        try:
            label = str(lgpio.gpio_get_chip_info(handle)[3])
        finally:
            lgpio.gpiochip_close(handle)
        if label in HEADER_CHIP_LABELS:
            return _chip_number(path)
        seen.append(f"{path.name}: {label}")
    if denied:
        raise PinsUnavailable(_denied(denied[0]))
    raise PinsUnavailable(
        f"none of the GPIO chips is a Raspberry Pi's header ({'; '.join(seen)}; a Pi's is one of {', '.join(HEADER_CHIP_LABELS)}): "
        "this is not a Raspberry Pi 3B+, 4, 5 or Zero 2 W"
    )


def _denied(path: Path) -> str:
    who = _who()
    st = path.stat()
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return (
        f"{who} may not open {path} (group {group}, mode {st.st_mode & 0o777:o}): add the user to that group "
        f"(sudo usermod -aG {group} {who}; deploy/pi/install.sh does) and start the agent again"
    )
