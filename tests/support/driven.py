"""A test's own helper process (tests/edge/agent_proc.py, tests/broker/hub_proc.py) driven over
stdin: it prints "ready" once started, then answers each command line with one line."""

from __future__ import annotations

import signal
import subprocess
import sys

from tests.support.hub import REPO


def start_driven(module: str, *args: str) -> subprocess.Popen:
    """`python -m module args...`, once it has said "ready"."""
    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    first = proc.stdout.readline().strip()  # type: ignore[union-attr]
    assert first == "ready", f"python -m {module} did not start: said {first!r}, exit status {proc.poll()}"
    return proc


def ask(proc: subprocess.Popen, line: str | None) -> str:
    """Send one command line (None: send nothing) and read the one-line answer."""
    if line is not None:
        proc.stdin.write(line + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
    return proc.stdout.readline().strip()  # type: ignore[union-attr]


class AgentProcess:
    """A table node agent as a real process on mock pins (tests/edge/agent_proc.py), for kill -9 tests."""

    def __init__(self, config_file) -> None:  # type: ignore[no-untyped-def]
        self.proc = start_driven("tests.edge.agent_proc", str(config_file))

    def ask(self, command: str | None) -> str:
        return ask(self.proc, command)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def quit(self) -> None:
        self.ask("quit")
        self.proc.wait(10)
