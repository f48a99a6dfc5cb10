"""The hub box: where its files live, its first setup, and backing the whole box up and bringing
it back (`lavos box setup`, `lavos backup --box/--nightly`, `lavos restore` of a box backup).

deploy/hub/install.sh installs the packages, the shipped files, the certificates and the units,
then calls `lavos box setup` for what needs Lavos itself: the hub's MQTT password, the first
manager, a kit for every table of the venue (each table's Pi kept in the fleet's Ansible
inventory), and vmalert's API token (the account `monitoring`, which posts the alert rules'
alerts to the hub: deploy/grafana/README.md). Every path is under a root ("/" on the box; a
scratch directory in the tests and in install.sh --prefix), spelled once here (`BoxLayout`).

A box backup is one private .tar.gz holding everything needed to rebuild the club on a freshly
installed box: the database (SQLite's online backup, or pg_dump), the venue file and everything
else under /etc/lavos (the hub's MQTT password, the CA and its key, the certificates, the node
kits, the backup settings), Mosquitto's password file, ACL, config and certificates, and the
dashboard's cookie secret (so logins survive). The eKasa settings, the notification targets and
the accounts are rows of the database. A manifest lists each file with its mode, owner and
SHA-256; a restore checks them before it writes anything.

The nightly backup (`lavos backup --nightly`, lavos-backup.timer) writes one into the backup
directory, keeps `keep_days` of them, copies them off the box with rsync (to a mounted USB stick
or to a NAS over SSH: rsync is in every Debian, on every NAS, needs no password of its own to
lose, and the copy is a plain file `lavos restore` reads), and writes its status where the hub's
box watch reads it (a failed or missing backup is an alert).
"""

from __future__ import annotations

import contextlib
import grp
import hashlib
import io
import json
import os
import pwd
import re
import secrets
import shutil
import socket
import sqlite3
import subprocess
import tarfile
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from broker.domain.floor.box_rules import BackupStatus
from broker.ops.backup import BackupError, backup, restore
from broker.storage.engine import create_private_file

FORMAT = 1
MANIFEST = "lavos-backup.json"
DATABASE = "database"  # the member holding the database copy (SQLite file or pg_dump archive)
FILES = "files"  # the box's files, by their path under the root
BUNDLE_GLOB = "lavos-*.tar.gz"
BUNDLE_NAME = re.compile(r"^lavos-\d{4}-\d\d-\d\dT\d{6}Z\.tar\.gz$")
SECRET_FILE = "web-secret"  # the dashboard's cookie secret in the data directory (dashboard/web/app.py)
STATUS_FILE = "backup-status.json"
HUB_LOGIN = "lavos-hub"
# vmalert's account (deploy/systemd/lavos-vmalert.service): its API token lets it post the monitoring
# rules' alerts ("monitoring.report", a manager's capability). Nobody logs in as it.
MONITORING_LOGIN = "monitoring"
VMALERT_TOKEN_NAME = "vmalert"


class SetupError(Exception):
    """Something on the box that `lavos box setup` must not change by itself: says what to do."""


@dataclass(frozen=True)
class BoxLayout:
    """Every path of a hub box, under `root`."""

    root: Path = Path("/")

    def under(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    @property
    def etc(self) -> Path:
        return self.under("etc/lavos")

    @property
    def venue(self) -> Path:
        return self.etc / "venue.toml"

    @property
    def hub_password(self) -> Path:
        return self.etc / "hub-password"

    @property
    def ca(self) -> Path:
        """The club's CA certificate: the hub's, and the one every node's kit carries."""
        return self.etc / "ca.crt"

    @property
    def tls(self) -> Path:
        """make-certs.sh's directory: the CA with its key, the server certificate (root only)."""
        return self.etc / "tls"

    @property
    def nodes(self) -> Path:
        return self.etc / "nodes"

    @property
    def inventory(self) -> Path:
        """The fleet's Ansible inventory (deploy/ansible/update-nodes.yml), beside the kits."""
        from broker.ops.node_inventory import INVENTORY_NAME

        return self.nodes / INVENTORY_NAME

    @property
    def vmalert_token(self) -> Path:
        """vmalert's API token for the hub, read by systemd alone (LoadCredential=): root only."""
        return self.etc / "vmalert-token"

    @property
    def backup_conf(self) -> Path:
        return self.etc / "backup.toml"

    @property
    def passwd(self) -> Path:
        return self.under("etc/mosquitto/lavos.passwd")

    @property
    def acl(self) -> Path:
        return self.under("etc/mosquitto/lavos.acl")

    @property
    def mosquitto_certs(self) -> Path:
        return self.under("etc/mosquitto/certs")

    @property
    def data(self) -> Path:
        return self.under("var/lib/lavos")

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.data / 'lavos.db'}"

    @property
    def backup_status(self) -> Path:
        return self.data / STATUS_FILE

    def box_files(self) -> list[Path]:
        """What a backup holds besides the database, as it is on this box now (the one list)."""
        wanted = [
            *sorted(p for p in self.etc.rglob("*") if p.is_file() and not p.is_symlink()),
            self.passwd,
            self.acl,
            self.under("etc/mosquitto/conf.d/lavos.conf"),
            *sorted(p for p in self.mosquitto_certs.glob("*") if p.is_file()),
            self.data / SECRET_FILE,
        ]
        return [p for p in dict.fromkeys(wanted) if p.is_file()]


