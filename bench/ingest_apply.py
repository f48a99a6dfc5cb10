"""The hub's per-event cost without MQTT: `apply_batch` on ready-made batches, in one thread.

    .venv/bin/python -m bench.ingest_apply [--events 20000] [--batch 500] [--metrics] [--profile]

A drain (bench/hub_ingest.py) shares one interpreter lock between paho's thread and the ingest
thread, so a profile of it blames whatever runs when the lock changes hands. This calls the
ingest rules alone, on the same events (10 tables in play, SQLite), so their cost per event and
its profile are clean: what this saves per event is what the drain can gain.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from bench.hub_ingest import VENUE, open_sessions, payloads
from broker.adapters.heap import settle_heap
from broker.adapters.hub_link import Inbound
from broker.compose import build_hub
from broker.domain.venue import load_venue
from broker.storage.engine import open_store
from devices import contract


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--metrics", action="store_true", help="metrics to a real VictoriaMetrics")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--no-sessions", action="store_true", help="tables not in play: every drop touches an alert")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lavos-apply-"))
    url = f"sqlite:///{work / 'hub.db'}"
    open_store(url).close()
    if not args.no_sessions:
        open_sessions(url)
    vm = metrics = None
    if args.metrics:
        from broker.adapters.metrics import MetricsWriter
        from tests.support.victoria import VictoriaMetrics

        vm = VictoriaMetrics(work / "vm").start()
        metrics = MetricsWriter(vm.url, "token", "lavos", "lavos", work / "spool")
    store = open_store(url)
    svc = build_hub(load_venue(VENUE), store, metrics=metrics)
    contract.build_validators()
    msgs = [Inbound(t, p, i + 1, 1, time.monotonic()) for i, (t, p) in enumerate(payloads(args.events, "apply"))]
    batches = [msgs[i : i + args.batch] for i in range(0, len(msgs), args.batch)]
    settle_heap()  # as lavos server does once its hub is built (broker/adapters/heap.py says why)
    prof = cProfile.Profile() if args.profile else None

    def apply_all() -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.thread_time()
        if prof:
            prof.enable()
        for b in batches:
            svc.handlers.apply_batch(b)
        if prof:
            prof.disable()
        return time.perf_counter() - t0, time.thread_time() - c0

    wall, cpu = svc.run_on_writer(apply_all)  # only the hub's writer may write (broker.storage.engine.Store)
    assert svc.handlers.applied == args.events, svc.handlers.applied
    print(
        f"{args.events} events in batches of {args.batch}: {wall / args.events * 1e6:.1f} us/event wall, "
        f"{cpu / args.events * 1e6:.1f} us/event CPU, {args.events / wall:.0f} ev/s; metrics {'on' if metrics else 'off'}"
    )
    if prof:
        st = pstats.Stats(prof)
        st.sort_stats("tottime").print_stats(35)
        st.sort_stats("cumulative").print_stats(45)
    if metrics:
        metrics.close()
    if vm:
        vm.stop()
    svc.close()
    store.close()


if __name__ == "__main__":
    main()
