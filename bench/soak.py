"""Soak: a compressed club evening, watching every process for leaks.

    .venv/bin/python -m bench.soak [--minutes 10] [--speed 60] [--interval 10] [--warmup 60] [--up-only]

First, how soon the demo is up: from its start to its banner's address answering /api/health 200
(with --up-only, that alone, then the demo is stopped). Then it runs `lavos demo --speed 60` as a
process group of its own and, every `interval` seconds, reads
RSS (/proc/<pid>/status VmRSS) and open file descriptors (/proc/<pid>/fd) of every process in
that group (the demo and the Mosquitto it starts). Printed per process: first, last and max of
each, and whether it stays flat: the mean of the first minute after warm-up against the mean of
the last minute, within 10 %. Warm-up is left out because start-up fills caches, pools and the
SQLite page cache once; a leak is what keeps growing after that. At the end the group gets
SIGTERM and must be gone, every process of it, within 30 s.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FLAT = 0.10


@dataclass
class Series:
    name: str
    samples: list[tuple[float, float, int]] = field(default_factory=list)  # (t, rss MB, fds)


def group_pids(pgid: int) -> list[int]:
    """Every live process whose process group is `pgid`: the demo and whatever it forked."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # The comm field may hold spaces and parentheses: split after its closing one.
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone between listing and reading
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(entry.name))
    return sorted(pids)


def sample(pid: int) -> tuple[str, float, int] | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    rss = next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmRSS")), 0.0)
    return f"{pid} {Path(cmdline[0].decode(errors='replace')).name}", rss, fds


def window_mean(samples: list[tuple[float, float, int]], start: float, end: float, idx: int) -> float:
    values = [s[idx] for s in samples if start <= s[0] < end]
    return statistics.fmean(values) if values else float("nan")


def verdict(first: float, last: float) -> str:
    if first != first or last != last:  # NaN: a window had no samples
        return "n/a"
    change = (last - first) / first if first else 0.0
    return f"{change * 100:+.1f} % {'flat' if abs(change) <= FLAT else 'GROWS' if change > 0 else 'shrinks'}"


def report(series: dict[int, Series], warmup: float, end: float) -> bool:
    flat = True
    print(f"\n{'process':<28} {'RSS MB first/last/max':>24} {'flat?':>16}   {'fds first/last/max':>20} {'flat?':>16}")
    for s in series.values():
        if not s.samples:
            continue
        # first and last after warm-up (the very first sample is an interpreter still importing); max over the whole run
        settled = [x for x in s.samples if x[0] >= warmup] or s.samples
        rss = [settled[0][1], settled[-1][1], max(x[1] for x in s.samples)]
        fds = [settled[0][2], settled[-1][2], max(x[2] for x in s.samples)]
        checks = []
        for idx in (1, 2):
            v = verdict(window_mean(s.samples, warmup, warmup + 60, idx), window_mean(s.samples, end - 60, end + 1, idx))
            flat &= "GROWS" not in v
            checks.append(v)
        print(f"{s.name:<28} {rss[0]:>8.1f}/{rss[1]:.1f}/{rss[2]:.1f} {checks[0]:>16}   {fds[0]:>8}/{fds[1]}/{fds[2]} {checks[1]:>16}")
    return flat


def up_after(demo: subprocess.Popen[bytes], log: Path, t0: float, limit_s: float = 120.0) -> float:
    """Seconds from t0 until the address the demo printed answers /api/health 200."""
    while time.monotonic() - t0 < limit_s:
        if demo.poll() is not None:
            raise SystemExit(f"the demo exited with {demo.returncode} while starting; see {log}")
        found = re.search(rb"Dashboard and API: (http://\S+?)/?\s", log.read_bytes())
        if found:
            try:
                with urllib.request.urlopen(f"{found.group(1).decode()}/api/health", timeout=2) as r:
                    if r.status == 200:
                        return time.monotonic() - t0
            except OSError:  # not listening yet (URLError is one)
                pass
        time.sleep(0.02)
    raise SystemExit(f"the demo was not up after {limit_s:.0f} s; see {log}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--speed", type=float, default=60.0)
    ap.add_argument("--interval", type=float, default=10.0, help="seconds between samples")
    ap.add_argument("--warmup", type=float, default=60.0, help="seconds left out before the first window")
    ap.add_argument("--up-only", action="store_true", help="only how soon the demo is up, then stop it")
    args = ap.parse_args()
    if args.minutes * 60 < args.warmup + 120 and not args.up_only:
        raise SystemExit("--minutes too short: need warm-up plus two separate one-minute windows")
    log = Path(tempfile.mkdtemp(prefix="lavos-soak-")) / "demo.log"
    cmd = [sys.executable, "-m", "lavos_cli", "demo", "--speed", str(args.speed), "--http", "127.0.0.1:0"]
    what = "until it is up" if args.up_only else f"for {args.minutes:g} min, sampling every {args.interval:g} s"
    print(f"$ {' '.join(cmd[1:])}  {what}; demo output in {log}")
    demo = subprocess.Popen(
        cmd,
        cwd=REPO,
        stdout=open(log, "wb"),  # noqa: SIM115 - the child writes it for its whole life; ours closes when this process ends
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    series: dict[int, Series] = {}
    t0 = time.monotonic()
    duration = 0.0 if args.up_only else args.minutes * 60
    try:
        up = up_after(demo, log, t0)
        print(f"the demo is up (its address answers /api/health) {up:.1f} s after its start; load average {os.getloadavg()[0]:.1f}")
        while (t := time.monotonic() - t0) < duration:
            if demo.poll() is not None:
                raise SystemExit(f"the demo exited by itself with {demo.returncode} after {t:.0f} s; see {log}")
            for pid in group_pids(demo.pid):
                got = sample(pid)
                if got is not None:
                    name, rss, fds = got
                    series.setdefault(pid, Series(name)).samples.append((t, rss, fds))
            # A line per sample, so a run cut short still shows where it was heading.
            print(
                f"{t:6.0f} s  "
                + "  ".join(
                    f"{s.name}: {s.samples[-1][1]:.1f} MB {s.samples[-1][2]} fds"
                    for s in series.values()
                    if s.samples and s.samples[-1][0] == t
                ),
                flush=True,
            )
            time.sleep(max(0.0, args.interval - (time.monotonic() - t0 - t)))
    finally:
        os.killpg(demo.pid, signal.SIGTERM)
        try:
            demo.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(demo.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while (left := group_pids(demo.pid)) and time.monotonic() < deadline:
        time.sleep(0.5)
    if args.up_only:
        print(f"demo exit code {demo.returncode}; processes left after SIGTERM: {left or 'none'}")
        sys.exit(0 if not left else 1)
    flat = report(series, args.warmup, duration)
    print(f"\nfirst = first sample after the {args.warmup:g} s warm-up, max = over the whole run")
    print(f"windows: mean of {args.warmup:g}-{args.warmup + 60:g} s against the last minute; flat = within {FLAT:.0%}")
    print(f"demo exit code {demo.returncode}; processes left after SIGTERM: {left or 'none'}")
    print("verdict:", "all flat" if flat and not left else "LEAK or leftover process")
    sys.exit(0 if flat and not left else 1)


if __name__ == "__main__":
    main()
