"""Staff accounts for the manager (/users), and changing one's own password (/account/password).

broker.users does the work and writes the audit log (who, when); this module checks the form
fields first, so that a refusal is in the visitor's language and nothing is written. A new
password, a new role or disabling ends that user's dashboard sessions (broker.web_sessions):
the tablet they are logged in on goes back to the login page at its next request.

Choosing one's own password keeps the session it was done from and ends the others. A password
the manager hands out can be marked "must change": that user can then open nothing but
/account/password until they have chosen their own (dashboard.web.auth).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from broker.auth_checks import reset_failures, waiting_clients
from broker.db.models import ROLES, User
from broker.users import (
    MIN_PASSWORD,
    UserError,
    create_user,
    end_session,
    end_sessions,
    get_user,
    is_last_manager,
    list_tokens,
    list_users,
    revoke_token,
    set_active,
    set_password,
    set_role,
    unlock,
    user_audit,
    user_sessions,
    valid_username,
)
from dashboard.api.auth import login as check_password
from dashboard.api.auth import web_session_pk
from dashboard.api.deps import IdPath, get_service
from dashboard.web.auth import PASSWORD_PAGE, page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_
from dashboard.web.request_text import translated
from dashboard.web.templating import NavLink, flash, render

router = APIRouter()
NAV = [NavLink("/users", N_("Accounts"), role="manager", order=90)]
CSRF = [Depends(verify_csrf)]
ROLE_NAMES = {"staff": N_("staff"), "manager": N_("manager")}

Admin = Annotated[User, Depends(page_can("users.admin"))]
Own = Annotated[User, Depends(page_can("account.own"))]
Short = Annotated[str, Form(max_length=64)]
Password = Annotated[str, Form(max_length=1024)]
Flag = Annotated[str | None, Form(max_length=8)]


def _refuse(request: Request, message: str, **values: object) -> HTTPException:
    return HTTPException(400, translated(request, message, **values))


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


def _account(request: Request, db, username: str) -> User:  # type: ignore[no-untyped-def]
    user = get_user(db, username)
    if user is None:
        raise HTTPException(404, translated(request, N_("There is no account %(name)s."), name=username))
    return user


def _keeps_a_manager(request: Request, db, username: str) -> None:  # type: ignore[no-untyped-def]
    if is_last_manager(db, username):
        raise _refuse(request, N_("%(name)s is the only active manager: make another account manager first."), name=username)


def _to(username: str) -> Response:
    return RedirectResponse(f"/users/{username}", status_code=303)


@router.get("/users")
def users_page(request: Request, user: Admin) -> Response:
    with get_service(request).store.reader() as db:
        rows = [{"u": u, "locked": waiting_clients(get_service(request).store, u.username) > 0, "sessions": len(user_sessions(db, u.username))} for u in list_users(db)]
    return render(request, "users.html", {"rows": rows, "roles": ROLE_NAMES, "min_password": MIN_PASSWORD})


@router.post("/users", dependencies=CSRF)
def add(request: Request, user: Admin, username: Short, role: Short, password: Password, repeat: Password,
        must_change: Flag = None) -> Response:
    name = username.strip().lower()
    if not valid_username(name):
        raise _refuse(request, N_("Login name: 2 to 64 characters a-z, 0-9, dot, dash or underscore, e.g. jana."))
    with get_service(request).store.session() as db:
        if get_user(db, name) is not None:
            raise _refuse(request, N_("The account %(name)s already exists."), name=name)
        create_user(db, name, _new_password(request, password, repeat), _role(request, role), actor=user.username,
                    must_change=must_change is not None)
    flash(request, translated(request, N_("Account %(name)s created."), name=name), "ok")
    return _to(name)


@router.get("/users/{username}")
def user_page(request: Request, username: str, user: Admin) -> Response:
    with get_service(request).store.reader() as db:
        account = _account(request, db, username)
        context = {"a": account, "locked": waiting_clients(get_service(request).store, account.username) > 0, "roles": ROLE_NAMES, "min_password": MIN_PASSWORD,
                   "tokens": list_tokens(db, username), "sessions": user_sessions(db, username),
                   "audit": user_audit(db, username), "current": web_session_pk(request)}
    return render(request, "users_detail.html", context)


@router.post("/users/{username}/password", dependencies=CSRF)
def change_password(request: Request, username: str, user: Admin, password: Password, repeat: Password,
                    must_change: Flag = None) -> Response:
    new = _new_password(request, password, repeat)
    with get_service(request).store.session() as db:
        _account(request, db, username)
        own = username == user.username
        set_password(db, username, new, actor=user.username, must_change=must_change is not None and not own,
                     keep_session=web_session_pk(request) if own else None)
    flash(request, translated(request, N_("The password of %(name)s is changed; they are logged out everywhere."), name=username), "ok")
    return _to(username)


@router.post("/users/{username}/role", dependencies=CSRF)
def change_role(request: Request, username: str, user: Admin, role: Short) -> Response:
    new = _role(request, role)
    with get_service(request).store.session() as db:
        account = _account(request, db, username)
        if new != account.role and new != "manager":
            _keeps_a_manager(request, db, username)
        set_role(db, username, new, actor=user.username)
    flash(request, translated(request, N_("%(name)s is now %(role)s; they log in again."), name=username,
                              role=translated(request, ROLE_NAMES[new])), "ok")
    return _to(username)


@router.post("/users/{username}/active", dependencies=CSRF)
def change_active(request: Request, username: str, user: Admin, active: Short) -> Response:
    if active not in ("0", "1"):
        raise _refuse(request, N_("Choose to enable or to disable the account."))
    enable = active == "1"
    with get_service(request).store.session() as db:
        _account(request, db, username)
        if not enable:
            _keeps_a_manager(request, db, username)
        set_active(db, username, enable, actor=user.username)
    text = N_("%(name)s can log in again.") if enable else N_("%(name)s is disabled and logged out everywhere.")
    flash(request, translated(request, text, name=username), "ok")
    return _to(username)


@router.post("/users/{username}/unlock", dependencies=CSRF)
def lift_lockout(request: Request, username: str, user: Admin) -> Response:
    with get_service(request).store.session() as db:
        _account(request, db, username)
        unlock(db, username, actor=user.username)
    reset_failures(get_service(request).store, username)
    flash(request, translated(request, N_("%(name)s may try to log in again."), name=username), "ok")
    return _to(username)


@router.post("/users/{username}/tokens/{token_id}/revoke", dependencies=CSRF)
def revoke(request: Request, username: str, token_id: IdPath, user: Admin) -> Response:
    with get_service(request).store.session() as db:
        _account(request, db, username)
        if token_id not in {t.id for t in list_tokens(db, username)}:
            raise HTTPException(404, translated(request, N_("%(name)s has no such token."), name=username))
        revoke_token(db, token_id, actor=user.username)
    flash(request, translated(request, N_("The token is revoked.")), "ok")
    return _to(username)


@router.post("/users/{username}/sessions/{session_id}/end", dependencies=CSRF)
def end_one(request: Request, username: str, session_id: IdPath, user: Admin) -> Response:
    with get_service(request).store.session() as db:
        _account(request, db, username)
        try:
            end_session(db, username, session_id, actor=user.username)
        except UserError:
            raise HTTPException(404, translated(request, N_("That session has already ended."))) from None
    flash(request, translated(request, N_("The session is ended.")), "ok")
    return _to(username)


@router.post("/users/{username}/sessions/end", dependencies=CSRF)
def end_all(request: Request, username: str, user: Admin) -> Response:
    with get_service(request).store.session() as db:
        _account(request, db, username)
        ended = end_sessions(db, username, actor=user.username)
    flash(request, translated(request, N_("%(name)s is logged out everywhere; sessions ended: %(n)d."), name=username, n=ended), "ok")
    return _to(username)


# --- one's own password ------------------------------------------------------------------------

@router.get(PASSWORD_PAGE)
def own_password_page(request: Request, user: Own) -> Response:
    return render(request, "users_password.html", {"forced": user.must_change_password, "min_password": MIN_PASSWORD})


@router.post(PASSWORD_PAGE, dependencies=CSRF)
def own_password(request: Request, user: Own, current: Password, password: Password, repeat: Password) -> Response:
    new = _new_password(request, password, repeat)
    if new == current:
        raise _refuse(request, N_("Choose a password different from the current one."))
    store = get_service(request).store
    try:
        check_password(store, user.username, current)
    except HTTPException:
        raise HTTPException(403, translated(request, N_("The current password is wrong."))) from None
    with store.session() as db:
        set_password(db, user.username, new, actor=user.username, keep_session=web_session_pk(request))
    flash(request, translated(request, N_("Your password is changed; other devices are logged out.")), "ok")
    return RedirectResponse("/", status_code=303)
