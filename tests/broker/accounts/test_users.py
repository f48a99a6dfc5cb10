"""Staff accounts on SQLite and PostgreSQL: argon2, throttled checks, rehash, roles, API tokens, the commands."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import pytest
from argon2 import PasswordHasher, extract_parameters
from sqlalchemy import select
from typer.testing import CliRunner

from broker.accounts.auth_checks import Throttled, check_password, reset_failures
from broker.accounts.login_throttle import ThrottlePolicy
from broker.accounts.users import (
    AuthError,
    UserError,
    create_user,
    issue_token,
    list_tokens,
    new_password,
    revoke_token,
    role_at_least,
    set_active,
    set_password,
    set_role,
    store_rehash,
    verify_token,
)
from broker.storage.models import ApiToken, User

if TYPE_CHECKING:
    from pathlib import Path

    from broker.storage.engine import Store


# Real argon2id, with small costs so the suite stays fast; DEFAULT_HASHER is exercised by the rehash test.
CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
T0 = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)


@pytest.fixture
def jana(store: Store) -> Any:
    with store.session() as db:  # no hub here: the store is this test's own to write
        create_user(db, "jana", new_password("correct horse", CHEAP), "staff", actor="test")
    return store


def rehash_in(store: Any) -> Callable[..., Any]:
    """The one write a login may make, straight to a store no hub writes (a hub runs it as a command)."""

    def write(username: str, old: str, new: str) -> bool:
        with store.session() as db:
            return store_rehash(db, username, old, new)

    return write


def login(store: Any, password: str, *, username: str = "jana", client: str = "10.0.0.1") -> User:
    return check_password(store, username, password, client=client, hasher=CHEAP, store_rehash=rehash_in(store))


def test_password_is_hashed_with_argon2(jana: Any) -> None:
    with jana.session() as db:
        user = db.scalars(select(User)).one()
        assert user.password_hash.startswith("$argon2id$") and "correct horse" not in user.password_hash
    assert login(jana, "correct horse").username == "jana"


def test_wrong_password_and_unknown_user_look_the_same(jana: Any) -> None:
    with pytest.raises(AuthError) as wrong:
        login(jana, "wrong")
    with pytest.raises(AuthError) as unknown:
        login(jana, "correct horse", username="nobody")
    assert str(wrong.value) == str(unknown.value) == "wrong username or password"
    assert (wrong.value.reason, unknown.value.reason) == ("wrong password", "unknown user")


def guess(store: Any, times: int, *, username: str = "jana", client: str = "10.0.0.1") -> None:
    for _ in range(times):
        with pytest.raises(AuthError, match="wrong username or password"):
            login(store, "guess", username=username, client=client)


def test_guesses_slow_down_their_client_not_the_owner_elsewhere(jana: Any) -> None:
    guess(jana, ThrottlePolicy().account_free + 1, client="10.6.6.6")
    with pytest.raises(Throttled, match="too many failed logins from this address") as slowed:
        login(jana, "correct horse", client="10.6.6.6")  # even the right password, for now
    assert 0 < slowed.value.retry_after <= 60
    assert login(jana, "correct horse", client="10.0.0.1").username == "jana"


def test_unknown_users_are_slowed_down_the_same_way(jana: Any) -> None:
    guess(jana, ThrottlePolicy().account_free + 1, username="nobody")
    with pytest.raises(Throttled) as unknown:
        login(jana, "guess", username="nobody")
    guess(jana, ThrottlePolicy().account_free + 1, client="10.0.0.2")
    with pytest.raises(Throttled) as known:
        login(jana, "guess", client="10.0.0.2")
    assert (str(unknown.value), unknown.value.retry_after) == (str(known.value), known.value.retry_after)


def test_a_success_forgives_that_clients_mistakes(jana: Any) -> None:
    free = ThrottlePolicy().account_free
    guess(jana, free - 1)
    login(jana, "correct horse")
    guess(jana, free)
    assert login(jana, "correct horse").username == "jana"


def test_a_manager_or_a_new_password_lifts_the_wait(jana: Any) -> None:
    guess(jana, ThrottlePolicy().account_free + 1)
    with pytest.raises(Throttled):
        login(jana, "correct horse")
    assert reset_failures(jana, "jana") == 1
    assert login(jana, "correct horse").username == "jana"
    guess(jana, ThrottlePolicy().account_free + 1)
    with jana.session() as db:  # as `lavos user` would, from another process: the throttle sees a new hash
        set_password(db, "jana", new_password("battery staple", CHEAP), actor="boss")
    assert login(jana, "battery staple").username == "jana"


def test_old_hash_parameters_are_upgraded_on_login(store: Store) -> None:
    with store.session() as db:
        create_user(db, "peter", new_password("correct horse", CHEAP), "manager", actor="test")
        old = db.scalars(select(User)).one().password_hash
    stronger = PasswordHasher(time_cost=2, memory_cost=2048, parallelism=1)
    check_password(store, "peter", "correct horse", client="10.0.0.1", hasher=stronger, store_rehash=rehash_in(store))
    with store.session() as db:
        new = db.scalars(select(User)).one().password_hash
    assert new != old and not stronger.check_needs_rehash(new)
    stronger.verify(new, "correct horse")


def test_disabled_account(jana: Any) -> None:
    with jana.session() as db:
        set_active(db, "jana", False, actor="boss")
    with pytest.raises(AuthError, match="disabled"):
        login(jana, "correct horse")


@pytest.mark.parametrize(
    "username, password, role, says",
    [
        ("J", "long enough", "staff", "The username J cannot be used"),
        ("jana novak", "long enough", "staff", "The username jana novak cannot be used"),
        ("peter", "short", "staff", "at least 8"),
        ("peter", "long enough", "admin", "admin is not a role \\(staff, manager\\)"),
        ("jana", "long enough", "staff", "already exists"),
    ],
)
def test_bad_accounts_are_refused(jana: Any, username: Any, password: Any, role: Any, says: Any) -> None:
    with jana.session() as db, pytest.raises(UserError, match=says):
        create_user(db, username, new_password(password, CHEAP), role, actor="test")


def test_roles(jana: Any) -> None:
    assert role_at_least("manager", "staff") and role_at_least("staff", "staff") and not role_at_least("staff", "manager")
    with jana.session() as db:
        assert set_role(db, "jana", "manager", actor="boss").role == "manager"
        with pytest.raises(UserError, match="owner is not a role"):
            set_role(db, "jana", "owner", actor="boss")
        with pytest.raises(UserError, match="There is no account ghost"):
            set_role(db, "ghost", "staff", actor="boss")


def test_tokens_are_stored_only_as_hashes(jana: Any) -> None:
    with jana.session() as db:
        token = issue_token(db, "jana", "bar-tablet", actor="boss")
    assert token.startswith("lavos_") and len(token) > 40
    with jana.session() as db:
        row = db.scalars(select(ApiToken)).one()
        assert token not in (row.token_hash, row.name) and len(row.token_hash) == 64
        assert verify_token(db, token, now=T0).username == "jana"
        assert row.last_used_at == T0
        verify_token(db, token, now=T0 + timedelta(seconds=30))
        assert row.last_used_at == T0  # touched at most every few minutes
        verify_token(db, token, now=T0 + timedelta(minutes=10))
        assert row.last_used_at == T0 + timedelta(minutes=10)
        with pytest.raises(AuthError, match="invalid token"):
            verify_token(db, token + "x")
        with pytest.raises(UserError, match="Give the token a name"):
            issue_token(db, "jana", "  ", actor="boss")
        revoke_token(db, row.id, actor="boss")
        with pytest.raises(AuthError, match="invalid token"):
            verify_token(db, token)
        assert [t.revoked for t in list_tokens(db, "jana")] == [True]


def test_cli_user_add_and_token(db_url: str, tmp_path: Path) -> None:
    from lavos_cli import app

    runner = CliRunner()
    pw = tmp_path / "pw"
    pw.write_text("correct horse\n")
    out = runner.invoke(app, ["user", "add", "jana", "--role", "staff", "--password-file", str(pw), "--db", db_url])
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["user", "add", "peter", "--role", "manager", "--db", db_url], input="battery staple\nbattery staple\n")
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["user", "token", "jana", "--name", "bar-tablet", "--db", db_url])
    assert out.exit_code == 0, out.output
    token = out.stdout.strip().splitlines()[0]
    from broker.storage.engine import open_store

    store = open_store(db_url)
    with store.session() as db:
        assert verify_token(db, token).username == "jana"
    assert check_password(store, "peter", "battery staple", client="cli-test", store_rehash=rehash_in(store)).username == "peter"
    store.close()
    for args, says in [
        (["user", "add", "jana", "--role", "staff", "--password-file", str(pw)], "already exists"),
        (["user", "add", "eva", "--role", "boss", "--password-file", str(pw)], "role 'boss'"),
        (["user", "add", "eva", "--role", "staff", "--password-file", str(tmp_path / "nope")], "cannot read the password file"),
        (["user", "token", "ghost", "--name", "x"], "There is no account ghost"),
    ]:
        out = runner.invoke(app, [*args, "--db", db_url])
        assert out.exit_code == 2 and says in out.output, out.output
    assert "Example: lavos user add" in runner.invoke(app, ["user", "add", "--help"]).output


def test_an_unknown_username_costs_the_same_hash_as_a_wrong_password(jana: Any) -> None:
    """No telling a staff name from a made-up one by the time a refusal takes, shown by the work
    itself: an unknown name and a known one with a wrong password each verify exactly one argon2
    hash, with the same costs (the unknown one against a dummy made with the hasher's parameters).
    Timing the two over HTTP (tests/security/test_lockout.py did) fails on a busy machine."""
    costs: list[tuple[int, int, int]] = []

    class Counting(PasswordHasher):
        def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
            p = extract_parameters(hash if isinstance(hash, str) else hash.decode())
            costs.append((p.time_cost, p.memory_cost, p.parallelism))
            return super().verify(hash, password)

    counting = Counting(time_cost=CHEAP.time_cost, memory_cost=CHEAP.memory_cost, parallelism=CHEAP.parallelism)
    for i, name in enumerate(("jana", "nikto-taky-neni")):
        with pytest.raises(AuthError):
            check_password(jana, name, "zlé heslo", client=f"10.0.9.{i}", hasher=counting, store_rehash=rehash_in(jana))
    assert len(costs) == 2 and costs[0] == costs[1], costs
