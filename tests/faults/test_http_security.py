"""Issue 6, security over HTTP: what the dashboard and its API guarantee, and where each is proven.

GUARANTEES below is the one list of them. Most are proven where the feature lives
(tests/dashboard); `test_every_guarantee_names_a_test_that_exists` keeps this list and those
tests from drifting apart. Proven here, against `lavos server` run as a real process at DEBUG:
the served app has no route the per-route checks miss; passwords are stored as argon2id hashes
and tokens as SHA-256 only (the whole database file is searched for the plaintext, audit log
included); no password, token, MQTT password, cookie secret or session cookie reaches the log;
and the security headers are on API answers as well as on pages.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fastapi.routing
import httpx
import pytest
from argon2 import PasswordHasher
from sqlalchemy import create_engine, text

from broker.compose import open_store
from dashboard.api.app import PUBLIC_PATHS, api_routes
from dashboard.web.app import web_routes
from dashboard.web.security import SESSION_COOKIE
from sim.mosquitto import free_port
from tests.support import httpc
from tests.support.hub import REPO, new_hub
from tests.support.matching import found
from tests.support.server import LAVOS, server_argv, wait_serving
from tests.support.sqlite_template import migrated_sqlite
from tests.support.web import _CSRF, web_app

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto


API_AUTH = "tests/dashboard/test_api_auth.py"
WEB_AUTH = "tests/dashboard/test_web_auth.py"
HERE = "tests/faults/test_http_security.py"
GUARANTEES: dict[str, list[str]] = {
    "Every API route but /api/health and /openapi.json answers 401 with a Basic/Bearer challenge: "
    "anonymous, a forged token, an unknown scheme": [f"{API_AUTH}::test_anonymous_is_401_with_a_challenge_on_every_route"],
    "Every page route declares the role it needs, and an anonymous visitor is sent to /login (303) from every page "
    "and page action, then back where they were going": [
        f"{WEB_AUTH}::test_every_route_but_login_demands_a_role",
        f"{WEB_AUTH}::test_anonymous_is_sent_to_login_from_every_page_and_comes_back",
    ],
    "Those route lists are the whole served app: nothing is mounted that the checks above skip": [
        f"{HERE}::test_the_served_app_has_no_route_the_checks_miss"
    ],
    "Staff get 403 on every manager API route, manager page and page action": [
        f"{API_AUTH}::test_staff_get_403_on_manager_routes",
        f"{WEB_AUTH}::test_staff_get_403_on_manager_pages_and_actions",
    ],
    "Every form POST without the session's CSRF token, or with a forged one, is refused (403) and changes nothing; the "
    "JSON API takes the cookie session for reads but writes only with X-CSRF-Token": [
        f"{WEB_AUTH}::test_every_form_post_without_the_token_is_refused",
        f"{WEB_AUTH}::test_json_api_takes_the_cookie_session_but_writes_only_with_the_header",
    ],
    "After five wrong passwords for an account, that client waits (doubling, up to 15 minutes), the right password included "
    "(API 429 with Retry-After, login page 429 in Slovak); tokens are not passwords and keep working; a manager can lift "
    "the wait": [
        f"{API_AUTH}::test_repeated_failures_slow_down_that_client_until_a_manager_lifts_it",
        f"{WEB_AUTH}::test_wrong_passwords_then_throttled_even_for_the_right_one",
    ],
    "A revoked token stops working at once": [f"{API_AUTH}::test_tokens_work_until_revoked"],
    "The session cookie is signed, HttpOnly, SameSite=Lax, Secure over https; its secret file is 0600; logout ends it": [
        f"{WEB_AUTH}::test_login_sets_a_signed_http_only_lax_cookie_and_logout_ends_it",
        f"{WEB_AUTH}::test_cookie_is_secure_over_https_or_when_configured",
        f"{WEB_AUTH}::test_the_cookie_secret_is_made_private_once_and_kept",
    ],
    "Passwords are stored as argon2id hashes only, and API tokens as SHA-256 only: neither plaintext is anywhere in the database": [
        f"{HERE}::test_passwords_are_argon2id_hashes_and_tokens_sha256_only"
    ],
    "Nothing secret in the logs at DEBUG: passwords (right and wrong), tokens, the MQTT password, the cookie secret, session cookies": [
        f"{HERE}::test_nothing_secret_reaches_the_log"
    ],
    "CSP, X-Frame-Options, X-Content-Type-Options and Referrer-Policy on pages, static files and API answers, errors included": [
        f"{WEB_AUTH}::test_pages_carry_security_headers",
        f"{HERE}::test_security_headers_on_pages_and_api_answers",
    ],
}


def test_every_guarantee_names_a_test_that_exists() -> None:
    missing = []
    for where in (w for tests in GUARANTEES.values() for w in tests):
        path, name = where.split("::")
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        if not callable(getattr(module, name, None)):
            missing.append(where)
    assert missing == []


def _served_routes(app: Any, prefix: str = "") -> set[tuple[str, str]]:
    """(method, path) of every endpoint the app answers, through its mounts; a mount without routes of its own is ('*', path).

    FastAPI >= 0.16x keeps included routers as one entry each; iter_route_contexts opens them
    with their prefixes, as the router does when it matches a request.
    """
    found: set[tuple[str, str]] = set()
    for route in fastapi.routing.iter_route_contexts(app.routes):
        sub = getattr(route.original_route, "app", None)
        assert route.path is not None, route
        if route.methods is not None:
            found |= {(m, prefix + route.path) for m in route.methods if m != "HEAD"}
        elif hasattr(sub, "routes"):
            found |= _served_routes(sub, prefix + route.path)
        else:
            found.add(("*", prefix + route.path))
    return found


def test_the_served_app_has_no_route_the_checks_miss(tmp_path: Path) -> None:
    # A hub without MQTT over an empty SQLite file: only the app's routes are looked at.
    store = open_store(migrated_sqlite(tmp_path / "hub.db"))
    try:
        served = _served_routes(web_app(new_hub(store)))
    finally:
        store.close()
    checked = {(m, p) for m, p, _ in api_routes()} | {(m, p) for m, p, _ in web_routes()}
    public_by_design = {("GET", p) for p in PUBLIC_PATHS} | {("*", "/static")}  # the schema, health, CSS/JS/icons
    assert served - checked == public_by_design - checked


# --- a real `lavos server` at DEBUG, used as staff would -----------------------------------


@dataclass
class Served:
    log: str = ""  # the server's stdout and stderr, and the user CLI's stderr
    secrets: dict[str, str] = field(default_factory=dict)
    answers: dict[str, httpx.Response] = field(default_factory=dict)
    db_files: list[Path] = field(default_factory=list)
    token: str = ""
    passwords: dict[str, str] = field(default_factory=dict)


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*LAVOS, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def served(mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> Served:
    tmp = tmp_path_factory.mktemp("http-security")
    db = f"sqlite:///{tmp / 'lavos.db'}"
    out = Served(passwords={"boss": "Manažér-tajné-heslo-7", "jana": "Čašníčka-heslo-42"})
    out.secrets = {
        "mqtt password": "hub-secret",
        "wrong password": "zlé-heslo-na-skúšku",
        **{f"{u}'s password": p for u, p in out.passwords.items()},
    }
    env = {**os.environ, "LAVOS_DATA_DIR": str(tmp / "data")}
    env.pop("LAVOS_DB", None)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log_file = tmp / "server.log"
    with open(log_file, "w") as log:
        # The MQTT password inline in the URL, as bench/load.py passes it: the URL must not be logged whole.
        proc = subprocess.Popen(
            server_argv(mosquitto.port, db, port, tmp / "data", "--log-level", "DEBUG"),
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    cli_err = []
    try:
        wait_serving(proc, base, log_file)
        for user, role in (("boss", "manager"), ("jana", "staff")):  # creating users while the server runs and logs
            pw = tmp / f"{user}.pw"
            pw.write_text(out.passwords[user] + "\n")
            cli_err.append(_cli("user", "add", user, "--role", role, "--password-file", str(pw), "--db", db, env=env).stderr)
        issued = _cli("user", "token", "boss", "--name", "security-test", "--db", db, env=env)
        out.token = issued.stdout.strip()
        cli_err.append(issued.stderr)
        out.secrets["token"] = out.token
        api = httpc.Client(base_url=base, timeout=10)
        out.answers["api basic"] = api.get("/api/tables", auth=("boss", out.passwords["boss"]))
        out.answers["api token"] = api.get("/api/members", headers={"Authorization": f"Bearer {out.token}"})
        out.answers["api write"] = api.post("/api/members", json={"name": "Ján Bezpečný"}, auth=("boss", out.passwords["boss"]))
        out.answers["api wrong password"] = api.get("/api/tables", auth=("jana", out.secrets["wrong password"]))
        out.answers["api unknown user"] = api.get("/api/tables", auth=("nikto", out.secrets["wrong password"]))
        out.answers["api anonymous"] = api.get("/api/tables")
        out.answers["api not found"] = api.get("/api/sessions/999999", headers={"Authorization": f"Bearer {out.token}"})
        out.answers["openapi"] = api.get("/openapi.json")
        out.answers["health"] = api.get("/api/health")
        page = httpc.Client(base_url=base, timeout=10, follow_redirects=False)
        out.answers["login page"] = page.get("/login")
        csrf = found(_CSRF, out.answers["login page"].text).group(1)
        out.answers["page wrong password"] = page.post(
            "/login", data={"username": "jana", "password": out.secrets["wrong password"], "csrf_token": csrf}
        )
        out.answers["page login"] = page.post("/login", data={"username": "jana", "password": out.passwords["jana"], "csrf_token": csrf})
        out.answers["floor page"] = page.get("/")
        out.answers["static"] = page.get("/static/app.css")
        out.secrets["session cookie"] = page.cookies[SESSION_COOKIE]
        out.secrets["cookie secret"] = (tmp / "data" / "web-secret").read_text().strip()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    out.log = log_file.read_text() + "".join(cli_err)
    out.db_files = list(tmp.glob("lavos.db*"))
    return out


def test_the_server_was_used_as_intended(served: Served) -> None:
    # Guards the tests below: a secret absent from the log because nothing happened proves nothing.
    codes = {k: r.status_code for k, r in served.answers.items()}
    assert codes == {
        "api basic": 200,
        "api token": 200,
        "api write": 201,
        "api wrong password": 401,
        "api unknown user": 401,
        "api anonymous": 401,
        "api not found": 404,
        "openapi": 200,
        "health": 200,
        "login page": 200,
        "page wrong password": 401,
        "page login": 303,
        "floor page": 200,
        "static": 200,
    }
    assert "GET /api/tables" in served.log and "DEBUG" in served.log  # the access log and debug lines are really on


def test_nothing_secret_reaches_the_log(served: Served) -> None:
    log = served.log.casefold()
    leaked = {what for what, secret in served.secrets.items() if secret.casefold() in log}
    assert leaked == set()


def test_passwords_are_argon2id_hashes_and_tokens_sha256_only(served: Served) -> None:
    engine = create_engine(f"sqlite:///{served.db_files[0].parent / 'lavos.db'}")
    with engine.connect() as c:
        users: dict[str, str] = dict(c.execute(text("select username, password_hash from users")).all())
        tokens = c.execute(text("select * from api_tokens")).mappings().all()
    engine.dispose()
    assert set(users) == set(served.passwords)
    for user, stored in users.items():
        assert stored.startswith("$argon2id$") and served.passwords[user] not in stored
        assert PasswordHasher().verify(stored, served.passwords[user])  # a hash of that very password, not of something else
    assert [t["token_hash"] for t in tokens] == [hashlib.sha256(served.token.encode()).hexdigest()]
    assert not any(served.token in str(v) for t in tokens for v in t.values())
    # Nowhere else either (audit log, WAL, free pages): the raw bytes of every database file.
    raw = b"".join(p.read_bytes() for p in served.db_files)
    found = {
        what
        for what, secret in served.secrets.items()
        if what != "cookie secret" and (secret.encode() in raw or secret.encode("utf-16-le") in raw)
    }
    assert found == set()


def test_security_headers_on_pages_and_api_answers(served: Served) -> None:
    missing = {}
    for what, r in served.answers.items():
        h = r.headers
        csp = h.get("content-security-policy", "")
        page = what in ("login page", "page wrong password", "page login", "floor page", "static")
        ok = (
            ("default-src 'self'" if page else "default-src 'none'") in csp
            and "frame-ancestors 'none'" in csp
            and h.get("x-frame-options") == "DENY"
            and h.get("x-content-type-options") == "nosniff"
            and h.get("referrer-policy")
        )
        if not ok:
            missing[what] = dict(h)
    assert missing == {}
