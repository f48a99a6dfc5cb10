"""`lavos demo`: the whole system on one machine, with a simulated evening at the hall.

One process (and the broker as its child, in the same process group): the MQTT broker, the
hub on SQLite in a temporary directory, the HTTP API and dashboard (the app `lavos
server` serves), staff logins, the club's members, and every table of the venue file as a real
EdgeNode on gpiozero mock pins. The player model (sim/players.py) plans the evening; this module
only carries it out, as staff and players would: games through the hub, ball drops and
goals as beam pulses, cards on the readers, a node's power cut as closing and restarting it.
The bar (sim/till.py) runs the till alongside: tabs paid as games stop, the day closed at the end.

`speed` compresses the evening: the hub's clock runs that much faster and the plan's waits
shrink with it, while each pulse keeps its real 10-60 ms, because the pulse filter on the nodes
judges real edges. Everything started is stopped on Ctrl-C, SIGTERM or after `seconds`.
"""

from __future__ import annotations

import logging
import random
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape

from broker.accounts.users import new_password
from broker.compose import build_hub, open_store
from broker.domain.billing import format_eur
from broker.domain.schedule import closing_time
from broker.domain.venue import WEEKDAYS, Venue, load_venue
from broker.floor.games import StartGame, StopGame
from broker.hall.facade import HubFacade
from broker.hall.hub import Hub, ServiceError
from broker.notify.notifications import SaveNotifySettings
from broker.people.accounts import CreateStaff
from broker.people.members import AssignCard, ImportMembers, RecordFee
from dashboard.cli import HttpAddress, hub_web_app
from devices.drivers.cardreader import SimulatedCardReader
from devices.kinds import Kind, default_pins
from devices.nodeconfig import MqttSettings, NodeConfig, OutboxSettings, node_config_for
from edge import EdgeNode
from sim.bookings import TABLES as BOOKED_TABLES
from sim.bookings import DemoBookings
from sim.bookings import banner as bookings_banner
from sim.broker import DemoBroker, node_password, start_broker
from sim.clock import ScaledClock
from sim.demo_defaults import DEFAULT_HTTP, MAX_SPEED
from sim.pins import PulseScript, drive_pulse, timed_mock_factory
from sim.players import Action, Card, Table, plan_evening
from sim.till import Bar
from sim.tournament import DemoTournament, sunday_start

REPO = Path(__file__).resolve().parents[1]
VENUE = REPO / "deploy" / "venues" / "lavos.toml"
MEMBERS_CSV = REPO / "deploy" / "members" / "lavos-members.csv"
STAFF = ("staff", "staff-demo")
MANAGER = ("manager", "manager-demo")
# Short, so a stuck beam shows up in a sped-up demo; the plan holds the beam past it.
STUCK_AFTER_S = 3.0
# Paid-up club cards, and one whose holder has not paid this year's fee. UIDs as readers send them.
CARD_UIDS = ("04a3f1c2", "04b71e90", "04c2d4a8", "04d9e7b1")
UNPAID_UID = "04e05f33"
CARD_HOLDERS = (2, 9, 17, 30, 44)  # which imported members (by file order) hold them

# The single-table node used by bench/edge_latency.py.
TABLE = "pool-01"


def demo_config(workdir: Path, port: int) -> NodeConfig:
    password_file = workdir / f"{TABLE}.password"
    password_file.write_text(f"{node_password(TABLE)}\n")
    return NodeConfig(
        table=TABLE,
        kind=Kind.POOL,
        pins=default_pins(Kind.POOL),
        mqtt=MqttSettings(host="127.0.0.1", port=port, password_file=password_file, reconnect_min_s=0.2, reconnect_max_s=2),
        outbox=OutboxSettings(path=workdir / "outbox.db"),
        telemetry_interval_s=5,
    )


def evening_start(venue: Venue, now: datetime) -> datetime:
    """Today's opening time: the demo plays an evening from the doors opening."""
    tz = venue.tz
    day = now.astimezone(tz).date()
    opens = venue.hours_on(WEEKDAYS[day.weekday()]).open
    return datetime.combine(day, opens, tz).astimezone(UTC)


# -- the tables ---------------------------------------------------------------------------