# -- setup: what install.sh needs Lavos for ---------------------------------------------------


def setup(layout: BoxLayout, *, manager: str | None, db_url: str | None = None, say: Callable[[str], None] = print) -> bool:
    """The hub's MQTT login, the first manager, a kit for every venue table without a password
    and every table in the fleet's inventory, vmalert's API token. Idempotent: what is there
    already stays as it is (a rerun with everything in place opens no database). Returns whether
    anything changed. `db_url`: a PostgreSQL box's database (else the SQLite file under the root)."""
    from broker.accounts.node_credentials import add_node, set_password, users_in, write_private
    from broker.domain.venue import load_venue
    from devices.hub_address import HUB_HOST, MQTT_TLS_PORT, NODE_CA_FILE

    changed = False
    logins = users_in(layout.passwd)
    if not layout.hub_password.is_file():
        layout.hub_password.parent.mkdir(parents=True, exist_ok=True)
        write_private(layout.hub_password, secrets.token_urlsafe(24) + "\n")
        say(f"made: {layout.hub_password}")
        logins.discard(HUB_LOGIN)  # a new password: the broker must learn it
    if HUB_LOGIN not in logins:
        set_password(layout.passwd, HUB_LOGIN, layout.hub_password.read_text().strip())
        say(f"made: the hub's login {HUB_LOGIN} in {layout.passwd}")
        changed = True
    else:
        say(f"unchanged: the hub's login {HUB_LOGIN} in {layout.passwd}")
    venue = load_venue(layout.venue)
    new = [t.id for t in venue.tables if t.id not in users_in(layout.passwd)]
    for table in new:
        kit = add_node(
            venue,
            table,
            layout.passwd,
            layout.nodes,
            mqtt_host=HUB_HOST,
            mqtt_port=MQTT_TLS_PORT,
            tls=True,
            ca_file=NODE_CA_FILE,
            ca_cert=layout.ca,
        )
        say(f"made: the kit of {table} in {kit.config_file.parent} ({kit.config_file.name}, {kit.password_file.name}, ca.crt)")
    changed |= bool(new)
    if not new:
        say(f"unchanged: every table of {layout.venue} has its kit")
    changed |= _inventory(layout, [t.id for t in venue.tables], say)
    if manager:
        changed |= _first_manager(layout, manager, say, db_url)
    changed |= _monitoring_token(layout, say, db_url)
    return changed


def _inventory(layout: BoxLayout, tables: list[str], say: Callable[[str], None]) -> bool:
    """Every venue table's Pi in the fleet's inventory (as `lavos broker add-node` keeps it), so
    the fleet update reaches the nodes of the kits made here; entries already there stay as edited."""
    from broker.ops.node_inventory import GROUP, keep_node, load_inventory

    data = load_inventory(layout.inventory)
    group = data.get("all", {}).get("children", {}).get(GROUP) or {}
    hosts = group.get("hosts") or {}
    missing = [t for t in tables if t not in hosts]
    for table in missing:
        keep_node(layout.inventory, data, table, None)
    if missing:
        say(f"made: {', '.join(missing)} in the fleet's inventory {layout.inventory} (deploy/ansible/README.md)")
    else:
        say(f"unchanged: every table is in {layout.inventory}")
    return bool(missing)


