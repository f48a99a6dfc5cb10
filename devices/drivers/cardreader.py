"""Club-card readers: one interface, a USB keyboard-wedge reader, a simulated one, an MFRC522.

Every reader hands ``on_card`` a UID normalised to lowercase hex, which is what the wire contract's
``card`` event carries (``devices.contract.CardData``: ``^[0-9a-f]{4,32}$``).

Keyboard-wedge readers "type" the card number and press Enter. Most cheap 125 kHz / 13.56 MHz
wedge readers type the card's 32-bit UID as a 10-digit decimal number ("0012345678"); we turn that
into the hex of the same value, zero-padded to 8 digits ("00bc614e"), so that a card reads the same
through a wedge reader and through an MFRC522 (which reports UID bytes). A number too big for 32
bits (a 7-byte UID typed in decimal) becomes the hex of its value, padded to an even length.
Readers set to type hex (their text contains a-f) are taken as hex; a reader configured to type hex
needs ``hex_input=True``, or a hex UID that happens to contain only digits would be read as decimal.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol, Self

if TYPE_CHECKING:
    from devices.nodeconfig import CardReaderSettings

log = logging.getLogger(__name__)

OnCard = Callable[[str], None]


class CardReaderError(RuntimeError):
    """A reader that cannot work here (missing library, not a Pi, used before start...)."""


class BadUid(ValueError):
    """What a reader produced is not a card UID."""


# --------------------------------------------------------------------------- pure parsing

_MAX_HEX = 32  # the contract's limit
_HEX_RE = re.compile(r"[0-9a-f]+")
_DEC_RE = re.compile(r"[0-9]+")
_MAX_DEC = 39  # 128 bits in decimal; also keeps int() away from huge strings
_SEPARATORS = re.compile(r"[\s:\-]")


def normalise_uid(raw: str, *, hex_input: bool = False) -> str:
    """A card UID as typed or reported by a reader → lowercase hex, or BadUid saying why."""
    text = _SEPARATORS.sub("", raw).lower()
    if not text:
        raise BadUid("empty card number")
    if _DEC_RE.fullmatch(text) and not hex_input:
        if len(text) > _MAX_DEC:
            raise BadUid(f"card number has {len(text)} digits; a UID has at most {_MAX_DEC}")
        value = int(text)
        digits = f"{value:x}"
        width = 8 if value < 2**32 else len(digits) + len(digits) % 2
        text = digits.rjust(width, "0")
    elif not _HEX_RE.fullmatch(text):
        raise BadUid("card number is neither decimal nor hex")
    if not 4 <= len(text) <= _MAX_HEX:
        raise BadUid(f"card number gives {len(text)} hex digits; a UID has 4 to {_MAX_HEX}")
    return text


# Linux input key codes (include/uapi/linux/input-event-codes.h, a stable kernel ABI), so this
# parser needs no evdev import and runs anywhere. Keypad digits too: some readers use them.
_KEY_CHARS: dict[int, str] = {
    **dict(zip((2, 3, 4, 5, 6, 7, 8, 9, 10, 11), "1234567890")),
    **dict(zip((82, 79, 80, 81, 75, 76, 77, 71, 72, 73), "0123456789")),
    **dict(zip((30, 48, 46, 32, 18, 33), "abcdef")),
}
KEY_ENTER, KEY_KPENTER = 28, 96
_SHIFT_KEYS = frozenset({42, 54})  # hex readers may type A-F with shift held
EV_KEY = 1
_KEY_DOWN = 1  # 0 is key up, 2 autorepeat: only a press types a character
_MAX_TYPED = 64  # a runaway "keyboard" is not a card


class WedgeDecoder:
    """Key presses of a keyboard-wedge reader → card UIDs (pure: feed it event fields).

    ``key(code, value)`` returns the normalised UID when Enter ends a card number, else None, and
    raises BadUid when Enter ends something that is not a card number (a stray key, too many
    digits); it is ready for the next card either way.
    """

    def __init__(self, *, hex_input: bool = False) -> None:
        self._hex_input = hex_input
        self._typed: list[str] = []
        self._garbage: str | None = None

    def event(self, ev_type: int, code: int, value: int) -> str | None:
        """An input event as evdev delivers it; everything but key presses is ignored."""
        if ev_type != EV_KEY:
            return None
        return self.key(code, value)

    def key(self, code: int, value: int) -> str | None:
        if value != _KEY_DOWN or code in _SHIFT_KEYS:
            return None
        if code in (KEY_ENTER, KEY_KPENTER):
            typed, garbage = "".join(self._typed), self._garbage
            self._typed, self._garbage = [], None
            if garbage:
                raise BadUid(garbage)
            return normalise_uid(typed, hex_input=self._hex_input)
        char = _KEY_CHARS.get(code)
        if char is None:
            self._garbage = self._garbage or f"key code {code} is not a digit"
        elif len(self._typed) >= _MAX_TYPED:
            self._garbage = self._garbage or f"more than {_MAX_TYPED} characters before Enter"
        else:
            self._typed.append(char)
        return None


# --------------------------------------------------------------------------- the interface


class CardReader(ABC):
    """A club-card reader. ``start`` once; ``on_card`` gets lowercase-hex UIDs, from any thread."""

    @abstractmethod
    def start(self, on_card: OnCard) -> None: ...

    @abstractmethod
    def close(self) -> None:
        """Stop reading and release the device; safe to call more than once."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _deliver(on_card: OnCard, uid: str, source: str) -> None:
    # The callback belongs to the agent; its bug must not end the reader's thread.
    try:
        on_card(uid)
    except Exception:
        # A card UID is a credential: it goes no higher than DEBUG in a log (see the README, security).
        log.exception("card reader %s: handling a card failed", source)
        log.debug("card reader %s: the card was %s", source, uid)


