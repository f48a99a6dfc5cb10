"""A test's own helper process (tests/edge/agent_proc.py, tests/broker/floor/hub_proc.py) driven over
stdin: it prints "ready" once started, then answers each command line with one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests.support.hub import REPO


def start_driven(module: str, *args: str) -> subprocess.Popen[str]:
    """`python -m module args...`, once it has said "ready"."""
    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()
    assert first == "ready", f"python -m {module} did not start: said {first!r}, exit status {proc.poll()}"
    return proc


def ask(proc: subprocess.Popen[str], line: str | None) -> str:
    """Send one command line (None: send nothing) and read the one-line answer."""
    assert proc.stdin is not None and proc.stdout is not None  # start_driven made both pipes
    if line is not None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    return proc.stdout.readline().strip()


class AgentProcess:
    """A table node agent as a real process on mock pins (tests/edge/agent_proc.py), for kill -9 tests."""

    def __init__(self, config_file: str | os.PathLike[str]) -> None:
        self.proc = start_driven("tests.edge.agent_proc", str(config_file))

    def ask(self, command: str | None) -> str:
        return ask(self.proc, command)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def quit(self) -> None:
        self.ask("quit")
        self.proc.wait(10)
