"""Card readers: UID normalisation, the keyboard-wedge key parser, the reader threads."""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from devices.contract import CardData
from devices.drivers.cardreader import (
    KEY_ENTER,
    BadUid,
    CardReaderError,
    EvdevCardReader,
    Mfrc522CardReader,
    SimulatedCardReader,
    WedgeDecoder,
    make_card_reader,
    normalise_uid,
)
from devices.nodeconfig import CardReaderSettings
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path


evdev = pytest.importorskip("evdev")
ecodes = evdev.ecodes


def presses(text: str) -> list[tuple[int, int]]:
    """(code, value) key events typing `text` then Enter, with key-ups, as a wedge reader does."""
    out = []
    for ch in text:
        code = ecodes.ecodes[f"KEY_{ch.upper()}"]
        out += [(code, 1), (code, 0)]
    return [*out, (ecodes.KEY_ENTER, 1), (ecodes.KEY_ENTER, 0)]


def decode_all(decoder: WedgeDecoder, keys: Any) -> list[str | BadUid]:
    out: list[str | BadUid] = []
    for code, value in keys:
        try:
            uid = decoder.key(code, value)
        except BadUid as exc:
            out.append(exc)
            continue
        if uid is not None:
            out.append(uid)
    return out


# ---------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    "raw, uid",
    [
        ("0012345678", "00bc614e"),  # the usual 10-digit wedge output
        ("4294967295", "ffffffff"),  # the largest 32-bit value
        ("0000000001", "00000001"),
        ("4294967296", "0100000000"),  # over 32 bits: padded to whole bytes
        ("04A3B2C1", "04a3b2c1"),  # hex readers, any case
        ("04:a3:b2:c1:5d:80:00", "04a3b2c15d8000"),  # 7-byte UID with separators
        (" 0012345678\n", "00bc614e"),
    ],
)
def test_normalise_uid(raw: Any, uid: Any) -> None:
    assert normalise_uid(raw) == uid
    CardData(uid=uid)  # what the contract accepts


def test_digit_only_hex_needs_hex_input() -> None:
    assert normalise_uid("12345678", hex_input=True) == "12345678"
    assert normalise_uid("12345678") == "00bc614e"


@pytest.mark.parametrize(
    "raw, why",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("12g4", "neither decimal nor hex"),
        ("１２３４", "neither decimal nor hex"),  # full-width digits are not a card number
        ("abc", "3 hex digits"),
        ("a" * 33, "33 hex digits"),
        ("9" * 5000, "5000 digits"),
        ("9" * 39, "hex digits"),  # 128+ bits
    ],
)
def test_bad_uids_are_refused_with_a_reason(raw: Any, why: Any) -> None:
    with pytest.raises(BadUid, match=why):
        normalise_uid(raw)


@settings(deadline=None)
@given(st.text(max_size=50))
def test_normalised_uid_always_fits_the_contract(raw: Any) -> None:
    try:
        uid = normalise_uid(raw)
    except BadUid:
        return
    CardData(uid=uid)


