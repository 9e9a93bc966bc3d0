"""Thermal caps take effect at the governor poll that sets them, also inside a batch, and
everything derived from them follows the frequencies that ran (socsim.engine.sim
``_run_batch``, socsim.engine.template ``map_offset``/``busy_between``)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from socsim.api import prepare
from socsim.engine.context import PlanContext
from socsim.engine.oracle import CostOracle

from engine_runs import SOC, lenet, run

# at 40 C the skin zone (first trip 39 C) trips at the first poll, 0.25 s into the first batch
# (the governor polls on its own clock, every 250 ms from t = 0; sampling every 50 ms puts a row
# of the time series at each poll)
HOT = dict(environment={"ambient_c": 40.0, "charging": False}, output={"trace_batches": 50, "sample_ms": 50})


@pytest.fixture(scope="module")
def hot(tmp_path_factory):
    # batch_size 5120: a batch of ~0.31 s, so the first poll (0.25 s) falls inside batch 0 (at 4096
    # the batch was 0.25 s before the CPU backward slowdown was re-derived, 0.248 s after)
    return run(tmp_path_factory.mktemp("hot"), lenet(batches=8, batch_size=5120, **HOT))


def test_a_cap_set_inside_a_batch_lowers_the_clock_at_that_poll(hot):
    first = next(e for e in hot.events() if e["name"] == "throttle")
    assert first["detail"].startswith("caps (MHz): ")  # the caps, not the frequencies run
    b0 = hot.batches()[0]
    assert b0["start_s"] < first["t_s"] < b0["start_s"] + b0["time_s"]   # decided inside batch 0
    assert first["t_s"] == pytest.approx(0.25, abs=1e-12)                 # at a poll of the governor's clock
    t, mid = hot.column("t_s"), hot.column("cpufreq.mid")
    top = SOC.cluster("mid").max_mhz
    assert mid[0] == top
    assert t[np.argmax(mid < top)] == pytest.approx(first["t_s"], abs=1e-9)   # ... and in effect then


def test_time_throttled_is_the_time_the_clocks_ran_below_their_request(hot):
    # performance governor: the big clusters ask for their top OPP throughout
    capped = (hot.column("cpufreq.mid") < SOC.cluster("mid").max_mhz) | \
             (hot.column("cpufreq.prime") < SOC.cluster("prime").max_mhz)
    ran_capped_s = float((hot.hold_s() * capped).sum())
    assert ran_capped_s > 1.0
    assert hot.summary["thermal"]["time_throttled_s"] == pytest.approx(ran_capped_s, abs=1e-6)


def test_a_split_batch_is_one_batch_of_whole_ops(hot):
    rows = hot.batches()
    assert sum(r["time_s"] for r in rows) == pytest.approx(hot.stats.sim_time_s, rel=1e-12)
    assert sum(r["energy_j"] for r in rows) == pytest.approx(sum(hot.stats.rail_energy_j.values()), rel=1e-12)
    by_batch = defaultdict(lambda: defaultdict(list))
    for o in hot.ops():
        by_batch[o["batch"]][o["track"]].append(o)
    # batch 0 ran at two operating points; its op cut by the cap is one slice, as in batch 1
    assert {k: len(v) for k, v in by_batch[0].items()} == {k: len(v) for k, v in by_batch[1].items()}
    r0 = rows[0]
    for track, slices in by_batch[0].items():
        ends = [s["start_s"] + s["dur_s"] for s in slices]
        assert all(b["start_s"] >= e - 1e-12 for e, b in zip(ends, slices[1:])), track   # no overlap
        assert slices[0]["start_s"] >= r0["start_s"] - 1e-12
        assert ends[-1] <= r0["start_s"] + r0["time_s"] + 1e-12


def test_a_batch_carries_on_at_another_operating_point_from_the_same_point_of_its_work():
    wl, _, sched, _ = prepare(lenet(batch_size=256))
    ctx = PlanContext(SOC, wl, CostOracle(SOC))
    plan = sched.plan(ctx)
    fast = {"little": 300.0, "mid": 2419.2, "prime": 2841.6, "dsp": ctx.dsp_mhz, "gpu": 587.0}
    slow = {**fast, "mid": 1056.0, "prime": 1171.2}
    a, b = ctx.walker.template(plan, fast, False), ctx.walker.template(plan, slow, False)
    assert b.duration_s > a.duration_s
    assert a.map_offset(0.0, b) == 0.0 and a.map_offset(a.duration_s, b) == b.duration_s
    # segment boundaries map to segment boundaries; within a segment its fraction is kept
    np.testing.assert_allclose([a.map_offset(e, b) for e in a.edges_s[1:-1]], b.edges_s[1:-1], rtol=1e-12)
    mid = 0.5 * (a.edges_s[3] + a.edges_s[4])
    assert a.map_offset(mid, b) == pytest.approx(0.5 * (b.edges_s[3] + b.edges_s[4]), rel=1e-12)
    xs = np.linspace(0.0, a.duration_s, 57)
    assert np.all(np.diff([a.map_offset(x, b) for x in xs]) >= 0)
    # busy time of parts of the batch adds up to the whole batch's
    cut = 0.37 * a.duration_s
    parts = [a.busy_between(0.0, cut), a.busy_between(cut, a.duration_s)]
    for unit, v in a.busy_s.items():
        assert parts[0][unit] + parts[1][unit] == pytest.approx(v, rel=1e-12)
        assert 0.0 < parts[0][unit] < v


def test_the_governor_keeps_its_own_clock_whatever_the_sampling(tmp_path, hot):
    """Polls every 250 ms from t = 0 whatever output.sample_ms is: the same decisions at the same
    times, the same frequencies run, the same time throttled (docs/modeling.md, Caps)."""
    odd = run(tmp_path, lenet(batches=8, batch_size=5120, **{**HOT, "output": {"trace_batches": 50, "sample_ms": 170}}))
    throttles = [(e["t_s"], e["detail"]) for e in hot.events() if e["name"] == "throttle"]
    assert throttles and [(e["t_s"], e["detail"]) for e in odd.events() if e["name"] == "throttle"] == throttles
    assert all(abs(t / 0.25 - round(t / 0.25)) < 1e-9 for t, _ in throttles)
    assert odd.summary["thermal"]["time_throttled_s"] == hot.summary["thermal"]["time_throttled_s"]
    assert odd.summary["sim_time_s"] == hot.summary["sim_time_s"]
    # the heat and battery steps are solved per piece between sampling boundaries, so another
    # grid moves the energy at the discretisation level (1.8e-6 relative on this run once the
    # fork-join mechanisms made it longer); the decisions and times above stay exact
    assert odd.summary["energy_j"]["total"] == pytest.approx(hot.summary["energy_j"]["total"], rel=1e-5)
