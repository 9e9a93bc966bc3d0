"""The periodic driver (hier_period): skipping repeated stretches changes no counter and no state.

Each test runs the same steps through ``Hierarchy.run_steps`` without a period hint (the plain
compiled driver) and with one (hier_period), and compares every per-step snapshot, the DRAM
totals and the final contents of every cache (tags, LRU stamps, dirty bits, clocks) array for
array.  Tests that also require a skip show the mechanism is alive, not just harmless."""
import numpy as np
from hypothesis import given, settings, strategies as st

from socsim.hw import memory
from socsim.hw.cache import streams
from socsim.hw.cache.geometry import CacheGeom
from socsim.hw.cache.hierarchy import Hierarchy
from socsim.spec import load_soc
from socsim.workload.ops import Op


def _both(priv, shared, threads, lines, kinds, off, steps, hint):
    out = []
    for h in (None, hint):
        hier = Hierarchy(priv[0] if priv else (), shared, threads=threads, stream_line_bytes=64,
                         per_thread_private=priv)
        cnt, dram = hier.run_steps(lines, kinds, off, steps, h)
        sh = hier._shared
        state = [hier._p[k].copy() for k in ("tags", "meta", "dirty", "clock", "cnt")]
        if sh is not None:
            state += [sh.state.tags.copy(), sh.state.meta.copy(), sh.state.dirty.copy(), sh.state.clock.copy(),
                      sh.counters.copy()]
        out.append((cnt, dram, (hier.dram_fills, hier.dram_writebacks), state, hier.skipped))
    (c0, d0, t0, s0, k0), (c1, d1, t1, s1, k1) = out
    assert k0 == 0
    assert np.array_equal(c0, c1) and np.array_equal(d0, d1) and t0 == t1
    for a, b in zip(s0, s1):
        assert np.array_equal(a, b)
    return k1


def _strided(threads, steps, pack, wl, delta, iters, wgrad, pre, suf, rng):
    """A GEMM-like step per thread: a prefix, ``iters`` bodies (the thread's pack lines, then a
    weight block of ``wl`` lines moved by ``delta`` per body; read then written for wgrad), a
    suffix.  Returns (lines, kinds, off, (lo, hi, delta, per_iter))."""
    lo = 1000
    hi = lo + (iters + threads) * delta + wl + 64
    groups = []
    for _ in range(steps):
        for t in range(threads):
            pk = 100_000 + t * 256
            ls = list(rng.integers(0, 200, pre)) + list(range(pk, pk + pack))
            ks = [0] * pre + [2] * pack
            for j in range(iters):
                w = lo + j * delta + (t * wl if wgrad else 0)
                ls += list(range(pk, pk + pack)) + list(range(w, w + wl))
                ks += [0] * pack + [0] * wl
                if wgrad:
                    ls += list(range(w, w + wl))
                    ks += [1] * wl
            ls += list(rng.integers(200_000, 200_300, suf))
            ks += [2] * suf
            groups.append((np.array(ls, np.int64), np.array(ks, np.uint8)))
    off = np.concatenate([[0], np.cumsum([g[0].size for g in groups])]).astype(np.int64)
    return (np.concatenate([g[0] for g in groups]), np.concatenate([g[1] for g in groups]), off,
            (lo, hi, delta, pack + wl * (2 if wgrad else 1)))


small = st.builds(lambda sets, assoc: CacheGeom("C", sets * assoc * 64, assoc, 64),
                  st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([1, 2, 4]))


@settings(deadline=None, max_examples=60)
@given(priv=st.lists(small, min_size=0, max_size=2), shared=st.lists(small, min_size=0, max_size=2),
       threads=st.integers(1, 3), steps=st.integers(1, 2), pack=st.integers(0, 12), wl=st.integers(1, 12),
       delta=st.integers(1, 16), iters=st.integers(8, 160), wgrad=st.booleans(), pre=st.integers(0, 40),
       suf=st.integers(0, 40), seed=st.integers(0, 2**16))
def test_periodic_skip_equals_full_simulation_on_random_strided_streams(priv, shared, threads, steps, pack, wl,
                                                                       delta, iters, wgrad, pre, suf, seed):
    lines, kinds, off, hint = _strided(threads, steps, pack, wl, delta, iters, wgrad, pre, suf,
                                       np.random.default_rng(seed))
    priv = tuple((tuple(priv),) * threads) if priv else ()
    _both(priv, tuple(shared), threads, lines, kinds, off, steps, hint)