class SimNode:
    """One table's EdgeNode on its own mock pins; restartable, as a Pi after a power cut."""

    def __init__(self, config: NodeConfig, rng: random.Random) -> None:
        self.config = config
        self.rng = rng
        self.node: EdgeNode | None = None
        self.factory: Any = None
        self.reader: SimulatedCardReader | None = None
        self._busy_until: dict[int, float] = {}

    def start(self) -> SimNode:
        self.factory = timed_mock_factory()
        self.reader = SimulatedCardReader() if self.config.kind is Kind.FOOSBALL else None
        self._busy_until.clear()
        self.node = EdgeNode(self.config, pin_factory=self.factory, card_reader=self.reader).start()
        return self

    def take_down(self) -> EdgeNode | None:
        """Detach the node (nothing reaches it from now on); the caller closes it."""
        node, self.node = self.node, None
        return node

    def close(self) -> None:
        node = self.take_down()
        if node is not None:
            node.close()

    def pulse(self, bcm: int, duration_ms: float) -> None:
        if self.node is None:
            return
        # Scripted edges may run up to a pulse ahead of the real clock: a pin's next pulse
        # starts after its last one has ended, or the filter would see them interleaved.
        start = max(time.monotonic(), self._busy_until.get(bcm, 0.0) + 0.02)
        script = PulseScript(duration_s=duration_ms / 1000, chatter_edges=self.rng.randint(0, 2))
        self._busy_until[bcm] = drive_pulse(self.factory.pin(bcm), start, script, self.rng)

    def hold(self, bcm: int, broken: bool) -> None:
        if self.node is not None:
            # Beams read low while broken (receiver pulls down; see devices/drivers/beam.py).
            self.factory.pin(bcm).drive_at(max(time.monotonic(), self._busy_until.get(bcm, 0.0) + 0.02), high=not broken)

    def tap(self, uid: str) -> None:
        if self.node is not None and self.reader is not None:
            self.reader.tap(uid)


def node_configs(venue: Venue, broker: DemoBroker, workdir: Path) -> list[NodeConfig]:
    out = []
    for spec in venue.tables:
        pw = workdir / f"{spec.id}.password"
        pw.write_text(f"{node_password(spec.id)}\n")
        cfg = node_config_for(venue, spec.id, mqtt_host="127.0.0.1", mqtt_port=broker.port, password_file=pw)
        out.append(
            cfg.model_copy(
                update={
                    "outbox": cfg.outbox.model_copy(update={"path": workdir / f"{spec.id}-outbox.db"}),
                    "mqtt": cfg.mqtt.model_copy(update={"reconnect_min_s": 0.2, "reconnect_max_s": 2.0}),
                    "filter": cfg.filter.model_copy(update={"stuck_after_s": STUCK_AFTER_S}),
                    "card_reader": cfg.card_reader.model_copy(update={"kind": "simulated", "device": None}),
                    "telemetry_interval_s": 10.0,
                }
            )
        )
    return out


# -- the club's data ------------------------------------------------------------------------


def seed_club(hub: HubFacade, members_csv: Path) -> list[Card]:
    """Demo logins, the club's members, and a few club cards (one with this year's fee unpaid).

    Through the hub's facade, as the manager would do it on the pages (before the hub starts,
    so nothing of it reaches a node)."""
    year = hub.reads.fee_year()
    hub.execute(CreateStaff(username=STAFF[0], password=new_password(STAFF[1]), role="staff", actor="demo"))
    hub.execute(CreateStaff(username=MANAGER[0], password=new_password(MANAGER[1]), role="manager", actor="demo"))
    hub.execute(ImportMembers(data=members_csv.read_bytes(), actor="demo"))
    members = sorted(hub.reads.people.search_members("", limit=10_000), key=lambda m: m.id)
    cards = []
    for i, uid in zip(CARD_HOLDERS, (*CARD_UIDS, UNPAID_UID)):
        member = members[i % len(members)]
        hub.execute(AssignCard(member_id=member.id, uid=uid, actor="demo"))
        paid = uid != UNPAID_UID
        if paid:
            hub.execute(RecordFee(member_id=member.id, year=year, actor="demo"))
        cards.append(Card(uid, member.name, paid))
    return cards


# -- the HTTP server --------------------------------------------------------------------------


@dataclass
class Http:
    server: Any
    thread: threading.Thread
    url: str

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(5)


