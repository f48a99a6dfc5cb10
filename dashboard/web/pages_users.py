"""Staff accounts for the manager (/users), and changing one's own password (/account/password).

The hub's facade (broker.hall.facade) does the work through broker.accounts.users, which writes the
audit log (who, when); this module checks the form fields first, so that a refusal is in the visitor's language and nothing is written. A new
password, a new role or disabling ends that user's logins (broker.accounts.logins):
the tablet they are logged in on goes back to the login page at its next request.

Choosing one's own password keeps the login it was done from and ends the others. A password
the manager hands out can be marked "must change": that user can then open nothing but
/account/password until they have chosen their own (dashboard.web.auth).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import ROLES, Staff
from broker.accounts.users import MIN_PASSWORD, UserError, new_password, valid_username
from broker.hall.facade import NotFound
from broker.hall.read_models import HallReads
from broker.people.accounts import (
    CreateStaff,
    EndLogin,
    EndLogins,
    RevokeToken,
    SetStaffActive,
    SetStaffPassword,
    SetStaffRole,
    UnlockStaff,
)
from dashboard.api.auth import login as check_password
from dashboard.api.auth import login_pk
from dashboard.api.deps import IdPath, get_hub
from dashboard.web.auth import PASSWORD_PAGE, page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.request_text import refusal, translated
from dashboard.web.templating import NavLink, flash, render

router = APIRouter()
NAV = [NavLink("/users", N_("Accounts"), role="manager", order=90)]
CSRF = [Depends(verify_csrf)]
ROLE_NAMES = {"staff": N_("staff"), "manager": N_("manager")}

Admin = Annotated[Staff, Depends(page_can("users.admin"))]
Own = Annotated[Staff, Depends(page_can("account.own"))]
Short = Annotated[str, Form(max_length=64)]
Password = Annotated[str, Form(max_length=1024)]
Flag = Annotated[str | None, Form(max_length=8)]


class _Refused(Exception):
    """A refusal shown at the form it is about, the page redrawn with what was typed (never a
    password) and this status: the text is already in the visitor's language."""

    def __init__(self, text: str, status: int = 400) -> None:
        super().__init__(text)
        self.text, self.status = text, status


def _refuse(request: Request, message: str, status: int = 400, **values: object) -> _Refused:
    return _Refused(translated(request, message, **values), status)