@settings(deadline=None, max_examples=30)
@given(delta=st.integers(1, 16), shift=st.integers(-3, 3), per=st.integers(-2, 2), seed=st.integers(0, 2**16))
def test_a_wrong_hint_changes_nothing(delta, shift, per, seed):
    """The driver checks the stream and the caches before it skips: a hint whose shift or period
    is wrong (or a stream that is not periodic at all) leaves the results those of run_steps."""
    rng = np.random.default_rng(seed)
    lines, kinds, off, (lo, hi, d, p) = _strided(2, 1, 5, 4, delta, 120, False, 10, 10, rng)
    priv = ((CacheGeom("L1", 2 * 2 * 64, 2, 64),),) * 2
    shared = (CacheGeom("L2", 8 * 4 * 64, 4, 64),)
    _both(priv, shared, 2, lines, kinds, off, 1, (lo, hi, max(1, d + shift), max(1, p + per)))
    noise = rng.permutation(lines)
    _both(priv, shared, 2, noise, kinds, off, 1, (lo, hi, d, p))


def test_a_periodic_stream_is_skipped():
    """One thread sweeping weight blocks past a re-read pack buffer, a 2-level hierarchy: most of
    the step is skipped, and every counter and cache is still that of the full simulation."""
    lines, kinds, off, hint = _strided(1, 1, 8, 8, 8, 400, False, 20, 20, np.random.default_rng(0))
    priv = ((CacheGeom("L1", 4 * 2 * 64, 2, 64),),)
    shared = (CacheGeom("L2", 16 * 4 * 64, 4, 64),)
    skipped = _both(priv, shared, 1, lines, kinds, off, 1, hint)
    assert skipped > lines.size // 2


def test_alexnet_fc_step_on_sd855_skips_and_matches():
    """The step that motivated the driver: AlexNet's 9216x4096 FC at batch 16 on two big cores of
    sd855 (11.8 M accesses in one step): the same counters and caches, >90% skipped."""
    soc = load_soc("sd855")
    op = Op(name="fc", kind="gemm", phase="forward", layer="fc", dtype="fp32",
            params=(("m", 16), ("k", 9216), ("n", 4096)), bytes_read=0, bytes_written=0)
    plan = memory.plan_for(op, "cpu", 2)
    lines, kinds, off, done = memory.sampled_streams(plan)
    hint = streams.period_hint(plan)
    assert hint is not None
    priv = tuple(memory.cpu_private_geoms(soc, c) for c in (4, 5))
    skipped = _both(priv, memory.cpu_shared_geoms(soc), 2, lines, kinds, off, done, hint)
    assert skipped > 0.9 * lines.size


@settings(deadline=None, max_examples=40)
@given(m=st.integers(1, 40), k=st.integers(1, 300), n=st.integers(8, 400), threads=st.integers(1, 3),
       dtype=st.sampled_from(["fp32", "fp16", "int8"]), wgrad=st.booleans())
def test_period_hint_describes_the_generated_stream(m, k, n, threads, dtype, wgrad):
    """Where period_hint gives a hint, the generated body repeats as it says: an access ``per_iter``
    later is the same access, its line moved by ``delta`` inside [lo, hi).  (Only a hint: a wrong
    one costs speed, not exactness; this keeps it useful.)"""
    kind = "gemm" if not wgrad else "conv2d_wgrad"
    params = (("m", m), ("k", k), ("n", n)) if not wgrad else (("batch", 1), ("cin", k), ("h", 1), ("w", m),
                                                                ("cout", n), ("kh", 1), ("kw", 1))
    op = Op(name="x", kind=kind, phase="forward", layer="x", dtype=dtype, params=params, bytes_read=0,
            bytes_written=0)
    plan = memory.plan_for(op, "cpu", threads)
    hint = streams.period_hint(plan, min_accesses=0)
    if hint is None:
        return
    lo, hi, delta, per = hint
    lines, kinds, off, done = plan.generate(0, 1)
    for t in range(threads):
        ls, ks = lines[off[t]:off[t + 1]], kinds[off[t]:off[t + 1]]
        if ls.size == 0:
            continue
        g = dict(zip(streams.sn.FIELDS[streams.sn.CPU_CONV], (int(x) for x in plan.params)))
        pack_at = (g["pack_base"] + t * g["pack_stride"]) // plan.line_bytes
        # the bodies start at the pack's re-reads (a one-line pack's first re-read merges into
        # its write, so count the bodies from the re-reads the stream has)
        reads = np.flatnonzero((ls == pack_at) & (ks == 0))
        iters = reads.size
        if iters < 2:
            continue
        body = int(reads[0])
        a = ls[body:body + (iters - 1) * per]
        b = ls[body + per:body + iters * per]
        moved = np.where((a >= lo) & (a < hi), a + delta, a)
        assert np.array_equal(moved, b)
        assert np.array_equal(ks[body:body + (iters - 1) * per], ks[body + per:body + iters * per])
