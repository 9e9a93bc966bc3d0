"""Reuse of generated streams within a process (socsim.hw.cache.reuse): a profile made from
reused streams equals the one computed from scratch; the table stays bounded."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from socsim.hw import memory
from socsim.hw.cache import reuse
from socsim.hw.memory import op_memory
from socsim.spec import load_soc
from socsim.workload.ops import Op, make_params


@pytest.fixture(scope="module")
def soc():
    return load_soc("sd865")


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
       cores=hs.sampled_from([((4, 5), (0, 1)), ((4, 5, 6, 7), (0, 1, 2, 3)), ((4,), (0,)), ((4, 7), (5, 6))]))
def test_profiles_from_reused_streams_equal_ones_from_scratch(soc, no_store, cin, hw, cout, cores):
    """One plan on two core sets of one size (big and little caches): the second takes the
    first's streams, and its profile equals its own computed from scratch."""
    first, second = cores
    op = _conv(cin, hw, cout)
    memory._cpu_memory.cache_clear()
    scratch = op_memory(op, "cpu", soc, cores=second, budget=30_000)
    memory._cpu_memory.cache_clear()
    op_memory(op, "cpu", soc, cores=first, budget=30_000)
    hits = reuse.stats()["stream_hits"]
    assert op_memory(op, "cpu", soc, cores=second, budget=30_000) == scratch
    assert reuse.stats()["stream_hits"] > hits


def test_dsp_profile_from_reused_streams_equals_one_from_scratch(soc, no_store):
    op = _conv(32, 14, 32, dtype="int8")
    memory._dsp_memory.cache_clear()
    scratch = op_memory(op, "dsp", soc, threads=2, batch=2, budget=30_000)
    memory._dsp_memory.cache_clear()
    op_memory(op, "dsp", soc, threads=2, batch=2, budget=30_000)
    memory._BY_PLAN.clear()                                  # the profile again, the streams reused
    hits = reuse.stats()["stream_hits"]
    again = memory._dsp_memory.__wrapped__(*_dsp_args(soc, op, 30_000))
    assert reuse.stats()["stream_hits"] > hits and again == scratch


def _dsp_args(soc, op, budget):
    from socsim.hw.cache.geometry import CacheGeom

    kind, dtype, params = memory._stream_key(op)
    return (kind, dtype, params, int(op.bytes_read), int(op.bytes_written), CacheGeom.from_spec("L2", soc.dsp.l2), 2,
            2, int(soc.dsp.vtcm_kb * 1024), budget)


def test_clearing_a_profile_memo_clears_the_streams(soc):
    memory.sampled_streams(memory.plan_for(_conv(8, 7, 8), "cpu", 1), 30_000)
    assert reuse._streams.items
    memory._cpu_memory.cache_clear()
    assert not reuse._streams.items


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