def _monitoring_token(layout: BoxLayout, say: Callable[[str], None], db_url: str | None) -> bool:
    """vmalert's API token, made once (the account `monitoring` with it when there is none): a
    token file already there is kept, and then no database is opened."""
    from broker.accounts.node_credentials import write_private
    from broker.accounts.users import create_user, get_user, issue_token, new_password
    from broker.storage.engine import open_store

    token_file = layout.vmalert_token
    if token_file.is_file() and token_file.read_text(encoding="utf-8").strip():
        say(f"unchanged: vmalert's API token in {token_file}")
        return False
    hashed = new_password(secrets.token_urlsafe(24))  # nobody logs in as it: the password is not kept anywhere
    layout.data.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = open_store(db_url or layout.db_url)
    try:
        with store.session() as db:
            user = get_user(db, MONITORING_LOGIN)
            if user is None:
                create_user(db, MONITORING_LOGIN, hashed, "manager", actor="install")
            elif user.role != "manager" or not user.active:
                raise SetupError(
                    f"the account {MONITORING_LOGIN} exists but is not an active manager, so its token could not post "
                    f"vmalert's alerts: lavos user role {MONITORING_LOGIN} manager / lavos user enable {MONITORING_LOGIN}, "
                    "then run this again"
                )
            token = issue_token(db, MONITORING_LOGIN, VMALERT_TOKEN_NAME, actor="install")
    finally:
        store.close()
    token_file.parent.mkdir(parents=True, exist_ok=True)
    write_private(token_file, token + "\n")
    say(f"made: vmalert's API token in {token_file} (the account {MONITORING_LOGIN}, which nobody logs in as)")
    return True


def _managers(db_file: Path) -> list[str]:
    """The active managers of an existing database, read as an unchanging file: a running hub's
    database is not touched (opening the store would migrate it under the old hub, before its
    restart; a read-only connection would still leave -wal and -shm files). A torn read only
    sends the check to the store below."""
    if not db_file.is_file():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db_file}?mode=ro&immutable=1", uri=True)) as conn:
            rows = conn.execute(
                "SELECT username FROM users WHERE role = 'manager' AND active AND username != ? ORDER BY username", (MONITORING_LOGIN,)
            ).fetchall()
    except sqlite3.Error:
        return []  # no schema yet: the store makes it below
    return [r[0] for r in rows]


def _first_manager(layout: BoxLayout, username: str, say: Callable[[str], None], db_url: str | None) -> bool:
    from broker.accounts.users import create_user, list_users, new_password
    from broker.storage.engine import open_store

    if db_url is None and (managers := _managers(layout.data / "lavos.db")):
        say(f"unchanged: a manager exists ({', '.join(managers)})")
        return False
    layout.data.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = open_store(db_url or layout.db_url)
    try:
        with store.reader() as db:
            managers = [u.username for u in list_users(db) if u.role == "manager" and u.active and u.username != MONITORING_LOGIN]
        if managers:
            say(f"unchanged: a manager exists ({', '.join(managers)})")
            return False
        password = secrets.token_urlsafe(9)
        hashed = new_password(password)  # hashed before the transaction opens
        with store.session() as db:
            create_user(db, username, hashed, "manager", actor="install", must_change=True)
    finally:
        store.close()
    say(f"made: the first manager {username}, password {password} (to be changed at the first login)")
    return True


# -- a box backup -----------------------------------------------------------------------------


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _owner(st: os.stat_result) -> tuple[str, str]:
    try:
        user = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        user = str(st.st_uid)
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return user, group


def backup_box(layout: BoxLayout, dest: Path, *, db_url: str | None = None, force: bool = False) -> str:
    """Back the whole box up into `dest` (a private .tar.gz); returns what was done."""
    started = time.monotonic()
    url = db_url or layout.db_url
    if dest.exists() and not force:
        raise BackupError(f"{dest} exists already; pick another name or add --force to replace it")
    if not dest.parent.is_dir():
        raise BackupError(f"directory {dest.parent} does not exist; create it first")
    with tempfile.TemporaryDirectory(prefix=".lavos-backup-", dir=dest.parent) as tmp:
        db_copy = Path(tmp) / "database"
        said = backup(url, db_copy)
        backend = "sqlite" if url.startswith("sqlite") else "postgresql"
        files: list[dict[str, str | int]] = []
        for path in layout.box_files():
            st = path.stat()
            user, group = _owner(st)
            rel = path.relative_to(layout.root).as_posix()
            files.append({"path": rel, "mode": st.st_mode & 0o7777, "owner": user, "group": group, "sha256": _sha256(path)})
        manifest = {
            "format": FORMAT,
            "made_at": datetime.now(UTC).isoformat(),
            "host": socket.gethostname(),
            "database": {"backend": backend, "sha256": _sha256(db_copy), "said": said},
            "files": files,
        }
        partial = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
        partial.unlink(missing_ok=True)
        try:
            create_private_file(partial)  # the CA key, password hashes, the cookie secret: owner-only from the first byte
            with partial.open("r+b") as raw, tarfile.open(fileobj=raw, mode="w:gz", compresslevel=6) as tar:
                _add_bytes(tar, MANIFEST, json.dumps(manifest, indent=1).encode())
                tar.add(db_copy, DATABASE, recursive=False)
                for f in files:
                    tar.add(layout.root / str(f["path"]), f"{FILES}/{f['path']}", recursive=False)
                tar.close()
                raw.flush()
                os.fsync(raw.fileno())
            os.replace(partial, dest)
        finally:
            partial.unlink(missing_ok=True)
    size = dest.stat().st_size
    return (
        f"backed up the box ({len(files)} files and the {backend} database) to {dest} "
        f"({size / 1e6:.1f} MB) in {time.monotonic() - started:.1f} s"
    )


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    info.mtime = int(time.time())
    tar.addfile(info, io.BytesIO(data))