def start_http(core: Hub, address: str, data_dir: Path) -> Http:
    from dashboard.http_server import http_server

    try:
        sock = HttpAddress.parse(address).bind()
    except ValueError:
        if address != DEFAULT_HTTP:
            raise
        sock = HttpAddress.parse("127.0.0.1:0").bind()  # 8080 is taken: any free port will do for a demo
    app = hub_web_app(core, data_dir=data_dir)  # the pages and API, as `lavos server` serves them
    server = http_server(app, log_level="warning", access_log=False)  # guarded as `lavos server` is
    # Not the main thread, so uvicorn leaves the signals to us; should_exit stops it.
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="demo-http", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    host, port = sock.getsockname()[:2]
    return Http(server, thread, f"http://{host}:{port}/")


# -- the evening --------------------------------------------------------------------------------


@dataclass
class Evening:
    """Carries the plan out and says what happens, in the hall's local (simulated) time."""

    hub: HubFacade  # every write and read of the hall goes through it, as the dashboard's do
    nodes: dict[str, SimNode]
    clock: ScaledClock
    console: Console
    parties: dict[int, int] = field(default_factory=dict)  # plan party -> game id
    racks: dict[int, tuple[int, int]] = field(default_factory=dict)  # party -> (rack, balls dropped in it)
    background: list[threading.Thread] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    live: bool = False  # tell the hub's news only while the evening runs, not start-up and shutdown
    bar: Bar | None = None  # the till: payments, the day's close-out (None: the evening runs without)
    url: str | None = None  # the dashboard's, for where the Z report is
    # Games the hub stopped itself (prepaid): told on its writer thread, paid from the evening's.
    hub_stops: list[tuple[int, str, int]] = field(default_factory=list)

    def say(self, table: str, text: str, style: str = "") -> None:
        at = self.clock().astimezone(self.hub.reads.venue.tz).strftime("%H:%M")
        body = f"[{style}]{escape(text)}[/]" if style else escape(text)
        self.console.print(f"[dim]{at}[/] [bold]{table:<9}[/] {body}", highlight=False, soft_wrap=True)

    def run(self, plan: list[Action], stop: threading.Event, deadline: float | None) -> None:
        self.live = True
        try:
            if self.bar is not None:
                self.bar.open()
            self._run(plan, stop, deadline)
        finally:
            self.live = False

    def pay_hub_stops(self) -> None:
        with self.lock:
            stops, self.hub_stops[:] = list(self.hub_stops), []
        for party, table, game in stops:
            if self.bar is not None:
                self.bar.game_stopped(party, table, game)

    def close_out(self) -> None:
        """Closing time at the bar: the games still on are stopped, every tab paid, the day closed."""
        with self.lock:
            running, self.parties = dict(self.parties), {}
        table_of = {s.id: t for t, s in self.hub.reads.floor.hall_snapshot().open.items()}
        for party, game in sorted(running.items()):
            table = table_of.get(game, "hall")
            if game in table_of:
                try:
                    st = self.hub.execute(StopGame(game=game, actor=STAFF[0]))
                    self.say(
                        table, f"game {game} stopped at closing, bill {format_eur(self.hub.reads.floor.bill_of(st).total_cents)}", "green"
                    )
                except ServiceError as e:
                    self.say(table, f"staff could not stop: {e}", "yellow")
                    continue
            if self.bar is not None:
                self.bar.game_stopped(party, table, game)
        self.pay_hub_stops()
        if self.bar is not None:
            self.bar.close(self.url)

    def _run(self, plan: list[Action], stop: threading.Event, deadline: float | None) -> None:
        for action in plan:
            delay = self.clock.real_delay(action.at)
            if deadline is not None:
                delay = min(delay, deadline - time.monotonic())
            if delay > 0 and stop.wait(delay):
                return
            if deadline is not None and time.monotonic() >= deadline:
                break
            self.pay_hub_stops()
            try:
                self.do(action)
            except ServiceError as e:
                self.say(action.table, f"staff could not {action.do.value}: {e}", "yellow")
        if stop.is_set():
            return
        # The plan is done, or the --seconds are up: either way the bar closes the day properly.
        self.say("hall", "closing time: the evening is over (Ctrl-C to stop)", "bold")
        self.close_out()
        linger(stop, deadline)

    def sunday(self, afternoon: DemoTournament, stop: threading.Event, deadline: float | None) -> None:
        """`--tournament`: the Lavosliga afternoon instead of the evening, its standings printed at the end."""
        self.live = True
        try:
            if self.bar is not None:
                self.bar.open()
            afternoon.set_up()
            last = afternoon.run(stop, deadline)
            if stop.is_set():
                return
            if last.finished_at is None:  # the --seconds are up: the tables close with the afternoon
                for table, game in self.hub.reads.floor.hall_snapshot().open.items():
                    self.hub.execute(StopGame(game=game.id, reason="demo: the afternoon is over", actor=STAFF[0]))
                    self.say(table, f"game {game.id} stopped: the afternoon is over", "magenta")
            self.console.rule("[bold]Lavosliga results[/]")
            for text in afternoon.results(last):
                self.console.print(escape(text), soft_wrap=True)
            self.console.rule()
            if self.bar is not None:
                self.bar.close(self.url)
        finally:
            self.live = False
        linger(stop, deadline)

    def do(self, a: Action) -> None:
        """Carry out one planned action: each kind of action is its own step below."""
        getattr(self, f"_do_{a.do.name.lower()}")(a, self.nodes[a.table])

    def _do_start(self, a: Action, sim: SimNode) -> None:
        gid = self.hub.execute(StartGame(table=a.table, card_uid=a.uid, prepaid_minutes=a.minutes, actor=STAFF[0]))
        with self.lock:
            self.parties[a.party] = gid
        how = f"prepaid {a.minutes} min" if a.minutes else "open"
        self.say(a.table, f"game {gid} started by staff ({how}{', club card of ' + a.note if a.uid else ''})", "green")
        if self.bar is not None:
            self.bar.game_started(a.party, a.table, gid)

    def _do_stop(self, a: Action, sim: SimNode) -> None:
        with self.lock:
            stopping = self.parties.pop(a.party) if a.party in self.parties else None
        if stopping is None or not any(s.id == stopping for s in self.hub.reads.floor.hall_snapshot().open.values()):
            return  # the hub stopped it already (prepaid time used up)
        st = self.hub.execute(StopGame(game=stopping, actor=STAFF[0]))
        self.say(a.table, f"game {stopping} stopped by staff, bill {format_eur(self.hub.reads.floor.bill_of(st).total_cents)}", "green")
        if self.bar is not None:
            self.bar.game_stopped(a.party, a.table, stopping)

    def _do_drop(self, a: Action, sim: SimNode) -> None:
        rack, ball = self.racks.get(a.party, (0, 0))
        ball = ball + 1 if a.rack == rack else 1
        self.racks[a.party] = (cast(int, a.rack), ball)  # a drop names its rack and pocket (sim.players)
        self.say(a.table, f"{a.game} rack {a.rack}: ball {ball} into pocket {a.pocket} ({a.pulse_ms:.0f} ms)", "dim")
        sim.pulse(sim.config.pins.pockets[cast(int, a.pocket)], cast(float, a.pulse_ms))

    def _do_goal(self, a: Action, sim: SimNode) -> None:
        pins = sim.config.pins
        sim.pulse(
            cast(int, pins.goal_home if a.side == "home" else pins.goal_away), cast(float, a.pulse_ms)
        )  # a foosball node's pins, a planned pulse
        self.say(a.table, f"goal ({a.side})" + (f", {a.note}" if a.note else ""), "" if a.note else "dim")

    def _do_tap(self, a: Action, sim: SimNode) -> None:
        self.say(a.table, f"{a.note} taps a club card ({a.uid})")
        sim.tap(cast(str, a.uid))  # a tap names its card

    def _do_offline(self, a: Action, sim: SimNode) -> None:
        self.say(a.table, f"node goes down: {a.note}", "yellow")
        node = sim.take_down()
        if node is not None:  # closing waits on MQTT: keep the evening going meanwhile
            t = threading.Thread(target=node.close, name=f"close-{a.table}", daemon=True)
            t.start()
            self.background.append(t)

    def _do_online(self, a: Action, sim: SimNode) -> None:
        for t in self.background:
            t.join(5)
        sim.start()
        self.say(a.table, "node is back (new boot)", "yellow")

    def _do_beam_break(self, a: Action, sim: SimNode) -> None:
        self.say(a.table, f"pocket {a.pocket}: {a.note}", "yellow")
        sim.hold(sim.config.pins.pockets[cast(int, a.pocket)], broken=True)  # a beam action names its pocket

    def _do_beam_clear(self, a: Action, sim: SimNode) -> None:
        self.say(a.table, f"pocket {a.pocket}: cleared")
        sim.hold(sim.config.pins.pockets[cast(int, a.pocket)], broken=False)

    def on_hub(self, topic: str, data: dict[str, Any]) -> None:
        """What the hub tells its live views, as the bar would see it."""
        if not self.live:
            return
        table = data.get("table") or "hall"
        if topic == "alert":
            self.say(table, f"ALERT {data.get('message_en')}", "bold red")
        elif topic == "session" and data.get("action") == "stop":
            with self.lock:
                party = next((p for p, game in self.parties.items() if game == data.get("session_id")), None)
                if party is not None:  # not stopped by our staff: the hub did it (prepaid)
                    del self.parties[party]
                    self.hub_stops.append((party, table, int(data["session_id"])))
            if party is not None:
                self.say(table, f"game {data.get('session_id')} stopped by the hub: prepaid time used up", "magenta")
        elif topic == "checkin":
            self.say(table, f"{data.get('member')} checked in", "cyan")
        elif topic == "node":
            self.say(table, "node online" if data.get("online") else "node OFFLINE", "cyan" if data.get("online") else "bold yellow")
        elif topic == "warning":
            self.say(table, f"warning blink ({data.get('kind')})", "magenta")


