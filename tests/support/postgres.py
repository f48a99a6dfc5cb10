"""A throwaway PostgreSQL cluster for tests: initdb into a temp dir, pg_ctl on a free port.

One cluster per test session (starting one costs ~1-2 s); each test gets its own database,
copied from a template that is already migrated, so tests neither share rows nor pay for
migrations. The server listens on a unix socket inside the temp dir (and on 127.0.0.1).

PostgreSQL refuses to run as root: as root we run initdb/pg_ctl as the `postgres` OS user (the
Debian package creates it) and hand it the directory.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from sim.mosquitto import free_port

INSTALL_HINT = (
    "PostgreSQL server binaries are missing (/usr/lib/postgresql/*/bin/initdb): run ./run test, which installs the postgresql package"
)
SUPERUSER = "lavos"


def find_bindir() -> Path:
    """The newest /usr/lib/postgresql/<major>/bin, or $LAVOS_PG_BINDIR."""
    if env := os.environ.get("LAVOS_PG_BINDIR"):
        candidates = [env]
    else:
        candidates = sorted(
            glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0
        )
    for c in reversed(candidates):
        if (Path(c) / "initdb").is_file() and (Path(c) / "pg_ctl").is_file():
            return Path(c)
    raise RuntimeError(INSTALL_HINT)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_orphans(bindir: Path) -> None:
    """Stop clusters left behind by test sessions that were killed before their teardown ran.

    pg_ctl daemonises the server, so a SIGKILLed pytest leaves it running; on a shared machine
    those pile up. Only our own temp dirs whose recorded owner process is gone are touched.
    """
    for owner in Path(tempfile.gettempdir()).glob("lavos-pg-*/owner.pid"):
        try:
            pid = int(owner.read_text())
        except (OSError, ValueError):
            continue
        if _alive(pid):
            continue
        data = owner.parent / "data"
        if (data / "postmaster.pid").exists():
            cmd = [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]
            if os.geteuid() == 0:
                cmd = ["runuser", "-u", "postgres", "--", *cmd]
            subprocess.run(cmd, capture_output=True, timeout=60)
        shutil.rmtree(owner.parent, ignore_errors=True)


@dataclass
class PostgresCluster:
    bindir: Path = field(default_factory=find_bindir)
    port: int = field(default_factory=free_port)
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="lavos-pg-")))
    run_as: str | None = None

    def __post_init__(self) -> None:
        if os.geteuid() == 0 and self.run_as is None:
            self.run_as = "postgres"
        if self.run_as:
            try:
                pw = pwd.getpwnam(self.run_as)
            except KeyError:
                raise RuntimeError(
                    f"running as root, PostgreSQL needs an unprivileged OS user {self.run_as!r}, which does not exist: {INSTALL_HINT}"
                ) from None
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
        self.data = self.root / "data"
        self.sockets = self.root  # unix socket lives here, away from /var/run/postgresql
        self.log = self.root / "postgres.log"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self.run_as:
            cmd = ["runuser", "-u", self.run_as, "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}\n{log}")
        return proc

    def start(self) -> PostgresCluster:
        reap_orphans(self.bindir)
        (self.root / "owner.pid").write_text(str(os.getpid()))
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        )
        return self.start_server()

    def start_server(self) -> PostgresCluster:
        """Start the server on the existing data directory (same port): after stop_server()."""
        # Test data is disposable: durability settings off make each CREATE DATABASE and commit cheap.
        options = (
            f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100 -c shared_buffers=32MB"
        )
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")
        return self

    def stop_server(self, mode: str = "fast") -> None:
        """Stop the server but keep its data (a restart, for fault tests); "fast" ends open connections."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def stop(self) -> None:
        if self.data.exists():
            with contextlib.suppress(RuntimeError):  # already gone; the directory still has to go
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str) -> None:
        """Run one statement outside a transaction (CREATE/DROP DATABASE need that)."""
        import psycopg

        with psycopg.connect(host=str(self.sockets), port=self.port, user=SUPERUSER, dbname="postgres", autocommit=True) as conn:
            conn.execute(sql)

    def create_database(self, template: str | None = None) -> str:
        """A new empty (or template-copied) database; returns its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        self.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
