"""The ring path (hier_fifo) for streams that touch their lines once: the same counters, snapshots,
DRAM totals and final cache contents as the plain compiled driver, on random streams (with and
without repeated lines, any geometry, private and shared levels) and on element-wise steps of the
zoo's sizes on a phone's caches.  Tests that require the path to be taken show it is alive."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as hs

from socsim.hw import memory
from socsim.hw.cache import hier_fifo, streams
from socsim.hw.cache.geometry import CacheGeom
from socsim.hw.cache.hierarchy import Hierarchy
from socsim.spec import load_soc


def _state(h):
    out = [h._p[k].copy() for k in ("tags", "meta", "dirty", "clock", "cnt")]
    sh = h._shared
    if sh is not None:
        out += [sh.state.tags.copy(), sh.state.meta.copy(), sh.state.dirty.copy(), sh.state.clock.copy(),
                sh.counters.copy()]
    return out


def _both(priv, shared, threads, lines, kinds, off, steps, line=64):
    """Run the steps with and without the ring hint; assert every result agrees; return how many
    calls took the ring path (short streams too: MIN_ACCESSES set to 0 here)."""
    res = []
    keep = hier_fifo.MIN_ACCESSES
    hier_fifo.MIN_ACCESSES = 0
    try:
        for once in (False, True):
            h = Hierarchy(priv[0] if priv else (), shared, threads=threads, stream_line_bytes=line,
                          per_thread_private=priv)
            cnt, dram = h.run_steps(lines, kinds, off, steps, None, once)
            res.append((cnt, dram, (h.dram_fills, h.dram_writebacks), _state(h), h.fifo))
    finally:
        hier_fifo.MIN_ACCESSES = keep
    (c0, d0, t0, s0, f0), (c1, d1, t1, s1, f1) = res
    assert f0 == 0
    assert np.array_equal(c0, c1) and np.array_equal(d0, d1) and t0 == t1
    for a, b in zip(s0, s1):
        assert np.array_equal(a, b)
    return f1


def _geom(name, sets, assoc):
    return CacheGeom(name, sets * assoc * 64, assoc, 64)


@hs.composite
def _case(draw):
    threads = draw(hs.integers(1, 3))
    steps = draw(hs.integers(1, 4))
    n_priv = draw(hs.integers(0, 2))
    n_shared = draw(hs.integers(0 if n_priv else 1, 2))
    sets = hs.sampled_from([1, 2, 3, 4, 5, 8])
    assoc = hs.integers(1, 4)
    # one level count per hierarchy; the geometries may differ per thread (big.LITTLE)
    per = tuple(tuple(_geom(f"P{i}", draw(sets), draw(assoc)) for i in range(n_priv)) for _ in range(threads)) \
        if n_priv else ()
    shared = tuple(_geom(f"S{i}", draw(sets), draw(assoc)) for i in range(n_shared))
    groups = []
    for _ in range(steps * threads):
        ls, ks = [], []
        for _ in range(draw(hs.integers(0, 3))):
            lo = draw(hs.integers(0, 300))
            ln = draw(hs.integers(1, 40))
            ls += range(lo, lo + ln)
            kind = draw(hs.sampled_from([0, 2]))
            ks += [kind] * ln
        groups.append((ls, ks))
    off = np.concatenate([[0], np.cumsum([len(g[0]) for g in groups])]).astype(np.int64)
    lines = np.array([x for g in groups for x in g[0]], dtype=np.int64)
    kinds = np.array([x for g in groups for x in g[1]], dtype=np.uint8)
    return per, shared, threads, lines, kinds, off, steps


@settings(max_examples=120, deadline=None)
@given(case=_case())
def test_ring_path_equals_plain_driver_on_random_streams(case):
    per, shared, threads, lines, kinds, off, steps = case
    assert _both(per, shared, threads, lines, kinds, off, steps) == 1


@settings(max_examples=60, deadline=None)
@given(data=hs.data())
def test_repeats_are_the_lines_seen_twice(data):
    groups = data.draw(hs.lists(hs.lists(hs.tuples(hs.integers(0, 500), hs.integers(1, 30)), max_size=3),
                                min_size=1, max_size=6))
    lines = np.array([x for g in groups for lo, n in g for x in range(lo, lo + n)], dtype=np.int64)
    off = np.concatenate([[0], np.cumsum([sum(n for _, n in g) for g in groups])]).astype(np.int64)
    kinds = np.zeros(lines.shape[0], np.uint8)
    got = hier_fifo.repeats(lines, kinds, off)
    vals, counts = np.unique(lines, return_counts=True)
    want = vals[counts > 1]
    if want.size > hier_fifo.MAX_REPEATS:
        assert got is None
    else:
        assert got is not None and np.array_equal(got, want)


def test_partial_writes_and_heavy_reuse_take_the_plain_driver():
    g = (_geom("L1", 4, 2),)
    lines = np.arange(100, dtype=np.int64)
    kinds = np.zeros(100, np.uint8)
    kinds[5] = 1                                      # a partial write: fetch and writeback meet
    assert _both((g,), (), 1, lines, kinds, np.array([0, 100], np.int64), 1) == 0
    reuse = np.tile(np.arange(5000, dtype=np.int64), 2)   # every line twice: past MAX_REPEATS
    assert hier_fifo.repeats(reuse, np.zeros(10000, np.uint8), np.array([0, 10000], np.int64)) is None


@pytest.mark.parametrize("rd,wr,threads", [(25_690_112, 25_690_112, 4), (1_204_224, 1_204_224, 3),
                                           (3_010_560, 1_003_520, 2), (602_112, 0, 1), (4 * 7_225_344, 7_225_344, 4)])
def test_element_wise_steps_on_a_phone(rd, wr, threads):
    """Element-wise ops of the zoo's sizes (MobileNet-v2 and AlexNet tensors at batch 16, chunks
    whole lines or not) on sd865's big cores: the sampled steps take the ring path, exactly."""
    soc = load_soc("sd865")
    priv = tuple(memory.cpu_private_geoms(soc, c) for c in (4, 5, 6, 7)[:threads])
    plan = streams.eltwise_stream(rd, wr, threads, 64, 1)
    assert streams.touches_once(plan)
    lines, kinds, off, done = memory.sampled_streams(plan)
    assert _both(priv, memory.cpu_shared_geoms(soc), threads, lines, kinds, off, done) == 1


def test_two_pass_element_wise_is_not_hinted():
    assert not streams.touches_once(streams.eltwise_stream(1 << 20, 1 << 20, 2, 64, 2))


def test_warmup_compiles_the_ring_path_and_short_streams_skip_it():
    """`socsim warmup` reaches hier_fifo (the quick-start's element-wise steps are below
    MIN_ACCESSES, so its first run does not compile it); the module keys the warm-up marker."""
    from socsim import kernels

    assert memory.warm_ring_driver(load_soc("sd865")) == 1
    assert "hw/cache/hier_fifo.py" in kernels.KERNEL_MODULES
    g = (_geom("L1", 4, 2),)
    n = hier_fifo.MIN_ACCESSES - 1
    h = Hierarchy(g, (), threads=1, stream_line_bytes=64, per_thread_private=(g,))
    h.run_steps(np.arange(n, dtype=np.int64), np.zeros(n, np.uint8), np.array([0, n], np.int64), 1, None, True)
    assert h.fifo == 0