class SimulatedCardReader(CardReader):
    """A reader for tests and the demo: ``tap(uid)`` delivers a card in the caller's thread."""

    def __init__(self) -> None:
        self._on_card: OnCard | None = None

    def start(self, on_card: OnCard) -> None:
        self._on_card = on_card

    def close(self) -> None:
        self._on_card = None

    def tap(self, uid: str) -> str:
        """Present a card (decimal as a wedge reader types it, or hex); returns the UID delivered."""
        if self._on_card is None:
            raise CardReaderError("simulated card reader is not started (or already closed)")
        normalised = normalise_uid(uid)
        _deliver(self._on_card, normalised, "simulated")
        return normalised


class _ThreadedReader(CardReader):
    """A reader polled by a background thread until close()."""

    name = "reader"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._on_card: OnCard | None = None

    def start(self, on_card: OnCard) -> None:
        if self._thread is not None:
            raise CardReaderError(f"card reader {self.name} already started")
        self._on_card = on_card
        self._thread = threading.Thread(target=self._run, name=f"cardreader-{self.name}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _wake(self) -> None:
        """Interrupt a blocking wait in the thread (the stop event is already set)."""

    def _emit(self, uid: str) -> None:
        assert self._on_card is not None
        _deliver(self._on_card, uid, self.name)

    @abstractmethod
    def _run(self) -> None: ...


class _InputEvent(Protocol):
    """What this reader reads of an evdev.InputEvent (evdev ships no types)."""

    type: int
    code: int
    value: int


class _InputDevice(Protocol):
    """What this reader uses of an evdev.InputDevice once it is open and grabbed."""

    fd: int

    def read(self) -> Iterator[_InputEvent]: ...


class EvdevCardReader(_ThreadedReader):
    """A USB keyboard-wedge RFID reader, read through evdev.

    The device is grabbed, so the typed digits never reach a console or a logged-in shell. If the
    reader is unplugged (or not there yet), one warning is logged and opening is retried every
    ``retry_s`` seconds; a log line says when it is back.
    """

    def __init__(self, device_path: str, *, retry_s: float = 2.0, hex_input: bool = False) -> None:
        super().__init__()
        import evdev  # noqa: F401  (fail at construction, not in the thread, where it is missing)

        self.device_path = device_path
        self.name = device_path
        self._retry_s = retry_s
        self._hex_input = hex_input
        self._wake_r, self._wake_w = os.pipe()
        self.opened = threading.Event()  # set while the device is open and grabbed

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def close(self) -> None:
        super().close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def _run(self) -> None:
        import evdev

        reported = False  # one warning per outage, not one per retry
        while not self._stop.is_set():
            try:
                device = evdev.InputDevice(self.device_path)
            except OSError as exc:
                if not reported:
                    log.warning(
                        "card reader %s: cannot open (%s); retrying every %.1f s",
                        self.device_path,
                        exc.strerror or exc,
                        self._retry_s,
                    )
                reported = True
                self._stop.wait(self._retry_s)
                continue
            try:
                device.grab()
                self.opened.set()
                log.info("card reader %s: open (%s)", self.device_path, device.name)
                reported = False
                self._read(device)
            except OSError as exc:
                log.warning(
                    "card reader %s: lost (%s), unplugged?; retrying every %.1f s",
                    self.device_path,
                    exc.strerror or exc,
                    self._retry_s,
                )
                reported = True
                self._stop.wait(self._retry_s)
            finally:
                self.opened.clear()
                with contextlib.suppress(OSError):
                    device.close()

    def _read(self, device: _InputDevice) -> None:
        decoder = WedgeDecoder(hex_input=self._hex_input)
        while not self._stop.is_set():
            ready, _, _ = select.select([device.fd, self._wake_r], [], [])
            if device.fd not in ready:
                continue
            try:
                events = list(device.read())
            except BlockingIOError:
                continue
            for ev in events:
                try:
                    uid = decoder.event(ev.type, ev.code, ev.value)
                except BadUid as exc:
                    log.warning("card reader %s: ignored a read: %s", self.device_path, exc)
                    continue
                if uid is not None:
                    self._emit(uid)


class Mfrc522CardReader(_ThreadedReader):
    """An MFRC522 (13.56 MHz, SPI) reader on a Raspberry Pi, via the optional ``mfrc522`` package.

    A card held on the reader is reported once; it is reported again only after it has been away
    for ``away_s`` (a card resting on the reader does not answer every poll).
    """

    name = "mfrc522"

    def __init__(self, *, poll_s: float = 0.1, away_s: float = 1.0) -> None:
        super().__init__()
        try:
            from mfrc522 import MFRC522
        except Exception as exc:  # noqa: BLE001 - RPi.GPIO raises RuntimeError off a Pi, not ImportError
            raise CardReaderError(
                "the MFRC522 card reader needs a Raspberry Pi with SPI enabled and the 'mfrc522' "
                f"package (pip install '.[edge,mfrc522]'; not on a Pi 5): {type(exc).__name__}: {exc}"
            ) from None
        self._chip = MFRC522()
        self._poll_s = poll_s
        self._away_polls = max(1, round(away_s / poll_s))

    def _read_uid(self) -> str | None:
        chip = self._chip
        status, _ = chip.MFRC522_Request(chip.PICC_REQIDL)
        if status != chip.MI_OK:
            return None
        status, uid = chip.MFRC522_Anticoll()
        if status != chip.MI_OK or len(uid) < 4:
            return None
        return bytes(uid[:4]).hex()  # the 5th byte is the check byte, not part of the UID

    def _run(self) -> None:
        present: str | None = None
        misses = 0
        while not self._stop.wait(self._poll_s):
            try:
                uid = self._read_uid()
            except Exception:
                log.exception("card reader mfrc522: read failed")
                continue
            if uid is None:
                misses += 1
                if misses >= self._away_polls:
                    present = None
                continue
            misses = 0
            if uid != present:
                present = uid
                self._emit(uid)

    def close(self) -> None:
        super().close()
        try:
            self._chip.Close_MFRC522()
        except Exception:
            log.debug("card reader mfrc522: close failed", exc_info=True)


def make_card_reader(settings: CardReaderSettings) -> CardReader | None:
    """The reader a node config asks for; None when the table has no reader."""
    if settings.kind == "none":
        return None
    if settings.kind == "simulated":
        return SimulatedCardReader()
    if settings.kind == "mfrc522":
        return Mfrc522CardReader()
    if not settings.device:
        raise CardReaderError('card_reader.kind = "evdev" needs card_reader.device (a /dev/input/by-id/... path)')
    return EvdevCardReader(settings.device)
