"""The API over a real Hub (real Mosquitto, SQLite and PostgreSQL) driven by a fake clock."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from fastapi.testclient import TestClient

from broker.accounts.users import create_user, issue_token, new_password
from tests.support.hub import fresh_login, on_writer, started_hub
from tests.support.sqlite_template import CHEAP as CHEAP  # re-exported: the dashboard's tests know it from here
from tests.support.web import bound_app

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from sim.mosquitto import Mosquitto


# Tuesday 10 November 2026, 18:00 in Bratislava (UTC+1): the hall is open (and training hours, 15-19, too).
START = datetime(2026, 11, 10, 17, 0, tzinfo=UTC)
STAFF, MANAGER = "jana", "boss"
PASSWORD = "čierna-guľa-8"  # accents: Basic credentials are UTF-8
# Users are made with cheap argon2 costs to keep the suite fast (tests/support/sqlite_template.py).


class FakeClock:
    """The hub's billing clock, moved by the test (thread-safe: the hub reads it from several threads)."""

    def __init__(self, start: datetime = START) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, **delta: float) -> datetime:
        with self._lock:
            self._now += timedelta(**delta)
            return self._now


class ShiftedClock:
    """The real clock moved by what the test says: the hub's time runs on as a browser's does (its
    timers tick in real seconds), and a test jumps it ahead instead of waiting for it. `speed`
    (hall seconds per real second, as the demo's sim.clock.ScaledClock has it) may be changed
    while it runs: the hall's time goes on from where it is, that much faster."""

    def __init__(self, shift: timedelta = timedelta()) -> None:
        self._lock = threading.Lock()
        self._real = datetime.now(UTC)  # at this real instant the hall's clock showed self._hall
        self._hall = self._real + shift
        self._speed = 1.0

    def __call__(self) -> datetime:
        with self._lock:
            return self._now()

    def _now(self) -> datetime:
        return self._hall + (datetime.now(UTC) - self._real) * self._speed

    def jump(self, **delta: float) -> None:
        with self._lock:
            self._hall += timedelta(**delta)

    @property
    def speed(self) -> float:
        return self._speed

    @speed.setter
    def speed(self, speed: float) -> None:
        with self._lock:
            self._hall, self._real = self._now(), datetime.now(UTC)
            self._speed = speed


def basic(username: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Api:
    client: TestClient
    service: Hub
    clock: FakeClock
    staff: dict[str, str]
    manager: dict[str, str]

    def ok(self, method: str, path: str, status: int = 200, *, as_manager: bool = False, **kw: Any) -> Any:
        r = self.client.request(method, path, headers=self.manager if as_manager else self.staff, **kw)
        assert r.status_code == status, f"{method} {path} → {r.status_code} {r.text}"
        return r.json() if r.content and r.headers.get("content-type", "").startswith("application/json") else r

    def refused(self, method: str, path: str, status: int, *, as_manager: bool = True, **kw: Any) -> str:
        r = self.client.request(method, path, headers=self.manager if as_manager else self.staff, **kw)
        assert r.status_code == status, f"{method} {path} → {r.status_code} {r.text}"
        detail = r.json()["detail"]
        assert isinstance(detail, str) and detail
        return detail


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(mosquitto: Mosquitto, db_url: str, clock: FakeClock) -> Iterator[Hub]:
    # A login of its own: the hub's MQTT session is persistent, and the broker is shared by the module.
    # The watchdog's rounds stopped: the tests tick it themselves, at moments of the fake clock.
    with started_hub(db_url, mosquitto=mosquitto, client_id=fresh_login(), clock=clock, watchdog=False) as svc:
        yield svc


@pytest.fixture
def api(service: Hub, clock: FakeClock) -> Iterator[Api]:
    staff_token, manager_token = add_users(service)
    with TestClient(bound_app(service, pages=False)) as client:
        yield Api(client, service, clock, bearer(staff_token), bearer(manager_token))


def add_users(service: Any) -> tuple[str, str]:
    """The staff and manager accounts (hashed CHEAP, outside the write) and an API token each, made on the writer."""
    password = new_password(PASSWORD, CHEAP)

    def make(db: Any) -> tuple[str, str]:
        create_user(db, STAFF, password, "staff", actor="test")
        create_user(db, MANAGER, password, "manager", actor="test")
        return issue_token(db, STAFF, "tests", actor="test"), issue_token(db, MANAGER, "tests", actor="test")

    result: tuple[str, str] = on_writer(service, make)
    return result


sqlite_only = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
