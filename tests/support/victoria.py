"""A private VictoriaMetrics process (Debian's victoria-metrics) standing in for InfluxDB in tests.

It takes influxdb-client's /api/v2/write, ignores bucket and org, and stores each field as a
series named `<measurement>_<field>`. `stop()`/`start()` keep the port and the data directory,
so a writer pointed at it sees an outage and then the same server again.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sim.mosquitto import free_port

BINARY = Path("/usr/bin/victoria-metrics")
VMALERT = Path("/usr/bin/vmalert")  # in the same Debian package
REPO = Path(__file__).resolve().parents[2]
VM_DEFAULTS = REPO / "deploy" / "vmalert" / "victoria-metrics.default"
VMALERT_UNIT = REPO / "deploy" / "systemd" / "lavos-vmalert.service"


def shipped_vm_flags() -> tuple[str, ...]:
    """ARGS of the shipped /etc/default/victoria-metrics but where it keeps its data and listens."""
    (args,) = re.findall(r'^ARGS="([^"]*)"', VM_DEFAULTS.read_text(encoding="utf-8"), re.M)
    return tuple(a for a in shlex.split(args) if not a.startswith(("-storageDataPath=", "-httpListenAddr=")))


def shipped_vmalert_flags() -> dict[str, str]:
    """The flags of the shipped vmalert unit's ExecStart, name -> value."""
    text = VMALERT_UNIT.read_text(encoding="utf-8").replace("\\\n", " ")
    (line,) = re.findall(r"^ExecStart=(.*)$", text, re.M)
    binary, *flags = shlex.split(line)
    assert binary == str(VMALERT), binary
    return dict(f.lstrip("-").split("=", 1) for f in flags)


def stat_count(stats: Mapping[str, object], key: str) -> int:
    """One count of MetricsWriter.stats() (a dict of counts, flags and the last error)."""
    value = stats[key]
    assert isinstance(value, int), f"stats[{key!r}] is {value!r}, not a count"
    return value


@dataclass
class VictoriaMetrics:
    workdir: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    # More flags, after ours (the last of a repeated flag wins): e.g. the hall's shipped ones.
    flags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not BINARY.exists():
            pytest.fail(f"{BINARY} is missing: run ./run test, which installs the victoria-metrics package")
        self.workdir.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 15.0) -> VictoriaMetrics:
        self.proc = subprocess.Popen(
            [
                str(BINARY),
                f"-httpListenAddr=127.0.0.1:{self.port}",
                f"-storageDataPath={self.workdir / 'data'}",
                # Our writer delivers at least once; InfluxDB overwrites a repeated point (same
                # series and timestamp), and this makes VictoriaMetrics do the same.
                "-dedup.minScrapeInterval=1ms",
                "-loggerLevel=ERROR",
                *self.flags,
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(self.workdir / "victoria.log", "ab"),  # noqa: SIM115 - the child writes it for its whole life; ours closes when this process ends
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"victoria-metrics exited with {self.proc.returncode}: {self.log_text()[-2000:]}")
            try:
                if self._get("/health") == b"OK":
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"victoria-metrics not healthy on port {self.port} after {timeout}s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()  # graceful: it flushes what it holds to the data directory
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def export(self, name_regex: str = ".+") -> list[dict[str, Any]]:
        """Every stored series matching the name regex: {"metric": {...}, "values": [...], "timestamps": [ms...]}."""
        self._get("/internal/force_flush")  # recent writes are searchable only after this
        query = urllib.parse.urlencode({"match[]": f'{{__name__=~"{name_regex}"}}'})
        body = self._get(f"/api/v1/export?{query}")
        return [json.loads(line) for line in body.splitlines() if line.strip()]

    def samples(self, name_regex: str = ".+") -> list[tuple[str, dict[str, Any], int, float]]:
        """(name, labels, timestamp ms, value) of every stored sample, sorted by timestamp."""
        out = []
        for series in self.export(name_regex):
            labels = dict(series["metric"])
            name = labels.pop("__name__")
            out += [(name, labels, ts, v) for ts, v in zip(series["timestamps"], series["values"])]
        return sorted(out, key=lambda s: (s[2], s[0]))

    def log_text(self) -> str:
        path = self.workdir / "victoria.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _get(self, path: str) -> bytes:
        with urllib.request.urlopen(self.url + path, timeout=10) as resp:
            result: bytes = resp.read()
            return result
