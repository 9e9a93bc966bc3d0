"""The seed schedulers' dynamic programmes equal brute force on small random instances."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from socsim.sched.dp import (co_schedule, co_schedule_brute, min_energy_brute, min_energy_sequence,
                             placement_time, sequence_cost)

lat = st.floats(min_value=0.0, max_value=50.0, allow_nan=False)
dsp_lat = st.one_of(lat, st.just(math.inf))


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 9))
    l_cpu = draw(st.lists(lat, min_size=n, max_size=n))
    l_dsp = draw(st.lists(dsp_lat, min_size=n, max_size=n))
    per_boundary = draw(st.booleans())
    switch = draw(st.lists(lat, min_size=n, max_size=n)) if per_boundary else draw(lat)
    start = draw(st.sampled_from([None, "cpu", "dsp"]))
    return l_cpu, l_dsp, switch, start


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_co_schedule_equals_brute_force(g):
    l_cpu, l_dsp, switch, start = g
    p = co_schedule(l_cpu, l_dsp, switch, start)
    ref = co_schedule_brute(l_cpu, l_dsp, switch, start)
    assert p.time_s == pytest.approx(ref, rel=1e-9, abs=1e-9)
    # the backtracked placement achieves the DP's time
    assert placement_time(p.units, l_cpu, l_dsp, switch, start) == pytest.approx(p.time_s, rel=1e-9, abs=1e-9)
    # unsupported ops never land on the DSP
    assert all(u == "cpu" for u, d in zip(p.units, l_dsp) if d == math.inf)


def test_co_schedule_recurrence_by_hand():
    # op 2 cannot run on the DSP; switching twice (10 each) costs more than the DSP saves
    p = co_schedule([5, 1, 5], [1, math.inf, 1], 10.0)
    assert p.units == ("cpu", "cpu", "cpu") and p.time_s == 11
    p = co_schedule([50, 1, 50], [1, math.inf, 1], 10.0)
    assert p.units == ("dsp", "cpu", "dsp") and p.time_s == 1 + 10 + 1 + 10 + 1
    assert p.switches == 2
    # the engine starts a batch on the CPU: a first DSP op pays a switch
    assert co_schedule([3], [1], 5.0, start="cpu").units == ("cpu",)
    assert co_schedule([3], [1], 5.0).units == ("dsp",)


@st.composite
def batch_instances(draw):
    n = draw(st.integers(1, 5))
    k = draw(st.integers(1, 4))
    vals = st.floats(min_value=0.1, max_value=10.0, allow_nan=False)
    t = draw(st.lists(st.lists(vals, min_size=k, max_size=k), min_size=1, max_size=1)) * n
    if draw(st.booleans()):  # per-batch costs may differ
        t = draw(st.lists(st.lists(vals, min_size=k, max_size=k), min_size=n, max_size=n))
    e = draw(st.lists(st.lists(vals, min_size=k, max_size=k), min_size=n, max_size=n))
    swt = draw(st.lists(st.lists(st.floats(0, 3), min_size=k, max_size=k), min_size=k, max_size=k))
    swe = draw(st.lists(st.lists(st.floats(0, 3), min_size=k, max_size=k), min_size=k, max_size=k))
    fastest = sum(min(row) for row in t)
    slowest = sum(max(row) for row in t) + 3 * n
    theta = draw(st.floats(min_value=fastest * 0.9, max_value=slowest))
    return t, e, theta, (lambda a, b: swt[a][b]), (lambda a, b: swe[a][b])


@settings(max_examples=300, deadline=None)
@given(batch_instances())
def test_min_energy_equals_brute_force(inst):
    t, e, theta, swt, swe = inst
    got = min_energy_sequence(t, e, theta, swt, swe)
    ref = min_energy_brute(t, e, theta, swt, swe)
    if ref is None:
        assert got is None
        return
    assert got is not None
    assert got.energy_j == pytest.approx(ref, rel=1e-9, abs=1e-9)
    tt, ee = sequence_cost(got.configs, t, e, swt, swe)
    assert tt <= theta * (1 + 1e-12) and ee == pytest.approx(got.energy_j, rel=1e-9)
    assert len(got.configs) == len(t)


def test_min_energy_mixes_two_configurations_under_a_budget():
    # config 0 fast and costly, config 1 slow and cheap; the budget allows 2 slow batches
    t, e = [[1.0, 3.0]] * 4, [[5.0, 1.0]] * 4
    got = min_energy_sequence(t, e, theta_t=8.0, sw_time=0.0, sw_energy=0.0)
    assert sorted(got.configs) == [0, 0, 1, 1] and got.energy_j == 12.0
    # a switch that costs time makes only one change affordable
    got = min_energy_sequence(t, e, theta_t=8.0, sw_time=0.5, sw_energy=0.1)
    assert got.configs in ((0, 0, 0, 1), (1, 0, 0, 0)) or got.configs.count(1) <= 1
    assert got.time_s <= 8.0
    assert min_energy_sequence(t, e, theta_t=3.0) is None


def test_min_energy_thinning_bounds_the_front():
    t = [[1.0 + 0.1 * c for c in range(6)] for _ in range(30)]
    e = [[6.0 - 0.9 * c for c in range(6)] for _ in range(30)]
    got = min_energy_sequence(t, e, theta_t=45.0, sw_time=0.01, sw_energy=0.01, max_front=8)
    assert got is not None and got.time_s <= 45.0 and got.approximate


@settings(max_examples=200, deadline=None)
@given(batch_instances(), st.integers(2, 4))
def test_a_thinned_dp_never_loses_to_one_or_two_runs_of_configurations(inst, keep):
    """max_front makes the DP approximate, but never worse than running one configuration, or one
    and then another, whichever of those meets the budget with the least energy."""
    t, e, theta, swt, swe = inst
    got = min_energy_sequence(t, e, theta, swt, swe, max_front=keep)
    ref = min_energy_brute(t, e, theta, swt, swe)
    assert (got is None) == (ref is None)
    if got is None:
        return
    n, k = len(t), len(t[0])
    runs = [(a,) * m + (b,) * (n - m) for a in range(k) for b in range(k) for m in range(n + 1)]
    costs = [sequence_cost(s, t, e, swt, swe) for s in runs]
    best_runs = min((ee for tt, ee in costs if tt <= theta), default=math.inf)
    assert got.energy_j <= best_runs * (1 + 1e-9) + 1e-9
    assert got.energy_j >= ref * (1 - 1e-9) - 1e-9
    tt, ee = sequence_cost(got.configs, t, e, swt, swe)
    assert tt <= theta * (1 + 1e-12) and ee == pytest.approx(got.energy_j, rel=1e-9)


def test_a_thinned_dp_finds_the_two_run_optimum_of_identical_batches():
    """Identical batches, a budget between two configurations' run times: the optimum runs the
    two in turn with one switch; thinning the fronts to 4 used to lose it."""
    t = [[1.0, 1.3, 1.7, 2.2, 3.0]] * 60
    e = [[5.0, 3.2, 2.5, 2.1, 2.0]] * 60
    exact = min_energy_sequence(t, e, theta_t=100.0, sw_time=0.01, sw_energy=0.05)
    thin = min_energy_sequence(t, e, theta_t=100.0, sw_time=0.01, sw_energy=0.05, max_front=4)
    assert thin.approximate and thin.energy_j == pytest.approx(exact.energy_j, rel=1e-12)