def is_box_backup(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(2) == b"\x1f\x8b"  # gzip: a box backup; a database backup is SQLite or pg_dump
    except OSError:
        return False


def restore_box(bundle: Path, layout: BoxLayout, *, db_url: str | None = None, force: bool = False) -> str:
    """Bring a box backup back under `layout`: the database first (refused into a database holding
    rows unless `force`), then every file with its mode (and, as root, its owner)."""
    try:
        tar = tarfile.open(bundle, "r:gz")  # noqa: SIM115 - closed by the with below; opening it is what may fail
    except (OSError, tarfile.TarError) as e:
        raise BackupError(f"{bundle} is not a Lavos box backup: {e}") from None
    with tar, tempfile.TemporaryDirectory(prefix=".lavos-restore-") as tmp:
        manifest = _manifest(tar, bundle)
        contents = {m["path"]: _member(tar, f"{FILES}/{m['path']}", m["sha256"], bundle) for m in manifest["files"]}
        db_copy = Path(tmp) / "database"
        db_copy.write_bytes(_member(tar, DATABASE, manifest["database"]["sha256"], bundle))
        url = db_url or layout.db_url
        if url.startswith("sqlite:///"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        said = restore(db_copy, url, force=force)
    for m in manifest["files"]:
        _write_file(layout, m, contents[m["path"]])
    return (
        f"restored the box backup {bundle} (made {manifest['made_at']} on {manifest['host']}): {len(contents)} files under "
        f"{layout.root}; {said.removesuffix(' Restart lavos server now: it keeps open games and alerts in memory.')} "
        "Now: systemctl restart mosquitto lavos-server"
    )


def _manifest(tar: tarfile.TarFile, bundle: Path) -> dict[str, Any]:
    try:
        f = tar.extractfile(MANIFEST)
        manifest = json.loads(f.read()) if f else None
    except (KeyError, ValueError, tarfile.TarError):
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{bundle} is not a Lavos box backup this Lavos can read (no {MANIFEST} of format {FORMAT})")
    for m in manifest["files"]:
        path = Path(m["path"])
        if path.is_absolute() or ".." in path.parts:
            raise BackupError(f"{bundle} names a file outside the box ({m['path']}): refused")
    return manifest


def _member(tar: tarfile.TarFile, name: str, sha256: str, bundle: Path) -> bytes:
    try:
        info = tar.getmember(name)
        f = tar.extractfile(info) if info.isfile() else None
        data = f.read() if f else None
    except (KeyError, tarfile.TarError, OSError):
        data = None
    if data is None or hashlib.sha256(data).hexdigest() != sha256:
        raise BackupError(f"{bundle} is damaged: {name} is missing or not what its manifest says; take another backup")
    return data


def _write_file(layout: BoxLayout, m: dict[str, Any], data: bytes) -> None:
    dest = layout.root / m["path"]
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")  # 0600 from the first byte
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, m["mode"])
        if os.geteuid() == 0:
            # A user this box does not have (yet) is left: install.sh sets the owners it knows.
            with contextlib.suppress(LookupError, OSError):
                shutil.chown(tmp, m["owner"], m["group"])
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- the nightly backup -----------------------------------------------------------------------


@dataclass(frozen=True)
class BackupSettings:
    """/etc/lavos/backup.toml: where the nightly backups go, how long they stay, where they are copied."""

    dir: Path
    keep_days: int = 14
    copy_to: str = ""  # a directory (a mounted USB stick) or rsync's user@host:path (a NAS over SSH)


def backup_settings(layout: BoxLayout) -> BackupSettings:
    doc: dict[str, Any] = {}
    if layout.backup_conf.is_file():
        try:
            doc = tomllib.loads(layout.backup_conf.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise BackupError(f"{layout.backup_conf}: {e}") from None
    unknown = set(doc) - {"dir", "keep_days", "copy_to"}
    if unknown:
        raise BackupError(f"{layout.backup_conf}: unknown setting(s) {', '.join(sorted(unknown))} (dir, keep_days, copy_to)")
    keep = doc.get("keep_days", 14)
    if not isinstance(keep, int) or isinstance(keep, bool) or keep < 1:
        raise BackupError(f"{layout.backup_conf}: keep_days is a whole number of days, 1 or more")
    where = str(doc.get("dir") or "/var/backups/lavos")
    return BackupSettings(dir=layout.under(where), keep_days=keep, copy_to=str(doc.get("copy_to") or "").strip())


def nightly(layout: BoxLayout, *, db_url: str | None = None, now: datetime | None = None) -> BackupStatus:
    """One nightly run: back up, keep `keep_days`, copy off the box, write the status. Never raises
    for a failure of its own: the status says it (and the caller's exit code)."""
    now = now or datetime.now(UTC)
    started = time.monotonic()
    last_ok = _last_ok(layout)
    try:
        settings = backup_settings(layout)
        settings.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        dest = settings.dir / f"lavos-{now:%Y-%m-%dT%H%M%S}Z.tar.gz"
        backup_box(layout, dest, db_url=db_url, force=True)
    except (BackupError, OSError) as e:
        status = BackupStatus(at=now, ok=False, error=str(e), seconds=round(time.monotonic() - started, 1), last_ok_at=last_ok)
        _write_status(layout, status)
        return status
    _prune(settings.dir, now - timedelta(days=settings.keep_days), keep=dest)
    copy_error = _copy_off(settings) if settings.copy_to else None
    status = BackupStatus(
        at=now,
        ok=copy_error is None,
        file=str(dest),
        bytes=dest.stat().st_size,
        seconds=round(time.monotonic() - started, 1),
        copied_to=settings.copy_to or None,
        copy_error=copy_error,
        last_ok_at=now if copy_error is None else last_ok,
    )
    _write_status(layout, status)
    return status


def _last_ok(layout: BoxLayout) -> datetime | None:
    try:
        return BackupStatus.from_json(layout.backup_status.read_text()).good_at
    except (OSError, ValueError):
        return None


def _write_status(layout: BoxLayout, status: BackupStatus) -> None:
    """Readable by the hub (its own data directory, closed to everyone else, holds it)."""
    layout.data.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=layout.data, prefix=f".{STATUS_FILE}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(status.to_json())
    os.chmod(tmp, 0o644)
    os.replace(tmp, layout.backup_status)


def bundles(directory: Path) -> Iterator[Path]:
    return (p for p in sorted(directory.glob(BUNDLE_GLOB)) if BUNDLE_NAME.match(p.name))


def _prune(directory: Path, before: datetime, *, keep: Path) -> None:
    """Delete the nightly backups older than `before` (by their name's time), never `keep`."""
    for p in bundles(directory):
        at = datetime.strptime(p.name, "lavos-%Y-%m-%dT%H%M%SZ.tar.gz").replace(tzinfo=UTC)
        if at < before and p != keep:
            p.unlink(missing_ok=True)


def _copy_off(settings: BackupSettings) -> str | None:
    """rsync the backups to `copy_to`; never deletes there (a new box's first night must not wipe
    the old box's copies). None when it worked, else why not."""
    dest = settings.copy_to
    remote = bool(re.match(r"^[^/]*:", dest))
    if not remote and not Path(dest).is_dir():
        return f"{dest} does not exist (is the USB stick plugged in and mounted?)"
    rsync = shutil.which("rsync")
    if rsync is None:
        return "rsync is missing: apt-get install rsync"
    args = [rsync, "--archive", "--include", BUNDLE_GLOB, "--exclude", "*", f"{settings.dir}/", dest.rstrip("/") + "/"]
    if remote:  # no prompt may hang a timer: a key, and the NAS's host key learnt on first contact
        args[1:1] = ["-e", "ssh -o BatchMode=yes -o ConnectTimeout=20 -o StrictHostKeyChecking=accept-new"]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=3600)
    except subprocess.TimeoutExpired:
        return f"rsync to {dest} took over an hour"
    if done.returncode != 0:
        return f"rsync to {dest} failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}"
    return None