def linger(stop: threading.Event, deadline: float | None) -> None:
    """The demo's work is done: the dashboard stays up until Ctrl-C (or the --seconds are up)."""
    while not stop.wait(0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))):
        if deadline is not None and time.monotonic() >= deadline:
            return


# -- putting it together --------------------------------------------------------------------------


def _quiet_logs() -> None:
    # Our own lines tell the story; libraries speak up only when something is really wrong.
    logging.basicConfig(level=logging.ERROR, format="%(name)s: %(message)s", handlers=[RichHandler(show_path=False)], force=True)


def _close_all(closers: list[Callable[[], None]], console: Console) -> None:
    for close in reversed(closers):
        try:
            close()
        except Exception as e:  # noqa: BLE001 - one part failing to stop must not keep the others running
            console.print(f"[red]while stopping: {escape(repr(e))}[/]")


def run_demo(
    *,
    speed: float = 10.0,
    seconds: float | None = None,
    http: str = DEFAULT_HTTP,
    seed: int = 7,
    broker: str = "auto",
    stop: threading.Event | None = None,
    console: Console | None = None,
    after_evening: Callable[[HubFacade], None] | None = None,
    notify_webhook: bool = False,
    tournament: bool = False,
) -> None:
    """`after_evening` (tests) reads the hall once the evening and its close-out are over, before it all stops.
    `notify_webhook`: the alerts also go, as push notifications, to a tiny ntfy-style receiver on
    loopback (sim.notify_receiver) that prints what it gets; off by default. `tournament`: a
    Lavosliga Sunday afternoon (sim.tournament) instead of the evening."""
    if not 0 < speed <= MAX_SPEED:
        raise ValueError(f"--speed {speed}: use a factor above 0 and at most {MAX_SPEED:g}")
    console = console or Console(highlight=False)
    stop = stop or threading.Event()
    began = time.monotonic()
    deadline = began + seconds if seconds is not None else None
    _quiet_logs()
    venue = load_venue(VENUE)
    closers: list[Callable[[], None]] = []
    with tempfile.TemporaryDirectory(prefix="lavos-demo-") as tmp:
        workdir = Path(tmp)
        try:
            mqtt = start_broker(workdir, [t.id for t in venue.tables], prefer=broker)
            closers.append(mqtt.stop)
            store = open_store(f"sqlite:///{workdir / 'lavos.db'}", venue=venue)
            closers.append(store.close)
            start = sunday_start(venue, datetime.now(UTC)) if tournament else evening_start(venue, datetime.now(UTC))
            clock = ScaledClock(start, speed)
            core = build_hub(venue, store, mqtt_url=mqtt.hub_url, clock=clock, data_dir=workdir)  # client id = its login, lavos-hub
            hub = HubFacade(core)
            cards = seed_club(hub, MEMBERS_CSV)
            evening = Evening(hub, {}, clock, console)
            evening.bar = Bar(hub, evening.say, STAFF[0], MANAGER[0])
            hub.reads.subscribe(evening.on_hub)
            core.start()
            closers.append(core.close)
            web = start_http(core, http, workdir)
            closers.append(web.stop)
            evening.url = web.url
            rng = random.Random(seed)
            evening.nodes = {cfg.table: SimNode(cfg, random.Random(rng.random())) for cfg in node_configs(venue, mqtt, workdir)}
            closers.append(lambda: _close_nodes(evening))
            with ThreadPoolExecutor(4) as pool:  # each start waits a little on SQLite and MQTT
                list(pool.map(SimNode.start, evening.nodes.values()))
            receiver = _notify_receiver(core, console, closers) if notify_webhook else None
            bookings = DemoBookings(evening, stop, deadline)
            if not tournament:
                bookings.book_all()  # taken by phone before the doors opened
            _banner(console, mqtt, web, workdir, cards, speed, clock, venue.tz, time.monotonic() - began, tournament)
            if receiver is not None:
                console.print(f"Push notifications (ntfy-style, printed here): [bold]{receiver.address}[/]", soft_wrap=True)
            if tournament:
                afternoon = DemoTournament(hub, clock, evening.say, random.Random(seed), evening.bar, STAFF[0], MANAGER[0])
                evening.sunday(afternoon, stop, deadline)
            else:
                minutes = (closing_time(venue, clock.start) - clock.start).total_seconds() / 60
                # The players leave the two 8-ft tables to the bookings and the waiting list (sim.bookings).
                tables = [Table(t.id, t.kind.value, t.club_card) for t in venue.tables if t.id not in BOOKED_TABLES]
                plan = plan_evening(tables, cards, seed=seed, speed=speed, minutes=minutes, stuck_after_s=STUCK_AFTER_S)
                bookings.start()
                evening.run(plan, stop, deadline)
            if after_evening is not None:
                after_evening(hub)
        except KeyboardInterrupt:
            pass
        finally:
            console.print("[bold]stopping…[/]")
            _close_all(closers, console)
            console.print("[bold]demo stopped[/]")


