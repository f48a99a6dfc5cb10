"""A bad internet link and the hall's own lights: each way the path to the centre breaks, with the
hall's light latency measured throughout (issue 29 item 11).

    .venv/bin/python -m bench.wan_link [--via bridge|mosquitto] [--seconds 15] [--keepalive 30] [--retry-max 30]

What runs, all on this machine: the centre's Mosquitto (the shipped central.conf and central.acl, its
TLS listener on); a relay in front of it that is the internet (tests/support/wan.py: up, refused,
blackholed, reset after accept, TLS garbage, slow); the hall's Mosquitto (the shipped lavos.conf and
acl); the hall's hub (in this process, on SQLite) and one table's node (the edge agent, mock pins);
and the hall's link to the centre, through the relay:
- `--via bridge` (what ships): `lavos central bridge`, a process of its own, a client of both brokers;
- `--via mosquitto`: the Mosquitto bridge it replaced, inside the hall's broker (the configuration
  shipped until issue 29, below).

The hub switches the table's light every 0.25 s, as the dashboard's switch does (SwitchLight), and
each switch is timed until the node's light state reaches the hall's broker (as the hub hears it;
tests/support/hall_lights.py); one not back within 2 s is lost. Phases: the link up, then each fault
for --seconds, each followed by the path healing (switching on until the centre has heard the link
up again and the hall's light as it is, at most 60 s). Printed per phase: switches, lost, latency
p50/p99/max, the CPU of the hall's broker and of the bridge's process (% of one core), times the hub
lost its broker, and when the centre heard the link drop (a fault) or come back (a heal). With
`--via mosquitto`, a hall broker that stopped switching lights is restarted before the next phase,
as staff had to. The defaults are the shipped keep-alive and retry (30 s each, both ways).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bench.hub_ingest import process_cpu
from broker.adapters.centre_bridge import BRIDGE_LOGIN, LINK_STATE, hall_topic
from broker.compose import running_hub
from devices import contract
from sim.mosquitto import Mosquitto, TlsFiles
from tests.support.centre import hall_venue
from tests.support.hall_lights import SETTLE_S, LightProbe
from tests.support.hub import hub_url, running_node
from tests.support.server import LAVOS
from tests.support.sqlite_template import CHEAP, migrated_sqlite
from tests.support.wan import Wan

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "deploy" / "mosquitto"
HALL, TABLE = "a", "pool-01"
CENTRE_PASSWORD = "bridge-a-secret"  # the hall's login at the centre
HALL_BRIDGE_PASSWORD = "bridge-reads-the-hall"
PROBE_LOGIN = ("lavos-central-probe", "probe-secret")  # lavos-central's rights: what the centre hears
EVERY_S = 0.25
SWITCH_TIMEOUT_S = 2.0
HEAL_TIMEOUT_S = 60.0

# The hall's Mosquitto bridge as main shipped it until issue 29 (deploy/mosquitto/bridge.conf.example).
MOSQUITTO_BRIDGE = """
connection lavos-central
address 127.0.0.1:{port}
bridge_protocol_version mqttv311
bridge_cafile {cafile}
bridge_insecure false
remote_username {hall}
remote_password {password}
remote_clientid {hall}
cleansession false
restart_timeout 2 {retry_max}
keepalive_interval {keepalive}
notifications true
notification_topic hall/{hall}/bridge/state
topic lavos/v1/table/+/status out 1 "" hall/{hall}/
topic lavos/v1/table/+/light/state out 1 "" hall/{hall}/
topic lavos/v1/ha/+/state out 1 "" hall/{hall}/
topic lavos/v1/hub/status out 1 "" hall/{hall}/
topic lavos/v1/hub/venue out 1 "" hall/{hall}/
"""


class CentreEar:
    """What the centre's broker hears of the hall: the link's state (with when) and the table's light."""

    def __init__(self, port: int) -> None:
        self.link: list[tuple[float, bool]] = []
        self.light: bool | None = None
        self._ready = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=PROBE_LOGIN[0])
        self.client.username_pw_set(*PROBE_LOGIN)
        self.client.on_connect = lambda c, *_: c.subscribe(f"hall/{HALL}/#", 1)
        self.client.on_subscribe = lambda *_: self._ready.set()
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port, keepalive=10)
        self.client.loop_start()
        self._ready.wait(10)

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        if msg.topic == hall_topic(HALL, LINK_STATE):
            self.link.append((time.monotonic(), msg.payload.strip() == b"1"))
        elif msg.topic == hall_topic(HALL, contract.light_state_topic(TABLE)) and msg.payload:
            self.light = bool(json.loads(msg.payload).get("on"))

    def up(self) -> bool:
        return bool(self.link) and self.link[-1][1]

    def settled(self, light: bool) -> bool:
        """Up for a second at least, with the hall's light as `light`: a fault then starts from a link
        that is really there (not one a moment from dropping)."""
        return self.up() and self.light is light and time.monotonic() - self.link[-1][0] >= 1.0

    def changed_since(self, t: float, up: bool) -> float | None:
        """Seconds from `t` to the first link state `up` heard after it, or None."""
        return next((at - t for at, state in self.link if at >= t and state is up), None)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@dataclass
