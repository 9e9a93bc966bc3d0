"""Memory behaviour of one op on one unit: cache simulation of its access stream, sampled.

``op_memory(op, unit, soc, cores=..., batch=...)`` builds the unit's hierarchy from the SoC spec
(CPU: per-core L1D/L2 private, L3 and SLC shared by the threads; DSP: L2 only, HVX bypasses L1,
VTCM as a scratchpad), runs the op's stream plan (:mod:`socsim.hw.cache.streams`) through it and
returns hit rates, miss traffic and DRAM bytes.  Large ops are sampled: the first steps of the
outermost loop are simulated until ``budget`` accesses, the per-step counts of the second half
of the simulated steps (steady state, caches warm) are extrapolated to the remaining steps.
docs/memory.md gives the sampling error against full simulation.  Results are memoised per
(stream key, byte counts, hierarchy geometry per thread, budget; DSP: contexts, padded batch,
VTCM): what the stream and the caches depend on, not the frequency; and, on the same key, between
runs (:mod:`socsim.hw.profile_store`, an on-disk store; identical results, docs/memory.md).
An op on more cores than it has work items takes the profile of its busy threads alone when
their streams are that split's (:func:`busy_threads`, :func:`same_streams`): exact, simulated once.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from socsim.hw.cache.geometry import CacheGeom
from socsim.hw.cache.hierarchy import Hierarchy, LevelStats
from socsim.hw import kernel_wait, profile_store
from socsim.hw.memprofile import MemProfile
from socsim.hw.cache import reuse, streams as st
from socsim.spec.soc import SocSpec
from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op

# Numerical method parameters of the sampler (not hardware constants): they trade simulation
# time against sampling error, which docs/memory.md ("Sampling") reports for the defaults
# against full simulation (hit rates within 0.03, DRAM bytes -27% .. +7% on mid-sized ops).
# Accesses simulated per op before extrapolating (about 20-40 ms of simulation).
DEFAULT_BUDGET = 400_000
# Always simulate at least this many outer-loop steps (first = cold, rest = steady state;
# a choice: one cold step and at least two warm ones).
MIN_SEGMENTS = 3

# Which stream plan an op gets follows its kind's ``kernel`` (socsim.workload.opkinds): GEMM-like
# kernels the conv plans, depthwise and pooling kernels the plane plans, the rest element-wise.
ELTWISE = "eltwise"  # the stream key of every element-wise op (see _stream_key)


def plan_for(op: Op, unit: str, threads: int, batch: int | None = None, vtcm_bytes: int = 0,
             line: int = 64) -> st.StreamPlan:
    """The stream plan of ``op``'s kernel on ``unit`` ('cpu' or 'dsp')."""
    kind = lookup(op.kind)
    if unit == "dsp":
        b = batch if batch is not None else op.batch
        if kind.kernel == "gemm":
            return st.dsp_conv_plan(op, threads, b, line, vtcm_bytes)
        if kind.is_plane:
            return st.dsp_plane_plan(op, threads, b, line)
        return st.eltwise_plan(op, threads, line)
    if kind.kernel == "gemm":
        return st.cpu_conv_plan(op, threads, line)
    if kind.is_plane:
        return st.cpu_plane_plan(op, threads, line)
    return st.eltwise_plan(op, threads, line)


def simulate(plan: st.StreamPlan, hier: Hierarchy, budget: int = DEFAULT_BUDGET, flush: bool = False,
             streams: tuple | None = None):
    """Run a plan (sampled); returns (level stats, dram fills, dram writebacks, flushed lines,
    fraction simulated, scratch accesses).  The steps are generated and simulated in one compiled
    call each (streams_numba.generate, hier_numba.run_steps); ``streams`` is that generation when
    the caller has it (:func:`sampled_streams`)."""
    lines, kinds, off, done = streams if streams is not None else sampled_streams(plan, budget)
    return _simulate(lines, kinds, off, done, plan.n_segments, hier, flush, st.period_hint(plan),
                     st.touches_once(plan))


def sampled_streams(plan: st.StreamPlan, budget: int = DEFAULT_BUDGET) -> tuple:
    """The steps the sampler simulates: (lines, kinds, offsets, steps) (StreamPlan.generate)."""
    n = plan.n_segments
    # the same plan's streams again for another core set or op: the arrays already made
    # (socsim.hw.cache.reuse; exact)
    streams = reuse.streams(plan, budget, lambda: plan.generate(0, n, budget, min(n, MIN_SEGMENTS)))
    # the cache model's driver runs them next: a cold run waits here for the child compiling it
    # (socsim.kernels.prefetch; every simulation's streams come from here)
    kernel_wait.wait()
    return streams


