"""Reuse of streams and simulations within a process (socsim.hw.cache.reuse): a profile served
from it equals the one computed from scratch; the tables stay bounded."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from socsim.hw import memory, profile_store
from socsim.hw.cache import reuse
from socsim.hw.memory import op_memory
from socsim.spec import load_soc
from socsim.workload.ops import Op, make_params


@pytest.fixture(scope="module")
def soc():
    return load_soc("sd865")


@pytest.fixture(scope="module")
def no_store():
    """The on-disk store off: each profile here is computed in this process."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOCSIM_CACHE", "off")
        profile_store.reset()
        yield
    profile_store.reset()
    memory._cpu_memory.cache_clear()
    memory._dsp_memory.cache_clear()


def _conv(cin, hw, cout, extra_bytes=0, dtype="fp32"):
    return Op("c", "conv2d", "forward", "l", dtype,
              make_params(batch=2, cin=cin, h=hw, w=hw, cout=cout, kh=3, kw=3, stride=1, pad=1, groups=1,
                          oh=hw, ow=hw),
              bytes_read=2 * cin * hw * hw * 4 + cin * cout * 36 + extra_bytes,
              bytes_written=2 * cout * hw * hw * 4)


def test_table_is_bounded_by_weight_least_recent_first():
    t = reuse._Table(10)
    made = []

    def make(v):
        return lambda: made.append(v) or v

    assert t.get(("a",), make(4), lambda v: v) == 4
    assert t.get(("b",), make(5), lambda v: v) == 5
    assert t.get(("a",), make(99), lambda v: v) == 4        # a hit: made once
    assert t.get(("c",), make(3), lambda v: v) == 3         # 12 > 10: b, the least recent, goes
    assert set(t.items) == {("a",), ("c",)} and t.used == 7
    assert t.get(("big",), make(11), lambda v: v) == 11     # heavier than the table: not kept
    assert ("big",) not in t.items and made == [4, 5, 3, 11]
    assert (t.hits, t.misses) == (1, 4)


@settings(max_examples=12, deadline=None)
@given(cin=hs.sampled_from([8, 24, 64]), hw=hs.sampled_from([7, 14, 20]), cout=hs.sampled_from([8, 40]),
       cores=hs.sampled_from([(4,), (4, 5), (0, 1, 2, 3), (4, 5, 6, 7)]), extra=hs.integers(1, 1 << 20))
def test_a_simulation_reused_across_stream_keys_equals_one_from_scratch(soc, no_store, cin, hw, cout, cores,
                                                                        extra):
    """Two ops whose stream keys differ (their byte counts) but whose plans are one: the second
    is served by the first's simulation, and equals its own profile computed from scratch."""
    a, b = _conv(cin, hw, cout), _conv(cin, hw, cout, extra)
    memory._cpu_memory.cache_clear()
    scratch = op_memory(b, "cpu", soc, cores=cores, budget=30_000)
    memory._cpu_memory.cache_clear()
    op_memory(a, "cpu", soc, cores=cores, budget=30_000)
    before = reuse.stats()
    served = op_memory(b, "cpu", soc, cores=cores, budget=30_000)
    after = reuse.stats()
    assert after["sim_hits"] == before["sim_hits"] + 1 and after["sim_misses"] == before["sim_misses"]
    assert served == scratch


def test_dsp_simulation_reused_equals_one_from_scratch(soc, no_store, monkeypatch):
    a, b = _conv(32, 14, 32, dtype="int8"), _conv(32, 14, 32, 4096, dtype="int8")
    memory._dsp_memory.cache_clear()
    scratch = op_memory(b, "dsp", soc, threads=2, batch=2)
    memory._dsp_memory.cache_clear()
    op_memory(a, "dsp", soc, threads=2, batch=2)
    runs = []
    real = memory.simulate
    monkeypatch.setattr(memory, "simulate", lambda *x, **k: runs.append(1) or real(*x, **k))
    assert op_memory(b, "dsp", soc, threads=2, batch=2) == scratch
    assert runs == []


def test_served_levels_are_copies(soc, no_store):
    memory._cpu_memory.cache_clear()
    p = op_memory(_conv(16, 14, 16), "cpu", soc, cores=(4, 5), budget=30_000)
    keep = p.levels[0].read_hits
    p.levels[0].read_hits += 1000                            # a caller scribbling on its profile
    q = op_memory(_conv(16, 14, 16, 64), "cpu", soc, cores=(4, 5), budget=30_000)
    assert q.levels[0].read_hits == keep


def test_streams_reused_are_the_plans_own(soc):
    """One plan, asked twice: the same arrays, equal to a fresh generation."""
    reuse.clear()
    plan = memory.plan_for(_conv(24, 14, 40), "cpu", 2)
    s1 = memory.sampled_streams(plan, 30_000)
    s2 = memory.sampled_streams(memory.plan_for(_conv(24, 14, 40), "cpu", 2), 30_000)
    assert all(x is y for x, y in zip(s1[:3], s2[:3]))
    fresh = plan.generate(0, plan.n_segments, 30_000, min(plan.n_segments, memory.MIN_SEGMENTS))
    assert all(np.array_equal(x, y) for x, y in zip(s1[:3], fresh[:3])) and s1[3] == fresh[3]
    other = memory.plan_for(_conv(24, 14, 40), "cpu", 4)    # another thread count: its own
    assert reuse.plan_key(other) != reuse.plan_key(plan)


def test_other_caches_are_simulated_again(soc, no_store):
    """The hierarchy's geometry is part of the key: the little cores' caches, the prime core's
    L2 and another budget are simulations of their own, with their own counts."""
    memory._cpu_memory.cache_clear()
    op = _conv(32, 14, 32)
    big = op_memory(op, "cpu", soc, cores=(4, 5), budget=30_000)
    before = reuse.stats()["sim_misses"]
    little = op_memory(_conv(32, 14, 32, 8), "cpu", soc, cores=(0, 1), budget=30_000)
    prime = op_memory(_conv(32, 14, 32, 8), "cpu", soc, cores=(4, 7), budget=30_000)
    op_memory(_conv(32, 14, 32, 8), "cpu", soc, cores=(4, 5), budget=20_000)
    assert reuse.stats()["sim_misses"] == before + 3
    assert little.levels != big.levels and prime.levels[0] == big.levels[0]   # the same L1s
