"""MetricsWriter against real servers: VictoriaMetrics for the happy path and an outage, and a
small HTTP server of our own for the answers VictoriaMetrics never gives (500, 429, 400, hangs)."""

from __future__ import annotations

import json
import logging
import math
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from broker.adapters.metrics import DEAD_LETTER_FILE, InvalidPoint, MetricsWriter, line_protocol
from sim.mosquitto import free_port
from tests.support.matching import found
from tests.support.waiting import wait_until as eventually

if TYPE_CHECKING:
    from tests.support.victoria import VictoriaMetrics


REPO = Path(__file__).resolve().parents[3]
# An hour ago: inside VictoriaMetrics' retention, and far from "now" so a test that used the
# wall clock by mistake would show.
BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
BAD_TABLE = "reject-me"


def at(i: int) -> datetime:
    return BASE + timedelta(milliseconds=i)


def ms(i: int) -> int:
    return int(at(i).timestamp() * 1000)


class FakeInflux:
    """A real HTTP peer for /api/v2/write whose answer the test switches.

    mode: "ok" (204, lines recorded), an int status (answered as such, nothing recorded) or
    "hang" (answers 503 only after `hang_s`, or when released; None: not before). In "ok", a
    request with a line naming BAD_TABLE is refused whole with 400, as InfluxDB refuses a request
    with a line it cannot parse. With `needs_token`, a write without an Authorization header is
    answered as InfluxDB 2 answers it: 401.
    """

    def __init__(self) -> None:
        self.mode: str | int = "ok"
        self.hang_s: float | None = 10.0
        self.needs_token = False
        self.lines: list[str] = []
        self.requests = 0
        self._lock = threading.Lock()
        self._release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                with fake._lock:
                    fake.requests += 1
                    mode = fake.mode
                if fake.needs_token and not self.headers.get("Authorization"):
                    return self._answer(401, "unauthorized access")
                if mode == "hang":
                    fake._release.wait(fake.hang_s)
                    return self._answer(503)
                if mode == "ok" and BAD_TABLE in body:
                    return self._answer(400, "unable to parse: bad line")
                if mode != "ok":
                    return self._answer(int(mode), "try later")
                with fake._lock:
                    fake.lines += body.split("\n")
                self._answer(204)

            def _answer(self, status: int, message: str = "") -> None:
                payload = json.dumps({"code": "x", "message": message}).encode() if message else b""
                self.send_response(status)
                if status == 429:
                    self.send_header("Retry-After", "1")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def indices(self) -> list[int]:
        """The points stored, in the order they first arrived. A point sent again (a request that
        timed out on a busy machine after the server took it: delivery is at least once, see
        broker.adapters.metrics) overwrites itself as InfluxDB does, and as the shipped
        VictoriaMetrics does with -dedup.minScrapeInterval=1ms: the same line is stored once."""
        with self._lock:
            stored = dict.fromkeys(self.lines)
        return [int(m.group(1)) for line in stored if (m := re.search(r" i=(\d+)i ", line))]

    def close(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(autouse=True)
def _the_writers_log_heard(caplog: pytest.LogCaptureFixture) -> None:
    """The writer's own level, whatever ran before on this worker: the demo run in-process
    (tests/sim/test_demo_till.py) sets the root logger to ERROR, and its warnings went unheard (CI)."""
    caplog.set_level(logging.INFO, logger="broker.adapters.metrics")


@pytest.fixture
def fake() -> Iterator[FakeInflux]:
    server = FakeInflux()
    yield server
    server.close()


@pytest.fixture
def make_writer(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    made: list[MetricsWriter] = []

    def make(url: str, **options: Any) -> MetricsWriter:
        settings: dict[str, Any] = dict(
            token="test-token",
            org="lavos",
            bucket="metrics",
            spool_dir=tmp_path / "spool",
            batch_size=50,
            flush_interval=0.05,
            timeout=1.0,
            retry_initial=0.05,
            retry_max=0.3,
        )
        settings.update(options)
        writer = MetricsWriter(url, **settings)
        made.append(writer)
        return writer

    yield make
    for writer in made:
        writer.close(timeout=0.5)


def write_points(writer: MetricsWriter, indices: Any, table: str | None = "pool-01") -> None:
    for i in indices:
        writer.write("t", {"table": BAD_TABLE if table is None else table}, {"i": i}, at(i))


# ---- line protocol ---------------------------------------------------------------------


def test_line_protocol_escapes_names_and_keeps_the_time_to_the_microsecond() -> None:
    when = datetime(2026, 11, 3, 20, 15, 7, 123456, tzinfo=timezone(timedelta(hours=1)))
    line = line_protocol("pocket drop,x", {"table": "pool 01,a=b", "pocket": "3"}, {"count": 1, "temp": 41.5, "on": True}, when)
    assert line == r"pocket\ drop\,x,pocket=3,table=pool\ 01\,a\=b count=1i,temp=41.5,on=true " + str(
        int(datetime(2026, 11, 3, 19, 15, 7, tzinfo=UTC).timestamp()) * 10**9 + 123456000
    )


@pytest.mark.parametrize(
    "tags, fields, when, complaint",
    [
        ({}, {"v": math.nan}, at(0), "not finite"),
        ({}, {"v": math.inf}, at(0), "not finite"),
        ({}, {"v": -math.inf}, at(0), "not finite"),
        ({}, {"v": "text"}, at(0), "only int, float and bool"),
        ({}, {"v": None}, at(0), "only int, float and bool"),
        ({}, {"v": 2**63}, at(0), "64-bit"),
        ({}, {}, at(0), "at least one field"),
        ({"table": "pool-01\nx v=1i"}, {"v": 1}, at(0), "control character"),
        ({"table": "pool\\"}, {"v": 1}, at(0), "backslash"),
        ({"table": ""}, {"v": 1}, at(0), "non-empty"),
        ({"table": 7}, {"v": 1}, at(0), "non-empty string"),
        ({"_field": "x"}, {"v": 1}, at(0), "reserved"),
        ({}, {"time": 1}, at(0), "reserved"),
        ({}, {"v": 1}, datetime(2026, 11, 3, 20, 0), "timezone-aware"),
    ],
)
def test_points_line_protocol_cannot_carry_are_refused_with_the_reason(
    tmp_path: Path, tags: Any, fields: Any, when: Any, complaint: Any
) -> None:
    with pytest.raises(InvalidPoint, match=complaint):
        line_protocol("m", tags, fields, when)


def test_writer_refuses_a_bad_point_at_write_and_queues_nothing(make_writer: Callable[..., Any], fake: FakeInflux) -> None:
    writer = make_writer(fake.url)
    with pytest.raises(InvalidPoint):
        writer.node("pool-01", uptime_s=5, outbox=0, cpu_temp_c=math.nan, reconnects=0, at=at(0))
    with pytest.raises(InvalidPoint, match="minutes must be an integer"):
        writer.session("pool-01", "standard", minutes=1.5, amount_cents=900, at=at(0))
    with pytest.raises(InvalidPoint, match="uptime_s must be a number"):
        writer.node("pool-01", uptime_s="5", outbox=0, cpu_temp_c=None, reconnects=0, at=at(0))
    assert writer.flush(2)
    assert writer.stats()["written"] == 0 and fake.requests == 0


# ---- construction ----------------------------------------------------------------------


@pytest.mark.parametrize("url", ["not a url", "influx.local:8086", "ftp://127.0.0.1:8086", "http://", "http://127.0.0.1:port", ""])
def test_a_bad_url_fails_at_construction(tmp_path: Path, url: Any) -> None:
    with pytest.raises(ValueError, match="metrics URL"):
        MetricsWriter(url, "t", "lavos", "metrics", tmp_path / "spool")


def test_an_unusable_spool_directory_fails_at_construction(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(ValueError, match=r"spool directory .* is not usable"):
        MetricsWriter("http://127.0.0.1:1", "t", "lavos", "metrics", a_file / "spool")
    with pytest.raises(ValueError, match="max_spool_bytes must be positive"):
        MetricsWriter("http://127.0.0.1:1", "t", "lavos", "metrics", tmp_path / "spool", max_spool_bytes=0)


# ---- VictoriaMetrics (Must show 5) -----------------------------------------------------


def test_every_measurement_arrives_in_victoria_metrics(victoria: VictoriaMetrics, make_writer: Callable[..., Any]) -> None:
    writer = make_writer(victoria.url)
    writer.pocket("pool-01", 3, at(1))
    writer.goal("foos-01", "home", at(2))
    writer.session("pool-02", "club card", 95, 633, at(3))
    writer.light("pool-02", True, at(4))
    writer.node("carom-01", uptime_s=3600, outbox=2, cpu_temp_c=48.5, reconnects=1, at=at(5))
    writer.alert("play_without_session", at(6))
    assert writer.flush(10), writer.stats()

    got = {
        (name, tuple(sorted(labels.items())), ts, value)
        for name, labels, ts, value in victoria.samples("(pocket|goal|session|light|node|alert)_.*")
    }
    assert got == {
        ("pocket_count", (("pocket", "3"), ("table", "pool-01")), ms(1), 1),
        ("goal_count", (("side", "home"), ("table", "foos-01")), ms(2), 1),
        ("session_minutes", (("table", "pool-02"), ("tariff", "club card")), ms(3), 95),
        ("session_amount_cents", (("table", "pool-02"), ("tariff", "club card")), ms(3), 633),
        ("light_on", (("table", "pool-02"),), ms(4), 1),
        ("node_uptime_s", (("table", "carom-01"),), ms(5), 3600),
        ("node_outbox", (("table", "carom-01"),), ms(5), 2),
        ("node_cpu_temp_c", (("table", "carom-01"),), ms(5), 48.5),
        ("node_reconnects", (("table", "carom-01"),), ms(5), 1),
        ("alert_count", (("kind", "play_without_session"),), ms(6), 1),
    }


def test_points_written_while_victoria_metrics_is_down_are_spooled_and_all_arrive(
    victoria: VictoriaMetrics, make_writer: Callable[..., Any]
) -> None:
    writer = make_writer(victoria.url, batch_size=100, flush_interval=0.1, timeout=2.0, retry_max=1.0)
    before, during, after = range(200), range(200, 1200), range(1200, 1400)
    write_points(writer, before, table="outage")
    assert writer.flush(10)

    victoria.stop()
    started = time.monotonic()
    for i in during:  # ten seconds of writes, 100 points a second
        writer.write("t", {"table": "outage"}, {"i": i}, at(i))
        time.sleep(max(0.0, started + (i - 200) / 100 - time.monotonic()))
    stats = writer.stats()
    assert stats["failing"] and stats["written"] == len(before), stats
    assert stats["spooled"] > 0 and stats["spooled"] + stats["queued"] == len(during), stats
    assert "Connection refused" in (stats["last_error"] or "") or "Max retries" in (stats["last_error"] or ""), stats

    victoria.start()
    write_points(writer, after, table="outage")
    eventually(lambda: writer.flush(1), 20, "the spool to drain into VictoriaMetrics")
    stats = writer.stats()
    assert stats["spooled"] == 0 and stats["dropped"] == 0 and stats["written"] >= 1400, stats

    samples = victoria.samples("t_i")
    assert len(samples) == 1400
    assert [(ts, value) for _, _, ts, value in samples] == [(ms(i), i) for i in range(1400)]


# ---- error paths against our own HTTP server -------------------------------------------


@pytest.mark.parametrize("failure", [500, 503, 429, 401, "hang"])
def test_nothing_is_lost_or_reordered_while_the_server_cannot_take_writes(
    make_writer: Callable[..., Any], fake: FakeInflux, failure: Any
) -> None:
    # A small queue: while a request hangs, write() spills to the spool itself, and the batch
    # that then fails in flight must still land before the points spilled behind it.
    writer = make_writer(fake.url, timeout=0.5, max_queue=100)
    write_points(writer, range(100))
    assert writer.flush(5)

    fake.mode = failure
    for i in range(100, 400):
        writer.write("t", {"table": "pool-01"}, {"i": i}, at(i))
        if i % 50 == 0:
            time.sleep(0.05)  # let the sender fail a few times while points keep coming
    eventually(lambda: writer.stats()["failing"], 5, "a failed write")
    stats = writer.stats()
    assert stats["spooled"] > 0 and stats["dead_lettered"] == 0, stats

    fake.mode = "ok"
    write_points(writer, range(400, 450))  # live points must queue behind the spool
    eventually(lambda: writer.flush(1), 10, "the spool to drain")
    assert fake.indices() == list(range(450))
    assert writer.stats()["dropped"] == 0


def test_write_never_waits_for_the_server(make_writer: Callable[..., Any], fake: FakeInflux) -> None:
    """write() queues, or spills to the spool when the queue is full, on the caller's thread; it
    never waits for the sender. Here the sender's one request hangs for as long as the test runs,
    so a write() that waited for it, or for room it frees, would never return."""
    writer = make_writer(fake.url, timeout=3600, max_queue=100)
    fake.mode, fake.hang_s = "hang", None
    write_points(writer, range(50))  # a batch: the sender's request goes out, and hangs
    eventually(lambda: fake.requests == 1, what="the sender's request under way")
    writes = threading.Thread(target=write_points, args=(writer, range(50, 350)), daemon=True)
    writes.start()
    eventually(lambda: not writes.is_alive(), what="300 writes while the server's answer hangs")
    assert fake.requests == 1  # the one request, still unanswered
    assert writer.stats()["spooled"] > 0, writer.stats()


def test_influxdb2_refusing_a_writer_without_a_token_is_said_clearly_and_nothing_is_lost(
    make_writer: Callable[..., Any], fake: FakeInflux, caplog: pytest.LogCaptureFixture
) -> None:
    """VictoriaMetrics needs no token (lavos server --influx without --influx-token-file); an
    InfluxDB 2 refuses such writes with 401, which must say what is missing, not just "401"."""
    fake.needs_token = True
    writer = make_writer(fake.url, token=None)
    write_points(writer, range(20))
    eventually(lambda: writer.stats()["failing"], 5, "the refused write")
    stats = writer.stats()
    assert stats["spooled"] == 20 and stats["dead_lettered"] == 0, stats
    said = "the server wants a token and this writer has none (InfluxDB 2 needs an API token"
    assert said in str(stats["last_error"]) and "--influx-token-file" in str(stats["last_error"]), stats
    assert said in caplog.text
    # the same writer with a token would have been let in: the points wait for it in the spool
    writer.close(timeout=0.5)
    again = make_writer(fake.url, token="test-token")
    assert eventually(lambda: again.flush(1), 10, "the spool to drain")
    assert fake.indices() == list(range(20))


def test_refused_lines_go_to_the_dead_letter_file_and_their_neighbours_arrive(
    make_writer: Callable[..., Any], fake: FakeInflux, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    writer = make_writer(fake.url)
    bad = {17, 60, 230}
    fake.mode = 500  # first through the spool...
    for i in range(200):
        write_points(writer, [i], table=None if i in bad else "pool-01")
    eventually(lambda: writer.stats()["spooled"] == 200, 5, "all points spooled")
    fake.mode = "ok"
    assert eventually(lambda: writer.flush(1), 10, "the spool to drain")
    for i in range(200, 260):  # ...then straight from memory
        write_points(writer, [i], table=None if i in bad else "pool-01")
    assert writer.flush(5)

    assert fake.indices() == [i for i in range(260) if i not in bad]
    stats = writer.stats()
    assert stats["dead_lettered"] == 3 and stats["spooled"] == 0 and stats["dropped"] == 0, stats
    dead = (tmp_path / "spool" / DEAD_LETTER_FILE).read_text().splitlines()
    assert [found(r" i=(\d+)i ", line).group(1) for line in dead if not line.startswith("#")] == ["17", "60", "230"]
    assert all("HTTP 400: unable to parse: bad line" in line for line in dead if line.startswith("#"))
    assert "InfluxDB refused a point (HTTP 400: unable to parse: bad line)" in caplog.text


def test_a_full_spool_drops_the_oldest_points_and_counts_them(
    make_writer: Callable[..., Any], fake: FakeInflux, caplog: pytest.LogCaptureFixture
) -> None:
    one_line = len(line_protocol("t", {"table": "pool-01"}, {"i": 1000}, at(1000))) + 1
    writer = make_writer(fake.url, max_spool_bytes=200 * one_line)
    fake.mode = 500
    write_points(writer, range(1000, 2000))  # same width, so the bound holds exactly 200 of them
    eventually(lambda: writer.stats()["queued"] == 0, 5, "the queue to spill")
    stats = writer.stats()
    assert stats["spool_bytes"] <= 200 * one_line and stats["spooled"] == 200 and stats["dropped"] == 800, stats
    assert "spool full" in caplog.text and "dropped the oldest points" in caplog.text

    fake.mode = "ok"
    assert eventually(lambda: writer.flush(1), 10, "the spool to drain")
    assert fake.indices() == list(range(1800, 2000))


def test_memory_stays_bounded_while_the_server_is_unreachable(make_writer: Callable[..., Any], tmp_path: Path) -> None:
    writer = make_writer(f"http://127.0.0.1:{free_port()}", max_queue=200, batch_size=50)
    write_points(writer, range(1000))  # warm up caches, the spool file and the sender
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        most_queued = 0
        for i in range(1000, 31_000):
            writer.write("t", {"table": "pool-01"}, {"i": i}, at(i))
            if i % 100 == 0:
                most_queued = max(most_queued, writer.stats()["queued"])
        grown = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    assert most_queued <= 200 + 50
    # 30 000 points kept in memory would take several MB.
    assert grown < 1_000_000, f"memory grew by {grown} bytes"
    eventually(lambda: writer.stats()["spooled"] == 31_000, 5, "every point to be on disk")
    assert "Connection refused" in writer.stats()["last_error"] or "NewConnectionError" in writer.stats()["last_error"]


def test_a_killed_process_resumes_from_the_spool(make_writer: Callable[..., Any], fake: FakeInflux, tmp_path: Path) -> None:
    fake.mode = 500
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys, time
        from tests.broker.adapters.test_metrics import write_points
        from broker.adapters.metrics import MetricsWriter
        w = MetricsWriter({fake.url!r}, "t", "lavos", "metrics", {str(tmp_path / "spool")!r},
                          batch_size=50, flush_interval=0.05, retry_initial=0.05, retry_max=0.3)
        write_points(w, range(500))
        while w.stats()["spooled"] < 500:
            time.sleep(0.01)
        print("spooled", flush=True)
        time.sleep(60)
    """),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "spooled"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert fake.indices() == []

    fake.mode = "ok"
    writer = make_writer(fake.url)
    write_points(writer, range(500, 520))  # new points must follow the resumed ones
    assert eventually(lambda: writer.flush(1), 10, "the resumed spool to drain")
    assert fake.indices() == list(range(520))


def test_close_keeps_what_it_could_not_send_for_the_next_start(make_writer: Callable[..., Any], fake: FakeInflux, tmp_path: Path) -> None:
    # A name that never resolves: as harmless to write() as a server that is down.
    writer = make_writer("http://metrics.invalid:8086")
    write_points(writer, range(30))
    writer.close(timeout=0.5)
    assert "metrics.invalid" in writer.stats()["last_error"] and writer.stats()["spooled"] == 30
    with pytest.raises(RuntimeError, match="closed"):
        write_points(writer, [30])

    again = make_writer(fake.url)
    assert again.flush(5)
    assert fake.indices() == list(range(30))


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_retries_back_off_exponentially_on_the_injected_clock(make_writer: Callable[..., Any], fake: FakeInflux) -> None:
    clock = FakeClock()
    writer = make_writer(fake.url, retry_initial=10, retry_max=40, clock=clock)
    fake.mode = 500
    write_points(writer, [0])
    assert not writer.flush(2)  # one attempt, failed: the point is spooled
    eventually(lambda: writer._failures == 1, 20, "the first failure booked")
    time.sleep(0.5)
    assert fake.requests == 1 and writer.stats()["spooled"] == 1

    clock.now += 10
    eventually(lambda: fake.requests == 2, 20, "the first retry")
    # The server counts the request before the writer has its answer: until the writer has booked
    # the failure, the next wait (20 s) is not set, and moving the clock now would shift it.
    eventually(lambda: writer._failures == 2, 20, "the first retry's failure booked")
    clock.now += 10  # the next wait is 20 s
    time.sleep(0.5)
    assert fake.requests == 2
    clock.now += 10
    eventually(lambda: fake.requests == 3, 20, "the second retry")