def _new_password(request: Request, password: str, repeat: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise _refuse(request, N_("The password must have at least %(n)d characters."), n=MIN_PASSWORD)
    if password != repeat:
        raise _refuse(request, N_("The two passwords differ; type the same one twice."))
    return password


def _role(request: Request, role: str) -> str:
    if role not in ROLES:
        raise _refuse(request, N_("Choose the role staff or manager."))
    return role


def _account(request: Request, reads: HallReads, username: str) -> Staff:
    user = reads.people.staff(username)
    if user is None:
        raise HTTPException(404, translated(request, N_("There is no account %(name)s."), name=username))
    return user


def _keeps_a_manager(request: Request, reads: HallReads, username: str) -> None:
    if reads.people.is_last_manager(username):
        raise _refuse(request, N_("%(name)s is the only active manager: make another account manager first."), name=username)


def audit_text(action: str, detail: dict[str, Any]) -> str:
    """An account's history entry as a sentence in the page's language; the action id stays in
    the row's data-action (and the API). Unknown actions show their id and details as they are."""
    d = detail or {}

    def role(r: object) -> str:
        return gettext(ROLE_NAMES.get(str(r), str(r)))

    if action == "user.add":
        text = gettext("Account created, role: %(role)s.") % {"role": role(d.get("role"))}
        return text + (" " + gettext("Must choose their own password.") if d.get("must_change") else "")
    if action == "user.password":
        return gettext("Password set.") + (" " + gettext("Must choose their own password.") if d.get("must_change") else "")
    if action == "user.role" and isinstance(d.get("role"), list) and len(d["role"]) == 2:
        return gettext("Role changed: %(old)s → %(new)s.") % {"old": role(d["role"][0]), "new": role(d["role"][1])}
    if action == "user.active":
        return gettext("Account enabled.") if d.get("active") else gettext("Account disabled.")
    if action == "user.unlock":
        return gettext("Allowed to try logging in again.")
    if action == "token.issue":
        return gettext("API token %(name)s issued.") % {"name": d.get("name", "")}
    if action == "token.revoke":
        return gettext("API token %(name)s revoked.") % {"name": d.get("name", "")}
    if action == "web_session.end":
        return gettext("Logged out.")
    return " ".join([action, *(f"{k}={v}" for k, v in d.items())])


def _to(username: str) -> Response:
    return RedirectResponse(f"/users/{username}", status_code=303)


@router.get("/users")
def users_page(request: Request, user: Admin) -> Response:
    return _users(request)


def _users(request: Request, *, error: str | None = None, form: dict[str, Any] | None = None, status: int = 200) -> Response:
    """The accounts page; after a refused "new account", the reason at the form and what was typed kept."""
    rows = get_hub(request).reads.people.staff_rows()
    context = {"rows": rows, "roles": ROLE_NAMES, "min_password": MIN_PASSWORD, "error": error, "form": form or {}}
    return render(request, "users.html", context, status=status)


@router.post("/users", dependencies=CSRF)
def add(
    request: Request,
    user: Admin,
    username: Short = "",
    role: Short = "",
    password: Password = "",
    repeat: Password = "",
    must_change: Flag = None,
) -> Response:
    name = username.strip().lower()
    hub = get_hub(request)
    try:
        if not valid_username(name):
            raise _refuse(request, N_("Login name: 2 to 64 characters a-z, 0-9, dot, dash or underscore, e.g. jana."))
        if hub.reads.people.staff(name) is not None:
            raise _refuse(request, N_("The account %(name)s already exists."), name=name)
        chosen = _new_password(request, password, repeat)
        hub.execute(
            CreateStaff(
                username=name,
                password=new_password(chosen),
                role=_role(request, role),
                must_change=must_change is not None,
                actor=user.username,
            )
        )
    except _Refused as e:
        return _users(
            request, error=e.text, form={"username": username, "role": role, "must_change": must_change is not None}, status=e.status
        )
    except UserError as e:
        return _users(
            request,
            error=refusal(request, e),
            form={"username": username, "role": role, "must_change": must_change is not None},
            status=409,
        )
    flash(request, translated(request, N_("Account %(name)s created."), name=name), "ok")
    return _to(name)


@router.get("/users/{username}")
def user_page(request: Request, username: str, user: Admin) -> Response:
    return _detail(request, username)


def _detail(
    request: Request, username: str, *, errors: dict[str, str] | None = None, form: dict[str, Any] | None = None, status: int = 200
) -> Response:
    """An account's page. `errors` (form id → reason) and `form` (what was typed, never a password)
    redraw a refused form in place, with `status`."""
    reads = get_hub(request).reads
    account = _account(request, reads, username)
    context = {
        "a": account,
        "locked": reads.people.locked(account.username),
        "roles": ROLE_NAMES,
        "min_password": MIN_PASSWORD,
        "tokens": reads.people.tokens(username),
        "logins": reads.people.logins(username),
        "audit": reads.people.audit(username),
        "current": login_pk(request),
        "audit_text": audit_text,
        "errors": errors or {},
        "form": form or {},
    }
    return render(request, "users_detail.html", context, status=status)


def _refused_at(request: Request, username: str, where: str, e: _Refused | UserError | NotFound, **typed: object) -> Response:
    if isinstance(e, _Refused):
        text, status = e.text, e.status
    else:
        text, status = refusal(request, e), 404 if isinstance(e, NotFound) else 409
    return _detail(request, username, errors={where: text}, form=typed, status=status)


@router.post("/users/{username}/password", dependencies=CSRF)
def change_password(
    request: Request, username: str, user: Admin, password: Password = "", repeat: Password = "", must_change: Flag = None
) -> Response:
    hub = get_hub(request)
    _account(request, hub.reads, username)
    own = username == user.username
    try:
        new = _new_password(request, password, repeat)
        hub.execute(
            SetStaffPassword(
                username=username,
                password=new_password(new),
                must_change=must_change is not None and not own,
                keep_login=login_pk(request) if own else None,
                actor=user.username,
            )
        )
    except (_Refused, UserError) as e:
        return _refused_at(request, username, "set-password", e, must_change=must_change is not None)
    flash(request, translated(request, N_("The password of %(name)s is changed; they are logged out everywhere."), name=username), "ok")
    return _to(username)


@router.post("/users/{username}/role", dependencies=CSRF)
def change_role(request: Request, username: str, user: Admin, role: Short = "") -> Response:
    hub = get_hub(request)
    account = _account(request, hub.reads, username)
    try:
        new = _role(request, role)
        if new != account.role and new != "manager":
            _keeps_a_manager(request, hub.reads, username)
        hub.execute(SetStaffRole(username=username, role=new, actor=user.username))
    except (_Refused, UserError) as e:
        return _refused_at(request, username, "change-role", e, role=role)
    flash(
        request,
        translated(request, N_("%(name)s is now %(role)s; they log in again."), name=username, role=translated(request, ROLE_NAMES[new])),
        "ok",
    )
    return _to(username)


@router.post("/users/{username}/active", dependencies=CSRF)
def change_active(request: Request, username: str, user: Admin, active: Short = "") -> Response:
    hub = get_hub(request)
    _account(request, hub.reads, username)
    enable = active == "1"
    try:
        if active not in ("0", "1"):
            raise _refuse(request, N_("Choose to enable or to disable the account."))
        if not enable:
            _keeps_a_manager(request, hub.reads, username)
        hub.execute(SetStaffActive(username=username, active=enable, actor=user.username))
    except (_Refused, UserError) as e:
        return _refused_at(request, username, "actions", e)
    text = N_("%(name)s can log in again.") if enable else N_("%(name)s is disabled and logged out everywhere.")
    flash(request, translated(request, text, name=username), "ok")
    return _to(username)


@router.post("/users/{username}/unlock", dependencies=CSRF)
def lift_lockout(request: Request, username: str, user: Admin) -> Response:
    hub = get_hub(request)
    _account(request, hub.reads, username)
    try:
        hub.execute(UnlockStaff(username=username, actor=user.username))
    except UserError as e:
        return _refused_at(request, username, "actions", e)
    flash(request, translated(request, N_("%(name)s may try to log in again."), name=username), "ok")
    return _to(username)


@router.post("/users/{username}/tokens/{token_id}/revoke", dependencies=CSRF)
def revoke(request: Request, username: str, token_id: IdPath, user: Admin) -> Response:
    hub = get_hub(request)
    _account(request, hub.reads, username)
    try:
        hub.execute(RevokeToken(username=username, token_id=token_id, actor=user.username))
    except (NotFound, UserError):
        return _refused_at(request, username, "tokens", _refuse(request, N_("%(name)s has no such token."), 404, name=username))
    flash(request, translated(request, N_("The token is revoked.")), "ok")
    return _to(username)


@router.post("/users/{username}/sessions/{login_id}/end", dependencies=CSRF)
def end_one(request: Request, username: str, login_id: IdPath, user: Admin) -> Response:
    hub = get_hub(request)
    _account(request, hub.reads, username)
    try:
        hub.execute(EndLogin(username=username, login=login_id, actor=user.username))
    except UserError:
        return _refused_at(request, username, "logins", _refuse(request, N_("That login has already ended."), 404))
    flash(request, translated(request, N_("The login is ended.")), "ok")
    return _to(username)


@router.post("/users/{username}/sessions/end", dependencies=CSRF)
def end_all(request: Request, username: str, user: Admin) -> Response:
    hub = get_hub(request)
    _account(request, hub.reads, username)
    ended = hub.execute(EndLogins(username=username, actor=user.username))
    flash(request, translated(request, N_("%(name)s is logged out everywhere; logins ended: %(n)d."), name=username, n=ended), "ok")
    return _to(username)


# --- one's own password ------------------------------------------------------------------------


@router.get(PASSWORD_PAGE)
def own_password_page(request: Request, user: Own) -> Response:
    return _own(request, user)


def _own(request: Request, user: Staff, *, error: str | None = None, status: int = 200) -> Response:
    context = {"forced": user.must_change_password, "min_password": MIN_PASSWORD, "error": error}
    return render(request, "users_password.html", context, status=status)


@router.post(PASSWORD_PAGE, dependencies=CSRF)
def own_password(request: Request, user: Own, current: Password = "", password: Password = "", repeat: Password = "") -> Response:
    hub = get_hub(request)
    try:
        new = _new_password(request, password, repeat)
        if new == current:
            raise _refuse(request, N_("Choose a password different from the current one."))
        try:
            check_password(hub, user.username, current)
        except HTTPException:
            raise _refuse(request, N_("The current password is wrong."), 403) from None
        hub.execute(SetStaffPassword(username=user.username, password=new_password(new), keep_login=login_pk(request), actor=user.username))
    except _Refused as e:
        return _own(request, user, error=e.text, status=e.status)
    flash(request, translated(request, N_("Your password is changed; other devices are logged out.")), "ok")
    return RedirectResponse("/", status_code=303)
