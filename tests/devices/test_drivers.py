"""The gpiozero drivers on MockFactory pins (real gpiozero, real threads; only the pins are simulated)."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory

from devices.drivers.beam import BeamSensor
from devices.drivers.button import PushButton
from devices.drivers.light import LightRelay
from devices.pulses import Fault, Pulse, PulseFilter
from sim.pins import PulseScript, drive_pulse, timed_mock_factory
from tests.support.matching import near
from tests.support.waiting import wait_until

# ---------------------------------------------------------------- light relay


@pytest.mark.parametrize("active_high", [True, False])
@pytest.mark.parametrize("initial_on", [True, False])
def test_relay_polarity_and_explicit_initial_state(active_high: Any, initial_on: Any) -> None:
    factory = MockFactory()
    relay = LightRelay(17, active_high=active_high, initial_on=initial_on, pin_factory=factory)
    pin = factory.pin(17)
    assert pin.state == (initial_on == active_high)
    relay.set(not initial_on)
    assert pin.state == ((not initial_on) == active_high)
    assert relay.toggle() == initial_on
    assert pin.state == (initial_on == active_high)
    relay.close()


def test_relay_takes_the_pin_factory_from_gpiozero_when_none_is_given() -> None:
    # tests/conftest.py sets GPIOZERO_PIN_FACTORY=mock, as a Pi-less install would
    relay = LightRelay(22, active_high=True, initial_on=True)
    assert Device.pin_factory.pin(22).state is True
    relay.close()


def test_blink_then_settle_on_the_given_state() -> None:
    factory = MockFactory()
    relay = LightRelay(17, active_high=True, blink_period_s=0.1, pin_factory=factory)
    settled = threading.Event()
    relay.blink(0.5, then_on=True, on_settle=settled.set)
    assert relay.blinking and relay.on
    seen = set()
    while not settled.is_set():
        seen.add(factory.pin(17).state)
        time.sleep(0.005)
    assert seen == {True, False}
    assert not relay.blinking and factory.pin(17).state is True
    relay.close()


def test_a_new_command_cancels_a_blink_and_its_settle() -> None:
    factory = MockFactory()
    relay = LightRelay(17, active_high=True, blink_period_s=0.1, pin_factory=factory)
    settled = threading.Event()
    relay.blink(0.3, then_on=True, on_settle=settled.set)
    relay.set(False)
    time.sleep(0.5)
    assert not settled.is_set(), "the superseded blink must not settle the light"
    assert factory.pin(17).state is False and not relay.blinking
    relay.close()


# ---------------------------------------------------------------- beam sensor


def collecting_beam(factory: Any, pin: Any = 5, **filter_kw: Any) -> tuple[BeamSensor, list[Any]]:
    out: list[Any] = []
    beam = BeamSensor(pin, PulseFilter(**filter_kw), out.append, pin_factory=factory)
    return beam, out


def test_pulse_timed_by_the_pins_ticks_not_by_when_python_ran() -> None:
    factory = timed_mock_factory()
    beam, out = collecting_beam(factory)
    pin = factory.pin(5)
    t0 = time.monotonic()
    pin.drive_at(t0, high=False)  # broken
    time.sleep(0.05)  # python is slow; the edge times are what count
    pin.drive_at(t0 + 0.012, high=True)
    wait_until(lambda: out)
    assert len(out) == 1 and isinstance(out[0], Pulse)
    assert out[0].duration_ms == pytest.approx(12.0, abs=0.01)
    beam.close()


def test_a_pulse_is_emitted_after_the_merge_gap_without_another_edge() -> None:
    factory = MockFactory()
    beam, out = collecting_beam(factory, merge_gap_ms=20)
    pin = factory.pin(5)
    pin.drive_low()
    time.sleep(0.03)
    pin.drive_high()
    wait_until(lambda: out, what="the pulse, with no edge after its release")
    beam.close()


def test_chatter_is_merged_glitches_dropped() -> None:
    factory = timed_mock_factory()
    beam, out = collecting_beam(factory)
    rng = random.Random(7)
    t = time.monotonic()
    for _ in range(15):  # 150 edges: under the storm limit of 200 a second
        t = drive_pulse(factory.pin(5), t, PulseScript(duration_s=0.02, chatter_edges=2), rng) + 0.02
    factory.pin(5).drive_at(t, high=False)  # a 2 ms glitch
    factory.pin(5).drive_at(t + 0.002, high=True)
    wait_until(lambda: len(out) >= 15)
    time.sleep(0.2)
    assert len(out) == 15 and all(isinstance(p, Pulse) for p in out)
    beam.close()


def test_a_stuck_beam_is_reported_then_recovered() -> None:
    factory = timed_mock_factory()
    beam, out = collecting_beam(factory, stuck_after_s=0.2)
    t = time.monotonic()
    factory.pin(5).drive_at(t, high=False)
    wait_until(lambda: out)
    assert out == [Fault("stuck", near(out[0].at))]
    factory.pin(5).drive_at(time.monotonic(), high=True)
    wait_until(lambda: len(out) == 2)
    assert out[1].kind == "recovered"
    beam.close()


def test_broken_when_high_sensors() -> None:
    factory = timed_mock_factory()
    out: list[Any] = []
    beam = BeamSensor(6, PulseFilter(), out.append, broken_when_low=False, pin_factory=factory)
    t = time.monotonic()
    factory.pin(6).drive_at(t, high=True)
    factory.pin(6).drive_at(t + 0.03, high=False)
    wait_until(lambda: out)
    assert out[0].duration_ms == pytest.approx(30.0, abs=0.01)
    beam.close()


def test_an_edge_after_close_is_ignored() -> None:
    factory = MockFactory()
    beam, out = collecting_beam(factory)
    pin = factory.pin(5)
    beam.close()
    pin.drive_low()
    pin.drive_high()
    time.sleep(0.05)
    assert out == []


# ---------------------------------------------------------------- button


def test_button_press_once_per_press_despite_contact_bounce() -> None:
    factory = MockFactory()
    presses: list[float] = []
    button = PushButton(27, lambda: presses.append(time.monotonic()), min_interval_s=0.2, pin_factory=factory)
    pin = factory.pin(27)
    for _ in range(5):  # bouncing contacts
        pin.drive_low()
        pin.drive_high()
    assert len(presses) == 1
    time.sleep(0.25)
    pin.drive_low()
    pin.drive_high()
    assert len(presses) == 2
    button.close()
