"""EdgeNode: the table node agent. Binds the drivers to MQTT through the durable outbox.

Threads: paho's network thread (callbacks only enqueue), the outbox pump, a command worker, a
housekeeping ticker (telemetry, WAL sync, systemd watchdog), one timer thread per beam, and
gpiozero's own callback threads. The light is driven by commands and the button only: nothing
that happens to the network switches it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

from devices.contract import (
    EVENT_DATA_MODELS,
    EVENT_MODELS,
    VERSION,
    ContractError,
    LightCause,
    LightSet,
    LightState,
    Status,
    Telemetry,
    encode,
    event_topic,
    light_set_topic,
    light_state_topic,
    status_topic,
    telemetry_topic,
    utcnow,
)
from devices.drivers.beam import BeamSensor
from devices.drivers.button import PushButton
from devices.drivers.light import LightRelay
from devices.kinds import ACTIVITY_SENSOR, GOAL_AWAY_SENSOR, GOAL_HOME_SENSOR, pocket_sensor
from devices.nodeconfig import NodeConfig
from devices.pulses import Fault, Pulse, PulseFilter
from devices.version import software_version
from edge.clock import Clock, WallClock
from edge.commands import parse_light_set
from edge.mqtt_link import MqttLink
from edge.outbox import Outbox
from edge.pins import open_pin_factory
from edge.pump import Pump
from edge.systemd_notify import SystemdNotify
from edge.telemetry import sample

if TYPE_CHECKING:
    from gpiozero.pins import Factory  # gpiozero ships no types: Any to mypy

    from devices.drivers.cardreader import CardReader

log = logging.getLogger(__name__)

HOUSEKEEPING_S = 1.0


class _Closes(Protocol):
    def close(self) -> None: ...


class EdgeNode:
    """One table's agent.

    ``EdgeNode(config, pin_factory=None, card_reader=None)``; ``start()`` / ``close()`` or
    ``with EdgeNode(cfg) as node:``. ``pin_factory`` defaults to lgpio on the Pi's header (or gpiozero's
    mock pins with GPIOZERO_PIN_FACTORY=mock: edge.pins), opened first at ``start()``, which raises
    edge.pins.PinsUnavailable when the pins cannot be driven;
    ``card_reader`` defaults to the one the config names (foosball tables); ``clock`` (anything with
    ``now() -> (datetime, synced)``) to the system's WallClock: a test injects a jumping one.
    """

    def __init__(
        self, config: NodeConfig, *, pin_factory: Factory | None = None, card_reader: CardReader | None = None, clock: Clock | None = None
    ) -> None:
        self.config = config
        self.table = config.table
        self._pin_factory = pin_factory
        self._owns_factory = pin_factory is None
        self._card_reader = card_reader
        self.boot = uuid.uuid4().hex
        self.invalid_commands = 0
        self._clock = clock or WallClock()
        self._commands: queue.Queue[tuple[bytes, bool] | None] = queue.Queue()
        self._light_lock = threading.Lock()
        self._light_cause: tuple[LightCause, str | None] = ("boot", None)
        self._stop = threading.Event()
        self._closers: list[_Closes | threading.Thread] = []
        self.light: LightRelay | None = None
        self.beams: dict[str, BeamSensor] = {}
        self.button: PushButton | None = None
        self.outbox: Outbox | None = None
        self.link: MqttLink | None = None
        self._pump: Pump | None = None
        self._started = 0.0
        self._watchdog = SystemdNotify()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> EdgeNode:
        cfg = self.config
        self._started = time.monotonic()
        try:
            if self._pin_factory is None:
                # First: a Pi whose pins cannot be driven says so before anything else starts.
                self._pin_factory = open_pin_factory()
            self.outbox = Outbox(cfg.outbox.path, cfg.outbox.max_bytes)
            self._closers.append(self.outbox)
            self._start_devices()
            self.link = MqttLink(
                cfg.mqtt,
                self.table,
                will=(status_topic(self.table), encode(Status(state="offline", boot=self.boot, contract=VERSION))),
                subscriptions=[light_set_topic(self.table)],
                on_connected=self._on_connected,
                on_message=self._on_message,
                on_ack=self._on_ack,
            )
            self._pump = Pump(self.outbox, self.link)
            self._pump.start()
            self._spawn(self._command_loop, "commands")
            self._spawn(self._housekeeping_loop, "housekeeping")
            self.link.start()
        except BaseException:
            self.close()
            raise
        log.info("table node %s started (boot %s, %d events waiting in the outbox)", self.table, self.boot, self.outbox.depth)
        self._watchdog.ready()
        return self

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._closers.append(thread)

    def _start_devices(self) -> None:
        cfg, pins, factory = self.config, self.config.pins, self._pin_factory
        if pins.light is not None:
            self.light = LightRelay(
                pins.light, active_high=pins.light_active_high, initial_on=cfg.light.boot_state == "on", pin_factory=factory
            )
            self._closers.append(self.light)
        handlers: dict[str, Callable[[Pulse], None]] = {
            **{pocket_sensor(i): partial(self._pocket, i) for i in range(len(pins.pockets))},
            GOAL_HOME_SENSOR: partial(self._goal, "home"),
            GOAL_AWAY_SENSOR: partial(self._goal, "away"),
            ACTIVITY_SENSOR: self._activity,
        }
        for name, pin in pins.beams().items():  # the names the hub knows this node's faults by
            beam = BeamSensor(
                pin, PulseFilter(**cfg.filter.model_dump()), partial(self._beam_output, name, handlers[name]), pin_factory=factory
            )
            self.beams[name] = beam
            self._closers.append(beam)
        if pins.button is not None:
            self.button = PushButton(pins.button, self._button_pressed, pin_factory=factory)
            self._closers.append(self.button)
        if self._card_reader is None and cfg.card_reader.kind != "none":
            from devices.drivers.cardreader import make_card_reader

            self._card_reader = make_card_reader(cfg.card_reader)
        if self._card_reader is not None:
            self._card_reader.start(self._card)
            self._closers.append(self._card_reader)

    def close(self) -> None:
        """Stop everything; publishes status offline. The light stays as it is until the pins are released."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._watchdog.stopping()
        self._commands.put(None)
        if self.link is not None:
            self.link.close(
                last_words=(status_topic(self.table), encode(Status(state="offline", boot=self.boot, ts=utcnow(), contract=VERSION)))
            )
        if self._pump is not None:
            self._pump.stop()
        for part in reversed(self._closers):
            try:
                part.join(timeout=5) if isinstance(part, threading.Thread) else part.close()
            except Exception:
                log.exception("error while closing %r", part)
        self._closers.clear()
        if self._owns_factory and self._pin_factory is not None:
            try:
                self._pin_factory.close()
            except Exception:
                log.exception("error while releasing the GPIO chip")

    def __enter__(self) -> EdgeNode:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ events

    def emit(self, event_type: str, data: dict[str, object]) -> int | None:
        """Write one event to the outbox (publishing follows); returns its seq, or None if refused."""
        assert self.outbox is not None
        body = EVENT_DATA_MODELS[event_type].model_validate(data)
        ts, synced = self._clock.now()
        # Callable, not type[_EventBase]: the base declares neither `type` nor `data`.
        model: Callable[..., BaseModel] = EVENT_MODELS[event_type]

        def render(seq: int) -> bytes:
            return encode(model(v=1, table=self.table, type=event_type, boot=self.boot, seq=seq, ts=ts, ts_synced=synced, data=body))

        seq = self.outbox.add(event_type, event_topic(self.table, event_type), render)
        if self._pump is not None:
            self._pump.notify()
        return seq

    def _beam_output(self, sensor: str, on_pulse: Callable[[Pulse], None], item: Pulse | Fault) -> None:
        try:
            if isinstance(item, Pulse):
                on_pulse(item)
            else:
                log.warning("sensor %s: %s", sensor, item.kind)
                self.emit("sensor_fault", {"sensor": sensor, "kind": item.kind})
        except Exception:
            # Runs in a beam's timer thread or gpiozero's: an exception here must not stop the beam.
            log.exception("cannot record %s from %s", item, sensor)

    def _pocket(self, index: int, pulse: Pulse) -> None:
        self.emit("pocket", {"pocket": index, "pulse_ms": round(pulse.duration_ms, 1)})

    def _goal(self, side: str, pulse: Pulse) -> None:
        self.emit("goal", {"side": side})

    def _activity(self, pulse: Pulse) -> None:
        self.emit("activity", {"source": "credit-lamp"})

    def _card(self, uid: str) -> None:
        try:
            self.emit("card", {"uid": uid})
        except Exception:
            # A card UID is a credential: never above DEBUG in a log (see the README, security).
            log.exception("cannot record a card event")
            log.debug("the card that was not recorded: %s", uid)

    # ------------------------------------------------------------------ the light

    def _button_pressed(self) -> None:
        try:
            if self.light is not None:
                with self._light_lock:
                    self.light.toggle()
                    self._light_cause = ("button", None)
                self._publish_light_state()
            self.emit("button", {"button": "light"})
        except Exception:
            log.exception("button press not handled")

    def apply_command(self, cmd: LightSet) -> None:
        if self.light is None:
            log.warning("light/set %s ignored: this node has no light relay", cmd.cmd_id)
            return
        with self._light_lock:
            if cmd.blink_s:
                self.light.blink(cmd.blink_s, cmd.on, on_settle=self._blink_settled)
            else:
                self.light.set(cmd.on)
            self._light_cause = ("command", cmd.cmd_id)
        self._publish_light_state()

    def _blink_settled(self) -> None:
        try:
            self._publish_light_state()
        except Exception:
            log.exception("cannot report the light after a blink")

    def _publish_light_state(self) -> None:
        if self.light is None or self.link is None:
            return
        cause, cmd_id = self._light_cause
        state = LightState(on=self.light.on, blink=self.light.blinking, cause=cause, cmd_id=cmd_id)
        # Not through the outbox: light/state is retained state, and it is sent again on every connect.
        self.link.publish(light_state_topic(self.table), encode(state), qos=1, retain=True)

    # ------------------------------------------------------------------ MQTT callbacks (enqueue only)

    def _on_connected(self) -> None:
        assert self.link is not None
        birth = Status(state="online", boot=self.boot, version=software_version(), ts=utcnow(), contract=VERSION)
        self.link.publish(status_topic(self.table), encode(birth), qos=1, retain=True)
        self._publish_light_state()
        if self._pump is not None:
            self._pump.notify()

    def _on_message(self, topic: str, payload: bytes, retained: bool) -> None:
        self._commands.put((payload, retained))

    def _on_ack(self, generation: int, mid: int, accepted: bool) -> None:
        if self._pump is not None:
            self._pump.on_ack(generation, mid, accepted)

    def _command_loop(self) -> None:
        while (item := self._commands.get()) is not None:
            payload, retained = item
            try:
                cmd = parse_light_set(payload, retained)
            except ContractError as exc:
                log.warning("invalid light/set ignored (light unchanged): %s", exc)
                self.invalid_commands += 1
                continue
            try:
                self.apply_command(cmd)
            except Exception:
                log.exception("light/set %s failed", cmd.cmd_id)

    # ------------------------------------------------------------------ housekeeping

    def telemetry(self) -> Telemetry:
        assert self.outbox is not None and self.link is not None
        return sample(
            started=self._started,
            outbox=self.outbox.depth,
            reconnects=self.link.reconnects,
            invalid_commands=self.invalid_commands,
            dropped=self.outbox.dropped,
            refused=self.outbox.refused,
        )

    def _housekeeping_loop(self) -> None:
        assert self.outbox is not None and self.link is not None
        interval = self.config.telemetry_interval_s
        next_telemetry = time.monotonic() + min(interval, 1.0)
        while not self._stop.wait(min(HOUSEKEEPING_S, interval)):
            try:
                self.outbox.sync()
                if time.monotonic() >= next_telemetry:
                    next_telemetry += interval
                    if self.link.connected:
                        self.link.publish(telemetry_topic(self.table), encode(self.telemetry()), qos=0)
                if self._pump is not None and self._pump.alive:
                    # A dead pump means events pile up unsent: stop the pings and let systemd restart us.
                    self._watchdog.ping()
            except Exception:
                log.exception("housekeeping error")
