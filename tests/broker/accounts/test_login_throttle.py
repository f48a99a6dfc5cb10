"""The login throttle's rules, on a fake clock: free mistakes, doubling waits, forgetting, bounds."""

from __future__ import annotations

from broker.accounts.login_throttle import LoginThrottle, ThrottlePolicy


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_waits_double_after_the_free_mistakes_up_to_the_cap() -> None:
    clock = Clock()
    t = LoginThrottle(ThrottlePolicy(account_free=3, client_free=100, first_wait_s=1, max_wait_s=8), clock)
    waits = [t.failed("boss", "10.0.0.9", "h") for _ in range(8)]
    assert waits == [0, 0, 0, 1, 2, 4, 8, 8]
    assert t.wait("boss", "10.0.0.9", "h") == 8
    assert t.wait("boss", "10.0.0.1", "h") == 0  # the owner elsewhere is not slowed
    clock.now += 8
    assert t.wait("boss", "10.0.0.9", "h") == 0


def test_one_address_trying_many_accounts_is_slowed_as_a_whole() -> None:
    clock = Clock()
    t = LoginThrottle(ThrottlePolicy(account_free=5, client_free=10), clock)
    for i in range(11):
        t.failed(f"user{i}", "10.0.0.9", None)
    assert t.wait("someone-new", "10.0.0.9", None) == 1
    assert t.wait("someone-new", "10.0.0.8", None) == 0
    assert t.reset_client("10.0.0.9") and t.wait("someone-new", "10.0.0.9", None) == 0


def test_success_forgives_the_pair_and_old_failures_are_forgotten() -> None:
    clock = Clock()
    t = LoginThrottle(ThrottlePolicy(account_free=2, forget_after_s=60), clock)
    t.failed("jana", "c", "h")
    t.failed("jana", "c", "h")
    t.succeeded("jana", "c")
    assert t.failed("jana", "c", "h") == 0 and t.failed("jana", "c", "h") == 0
    clock.now += 61
    assert t.failed("jana", "c", "h") == 0  # a fresh count: last week's typos do not add up


def test_a_new_password_or_a_reset_lifts_the_wait() -> None:
    clock = Clock()
    t = LoginThrottle(ThrottlePolicy(account_free=0), clock)
    t.failed("jana", "a", "old-hash")
    t.failed("jana", "b", "old-hash")
    assert t.wait("jana", "a", "old-hash") > 0
    assert t.wait("jana", "a", "new-hash") == 0
    assert t.reset_account("jana") == 1 and t.wait("jana", "b", "old-hash") == 0


def test_memory_stays_bounded_under_a_flood_of_names_and_addresses() -> None:
    t = LoginThrottle(ThrottlePolicy(max_entries=100), Clock())
    for i in range(1000):
        t.failed("x" * 10_000 + str(i), f"10.{i // 256}.{i % 256}.1", None)
    assert len(t._pairs) == len(t._clients) == 100
    assert all(len(name) <= 65 for name, _ in t._pairs)


def test_an_address_that_logged_in_is_known_for_a_while() -> None:
    clock = Clock()
    t = LoginThrottle(ThrottlePolicy(known_for_s=100), clock)
    assert not t.known("jana", "10.0.0.1")
    t.succeeded("jana", "10.0.0.1")
    assert t.known("jana", "10.0.0.1") and not t.known("jana", "10.0.0.2") and not t.known("boss", "10.0.0.1")
    clock.now += 100
    assert not t.known("jana", "10.0.0.1")
