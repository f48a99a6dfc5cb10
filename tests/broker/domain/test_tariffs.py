"""Which rate applies when: card eligibility, fee year, time bands across DST, training hours."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from broker.domain.tariffs import MemberSnapshot, RateContext, as_utc, calendar_year, rate_at, split, tariff_window
from broker.domain.venue import Billing, TimeBand, Venue, load_venue

LAVOS = load_venue(Path(__file__).resolve().parents[3] / "deploy" / "venues" / "lavos.toml")
BRATISLAVA = ZoneInfo("Europe/Bratislava")
PAID = MemberSnapshot(7, "Ambra Tomáš", fee_paid=True, year=2026)
UNPAID = MemberSnapshot(8, "Zadražil Miro", fee_paid=False, year=2026)


def bratislava(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    """Wall-clock time in the club, as an aware UTC instant."""
    return datetime(year, month, day, hour, minute, second, tzinfo=BRATISLAVA).astimezone(UTC)


def venue_with(bands: Sequence[dict[str, Any]] = (), **billing: object) -> Venue:
    """LAVOS with extra time bands and billing settings, validated like a venue file."""
    return LAVOS.model_copy(
        update={
            "bands": [TimeBand(**b) for b in bands],
            "billing": Billing(**{**LAVOS.billing.model_dump(), **billing}),
        }
    )


def test_card_rate_only_on_eligible_table_with_paid_fee() -> None:
    at = bratislava(2026, 11, 30, 17, 0)
    assert rate_at(LAVOS, RateContext("pool-05", member=PAID), at).rate_cents_per_hour == 400
    r = rate_at(LAVOS, RateContext("pool-01", member=PAID), at)
    assert (r.tariff_id, r.rate_cents_per_hour, r.reason) == ("standard", 600, "card_table_not_eligible")
    r = rate_at(LAVOS, RateContext("pool-05", member=UNPAID), at)
    assert (r.tariff_id, r.rate_cents_per_hour, r.reason) == ("standard", 600, "card_unpaid")
    assert rate_at(LAVOS, RateContext("pool-05"), at).reason == "standard"


def test_fee_year_is_the_venues_calendar_year() -> None:
    # 23:30 UTC on New Year's Eve is already 00:30 on 1 January in Bratislava.
    assert calendar_year(datetime(2026, 12, 31, 23, 30, tzinfo=UTC), LAVOS) == 2027
    ctx = RateContext("pool-05", member=PAID)
    segs = split(LAVOS, ctx, bratislava(2026, 12, 31, 23, 0), bratislava(2027, 1, 1, 1, 0))
    assert [(s.start, s.reason) for s in segs] == [
        (bratislava(2026, 12, 31, 23, 0), "club_card"),
        (bratislava(2027, 1, 1, 0, 0), "card_unpaid"),
    ]


def test_snapshot_without_year_holds_for_the_whole_session() -> None:
    ctx = RateContext("pool-05", member=MemberSnapshot(7, "A", fee_paid=True))
    assert len(split(LAVOS, ctx, bratislava(2026, 12, 31, 23, 0), bratislava(2027, 1, 1, 1, 0))) == 1


HAPPY = {
    "tariff": "standard",
    "days": ["mon", "tue", "wed", "thu", "fri"],
    "start": "16:00",
    "end": "18:00",
    "rate_cents_per_hour": 450,
    "name": "happy",
}


@pytest.mark.parametrize(
    "day, utc_start",
    [
        ((2026, 3, 27), datetime(2026, 3, 27, 15, 0, tzinfo=UTC)),  # Friday, CET (+1)
        ((2026, 3, 30), datetime(2026, 3, 30, 14, 0, tzinfo=UTC)),  # Monday after the change, CEST (+2)
    ],
)
def test_band_follows_local_time_across_dst(day: tuple[int, int, int], utc_start: Any) -> None:
    venue = venue_with([HAPPY])
    segs = split(venue, RateContext("pool-01"), bratislava(*day, 15, 0), bratislava(*day, 19, 0))
    assert [(s.rate_cents_per_hour, s.reason) for s in segs] == [(600, "standard"), (450, "band:happy"), (600, "standard")]
    assert segs[1].start == utc_start and segs[1].duration == timedelta(hours=2)


def test_overnight_band_over_the_short_night_lasts_five_real_hours() -> None:
    # 2026-03-29 02:00 CET -> 03:00 CEST: 00:00-06:00 local is 5 hours of real time.
    night = {"tariff": "standard", "days": ["sat"], "start": "00:00", "end": "06:00", "rate_cents_per_hour": 300, "name": "noc"}
    sunday = {**night, "days": ["sun"]}
    venue = venue_with([night, sunday])
    segs = split(venue, RateContext("pool-01"), bratislava(2026, 3, 28, 23, 0), bratislava(2026, 3, 29, 7, 0))
    assert [(s.rate_cents_per_hour, s.duration) for s in segs] == [
        (600, timedelta(hours=1)),
        (300, timedelta(hours=5)),
        (600, timedelta(hours=1)),
    ]


def test_band_past_midnight_belongs_to_the_day_it_starts() -> None:
    late = {"tariff": "standard", "days": ["fri"], "start": "22:00", "end": "02:00", "rate_cents_per_hour": 500, "name": "late"}
    venue = venue_with([late])
    assert rate_at(venue, RateContext("pool-01"), bratislava(2026, 11, 28, 1, 0)).reason == "band:late"  # Sat 01:00
    assert rate_at(venue, RateContext("pool-01"), bratislava(2026, 11, 29, 1, 0)).reason == "standard"  # Sun 01:00


def test_first_listed_band_wins_an_overlap() -> None:
    cheap = {**HAPPY, "rate_cents_per_hour": 300, "name": "cheap"}
    venue = venue_with([HAPPY, cheap])
    assert rate_at(venue, RateContext("pool-01"), bratislava(2026, 11, 30, 17, 0)).reason == "band:happy"


def test_band_of_another_tariff_does_not_touch_this_one() -> None:
    venue = venue_with([{**HAPPY, "tariff": "club_card", "rate_cents_per_hour": 300}])
    assert rate_at(venue, RateContext("pool-01"), bratislava(2026, 11, 30, 17, 0)).rate_cents_per_hour == 600
    assert rate_at(venue, RateContext("pool-05", member=PAID), bratislava(2026, 11, 30, 17, 0)).rate_cents_per_hour == 300


def test_training_window_is_local_15_to_19() -> None:
    training = LAVOS.tariff("training")
    assert tariff_window(training, bratislava(2026, 7, 1, 14, 59), LAVOS) is None
    assert tariff_window(training, bratislava(2026, 7, 1, 15, 0), LAVOS) == (bratislava(2026, 7, 1, 15, 0), bratislava(2026, 7, 1, 19, 0))
    assert tariff_window(training, bratislava(2026, 7, 1, 19, 0), LAVOS) is None
    assert tariff_window(LAVOS.tariff("standard"), bratislava(2026, 7, 1, 12, 0), LAVOS) is None


def test_requested_tariff_ends_at_its_hours_and_falls_back_to_the_open_rate() -> None:
    end = bratislava(2026, 7, 1, 19, 0)
    ctx = RateContext("pool-05", tariff="training", tariff_until=end, member=PAID)
    segs = split(LAVOS, ctx, bratislava(2026, 7, 1, 18, 0), bratislava(2026, 7, 1, 20, 0))
    assert [(s.tariff_id, s.reason, s.start) for s in segs] == [
        ("training", "training", bratislava(2026, 7, 1, 18, 0)),
        ("club_card", "club_card", end),
    ]
    segs = split(LAVOS, RateContext("pool-01", "training", end), bratislava(2026, 7, 1, 18, 0), bratislava(2026, 7, 1, 20, 0))
    assert [s.reason for s in segs] == ["training", "training_hours_ended"]


def test_split_merges_across_local_midnight_and_skips_empty() -> None:
    ctx = RateContext("pool-01")
    assert len(split(venue_with([HAPPY]), ctx, bratislava(2026, 11, 30, 20, 0), bratislava(2026, 12, 1, 2, 0))) == 1
    assert split(LAVOS, ctx, bratislava(2026, 11, 30, 20, 0), bratislava(2026, 11, 30, 20, 0)) == []


def test_naive_and_reversed_times_refused() -> None:
    with pytest.raises(ValueError, match="no timezone"):
        as_utc(datetime(2026, 1, 1, 12, 0))
    with pytest.raises(ValueError, match="must be a datetime"):
        as_utc("2026-01-01T12:00:00Z")
    with pytest.raises(ValueError, match="before it starts"):
        split(LAVOS, RateContext("pool-01"), bratislava(2026, 1, 1, 18, 0), bratislava(2026, 1, 1, 17, 0))