def busy_threads(plan: st.StreamPlan, streams: tuple) -> int:
    """How many leading threads have work in the sampled ``streams`` of ``plan`` when no other
    thread has any in any step (an op on more cores than it has work items: AlexNet's FC layers
    at batch 16 have two 12-pixel tiles), else ``plan.threads``."""
    off, done = streams[2], streams[3]
    if not done:
        return plan.threads
    busy = np.diff(off).reshape(done, plan.threads).any(axis=0)
    k = int(busy.sum())
    return k if 0 < k < plan.threads and busy[:k].all() else plan.threads


def same_streams(a: st.StreamPlan, sa: tuple, b: st.StreamPlan, sb: tuple) -> bool:
    """Whether the sampled streams ``sa`` of plan ``a`` give its first ``b.threads`` threads,
    step for step, the streams ``sb`` of plan ``b`` and its other threads none, over as many
    simulated steps of as many steps in all (and the same footprint)."""
    if (a.n_segments, a.line_bytes, a.footprint_bytes, a.scratch) != (b.n_segments, b.line_bytes,
                                                                       b.footprint_bytes, b.scratch):
        return False
    (la, ka, oa, da), (lb, kb, ob, db) = sa, sb
    if da != db:
        return False
    ga = np.diff(oa).reshape(da, a.threads)
    gb = np.diff(ob).reshape(db, b.threads)
    return (not ga[:, b.threads:].any() and np.array_equal(ga[:, :b.threads], gb)
            and np.array_equal(la, lb) and np.array_equal(ka, kb))