def _notify_receiver(core: Any, console: Console, closers: list[Callable[[], None]]) -> Any:
    """--notify-webhook: a loopback ntfy-style receiver as the hub's one push target (Slovak)."""
    from broker.notify.notifications import NotifySettings, Target
    from sim.notify_receiver import NtfyReceiver

    receiver = NtfyReceiver(lambda text: console.print(f"[magenta]push →[/] {escape(text)}", highlight=False, soft_wrap=True)).start()
    closers.append(receiver.stop)
    core.execute(
        SaveNotifySettings(settings=NotifySettings((Target(id="demo", url=receiver.apprise_url, label="demo"),)), actor=MANAGER[0])
    )
    return receiver


def _close_nodes(evening: Evening) -> None:
    # In parallel: each says goodbye over MQTT and may wait up to 2 s if the broker went first.
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(SimNode.close, evening.nodes.values()))
    for t in evening.background:
        t.join(5)


def _banner(
    console: Console,
    mqtt: DemoBroker,
    web: Http,
    workdir: Path,
    cards: list[Card],
    speed: float,
    clock: ScaledClock,
    tz: Any,
    took_s: float,
    tournament: bool = False,
) -> None:
    local = clock().astimezone(tz)
    console.rule("[bold]Lavos demo[/]")
    console.print(
        f"Dashboard and API: [bold link={web.url}]{web.url}[/]   (API under {web.url}api, health at {web.url}api/health)", soft_wrap=True
    )
    console.print(
        f"Logins: staff [bold]{STAFF[0]}[/] / [bold]{STAFF[1]}[/]   manager [bold]{MANAGER[0]}[/] / [bold]{MANAGER[1]}[/]", soft_wrap=True
    )
    console.print(f"MQTT broker: {mqtt.name} on 127.0.0.1:{mqtt.port}   data: {workdir}", soft_wrap=True)
    paid = ", ".join(f"{c.name} {c.uid}" for c in cards if c.paid)
    unpaid = ", ".join(f"{c.name} {c.uid}" for c in cards if not c.paid)
    console.print(f"Club cards (fee paid): {paid}; fee unpaid: {unpaid}", soft_wrap=True)
    if tournament:
        console.print(f"A Lavosliga Sunday: the tournament's page is {web.url}tournaments (the TV link on it)", soft_wrap=True)
    else:
        console.print(bookings_banner(), soft_wrap=True)
    console.print(
        f"The {'afternoon' if tournament else 'evening'} is at {local:%H:%M} (venue time), {speed:g}x faster than real time. Up in {took_s:.1f} s. Ctrl-C stops.",
        soft_wrap=True,
    )
    console.rule()
