"""Cache simulator: hand-computed counts and the numba model against its Python twin."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from socsim.hw.cache import sim_ref
from socsim.hw.cache.geometry import (FILLS, RD_HIT, RD_MISS, RNG_SEED, WR_HIT, WR_MISS, WRITEBACKS, CacheGeom,
                                      level_arrays)
from socsim.hw.cache.hierarchy import Chain, Hierarchy, interleave


def _run(geoms, lines, kinds=None):
    lines = np.asarray(lines, dtype=np.int64)
    kinds = np.zeros(lines.size, np.uint8) if kinds is None else np.asarray(kinds, dtype=np.uint8)
    c = Chain(tuple(geoms), geoms[0].line_bytes)
    out = c.feed(lines, kinds)
    return c.counters, out


def test_direct_mapped_conflicts():
    # 4 sets x 1 way: lines 0 and 4 map to set 0 and evict each other every time
    g = CacheGeom("L1", 4 * 64, 1, 64)
    cnt, _ = _run([g], [0, 4, 0, 4, 1, 1])
    assert cnt[0, RD_HIT] == 1 and cnt[0, RD_MISS] == 5


def test_lru_vs_fifo_two_way():
    # one set, 2 ways; A B A C A: LRU keeps A (evicts B) -> A hits twice; FIFO evicts A at C
    seq = [0, 1, 0, 2, 0]
    lru, _ = _run([CacheGeom("L1", 128, 2, 64, "lru")], seq)
    fifo, _ = _run([CacheGeom("L1", 128, 2, 64, "fifo")], seq)
    assert (lru[0, RD_HIT], lru[0, RD_MISS]) == (2, 3)
    assert (fifo[0, RD_HIT], fifo[0, RD_MISS]) == (1, 4)


def test_cyclic_sweep_thrashes_lru():
    # a 5-line cycle through a 4-line fully associative LRU cache never hits
    g = CacheGeom("L1", 4 * 64, 4, 64)
    cnt, _ = _run([g], list(range(5)) * 10)
    assert cnt[0, RD_HIT] == 0 and cnt[0, RD_MISS] == 50


def test_write_back_allocate_and_writebacks():
    g = CacheGeom("L1", 64, 1, 64)                     # a single line
    # write 0 (miss, fill), write 0 (hit), read 1 (miss: dirty 0 written back, 1 filled)
    cnt, (out_l, out_k) = _run([g], [0, 0, 1], [1, 1, 0])
    assert cnt[0, WR_MISS] == 1 and cnt[0, WR_HIT] == 1 and cnt[0, RD_MISS] == 1
    assert cnt[0, WRITEBACKS] == 1 and cnt[0, FILLS] == 2
    assert out_l.tolist() == [0, 0, 1] and out_k.tolist() == [0, 2, 0]   # fill 0, writeback 0, fill 1


def test_full_line_write_needs_no_fill():
    g = CacheGeom("L1", 64, 1, 64)
    cnt, (out_l, _) = _run([g], [3], [2])
    assert cnt[0, WR_MISS] == 1 and cnt[0, FILLS] == 0 and out_l.size == 0


def test_write_through_no_allocate():
    g = CacheGeom("L1", 256, 4, 64, write_back=False)
    cnt, (out_l, out_k) = _run([g], [0, 0, 1], [1, 0, 0])
    assert cnt[0, WR_MISS] == 1 and cnt[0, RD_MISS] == 2 and cnt[0, RD_HIT] == 0   # store did not allocate
    assert out_k.tolist() == [1, 0, 0]      # store passed on, then two read fills


def test_two_levels_and_larger_lines():
    l1 = CacheGeom("L1", 2 * 64, 2, 64)
    l2 = CacheGeom("L2", 8 * 128, 8, 128)          # 128-byte lines: 64-byte lines 0 and 1 share one
    cnt, (out_l, _) = _run([l1, l2], [0, 1, 2, 3, 0, 1])
    assert cnt[1, RD_MISS] == 2 and cnt[1, RD_HIT] == 4   # 0 fills L2 line 0, 1 hits it, ...
    assert out_l.tolist() == [0, 2]


def test_hierarchy_shared_level_sees_all_threads():
    priv = (CacheGeom("L1", 64, 1, 64),)
    shared = (CacheGeom("L3", 16 * 64, 16, 64),)
    h = Hierarchy(priv, shared, threads=2)
    s = [(np.array([0, 1, 0, 1], np.int64), np.zeros(4, np.uint8))] * 2
    h.run(s)
    c = h.counters()
    # both threads miss their own 1-line L1 on every access; the shared L3 misses only twice
    assert c[0, RD_MISS] == 8 and c[1, RD_MISS] == 2 and h.dram_fills == 2


def test_interleave_round_robin():
    a = (np.arange(4, dtype=np.int64), np.zeros(4, np.uint8))
    b = (np.arange(10, 14, dtype=np.int64), np.zeros(4, np.uint8))
    lines, _ = interleave([a, b], chunk=2)
    assert lines.tolist() == [0, 1, 10, 11, 2, 3, 12, 13]


def test_scratchpad_bypasses_cache():
    h = Hierarchy((), (CacheGeom("L2", 1024, 8, 128),), threads=1, stream_line_bytes=128, scratch=((100, 200),))
    h.run([(np.array([1, 150, 2, 199], np.int64), np.zeros(4, np.uint8))])
    assert h.scratch_accesses == 2 and h.counters()[0, RD_MISS] == 2


geoms = st.builds(
    lambda sets_log, assoc_log, pol, wb: CacheGeom("L", (1 << sets_log) * (1 << assoc_log) * 64, 1 << assoc_log, 64, pol, wb),
    st.integers(0, 3), st.integers(0, 2), st.sampled_from(["lru", "fifo", "random", "plru"]), st.booleans())


@settings(deadline=None, max_examples=60)
@given(g1=geoms, g2=geoms, data=st.data())
def test_numba_equals_reference(g1, g2, data):
    n = data.draw(st.integers(1, 300))
    lines = np.array(data.draw(st.lists(st.integers(0, 63), min_size=n, max_size=n)), dtype=np.int64)
    kinds = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.uint8)
    chain_g = (g1, g2)
    c = Chain(chain_g, 64)
    out_l, out_k = c.feed(lines, kinds)
    sets, assoc, shift, policy, wb, _ = level_arrays(chain_g, 64)
    rc, rl, rk = sim_ref.run_chain(lines, kinds, sets, assoc, shift, policy, wb, RNG_SEED)
    assert np.array_equal(c.counters, rc)
    assert np.array_equal(out_l, rl) and np.array_equal(out_k, rk)


lru_wb_geoms = st.builds(
    lambda sets, assoc, line: CacheGeom("L", sets * assoc * line, assoc, line, "lru", True),
    st.sampled_from([1, 2, 3, 4, 5, 8]), st.integers(1, 5), st.sampled_from([64, 128]))


@settings(deadline=None, max_examples=80)
@given(chain_g=st.lists(lru_wb_geoms, min_size=1, max_size=3), data=st.data())
def test_lru_write_back_fast_path_equals_reference(chain_g, data):
    # all-LRU write-back chains take sim_numba's specialised kernel; fed in two pieces so the
    # state it leaves behind (stamps, clocks, dirty bits) is checked as well
    n = data.draw(st.integers(1, 400))
    lines = np.array(data.draw(st.lists(st.integers(0, 95), min_size=n, max_size=n)), dtype=np.int64)
    kinds = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.uint8)
    cut = data.draw(st.integers(0, n))
    chain_g = tuple(chain_g)
    c = Chain(chain_g, 64)
    l1, k1 = c.feed(lines[:cut], kinds[:cut])
    l2, k2 = c.feed(lines[cut:], kinds[cut:])
    sets, assoc, shift, policy, wb, _ = level_arrays(chain_g, 64)
    rc, rl, rk = sim_ref.run_chain(lines, kinds, sets, assoc, shift, policy, wb, RNG_SEED)
    assert np.array_equal(c.counters, rc)
    assert np.array_equal(np.concatenate([l1, l2]), rl) and np.array_equal(np.concatenate([k1, k2]), rk)


def test_bad_geometry_rejected():
    with pytest.raises(ValueError):
        CacheGeom("L", 1000, 3, 64)
    with pytest.raises(ValueError):
        CacheGeom("L", 3 * 64 * 4, 3, 64, "plru")


@settings(deadline=None, max_examples=60)
@given(priv=st.lists(geoms, min_size=0, max_size=2), shared=st.lists(geoms, min_size=0, max_size=2),
       threads=st.integers(1, 3), steps=st.integers(1, 4), data=st.data())
def test_compiled_driver_equals_per_step_twin_for_every_policy(priv, shared, threads, steps, data):
    """hier_numba.run_steps (the LRU write-back fast path when every level is, else the general
    kernel; numba compiles only the branch a hierarchy takes) against Hierarchy.run step by step,
    on hierarchies of any policy, write-back or write-through, idle threads included."""
    priv, shared = tuple(priv), tuple(shared)
    groups = []
    for _ in range(steps * threads):
        n = data.draw(st.integers(0, 120))
        groups.append((np.array(data.draw(st.lists(st.integers(0, 63), min_size=n, max_size=n)), np.int64),
                       np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), np.uint8)))
    off = np.concatenate([[0], np.cumsum([g[0].size for g in groups])]).astype(np.int64)
    lines = np.concatenate([g[0] for g in groups])
    kinds = np.concatenate([g[1] for g in groups])
    fast = Hierarchy(priv, shared, threads=threads)
    cnt, dram = fast.run_steps(lines, kinds, off, steps)
    slow = Hierarchy(priv, shared, threads=threads)
    for s in range(steps):
        slow.run(groups[s * threads:(s + 1) * threads])
        assert np.array_equal(cnt[s], slow.counters())
        assert tuple(dram[s]) == (slow.dram_fills, slow.dram_writebacks)


@settings(max_examples=40, deadline=None)
@given(sets=st.lists(st.lists(st.sampled_from([1, 2, 3, 6, 64, 96, 512, 1000, 4096]), min_size=1, max_size=4),
                     min_size=1, max_size=4).filter(lambda rows: len({len(r) for r in rows}) == 1))
def test_row_masks_are_each_rows_masks(sets):
    """``run_steps``' per-thread masks, built element by element (no row assignment: that compiled
    numba's shape-mismatch error path), are ``_masks`` of each row."""
    from socsim.hw.cache.hier_numba import _masks, _row_masks

    a = np.array(sets, dtype=np.int64)
    got = _row_masks(a)
    assert got.shape == a.shape
    assert np.array_equal(got, np.where((a & (a - 1)) == 0, a - 1, -1))   # mask a power of two, else modulo
    for t in range(a.shape[0]):
        assert np.array_equal(got[t], _masks(a[t]))