def _simulate(lines, kinds, off, done, n, hier: Hierarchy, flush: bool, period=None, once: bool = False):
    snap_cnt, snap_dram = hier.run_steps(lines, kinds, off, done, period, once)
    cnt = snap_cnt[-1].astype(np.float64)
    fills, wbs = float(snap_dram[-1, 0]), float(snap_dram[-1, 1])
    if done < n:
        # extrapolate with the per-step delta of the second half of the simulated steps
        m = max(1, done // 2)
        rest = (n - done) / m
        cnt = cnt + (snap_cnt[-1] - snap_cnt[done - 1 - m]) * rest
        fills += (snap_dram[-1, 0] - snap_dram[done - 1 - m, 0]) * rest
        wbs += (snap_dram[-1, 1] - snap_dram[done - 1 - m, 1]) * rest
    flushed = 0
    if flush:
        before = hier.dram_writebacks
        hier.flush_last()
        flushed = hier.dram_writebacks - before
    names = hier.level_names()
    lbytes = hier.line_bytes()
    stats = []
    for i, name in enumerate(names):
        ls = LevelStats(name, line_bytes=lbytes[i])
        ls.add_row(cnt[i])
        stats.append(ls)
    scratch = hier.scratch_accesses * (n / done)
    return tuple(stats), int(round(fills)), int(round(wbs)), int(flushed), done / n, int(scratch)


# ----------------------------------------------------------------------------- hierarchies

def cpu_private_geoms(soc: SocSpec, core: int) -> tuple[CacheGeom, ...]:
    cl = soc.cpu.cluster_of(core)
    return (CacheGeom.from_spec("L1D", cl.l1d), CacheGeom.from_spec("L2", cl.l2))


def cpu_shared_geoms(soc: SocSpec) -> tuple[CacheGeom, ...]:
    g = [CacheGeom.from_spec("L3", soc.cpu.l3)]
    if soc.cpu.slc is not None:
        g.append(CacheGeom.from_spec("SLC", soc.cpu.slc))
    return tuple(g)


def op_memory(op: Op, unit: str, soc: SocSpec, cores: tuple[int, ...] = (), threads: int | None = None,
              batch: int | None = None, budget: int = DEFAULT_BUDGET) -> MemProfile:
    """Memory profile of ``op`` on ``unit`` ('cpu' with ``cores``, or 'dsp' with ``threads`` HVX
    contexts and the (padded) ``batch`` the kernel lays out)."""
    if unit == "cpu":
        cores = tuple(cores) or (soc.cpu.clusters[-1].core_ids[0],)
        priv = tuple(cpu_private_geoms(soc, c) for c in cores)
        kind, dtype, params = _stream_key(op)
        return _cpu_memory(kind, dtype, params, int(op.bytes_read), int(op.bytes_written),
                           priv, cpu_shared_geoms(soc), budget)
    if unit == "dsp":
        if soc.dsp is None:
            raise ValueError(f"{soc.name} has no DSP")
        l2 = CacheGeom.from_spec("L2", soc.dsp.l2)
        ctx = threads or soc.dsp.hvx_contexts
        b = batch if batch is not None else op.batch
        kind, dtype, params = _stream_key(op)
        return _dsp_memory(kind, dtype, params, int(op.bytes_read), int(op.bytes_written),
                           l2, ctx, b, int(soc.dsp.vtcm_kb * 1024), budget)
    raise ValueError(f"unknown unit {unit!r}")


def warm_periodic_driver(soc: SocSpec) -> int:
    """Compile the cache model's periodic driver (hier_period), which only GEMM steps of at least
    streams.PERIOD_MIN_ACCESSES accesses call (FC layers): one such step, a 16 x 4096 x 2048 FC
    on the SoC's first big core, simulated with its period hint outside the profile store
    (``socsim warmup``).  Returns the accesses it skipped (non-zero: the driver ran)."""
    op = Op(name="warmup_fc", kind="gemm", phase="forward", layer="fc", dtype="fp32",
            params=(("m", 16), ("k", 4096), ("n", 2048)), bytes_read=0, bytes_written=0)
    plan = plan_for(op, "cpu", 1)
    core = soc.cpu.clusters[-1].core_ids[0]
    priv = cpu_private_geoms(soc, core)
    hier = Hierarchy(private=priv, shared=cpu_shared_geoms(soc), threads=1,
                     stream_line_bytes=priv[0].line_bytes, per_thread_private=(priv,))
    simulate(plan, hier)
    return int(hier.skipped)


def warm_ring_driver(soc: SocSpec) -> int:
    """Compile the cache model's ring path (hier_fifo), which only element-wise steps of at least
    hier_fifo.MIN_ACCESSES accesses take (not the quick-start's): one such op on the SoC's last
    two cores, outside the profile store (``socsim warmup``).  Returns the calls that took the
    path (1: it ran)."""
    plan = st.eltwise_stream(4 << 20, 4 << 20, 2)
    cores = sorted(c for cl in soc.cpu.clusters for c in cl.core_ids)[-2:]
    priv = tuple(cpu_private_geoms(soc, c) for c in cores)
    hier = Hierarchy(private=priv[0], shared=cpu_shared_geoms(soc), threads=len(priv),
                     stream_line_bytes=priv[0][0].line_bytes, per_thread_private=priv)
    simulate(plan, hier)
    return int(hier.fifo)


def _stream_key(op: Op) -> tuple:
    """What an op's stream depends on besides its byte counts: element-wise streams only on the
    bytes and the number of passes, so a relu, a transpose and an SGD step of one size share a
    profile (memoised on this + hierarchy geometry + threads; frequency plays no part)."""
    kind = lookup(op.kind)
    if kind.kernel == "gemm" or kind.is_plane:
        return op.kind, op.dtype, op.params
    return ELTWISE, "", (("passes", kind.passes),)


def _plan_of(kind: str, dtype: str, params: tuple, rd: int, wr: int, unit: str, threads: int,
             **kw) -> st.StreamPlan:
    """The stream plan of a stream key (:func:`_stream_key`) with its byte counts."""
    if kind == ELTWISE:
        return st.eltwise_stream(rd, wr, threads, kw.get("line", 64), dict(params)["passes"])
    op = Op(name="_mem", kind=kind, phase="forward", layer="_mem", dtype=dtype, params=params,
            bytes_read=rd, bytes_written=wr)
    return plan_for(op, unit, threads, **kw)


# Profiles by what the simulation reads (the plan's stream and sizes, the caches, the budget), in
# the process: ops whose stream keys differ can have one plan (a stride-1 depthwise layer's
# error gradient streams as its forward pass, a 1x1 conv's as the forward pass of the conv with
# cin and cout swapped: 64 of Swan MobileNet-v2's 640 plans are two ops', 128 of its 1,408
# simulations), and such an op takes the profile simulated for the other, exactly (docs/memory.md,
# Sampling).  Cleared with the memos below (``_cpu_memory.cache_clear``, ``_dsp_memory``'s).
_BY_PLAN: dict[tuple, MemProfile] = {}
_BY_PLAN_MAX = 4096


def _plan_key(plan: st.StreamPlan, *rest) -> tuple:
    """What a plan's simulation depends on: its kernel and geometry, steps, threads, line,
    footprint and scratchpad ranges (not its notes), with ``rest`` (caches, budget, unit)."""
    return (plan.kernel, plan.params.tobytes(), plan.n_segments, plan.threads, plan.line_bytes,
            plan.footprint_bytes, plan.scratch) + rest


def _remember(key: tuple, profile: MemProfile) -> MemProfile:
    if len(_BY_PLAN) >= _BY_PLAN_MAX:
        _BY_PLAN.clear()
    _BY_PLAN[key] = profile
    return profile


@profile_store.memoised("memprofiles", profile_store.encode, profile_store.decode)
def _cpu_memory(kind, dtype, params, rd, wr, priv, shared, budget) -> MemProfile:
    threads = len(priv)
    line = priv[0][0].line_bytes
    plan = _plan_of(kind, dtype, params, rd, wr, "cpu", threads, line=line)
    key = _plan_key(plan, "cpu", priv, shared, budget)
    if key in _BY_PLAN:
        return _BY_PLAN[key]
    streams = sampled_streams(plan, budget)
    busy = busy_threads(plan, streams)
    if busy < threads:
        # the idle threads touch no cache (their private counters stay zero, the merge into the
        # shared chain skips them): when the busy threads' streams are those of the op on just
        # those cores, the profile is that one's (memoised, stored), with this split's work items
        fewer = _plan_of(kind, dtype, params, rd, wr, "cpu", busy, line=line)
        if same_streams(plan, streams, fewer, sampled_streams(fewer, budget)):
            p = _cpu_memory(kind, dtype, params, rd, wr, priv[:busy], shared, budget)
            return replace(p, levels=tuple(replace(lv) for lv in p.levels),
                           work_items=plan.n_segments * threads)
    hier = Hierarchy(private=priv[0], shared=shared, threads=threads, stream_line_bytes=line,
                     per_thread_private=priv)
    stats, fills, wbs, _, frac, scratch = simulate(plan, hier, budget, streams=streams)
    last = shared[-1].line_bytes if shared else priv[0][-1].line_bytes
    profile = MemProfile(stats, fills * last, wbs * last, scratch, plan.footprint_bytes, frac, last,
                         work_items=plan.n_segments * threads)
    # only a profile simulated for all its threads is the plan's own: the idle-threads reuse above
    # also depends on the plan of fewer threads, which the op's stream key builds
    return _remember(key, profile) if busy == threads else profile


@profile_store.memoised("memprofiles", profile_store.encode, profile_store.decode)
def _dsp_memory(kind, dtype, params, rd, wr, l2, contexts, batch, vtcm_bytes, budget) -> MemProfile:
    plan = _plan_of(kind, dtype, params, rd, wr, "dsp", contexts, batch=batch, vtcm_bytes=vtcm_bytes,
                    line=l2.line_bytes)
    key = _plan_key(plan, "dsp", l2, budget)
    if key in _BY_PLAN:
        return _BY_PLAN[key]
    hier = Hierarchy(private=(), shared=(l2,), threads=contexts, stream_line_bytes=l2.line_bytes,
                     scratch=plan.scratch)
    # the op's output leaves the DSP (to the next op or back to the CPU): clean dirty lines
    stats, fills, wbs, flushed, frac, scratch = simulate(plan, hier, budget, flush=True)
    lb = l2.line_bytes
    return _remember(key, MemProfile(stats, fills * lb, (wbs + flushed) * lb, scratch, plan.footprint_bytes, frac,
                                     lb, dram_clean_bytes=flushed * lb))


def _clearing(memo, clear_store_memo):
    """``memo.cache_clear`` that also forgets the profiles by plan and the streams reused
    (tests clear the memos to compute a profile again)."""
    def cache_clear() -> None:
        clear_store_memo()
        _BY_PLAN.clear()
        reuse.clear()                   # the streams reused across core sets (cache.reuse)
    memo.cache_clear = cache_clear


_clearing(_cpu_memory, _cpu_memory.cache_clear)
_clearing(_dsp_memory, _dsp_memory.cache_clear)
