"""Account administration through `lavos user …` (its command line, exit codes and messages, run in
this process through typer's CliRunner: tests/support/cli.py), on SQLite and PostgreSQL.

List, new password (with a forced change), disable/enable, role, revoke a token, list and
end logins: each one done by the CLI, each one in the audit log with who and when,
and the ones that must log the user out end their server-side sessions.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.accounts import logins
from broker.storage.engine import open_store
from broker.storage.models import AuditEntry, User
from broker.storage.types import utcnow
from tests.support.cli import lavos as run_lavos
from tests.support.sqlite_template import write_users

if TYPE_CHECKING:
    from pathlib import Path

    from broker.storage.engine import Store


PASSWORD, NEW = "Prvé-heslo-123", "Druhé-heslo-456"


def lavos(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    return run_lavos("user", *args, ok=ok)


@pytest.fixture
def accounts(db_url: str, tmp_path: Path) -> Iterator[tuple[Any, Store, Any]]:
    # The accounts as `lavos user add` makes them, hashed at argon2's cheap costs: adding is not what
    # this module tests (tests/broker/accounts/test_users.py runs `lavos user add`), and two hashes
    # at the shipped costs were ~0.4 CPU-s of each test's setup.
    write_users(db_url, {"boss": ("manager", PASSWORD), "jana": ("staff", PASSWORD)})
    new = tmp_path / "new"
    new.write_text(NEW + "\n", encoding="utf-8")
    store = open_store(db_url)
    yield db_url, store, new
    store.close()


def _login(store: Any, username: str) -> str:
    with store.session() as db:
        return logins.start(db, username, client="10.0.0.7", user_agent="bar tablet")


def _live(store: Any, session_id: str) -> bool:
    with store.reader() as db:
        return logins.live(db, session_id) is not None


def _audit(store: Any, action: str) -> list[AuditEntry]:
    with store.reader() as db:
        return list(db.scalars(select(AuditEntry).where(AuditEntry.action == action).order_by(AuditEntry.id)))


def _user(store: Any, username: str) -> User:
    with store.reader() as db:
        result: User = db.scalars(select(User).where(User.username == username)).one()
        return result


def test_password_with_forced_change_ends_sessions_and_is_audited(accounts: tuple[Any, Store, Any]) -> None:
    db_url, store, new = accounts
    sid = _login(store, "jana")
    before = utcnow()
    done = lavos("password", "jana", "--password-file", str(new), "--must-change", "--db", db_url, "--actor", "boss")
    assert "must be changed at the next login" in done.stdout
    assert not _live(store, sid)
    user = _user(store, "jana")
    assert user.must_change_password
    [entry] = _audit(store, "user.password")
    assert (entry.actor, entry.target, entry.detail) == ("boss", "user:jana", {"must_change": True})
    assert before - timedelta(seconds=1) <= entry.at <= utcnow()
    assert [e.detail["reason"] for e in _audit(store, "web_session.end")] == ["password"]
    assert "MUST CHANGE PASSWORD" in lavos("list", "--db", db_url).stdout


def test_disable_enable_and_role_end_sessions_and_are_audited(accounts: tuple[Any, Store, Any]) -> None:
    db_url, store, _ = accounts
    sid = _login(store, "jana")
    lavos("disable", "jana", "--db", db_url, "--actor", "boss")
    assert not _live(store, sid) and not _user(store, "jana").active
    assert "DISABLED" in next(line for line in lavos("list", "--db", db_url).stdout.splitlines() if line.startswith("jana"))
    lavos("enable", "jana", "--db", db_url, "--actor", "boss")
    assert _user(store, "jana").active
    sid = _login(store, "jana")
    lavos("role", "jana", "manager", "--db", db_url, "--actor", "boss")
    assert not _live(store, sid) and _user(store, "jana").role == "manager"
    assert [(e.actor, e.detail) for e in _audit(store, "user.active")] == [("boss", {"active": False}), ("boss", {"active": True})]
    assert [(e.actor, e.detail) for e in _audit(store, "user.role")] == [("boss", {"role": ["staff", "manager"]})]
    assert [e.detail["reason"] for e in _audit(store, "web_session.end")] == ["disabled", "role"]


def test_the_last_manager_cannot_be_disabled_or_demoted(accounts: tuple[Any, Store, Any]) -> None:
    db_url, store, _ = accounts
    for args in (("disable", "boss"), ("role", "boss", "staff")):
        done = lavos(*args, "--db", db_url, ok=False)
        assert done.returncode == 2 and "only active manager" in done.stderr
    user = _user(store, "boss")
    assert user.active and user.role == "manager"


def test_revoke_a_token(accounts: tuple[Any, Store, Any]) -> None:
    db_url, store, _ = accounts
    lavos("token", "jana", "--name", "bar-tablet", "--db", db_url)
    [line] = lavos("tokens", "jana", "--db", db_url).stdout.splitlines()
    token_id = line.split("\t")[0]
    assert "revoked" in lavos("revoke-token", token_id, "--db", db_url, "--actor", "boss").stdout
    assert "REVOKED" in lavos("tokens", "--db", db_url).stdout
    assert [(e.actor, e.detail["name"]) for e in _audit(store, "token.revoke")] == [("boss", "bar-tablet")]
    assert lavos("revoke-token", "999", "--db", db_url, ok=False).returncode == 2


def test_list_and_end_dashboard_logins(accounts: tuple[Any, Store, Any]) -> None:
    db_url, store, _ = accounts
    first, second = _login(store, "jana"), _login(store, "jana")
    listed = lavos("logins", "jana", "--db", db_url).stdout.splitlines()
    assert len(listed) == 2 and all("10.0.0.7" in line and "bar tablet" in line for line in listed)
    newest = listed[0].split("\t")[0]
    lavos("end-logins", "jana", "--id", newest, "--db", db_url, "--actor", "boss")
    assert not _live(store, second) and _live(store, first)
    assert "1 login(s)" in lavos("end-logins", "jana", "--db", db_url, "--actor", "boss").stdout
    assert not _live(store, first)
    assert lavos("logins", "jana", "--db", db_url).stdout == ""
    assert lavos("sessions", "jana", "--db", db_url).stdout == ""  # the old name, kept for scripts
    assert [e.actor for e in _audit(store, "web_session.end")] == ["boss", "boss"]
    missing = lavos("end-logins", "jana", "--id", newest, "--db", db_url, ok=False)
    assert missing.returncode == 2 and "has no open login no." in missing.stderr


def test_bad_input_is_refused_and_changes_nothing(accounts: tuple[Any, Store, Any]) -> None:
    db_url, store, new = accounts
    for args, message in (
        (("role", "jana", "king"), "not one of"),
        (("disable", "nikto"), "There is no account nikto"),
        (("password", "nikto", "--password-file", str(new)), "no user 'nikto'"),  # the CLI's own check
    ):
        done = lavos(*args, "--db", db_url, ok=False)
        assert done.returncode == 2 and message in done.stderr, done.stderr
    user = _user(store, "jana")
    assert user.role == "staff" and user.active and not user.must_change_password
