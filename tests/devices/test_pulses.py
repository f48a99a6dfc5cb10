"""The pulse filter, driven with explicit timestamps (seconds)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from devices.pulses import Fault, Pulse, PulseFilter
from tests.support.matching import near

MS = 1e-3


def feed(f: PulseFilter, edges: Any, until: float | None = None) -> list[Any]:
    """Feed (t, broken) edges, then advance to `until` (default: far past the last edge)."""
    out: list[Any] = []
    for t, broken in edges:
        out += f.edge(t, broken)
    last = max((t for t, _ in edges), default=0.0)
    out += f.tick(last + 1000.0 if until is None else until)
    return out


def pulse_edges(start: float, length_ms: float, chatter_in: Any = (), chatter_out: Any = ()) -> list[tuple[float, bool]]:
    """One break of `length_ms`; chatter_* are offsets (ms) of extra toggles after each edge."""
    end = start + length_ms * MS
    edges = [(start, True)]
    state = True
    for off in chatter_in:
        state = not state
        edges.append((start + off * MS, state))
    if not state:
        edges.append((start + (chatter_in[-1] + 0.1) * MS, True))
    edges.append((end, False))
    state = False
    for off in chatter_out:
        state = not state
        edges.append((end + off * MS, state))
    if state:
        edges.append((end + (chatter_out[-1] + 0.1) * MS, False))
    return edges


def pulses(out: Any) -> list[Pulse]:
    return [o for o in out if isinstance(o, Pulse)]


def faults(out: Any) -> list[Fault]:
    return [o for o in out if isinstance(o, Fault)]


# ---------------------------------------------------------------------------- single rules


def test_clean_pulse_is_reported_once_with_its_length() -> None:
    f = PulseFilter()
    out = feed(f, [(1.0, True), (1.030, False)])
    assert len(out) == 1 and out[0].start == 1.0
    assert out[0].duration_ms == pytest.approx(30.0)


def test_pulse_is_emitted_only_after_the_merge_gap() -> None:
    f = PulseFilter(merge_gap_ms=5.0)
    assert f.edge(1.0, True) == []
    assert f.edge(1.020, False) == []
    assert f.next_deadline() == pytest.approx(1.025)
    assert f.tick(1.024) == []
    out = f.tick(1.025)
    assert pulses(out) == [Pulse(1.0, near(20.0))]
    assert f.next_deadline() is None


def test_rebreak_inside_merge_gap_is_the_same_pulse() -> None:
    f = PulseFilter(merge_gap_ms=5.0)
    out = feed(f, [(0.0, True), (0.010, False), (0.014, True), (0.040, False)])
    assert pulses(out) == [Pulse(0.0, near(40.0))]


def test_rebreak_after_merge_gap_is_a_new_pulse() -> None:
    f = PulseFilter(merge_gap_ms=5.0)
    out = feed(f, [(0.0, True), (0.010, False), (0.016, True), (0.040, False)])
    assert [round(p.duration_ms, 6) for p in pulses(out)] == [10.0, 24.0]


def test_rebreak_exactly_at_the_gap_starts_a_new_pulse() -> None:
    # "within merge_gap" is strict: the old pulse is due at release + gap and is emitted first.
    f = PulseFilter(merge_gap_ms=5.0, min_pulse_ms=0)
    out = feed(f, [(0.0, True), (0.010, False), (0.010 + 0.005, True), (0.020, False)])
    assert len(pulses(out)) == 2


def test_chatter_around_both_edges_is_merged() -> None:
    f = PulseFilter()
    edges = pulse_edges(2.0, 25.0, chatter_in=(0.4, 0.9, 1.5, 2.2), chatter_out=(0.3, 1.1, 2.0, 2.9))
    out = feed(f, edges)
    assert len(out) == 1
    assert out[0].start == 2.0
    assert 25.0 <= out[0].duration_ms <= 28.0


def test_glitch_shorter_than_minimum_is_dropped() -> None:
    f = PulseFilter(min_pulse_ms=5.0)
    assert feed(f, [(0.0, True), (0.0049, False)]) == []


def test_pulse_of_exactly_the_minimum_counts() -> None:
    f = PulseFilter(min_pulse_ms=5.0)
    assert len(pulses(feed(f, [(1.0, True), (1.0 + 0.0051, False)]))) == 1


def test_glitches_chattering_together_count_by_merged_length() -> None:
    # Three 1 ms blips 2 ms apart merge into one 7 ms pulse: longer than the 5 ms minimum.
    f = PulseFilter(min_pulse_ms=5.0, merge_gap_ms=5.0)
    edges = [(0.000, True), (0.001, False), (0.003, True), (0.004, False), (0.006, True), (0.007, False)]
    assert pulses(feed(f, edges)) == [Pulse(0.0, near(7.0))]


def test_zero_merge_gap_emits_at_the_release() -> None:
    f = PulseFilter(merge_gap_ms=0.0)
    f.edge(0.0, True)
    assert pulses(f.edge(0.020, False)) == [Pulse(0.0, near(20.0))]


def test_stuck_beam_faults_once_then_recovers_and_is_not_a_pulse() -> None:
    f = PulseFilter(stuck_after_s=10.0)
    assert f.edge(5.0, True) == []
    assert f.next_deadline() == 15.0
    assert f.tick(14.999) == []
    assert f.tick(15.5) == [Fault("stuck", 15.0)]
    assert f.tick(100.0) == []
    assert f.next_deadline() is None
    assert f.edge(120.0, False) == []
    assert feed(f, []) == [Fault("recovered", 120.0)]


def test_stuck_is_found_by_the_release_edge_even_without_ticks() -> None:
    f = PulseFilter(stuck_after_s=10.0)
    out = feed(f, [(0.0, True), (12.0, False)])
    assert out == [Fault("stuck", 10.0), Fault("recovered", 12.0)]


def test_stuck_counts_from_the_first_break_across_merged_chatter() -> None:
    f = PulseFilter(stuck_after_s=1.0, merge_gap_ms=5.0)
    edges = [(0.0, True)]
    t = 0.05
    while t < 1.5:  # 1 ms drop-outs every 100 ms: still one continuous break
        t += 0.1
        edges += [(t, False), (t + 0.001, True)]
    out = feed(f, [*edges, (2.0, False)])
    assert out == [Fault("stuck", near(1.0)), Fault("recovered", 2.0)]


def test_stuck_is_not_declared_while_the_beam_is_seen_clear() -> None:
    # The deadline passes inside a merge gap; the beam is only known broken again at the re-break.
    f = PulseFilter(stuck_after_s=1.0, merge_gap_ms=5.0)
    out = feed(f, [(0.0, True), (0.999, False), (1.002, True), (1.5, False)])
    assert out == [Fault("stuck", 1.002), Fault("recovered", 1.5)]


def test_stuck_beam_that_chatters_on_release_recovers_once() -> None:
    f = PulseFilter(stuck_after_s=1.0)
    out = feed(f, pulse_edges(0.0, 3000.0, chatter_out=(0.5, 1.0, 1.7, 2.4)))
    assert out == [Fault("stuck", 1.0), Fault("recovered", near(3.0024))]


def toggles(start: float, count: int, step: float) -> list[tuple[float, bool]]:
    """`count` edges `step` s apart starting broken: a chattering contact."""
    return [(start + i * step, i % 2 == 0) for i in range(count)]


def test_chatter_storm_faults_once_suppresses_pulses_and_recovers_after_a_calm_window() -> None:
    f = PulseFilter(chatter_window_s=1.0, chatter_max_edges=20)
    storm = toggles(10.0, 40, 0.001)  # 40 edges in 40 ms, ends clear
    out = []
    for t, b in storm:
        out += f.edge(t, b)
    assert out == [Fault("chatter", near(10.0 + 20 * 0.001))]
    last = storm[-1][0]
    assert f.next_deadline() == pytest.approx(last + 1.0)
    assert f.tick(last + 0.999) == []
    assert f.tick(last + 1.0) == [Fault("recovered", near(last + 1.0))]
    # back to normal: a real drop counts again
    assert len(pulses(feed(f, [(20.0, True), (20.030, False)]))) == 1


def test_edges_inside_the_limit_are_not_a_storm() -> None:
    f = PulseFilter(chatter_window_s=1.0, chatter_max_edges=20)
    out = feed(f, toggles(0.0, 20, 0.001))  # exactly the limit: 10 short blips, merged into one
    assert faults(out) == []
    assert len(pulses(out)) == 1


def test_storm_needs_the_edges_inside_one_window() -> None:
    f = PulseFilter(chatter_window_s=1.0, chatter_max_edges=20, merge_gap_ms=5.0)
    out = feed(f, toggles(0.0, 200, 0.100))  # 10 edges per second: a steady stream of drops
    assert faults(out) == []
    assert len(pulses(out)) == 100


def test_break_held_through_the_end_of_a_storm_is_not_counted() -> None:
    f = PulseFilter(chatter_window_s=1.0, chatter_max_edges=20)
    out = feed(f, [*toggles(0.0, 41, 0.001), (3.0, False)])  # the storm ends broken
    assert out == [Fault("chatter", near(0.020)), Fault("recovered", near(1.040))]


def test_storm_supersedes_stuck_and_one_recovered_ends_both() -> None:
    f = PulseFilter(stuck_after_s=1.0, chatter_window_s=1.0, chatter_max_edges=20)
    out = feed(f, [(0.0, True), *toggles(5.0, 22, 0.001)[1:], (5.5, False)])
    assert [x.kind for x in out] == ["stuck", "chatter", "recovered"]


def test_duplicate_edges_are_ignored() -> None:
    f = PulseFilter()
    out = feed(f, [(0.0, False), (1.0, True), (1.010, True), (1.030, False), (1.031, False)])
    assert pulses(out) == [Pulse(1.0, near(30.0))]
    assert f.broken is False


def test_out_of_order_times_are_clamped_to_the_latest_seen() -> None:
    f = PulseFilter()
    f.tick(5.0)
    f.edge(4.0, True)  # taken as 5.0
    out = feed(f, [(5.020, False)])
    assert pulses(out) == [Pulse(5.0, near(20.0))]
    assert f.tick(1.0) == []  # ticking back in time does nothing


def test_non_finite_time_is_a_caller_bug() -> None:
    f = PulseFilter()
    with pytest.raises(ValueError, match="finite"):
        f.edge(math.nan, True)


def test_broken_reflects_the_last_edge() -> None:
    f = PulseFilter()
    assert f.broken is False
    f.edge(0.0, True)
    assert f.broken is True


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        PulseFilter(stuck_after_s=0)


# ---------------------------------------------------------------------------- properties


@st.composite
def chattered_drops(draw: Any) -> tuple[list[tuple[float, bool]], list[Any]]:
    """N drops of 10-60 ms, 1-3 ms of chatter around each edge, 50-500 ms apart."""
    n = draw(st.integers(0, 15))
    t = draw(st.floats(0, 1000))
    edges, lengths = [], []
    for _ in range(n):
        length = draw(st.floats(10.0, 60.0))
        chatter = st.lists(st.floats(0.05, 3.0), max_size=6, unique=True).map(sorted)
        edges += pulse_edges(t, length, draw(chatter), draw(chatter))
        lengths.append(length)
        t += length * MS + draw(st.floats(0.050, 0.500))
    return edges, lengths


@settings(deadline=None)
@given(chattered_drops())
def test_each_chattered_drop_counts_exactly_once(case: Any) -> None:
    edges, lengths = case
    out = feed(PulseFilter(), edges)
    got = pulses(out)
    assert faults(out) == []
    assert len(got) == len(lengths)
    for p, length in zip(got, lengths):
        # the chatter after the release can only lengthen a pulse, by at most 3.1 ms
        assert length - 1e-6 <= p.duration_ms <= length + 3.1 + 1e-6


@st.composite
def glitch(draw: Any) -> list[tuple[Any, bool]]:
    """Any toggling that starts and ends clear, all inside less than min_pulse_ms."""
    start = draw(st.floats(0, 100))
    offsets = sorted(draw(st.lists(st.floats(0, 4.9), min_size=1, max_size=12)))
    edges = [(start + o * MS, i % 2 == 0) for i, o in enumerate(offsets)]
    if edges[-1][1]:
        edges.append((start + 4.9 * MS, False))
    return edges


@settings(deadline=None)
@given(glitch())
def test_a_glitch_shorter_than_the_minimum_never_yields_a_pulse(edges: Any) -> None:
    assert pulses(feed(PulseFilter(min_pulse_ms=5.0, merge_gap_ms=5.0), edges)) == []


any_edges = st.lists(st.tuples(st.floats(0, 30), st.booleans()), max_size=60).map(lambda es: sorted(es, key=lambda e: e[0]))
# Small windows and limits, so that storms, stuck beams and merges all happen within 30 s.
filter_params = st.fixed_dictionaries(
    {
        "min_pulse_ms": st.sampled_from([0.0, 5.0, 20.0]),
        "merge_gap_ms": st.sampled_from([0.0, 5.0, 50.0]),
        "stuck_after_s": st.sampled_from([0.5, 10.0]),
        "chatter_window_s": st.sampled_from([0.1, 1.0]),
        "chatter_max_edges": st.sampled_from([3, 200]),
    }
)


@settings(deadline=None)
@given(filter_params, any_edges, st.lists(st.floats(0, 31), max_size=40))
def test_output_does_not_depend_on_how_often_tick_is_called(params: Any, edges: Any, ticks: Any) -> None:
    reference = feed(PulseFilter(**params), edges, until=60.0)

    f = PulseFilter(**params)
    events = sorted([(t, 0, b) for t, b in edges] + [(t, 1, None) for t in ticks], key=lambda e: e[:2])
    out = []
    for t, is_tick, b in events:
        if is_tick:
            out += f.tick(t)
            deadline = f.next_deadline()
            assert deadline is None or deadline > t  # everything due was emitted
        else:
            out += f.edge(t, b)
    out += f.tick(60.0)
    assert out == reference


@settings(deadline=None)
@given(filter_params, st.lists(st.tuples(st.floats(-5, 30), st.booleans()), max_size=60))
def test_arbitrary_edges_never_crash_and_faults_pair_up(params: Any, edges: Any) -> None:
    f = PulseFilter(**params)
    out = []
    for t, b in edges:  # unsorted: out-of-order times included
        out += f.edge(t, b)
    out += f.tick(100.0)
    assert len(pulses(out)) <= sum(1 for _, b in edges if b)
    assert all(p.duration_ms >= params["min_pulse_ms"] for p in pulses(out))
    faulted = False
    for x in faults(out):
        if x.kind == "recovered":
            assert faulted, out
            faulted = False
        else:
            # a storm may supersede a stuck beam, but nothing repeats itself unrecovered
            assert not faulted or x.kind == "chatter", out
            faulted = True
    # long after the last edge only a beam still held broken is still faulted (stuck)
    assert faulted == f.broken