class Phase:
    name: str
    latencies: list[float] = field(default_factory=list)
    switches: int = 0
    lost: int = 0
    broker_cpu_s: float = 0.0
    bridge_cpu_s: float = 0.0
    seconds: float = 0.0
    hub_drops: int = 0
    heard: str = ""  # what the centre heard of the link in this phase
    note: str = ""


class Hall:
    """The hall, its link to the centre and the centre's broker, for one run."""

    def __init__(self, work: Path, via: str, keepalive: int, retry_max: int, stack: contextlib.ExitStack) -> None:
        self.via = via
        certs = work / "certs"
        done = subprocess.run(
            ["bash", str(SHIPPED / "make-certs.sh"), "--out", str(certs), "127.0.0.1", "localhost"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0:
            raise RuntimeError(f"make-certs.sh failed: {done.stderr}")
        self.centre = Mosquitto(
            work / "centre-broker",
            users={HALL: CENTRE_PASSWORD, "lavos-central": "central-secret"},
            tls=TlsFiles(certs),
            shipped_conf=SHIPPED / "central.conf",
            shipped_acl=SHIPPED / "central.acl",
        )
        self.centre.login_like(PROBE_LOGIN[0], "lavos-central", PROBE_LOGIN[1])
        self.centre.start()
        stack.callback(self.centre.stop)
        assert self.centre.tls is not None
        self.wan = Wan(self.centre.tls.port).start()
        stack.callback(self.wan.close)
        extra = ""
        if via == "mosquitto":
            extra = MOSQUITTO_BRIDGE.format(
                port=self.wan.port, cafile=certs / "ca.crt", hall=HALL, password=CENTRE_PASSWORD, keepalive=keepalive, retry_max=retry_max
            )
        users = {BRIDGE_LOGIN: HALL_BRIDGE_PASSWORD, TABLE: f"pw-{TABLE}"}
        self.broker = Mosquitto(work / "hall-broker", users=users, extra_conf=extra).start()
        stack.callback(self.broker.stop)
        self.bridge: subprocess.Popen[bytes] | None = None
        if via == "bridge":
            (work / "centre.pw").write_text(CENTRE_PASSWORD + "\n")
            (work / "hall.pw").write_text(HALL_BRIDGE_PASSWORD + "\n")
            centre = f"mqtts://{HALL}@127.0.0.1:{self.wan.port}?cafile={certs / 'ca.crt'}"
            self.bridge_log = open(work / "bridge.log", "w")  # noqa: SIM115 - closed by the stack
            stack.callback(self.bridge_log.close)
            argv = [*LAVOS, "central", "bridge", "--centre", centre, "--centre-password-file", str(work / "centre.pw")]
            argv += ["--mqtt", f"mqtt://{BRIDGE_LOGIN}@127.0.0.1:{self.broker.port}", "--mqtt-password-file", str(work / "hall.pw")]
            argv += ["--keepalive", str(keepalive), "--retry-max", str(retry_max)]
            self.bridge = subprocess.Popen(
                argv,
                cwd=REPO,
                stdout=self.bridge_log,
                stderr=subprocess.STDOUT,
            )
            stack.callback(self._stop_bridge)
        self.ear = CentreEar(self.centre.port)
        stack.callback(self.ear.close)
        self.hub = stack.enter_context(
            running_hub(
                hall_venue(HALL),
                migrated_sqlite(work / "hall.db"),
                mqtt_url=hub_url(self.broker),
                password_hasher=CHEAP,
                home_assistant=True,
                client_id=f"hub-{uuid.uuid4().hex[:8]}",
            )
        )
        self.hub.watchdog.stop()
        stack.enter_context(running_node(self.broker, work, TABLE, venue=hall_venue(HALL)))
        self.probe = LightProbe(self.hub, self.broker.port, TABLE)
        stack.callback(self.probe.close)

    def _stop_bridge(self) -> None:
        if self.bridge is not None and self.bridge.poll() is None:
            self.bridge.terminate()
            try:
                self.bridge.wait(20)
            except subprocess.TimeoutExpired:
                self.bridge.kill()
                self.bridge.wait()

    def hub_drops(self) -> int:
        """Times the hub's MQTT link lost the hall's broker so far."""
        assert self.hub.link is not None
        return int(self.hub.link.stats.disconnects)

    def cpu(self) -> tuple[float, float]:
        assert self.broker.proc is not None
        return process_cpu(self.broker.proc.pid), process_cpu(self.bridge.pid) if self.bridge else 0.0

    def run(self, name: str, *, seconds: float | None = None, until: Any = None) -> Phase:
        """Switch every EVERY_S for `seconds`, or until `until()` (at most HEAL_TIMEOUT_S)."""
        phase = Phase(name)
        (broker0, bridge0), started = self.cpu(), time.monotonic()
        drops0, lost0 = self.hub_drops(), self.probe.lost
        end = started + (seconds if seconds is not None else HEAL_TIMEOUT_S)
        while time.monotonic() < end:
            due = time.monotonic() + EVERY_S
            took = self.probe.switch(SWITCH_TIMEOUT_S)
            phase.switches += 1
            if took is not None:
                phase.latencies.append(took)
            if until is not None and self.probe.settled(until, SETTLE_S):  # the centre lags the hall a little
                break
            time.sleep(max(0.0, due - time.monotonic()))
        (broker1, bridge1), phase.seconds = self.cpu(), time.monotonic() - started
        phase.broker_cpu_s, phase.bridge_cpu_s = broker1 - broker0, bridge1 - bridge0
        phase.hub_drops, phase.lost = self.hub_drops() - drops0, self.probe.lost - lost0
        return phase


def run(via: str, seconds: float, keepalive: int, retry_max: int, work: Path) -> list[Phase]:
    phases: list[Phase] = []
    with contextlib.ExitStack() as stack:
        hall = Hall(work, via, keepalive, retry_max, stack)
        up = hall.run("link up", until=lambda: hall.ear.settled(hall.probe.on))
        up.heard = "up" if hall.ear.up() else "NOT up"
        phases.append(up)
        for mode in Wan.FAULTS:
            at = time.monotonic()  # before the path breaks: the centre may hear it within a millisecond
            hall.wan.set(mode)
            # A silent path is noticed only by the keep-alive (the centre's broker: 1.5 times it, the
            # bridge: twice): the blackhole lasts long enough for both.
            fault = hall.run(mode, seconds=max(seconds, 2 * keepalive + 10) if mode == Wan.BLACKHOLE else seconds)
            down = hall.ear.changed_since(at, False)
            fault.heard = f"down after {down:.1f} s" if down is not None else "still up" if hall.ear.up() else "down"
            phases.append(fault)
            at = time.monotonic()
            hall.wan.set(Wan.UP)
            # Healed: a switch of the hall's light reaches the centre again (the link carries it).
            heal = hall.run("  then healed", until=lambda: hall.ear.settled(hall.probe.on))
            back = hall.ear.changed_since(at, True)
            if hall.ear.settled(hall.probe.on):
                heal.heard = f"up after {back:.1f} s" if back is not None else "up (it never dropped)"
            else:
                heal.heard = f"NOT back with the hall's light within {HEAL_TIMEOUT_S:.0f} s"
            phases.append(heal)
            if via == "mosquitto" and (fault.lost or heal.lost):
                hall.broker.stop()  # what staff had to do: the hall's broker stopped switching lights
                hall.broker.start()
                heal.note = "hall broker restarted by hand"
    return phases


def _ms(values: list[float], q: float) -> str:
    if not values:
        return "–"
    if q == 1.0:
        return f"{max(values) * 1000:.0f}"
    return (
        f"{statistics.quantiles(values, n=100, method='inclusive')[int(q * 100) - 1] * 1000:.0f}"
        if len(values) > 1
        else f"{values[0] * 1000:.0f}"
    )


def report(via: str, phases: list[Phase]) -> list[str]:
    label = "lavos central bridge (its own process)" if via == "bridge" else "the Mosquitto bridge inside the hall's broker"
    lines = [
        f"The hall's light latency while its link to the centre breaks; the link: {label}",
        f"{'phase':<20} {'s':>5} {'switches':>8} {'lost':>5} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} "
        f"{'broker CPU':>10} {'bridge CPU':>10} {'hub lost broker':>15}  centre heard the link",
    ]
    for p in phases:
        lines.append(
            f"{p.name:<20} {p.seconds:5.1f} {p.switches:8d} {p.lost:5d} {_ms(p.latencies, 0.5):>7} {_ms(p.latencies, 0.99):>7} "
            f"{_ms(p.latencies, 1.0):>7} {p.broker_cpu_s / p.seconds * 100:9.0f}% {p.bridge_cpu_s / p.seconds * 100:9.0f}% "
            f"{p.hub_drops:15d}  {p.heard}{'; ' + p.note if p.note else ''}"
        )
    lost = sum(p.lost for p in phases)
    lines.append(f"switches lost: {lost} of {sum(p.switches for p in phases)}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--via", choices=("bridge", "mosquitto"), default="bridge")
    ap.add_argument("--seconds", type=float, default=15.0, help="how long each fault lasts")
    ap.add_argument("--keepalive", type=int, default=30, help="the link's keep-alive, seconds (shipped: 30)")
    ap.add_argument("--retry-max", type=int, default=30, help="the longest wait between attempts, seconds (shipped: 30)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    work = Path(tempfile.mkdtemp(prefix="lavos-wan-"))
    phases = run(args.via, args.seconds, args.keepalive, args.retry_max, work)
    print("\n".join(report(args.via, phases)))
    return 1 if any(p.lost for p in phases) else 0


if __name__ == "__main__":
    raise SystemExit(main())
