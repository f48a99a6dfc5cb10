"""`lavos user …`: staff accounts, their API tokens and their logins.

Every change is written to the audit log with --actor (default: cli:<your login name>); the
manager page /users does the same things (dashboard/web/pages_users.py).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from broker.ops.cli_options import actor_name, actor_option, db_option, store_session
from devices.cli_support import fail

if TYPE_CHECKING:
    from broker.accounts.users import NewPassword

user_app = typer.Typer(help="Staff accounts, API tokens and logins.\n\nExample: lavos user add jana --role staff", no_args_is_help=True)
username_arg = typer.Argument(..., help="Login name, e.g. jana")
password_file_option = typer.Option(None, "--password-file", help="Read the password from this file's first line instead of prompting")
must_change_option = typer.Option(False, "--must-change", help="The user must choose their own password at the next login")


def _read_password(password_file: Path | None) -> NewPassword:
    """The password from the file or the prompt, checked and hashed before any transaction opens."""
    from broker.accounts.users import UserError, new_password

    if password_file is not None:
        try:
            lines = password_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise fail(f"cannot read the password file {password_file}: {e}") from None
        if not lines or not lines[0]:
            raise fail(f"the password file {password_file} is empty; put the password on its first line")
        text = lines[0]
    else:
        text = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        return new_password(text)
    except UserError as e:
        raise fail(str(e)) from None


def _check_role(role: str) -> None:
    from broker.storage.models import ROLES

    if role not in ROLES:  # before asking for a password that would be thrown away
        raise fail(f"role {role!r} is not one of {', '.join(ROLES)}; e.g. --role staff")


def _when(at: datetime | None) -> str:
    return f"{at:%Y-%m-%d %H:%M} UTC" if at else "never"


@user_app.command("add")
def user_add(
    username: str = username_arg,
    role: str = typer.Option(..., "--role", help="staff (games, alerts) or manager (also tariffs, corrections, members)"),
    password_file: Path | None = password_file_option,
    must_change: bool = must_change_option,
    db: str | None = db_option,
    actor: str | None = actor_option,
) -> None:
    """Create a staff account; the password is prompted for (twice) unless --password-file is given.

    Example: lavos user add jana --role staff --must-change
    """
    from broker.accounts.users import create_user

    _check_role(role)
    password = _read_password(password_file)
    with store_session(db) as s:
        user = create_user(s, username, password, role, actor=actor_name(actor), must_change=must_change)
    typer.echo(f"user {user.username} ({user.role}) created")


@user_app.command("list")
def user_list(db: str | None = db_option) -> None:
    """List the accounts: role, enabled or not, password change pending, logins.

    Example: lavos user list
    """
    from broker.accounts.users import list_users, user_logins

    with store_session(db) as s:
        for u in list_users(s):
            flags = [f for f, on in (("DISABLED", not u.active), ("MUST CHANGE PASSWORD", u.must_change_password)) if on]
            typer.echo(
                f"{u.username}\t{u.role}\t{len(user_logins(s, u.username))} login(s)\t"
                f"created {u.created_at:%Y-%m-%d}{'  ' + '  '.join(flags) if flags else ''}"
            )


@user_app.command("password")
def user_password(
    username: str = username_arg,
    password_file: Path | None = password_file_option,
    must_change: bool = must_change_option,
    db: str | None = db_option,
    actor: str | None = actor_option,
) -> None:
    """Set a new password; it also lifts a lockout and logs the user out of every browser.

    Example: lavos user password jana --must-change
    """
    from broker.accounts.users import get_user, set_password

    with store_session(db) as s:  # an unknown user fails before the password is asked for
        if get_user(s, username) is None:
            raise fail(f"no user {username!r}: list them with `lavos user list`")
    password = _read_password(password_file)
    with store_session(db) as s:
        set_password(s, username, password, actor=actor_name(actor), must_change=must_change)
    typer.echo(f"password of {username} changed{'; it must be changed at the next login' if must_change else ''}; their logins are ended")


def _set_active(username: str, active: bool, db: str | None, actor: str | None) -> None:
    from broker.accounts.users import set_active

    with store_session(db) as s:
        set_active(s, username, active, actor=actor_name(actor))


@user_app.command("disable")
def user_disable(username: str = username_arg, db: str | None = db_option, actor: str | None = actor_option) -> None:
    """Disable an account: no login, its tokens stop working, its logins end.

    Example: lavos user disable jana
    """
    _set_active(username, False, db, actor)
    typer.echo(f"{username} disabled; their logins are ended")


@user_app.command("enable")
def user_enable(username: str = username_arg, db: str | None = db_option, actor: str | None = actor_option) -> None:
    """Enable a disabled account again.

    Example: lavos user enable jana
    """
    _set_active(username, True, db, actor)
    typer.echo(f"{username} enabled")


@user_app.command("role")
def user_role(
    username: str = username_arg,
    role: str = typer.Argument(..., help="staff or manager"),
    db: str | None = db_option,
    actor: str | None = actor_option,
) -> None:
    """Change an account's role; their logins end (they log in again with the new one).

    Example: lavos user role jana manager
    """
    from broker.accounts.users import set_role

    _check_role(role)
    with store_session(db) as s:
        set_role(s, username, role, actor=actor_name(actor))
    typer.echo(f"{username} is {role}")


@user_app.command("token")
def user_token(
    username: str = typer.Argument(..., help="The account the token acts as"),
    name: str = typer.Option(..., "--name", help="Where the token is used, e.g. bar-tablet"),
    db: str | None = db_option,
    actor: str | None = actor_option,
) -> None:
    """Issue a bearer token for machine clients and print it; it is shown only this once.

    Example: lavos user token jana --name bar-tablet
    """
    from broker.accounts.users import issue_token

    with store_session(db) as s:
        token = issue_token(s, username, name, actor=actor_name(actor))
    typer.echo(token)
    typer.echo("(store it now: only its hash is kept, it cannot be shown again)", err=True)


@user_app.command("tokens")
def user_tokens(username: str | None = typer.Argument(None, help="Only this account's"), db: str | None = db_option) -> None:
    """List API tokens (never the tokens themselves).

    Example: lavos user tokens jana
    """
    from broker.accounts.users import list_tokens

    with store_session(db) as s:
        for t in list_tokens(s, username):
            typer.echo(
                f"{t.id}\t{t.username}\t{t.name}\tcreated {t.created_at:%Y-%m-%d}\tlast used {_when(t.last_used_at)}"
                f"{'  REVOKED' if t.revoked else ''}"
            )


@user_app.command("revoke-token")
def user_revoke_token(
    token_id: int = typer.Argument(..., help="The token's number from `lavos user tokens`"),
    db: str | None = db_option,
    actor: str | None = actor_option,
) -> None:
    """Revoke an API token: it stops working at once.

    Example: lavos user revoke-token 3
    """
    from broker.accounts.users import revoke_token

    with store_session(db) as s:
        row = revoke_token(s, token_id, actor=actor_name(actor))
    typer.echo(f"token {token_id} ({row.username}, {row.name}) revoked")


@user_app.command("logins")
def user_logins_cmd(username: str = username_arg, db: str | None = db_option) -> None:
    """List an account's active logins: number, since, last seen, until, address, browser.

    Example: lavos user logins jana
    """
    from broker.accounts.users import user_logins

    with store_session(db) as s:
        for w in user_logins(s, username):
            typer.echo(
                f"{w.id}\tsince {_when(w.created_at)}\tlast seen {_when(w.last_seen_at)}\tuntil {_when(w.expires_at)}"
                f"\t{w.client or '-'}\t{w.user_agent or '-'}"
            )


@user_app.command("end-logins")
def user_end_logins(
    username: str = username_arg,
    login_id: int | None = typer.Option(None, "--id", help="Only this login (its number from `lavos user logins`)"),
    db: str | None = db_option,
    actor: str | None = actor_option,
) -> None:
    """Log an account out of the dashboard: every browser, or one login with --id.

    Example: lavos user end-logins jana
    """
    from broker.accounts.users import end_login, end_logins

    with store_session(db) as s:
        if login_id is None:
            ended = end_logins(s, username, actor=actor_name(actor))
        else:
            end_login(s, username, login_id, actor=actor_name(actor))
            ended = 1
    typer.echo(f"{ended} login(s) of {username} ended")


# The names these had before a login was called a login (issue 18, item 9), kept for operators' scripts.
user_app.command("sessions", hidden=True)(user_logins_cmd)
user_app.command("end-sessions", hidden=True)(user_end_logins)
