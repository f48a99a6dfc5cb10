"""The booking and waiting-list rules (broker.domain.bookings), pure: half-open spans, wall-clock
input across both DST nights, opening hours, free tables and alternatives, the walk-in overrun and
the prepaid cap, no-shows and deposits, phone numbers, the waiting list's order and wait."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.domain import bookings as b
from broker.domain.dates import DateRefused
from broker.domain.schedule import opening_periods
from tests.broker.domain.test_tariffs import LAVOS

TZ = LAVOS.tz
EVENING = datetime(2026, 12, 4, 16, 0, tzinfo=TZ).astimezone(UTC)  # a Friday's opening
POOL = [t for t in LAVOS.tables if t.kind.value == "pool"]


def at(hhmm: str, day: date = date(2026, 12, 4)) -> datetime:
    return b.local_time(day, b.parse_hhmm(hhmm), TZ)


def span(a: str, z: str, day: date = date(2026, 12, 4)) -> b.Span:
    return b.local_span(day, b.parse_hhmm(a), b.parse_hhmm(z), TZ)


# --- spans ---------------------------------------------------------------------------------------


def test_back_to_back_bookings_do_not_overlap_but_one_minute_more_does() -> None:
    first, second = span("20:00", "22:00"), span("22:00", "23:00")
    assert not first.overlaps(second) and not second.overlaps(first)
    assert first.overlaps(span("21:59", "23:00"))
    assert first.overlaps(span("19:00", "20:01"))
    assert not first.overlaps(span("18:00", "20:00"))


@pytest.mark.parametrize(
    ("day", "start", "end", "hours"),
    [
        (date(2026, 10, 24), "23:00", "04:00", 6),  # the autumn night: 02:00-03:00 twice
        (date(2026, 3, 28), "23:00", "04:00", 4),  # the spring night: 02:00-03:00 never
        (date(2026, 12, 4), "23:00", "04:00", 5),
        (date(2026, 10, 24), "20:00", "22:00", 2),
    ],
)
def test_a_span_typed_on_the_wall_clock_is_as_long_as_the_wall_clock_says(day: Any, start: Any, end: Any, hours: Any) -> None:
    s = span(start, end, day)
    assert s.end - s.start == timedelta(hours=hours)
    assert s.start.astimezone(TZ).strftime("%H:%M") == start and s.end.astimezone(TZ).strftime("%H:%M") == end


def test_a_time_the_spring_night_skips_is_refused_and_the_doubled_one_is_its_first() -> None:
    with pytest.raises(DateRefused, match="does not exist"):  # the hall's one DST rule (broker.domain.dates)
        b.local_time(date(2026, 3, 29), time(2, 30), TZ)
    first = b.local_time(date(2026, 10, 25), time(2, 30), TZ)
    assert first == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # 02:30 CEST, not CET


def test_a_length_in_minutes_is_real_time_across_the_autumn_night() -> None:
    s = b.span_for(date(2026, 10, 25), time(1, 0), 180, TZ)
    assert s.minutes == 180
    assert s.end.astimezone(TZ).strftime("%H:%M") == "03:00"  # 01:00 CEST + 3 h = 03:00 CET


@pytest.mark.parametrize(
    ("typed", "hhmm"), [("20:00", "20:00"), ("20.30", "20:30"), ("2015", "20:15"), ("9", "09:00"), (" 7:05 ", "07:05")]
)
def test_times_as_staff_type_them(typed: Any, hhmm: Any) -> None:
    assert b.parse_hhmm(typed).strftime("%H:%M") == hhmm


@pytest.mark.parametrize("typed", ["", "24:00", "20:60", "8pm", "20:00:00", "２０:００"])
def test_what_is_not_a_time_is_refused(typed: Any) -> None:
    with pytest.raises(DateRefused):
        b.parse_hhmm(typed)


# --- opening hours -------------------------------------------------------------------------------


def test_bookings_lie_within_the_opening_hours_up_to_midnight() -> None:
    assert b.within_hours(LAVOS, span("16:00", "00:00"))
    assert b.within_hours(LAVOS, span("22:00", "00:00"))
    assert not b.within_hours(LAVOS, span("15:00", "17:00"))
    assert not b.within_hours(LAVOS, span("23:00", "01:00"))
    assert b.hours_text(LAVOS, span("23:00", "01:00")) == "16:00–00:00"


def test_opening_periods_of_a_window() -> None:
    periods = opening_periods(LAVOS, at("12:00"), at("12:00", date(2026, 12, 6)))
    assert [p[0].astimezone(TZ).strftime("%d %H:%M") for p in periods] == ["04 16:00", "05 16:00"]


# --- free tables, alternatives, the walk-in, the prepaid cap ------------------------------------------


def test_free_tables_of_a_kind_and_the_alternatives_to_a_taken_one() -> None:
    claims = [b.Claim("pool-04", span("20:00", "22:00"), "booking", 1), b.Claim("pool-05", span("21:00", "23:00"), "block", 2)]
    free = b.free_tables(LAVOS.tables, "pool9", span("20:30", "21:30"), claims, exclude=["pool-04"])
    assert [t.id for t in free] == ["pool-01", "pool-02", "pool-03", "pool-06", "pool-07", "pool-08"]
    assert [t.id for t in b.free_tables(LAVOS.tables, "pool8", span("20:30", "21:30"), claims)] == ["pool-09", "pool-10"]
    assert [t.id for t in b.free_tables(LAVOS.tables, "carom", span("20:30", "21:30"), claims)] == ["carom-01"]
    assert len(b.free_tables(LAVOS.tables, "pool", span("20:30", "21:30"), claims)) == 8
    assert str(b.names(free[:2])) == "Pool 1, Pool 2"
    assert b.clashes("pool-04", span("21:00", "23:00"), claims, ignore=1) == []  # its own move


def test_a_walk_in_before_a_booking_is_told_how_long_it_would_overrun_and_prepaid_stops_at_it() -> None:
    claim = b.Claim("pool-04", span("20:00", "22:00"), "booking", 1)
    now = at("19:15")
    assert b.next_claim("pool-04", now, [claim]) == claim
    assert b.overrun_minutes(now, 60, claim.span.start) == 15
    assert b.overrun_minutes(now, 45, claim.span.start) == 0
    assert b.prepaid_cap(now, claim) == 45
    assert b.prepaid_cap(at("20:05"), claim) == 0  # due already: nothing
    assert b.prepaid_cap(now, None) is None
    assert b.next_claim("pool-04", at("22:00"), [claim]) is None


def test_no_show_due_and_deposits() -> None:
    assert b.no_show_due(at("20:00"), 15) == at("20:15")
    assert not b.deposit_needed(1, 2) and b.deposit_needed(2, 2) and not b.deposit_needed(9, 0)


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("0903 123 456", "+421903123456"),
        ("+421 903 123 456", "+421903123456"),
        ("00421903123456", "+421903123456"),
        ("0903/123-456", "+421903123456"),
        ("+420 601 234 567", "+420601234567"),
        ("", None),
    ],
)
def test_phone_numbers_as_staff_type_them(typed: Any, stored: Any) -> None:
    assert b.normalise_phone(typed) == stored


@pytest.mark.parametrize("typed", ["123", "call me", "+0903123456", "0903 123 456 789 012 34"])
def test_what_is_not_a_phone_number_is_refused(typed: Any) -> None:
    with pytest.raises(b.BookingRefused):
        b.normalise_phone(typed)


def test_a_phone_number_is_shown_in_groups() -> None:
    assert b.phone_shown("+421903123456") == "+421 903 123 456"


# --- availability and the day view -------------------------------------------------------------


def test_availability_of_the_carom_on_an_evening_with_a_booking() -> None:
    claims = [b.Claim("carom-01", span("18:00", "20:00"), "booking", 1)]
    [carom] = b.availability(LAVOS, "carom", b.Span(at("00:00"), at("00:00", date(2026, 12, 5))), claims)
    assert [(s.start.astimezone(TZ).strftime("%H:%M"), s.end.astimezone(TZ).strftime("%H:%M")) for s in carom.free] == [
        ("16:00", "18:00"),
        ("20:00", "00:00"),
    ]
    [later] = b.availability(LAVOS, "carom", b.Span(at("00:00"), at("00:00", date(2026, 12, 5))), claims, now=at("21:00"))
    assert [s.start.astimezone(TZ).strftime("%H:%M") for s in later.free] == ["21:00"]


def test_the_day_view_row_of_a_table() -> None:
    claims = [b.Claim("pool-01", span("17:00", "18:00"), "booking", 1)]
    cells = b.grid("pool-01", span("16:00", "19:00"), 30, claims)
    assert [c.claim is not None for c in cells] == [False, False, True, True, False, False]


@given(
    st.lists(st.tuples(st.integers(0, 47), st.integers(1, 12)), max_size=12),
)
def test_free_and_taken_spans_cover_the_period_exactly_once(pieces: Any) -> None:
    period = b.Span(EVENING, EVENING + timedelta(hours=8))
    taken = [b.Span(EVENING + timedelta(minutes=10 * s), EVENING + timedelta(minutes=10 * (s + n))) for s, n in pieces]
    free = b.free_spans(period, taken)
    for f in free:
        assert period.start <= f.start < f.end <= period.end
        assert not any(f.overlaps(t) for t in taken)
    covered = set()
    for minute in range(0, 8 * 60, 5):
        t = EVENING + timedelta(minutes=minute)
        in_free = any(f.contains(t) for f in free)
        in_taken = any(x.contains(t) for x in taken)
        assert in_free != in_taken
        covered.add(in_free)


# --- whatever the order of requests, no two accepted bookings overlap on a table -------------------

REQUEST = st.tuples(st.sampled_from(["pool-01", "pool-02", "carom-01"]), st.integers(0, 15), st.integers(1, 8))


@given(st.lists(REQUEST, max_size=30), st.randoms())
def test_no_two_accepted_bookings_overlap_on_a_table_whatever_the_order(requests: Any, rnd: Any) -> None:
    """The writer accepts a request when nothing holds its table then (clashes is empty); in any
    order of arrival the accepted ones never overlap, and back-to-back ones are both taken."""
    order = list(range(len(requests)))
    rnd.shuffle(order)
    accepted: list[b.Claim] = []
    for n in order:
        table, start, length = requests[n]
        s = b.Span(EVENING + timedelta(minutes=30 * start), EVENING + timedelta(minutes=30 * (start + length)))
        if not b.clashes(table, s, accepted):
            accepted.append(b.Claim(table, s, "booking", n))
    for x in accepted:
        for y in accepted:
            if x is not y and x.table == y.table:
                assert not x.span.overlaps(y.span)
    # Each refused request clashed with an accepted one: nothing is refused for no reason.
    for n, (table, start, length) in enumerate(requests):
        s = b.Span(EVENING + timedelta(minutes=30 * start), EVENING + timedelta(minutes=30 * (start + length)))
        assert any(c.ref == n for c in accepted) or b.clashes(table, s, accepted)


# --- the waiting list ---------------------------------------------------------------------------


def party(n: int, kind: str = "pool", minute: int = 0, **kw: Any) -> b.Party:
    return b.Party(n, kind, 2, EVENING + timedelta(minutes=minute), **kw)


def test_a_free_table_goes_to_the_first_fitting_party_in_the_order_they_came() -> None:
    spec = LAVOS.table("pool-09")  # an 8-ft pool table
    parties = [party(3, "carom", 0), party(1, "pool9", 1), party(2, "pool", 2), party(4, "pool8", 3)]
    assert b.next_party(parties, spec) == parties[2]
    assert b.next_party([party(2, "pool", 2, offered_table="pool-01"), parties[3]], spec) == parties[3]
    assert b.next_party([party(2, "pool", passed_table="pool-09")], spec) is None
    assert b.next_party([party(2, "pool", passed_table="pool-09")], LAVOS.table("pool-01")) is not None
    # An offer of it that lapsed (nobody answered): the others first, then the same party again.
    lapsed = party(1, "pool", 0, lapsed_table="pool-09")
    assert b.next_party([lapsed, party(2, "pool", 1)], spec) == party(2, "pool", 1)
    assert b.next_party([lapsed, party(2, "pool", 1, passed_table="pool-09")], spec) == lapsed


def test_the_estimated_wait_comes_from_the_running_and_prepaid_games() -> None:
    now = EVENING + timedelta(hours=2)
    carom = LAVOS.table("carom-01")
    tables = [
        b.TableNow(
            LAVOS.table("pool-01"), b.expected_free(now, started_at=now - timedelta(minutes=50), prepaid_until=None, walk_in_min=60)
        ),
        b.TableNow(LAVOS.table("pool-02"), b.expected_free(now, started_at=now, prepaid_until=now + timedelta(minutes=30), walk_in_min=60)),
        b.TableNow(carom, b.expected_free(now, started_at=None, prepaid_until=None, walk_in_min=60)),
    ]
    waits = b.estimated_waits([party(1, "pool9"), party(2, "pool9", 1), party(3, "carom", 2), party(4, "pool8", 3)], tables, now, 60)
    assert waits == {1: 10, 2: 30, 3: 0}  # pool-01 ends its usual hour in 10 min, pool-02's prepaid in 30; no 8-ft table here


def test_a_booking_pushes_the_expected_free_time_past_it() -> None:
    now = EVENING
    booking = b.Claim("pool-01", b.Span(now + timedelta(minutes=30), now + timedelta(hours=2)), "booking", 1)
    assert b.expected_free(now, started_at=None, prepaid_until=None, walk_in_min=60, claims=[booking]) == booking.span.end
    later = b.Claim("pool-01", b.Span(now + timedelta(hours=3), now + timedelta(hours=4)), "booking", 2)
    assert b.expected_free(now, started_at=None, prepaid_until=None, walk_in_min=60, claims=[later]) == now


@given(st.lists(st.tuples(st.sampled_from(["pool", "pool9", "carom"]), st.integers(0, 100)), max_size=15))
def test_a_party_never_waits_less_than_one_that_came_before_it_for_the_same_kind(joins: Any) -> None:
    now = EVENING + timedelta(hours=1)
    parties = [party(n, kind, minute) for n, (kind, minute) in enumerate(joins)]
    tables = [b.TableNow(t, now + timedelta(minutes=7 * n)) for n, t in enumerate(LAVOS.tables) if b.bookable(t)]
    waits = b.estimated_waits(parties, tables, now, 60)
    ordered = sorted(parties, key=lambda p: (p.joined_at, p.id))
    for i, p in enumerate(ordered):
        for q in ordered[i + 1 :]:
            if q.kind == p.kind:
                assert waits[q.id] >= waits[p.id]