@settings(deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_ten_digit_decimal_is_the_32_bit_value_in_hex(value: Any) -> None:
    assert int(normalise_uid(f"{value:010d}"), 16) == value
    assert len(normalise_uid(f"{value:010d}")) == 8


# ---------------------------------------------------------------------------- key parsing


def test_decoder_key_codes_match_the_kernel() -> None:
    # the decoder hard-codes the kernel's key codes; evdev's table is the reference
    d = WedgeDecoder(hex_input=True)
    assert decode_all(d, presses("0123456789abcdef")) == ["0123456789abcdef"]
    keypad = [(ecodes.ecodes[f"KEY_KP{i}"], 1) for i in "00123456789"] + [(ecodes.KEY_KPENTER, 1)]
    assert decode_all(WedgeDecoder(), keypad) == [normalise_uid("00123456789")]
    assert KEY_ENTER == ecodes.KEY_ENTER


def test_decoder_reads_successive_cards() -> None:
    keys = presses("0012345678") + presses("0000000001")
    assert decode_all(WedgeDecoder(), keys) == ["00bc614e", "00000001"]


def test_decoder_ignores_key_ups_repeats_shift_and_non_key_events() -> None:
    d = WedgeDecoder()
    keys = [(ecodes.KEY_LEFTSHIFT, 1), (ecodes.KEY_1, 1), (ecodes.KEY_1, 2), (ecodes.KEY_1, 0)]
    assert decode_all(d, keys) == []
    assert d.event(ecodes.EV_MSC, ecodes.MSC_SCAN, 1) is None
    assert d.event(ecodes.EV_KEY, ecodes.KEY_2, 1) is None
    assert d.event(ecodes.EV_KEY, ecodes.KEY_3, 1) is None
    assert d.event(ecodes.EV_KEY, ecodes.KEY_4, 1) is None
    assert d.event(ecodes.EV_KEY, ecodes.KEY_ENTER, 1) == "000004d2"  # 1234


def test_stray_key_spoils_only_its_own_read() -> None:
    keys = presses("00123x5678") + presses("0012345678")
    out = decode_all(WedgeDecoder(), keys)
    assert isinstance(out[0], BadUid) and "not a digit" in str(out[0])
    assert out[1:] == ["00bc614e"]


def test_runaway_typing_is_refused_and_bounded() -> None:
    out = decode_all(WedgeDecoder(), presses("1" * 500) + presses("0000000001"))
    assert isinstance(out[0], BadUid) and "more than 64" in str(out[0])
    assert out[1:] == ["00000001"]


def test_enter_alone_is_a_bad_read() -> None:
    out = decode_all(WedgeDecoder(), presses(""))
    assert len(out) == 1 and isinstance(out[0], BadUid)


# ---------------------------------------------------------------------------- simulated


def test_simulated_reader_delivers_normalised_uids() -> None:
    seen: list[str] = []
    with SimulatedCardReader() as reader:
        reader.start(seen.append)
        assert reader.tap("0012345678") == "00bc614e"
        reader.tap("04A3B2C1")
    assert seen == ["00bc614e", "04a3b2c1"]
    with pytest.raises(CardReaderError, match="not started"):
        reader.tap("04a3b2c1")


def test_simulated_reader_refuses_garbage_and_survives_a_failing_callback(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []

    def on_card(uid: str) -> None:
        seen.append(uid)
        raise RuntimeError("agent bug")

    reader = SimulatedCardReader()
    reader.start(on_card)
    with pytest.raises(BadUid):
        reader.tap("not a card")
    with caplog.at_level(logging.DEBUG):
        reader.tap("0012345678")
    assert seen == ["00bc614e"]
    assert "handling a card failed" in caplog.text
    # A UID is a credential: only the DEBUG record names it.
    assert [r.levelno for r in caplog.records if "00bc614e" in r.getMessage()] == [logging.DEBUG]


# ---------------------------------------------------------------------------- factory


def test_factory_builds_what_the_settings_ask_for(tmp_path: Path) -> None:
    assert make_card_reader(CardReaderSettings()) is None
    assert isinstance(make_card_reader(CardReaderSettings(kind="simulated")), SimulatedCardReader)
    reader = make_card_reader(CardReaderSettings(kind="evdev", device=str(tmp_path / "kbd")))
    assert isinstance(reader, EvdevCardReader) and reader.device_path == str(tmp_path / "kbd")
    reader.close()  # never started: close is still fine
    with pytest.raises(CardReaderError, match=r"needs card_reader\.device"):
        make_card_reader(CardReaderSettings(kind="evdev"))


def test_mfrc522_off_a_pi_says_what_it_needs() -> None:
    try:
        import mfrc522  # noqa: F401
    except Exception:  # noqa: BLE001 - off a Pi its RPi.GPIO import raises RuntimeError
        pass
    else:
        pytest.skip("the mfrc522 package imports here (a Pi?)")
    with pytest.raises(CardReaderError, match=r"Raspberry Pi .* 'mfrc522' package"):
        Mfrc522CardReader()
    with pytest.raises(CardReaderError):
        make_card_reader(CardReaderSettings(kind="mfrc522"))


# ---------------------------------------------------------------------------- evdev device loop


@pytest.mark.parametrize("make_path", [lambda tmp: tmp / "missing", lambda tmp: _regular_file(tmp)])
def test_evdev_reader_without_a_device_logs_once_retries_and_closes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, make_path: Any
) -> None:
    path = str(make_path(tmp_path))
    fds_before = len(os.listdir("/proc/self/fd"))
    reader = EvdevCardReader(path, retry_s=0.01)
    with caplog.at_level(logging.WARNING, logger="devices.drivers.cardreader"):
        reader.start(lambda uid: None)
        wait_until(lambda: "cannot open" in caplog.text)
        time.sleep(0.1)  # several retries happen; only the first one is logged
        reader.close()
    lines = [r for r in caplog.records if "cannot open" in r.getMessage()]
    assert len(lines) == 1 and path in lines[0].getMessage()
    assert not reader.opened.is_set()
    assert len(os.listdir("/proc/self/fd")) == fds_before  # no descriptor leaks across retries
    with pytest.raises(CardReaderError, match="already started"):
        reader.start(lambda uid: None)


def _regular_file(tmp: Any) -> Any:
    # exists, but the input ioctls fail on it: like a by-id path to the wrong kind of node
    p = tmp / "not-an-input-device"
    p.write_text("")
    return p


@pytest.fixture
def uinput() -> Any:
    """A virtual keyboard the kernel sees as a real input device, or a skip saying why not."""
    try:
        return evdev.UInput(name="lavos-test-wedge-reader")
    except Exception as exc:  # noqa: BLE001  (any failure means: no uinput in this environment)
        pytest.skip(f"no usable /dev/uinput here (the uinput module is not loaded, e.g. in a container): {exc}")


def type_card(ui: Any, text: str) -> None:
    for code, value in presses(text):
        ui.write(ecodes.EV_KEY, code, value)
        ui.syn()


def test_evdev_reader_reads_a_virtual_wedge_reader_and_survives_unplug(
    tmp_path: Path, uinput: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Like /dev/input/by-id/...: a stable symlink to whichever event node the reader gets.
    link = tmp_path / "usb-rfid-kbd"
    os.symlink(uinput.device.path, link)
    seen: list[str] = []
    got = threading.Event()

    def on_card(uid: str) -> None:
        seen.append(uid)
        got.set()

    reader = EvdevCardReader(str(link), retry_s=0.05)
    try:
        with caplog.at_level(logging.INFO, logger="devices.drivers.cardreader"):
            reader.start(on_card)
            wait_until(reader.opened.is_set)
            type_card(uinput, "0012345678")
            assert got.wait(10)
            assert seen == ["00bc614e"]

            uinput.close()  # unplug
            wait_until(lambda: "lost" in caplog.text or "cannot open" in caplog.text)
            assert not reader.opened.is_set()

            replugged = evdev.UInput(name="lavos-test-wedge-reader")
            try:
                os.unlink(link)
                os.symlink(replugged.device.path, link)
                wait_until(reader.opened.is_set)
                got.clear()
                type_card(replugged, "0000000001")
                assert got.wait(10)
            finally:
                replugged.close()
    finally:
        reader.close()
    assert seen == ["00bc614e", "00000001"]
