"""Access streams and sampling: compiled generators vs their numpy twin, sampled vs full simulation."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as hs

from socsim.hw.cache import streams as st
from socsim.hw.cache import streams_ref as ref
from socsim.hw.cache import streams_numba as sn
from socsim.hw.cache.geometry import CacheGeom
from socsim.hw.cache.hierarchy import Hierarchy
from socsim.hw.memory import simulate
from socsim.workload.ops import Op, make_params


def _conv(kind="conv2d", dtype="fp32", b=2, c=32, hw=16, o=32, k=3):
    return Op("c", kind, "forward", "l", dtype, make_params(batch=b, cin=c, h=hw, w=hw, cout=o, kh=k, kw=k,
                                                           stride=1, pad=k // 2, groups=1, oh=hw, ow=hw))


def _cpu_hier(threads=1):
    return Hierarchy((CacheGeom("L1D", 32 * 1024, 4, 64), CacheGeom("L2", 128 * 1024, 8, 64)),
                     (CacheGeom("L3", 1024 * 1024, 16, 64),), threads=threads)


def test_builder_runs_match_loop():
    b1, b2 = ref._Builder(64), ref._Builder(64)
    starts = np.array([0, 100, 1000], dtype=np.int64)
    b1.runs(starts, np.array([10, 200, 64]), np.array([0, 2, 0]))
    for s, n, k in zip(starts, [10, 200, 64], [0, 2, 0]):
        b2.run(int(s), n, k)
    assert np.array_equal(b1.build()[0], b2.build()[0])


def test_consecutive_repeats_collapse():
    b = ref._Builder(64)
    b.run(0, 32)
    b.run(32, 32, 2)
    lines, kinds = b.build()
    assert lines.tolist() == [0] and kinds.tolist() == [2]


# the weight gradient with a batch whose reduction (8 x 16 x 16 pixels) spans two of MNN's GEMM
# chunks (streams.wgrad_lchunk), as training batches do
@pytest.mark.parametrize("op", [_conv(), _conv("conv2d_wgrad", b=8), _conv("conv2d_dgrad"),
                                Op("g", "gemm", "forward", "l", "fp32", make_params(m=256, k=256, n=128)),
                                _conv("dwconv2d", b=4, c=64, hw=48, o=64)], ids=lambda o: o.kind)
def test_sampling_error_small_on_mid_sized_ops(op):
    threads = 2
    plan = st.cpu_conv_plan(op, threads) if op.kind in ("conv2d", "conv2d_wgrad", "conv2d_dgrad", "gemm") \
        else st.cpu_plane_plan(op, threads)
    full = simulate(plan, _cpu_hier(threads), budget=10**12)
    samp = simulate(plan, _cpu_hier(threads), budget=full[0][0].accesses // 5)
    assert samp[4] < 1.0                      # really sampled
    for lf, ls in zip(full[0], samp[0]):
        assert ls.accesses == pytest.approx(lf.accesses, rel=0.05)
        assert ls.hit_rate == pytest.approx(lf.hit_rate, abs=0.05)
    assert samp[1] == pytest.approx(full[1], rel=0.25, abs=200)    # DRAM fills


def test_dsp_conv_rereads_input_per_output_channel():
    op = _conv(dtype="int8", b=2, c=64, hw=8, o=64)
    plan = st.dsp_conv_plan(op, 4, 2, 128, 256 * 1024)
    assert plan.n_segments == 64 and plan.notes["weights_in_vtcm"]
    one = sum(s[0].size for s in plan.segment(0))
    assert one >= 2 * 64 * 8 * 8 // 128       # input of the batch at least once per pass


def test_eltwise_covers_all_bytes():
    op = Op("r", "relu", "forward", "l", "fp32", make_params(n=100_000), bytes_read=400_000, bytes_written=400_000)
    plan = st.eltwise_plan(op, 2)
    lines = np.concatenate([s[0] for k in range(plan.n_segments) for s in plan.segment(k)])
    assert np.unique(lines).size == pytest.approx(800_000 / 64, rel=0.01)


CONV_KINDS = ("conv2d", "conv2d_wgrad", "conv2d_dgrad", "gemm")
PLANE_KINDS = ("dwconv2d", "dwconv2d_dgrad", "dwconv2d_wgrad", "maxpool", "maxpool_bwd", "avgpool")


def _random_op(kind, dtype, b, c, hw, o, k, stride, nbytes):
    if kind == "gemm":
        return Op("g", kind, "forward", "l", dtype, make_params(m=hw * 3 + 1, k=c * 3, n=o))
    if kind.startswith(("maxpool", "avgpool")):
        return Op("p", kind, "forward", "l", dtype, make_params(batch=b, c=c, h=hw, w=hw,
                                                                k=min(max(k, 2), hw), stride=stride))
    if kind in CONV_KINDS or kind.startswith("dwconv"):
        pad = k // 2
        oh = (hw + 2 * pad - k) // stride + 1
        cout = c if kind.startswith("dwconv") else o
        return Op("c", kind, "forward", "l", dtype, make_params(batch=b, cin=c, h=hw, w=hw, cout=cout, kh=k, kw=k,
                                                                stride=stride, pad=pad, groups=1, oh=oh, ow=oh))
    n = nbytes // 4
    return Op("e", kind, "forward", "l", dtype, make_params(n=n), bytes_read=nbytes, bytes_written=nbytes // 3)


def _plans(op, unit, threads, batch, vtcm):
    if op.kind in CONV_KINDS:
        if unit == "cpu":
            return st.cpu_conv_plan(op, threads), ref.cpu_conv_plan(op, threads)
        return st.dsp_conv_plan(op, threads, batch, 128, vtcm), ref.dsp_conv_plan(op, threads, batch, 128, vtcm)
    if op.kind in PLANE_KINDS:
        if unit == "cpu":
            return st.cpu_plane_plan(op, threads), ref.cpu_plane_plan(op, threads)
        return st.dsp_plane_plan(op, threads, batch), ref.dsp_plane_plan(op, threads, batch)
    return st.eltwise_plan(op, threads), ref.eltwise_plan(op, threads)


@settings(max_examples=60, deadline=None)
@given(kind=hs.sampled_from(CONV_KINDS + PLANE_KINDS + ("relu", "requant_dynamic")),
       dtype=hs.sampled_from(["fp32", "int8"]), unit=hs.sampled_from(["cpu", "dsp"]),
       b=hs.integers(1, 3), c=hs.integers(1, 20), hw=hs.integers(1, 13), o=hs.integers(1, 20),
       k=hs.sampled_from([1, 3, 5]), stride=hs.integers(1, 2), threads=hs.integers(1, 4),
       nbytes=hs.integers(4, 3_000_000), vtcm=hs.sampled_from([0, 1 << 20]), data=hs.data())
def test_compiled_streams_match_reference(kind, dtype, unit, b, c, hw, o, k, stride, threads, nbytes, vtcm, data):
    if k > hw + 2 * (k // 2):
        k = 1
    op = _random_op(kind, dtype, b, c, hw, o, k, stride, nbytes)
    fast, slow = _plans(op, unit, threads, b, vtcm)
    assert (fast.n_segments, fast.footprint_bytes, fast.scratch) == (slow.n_segments, slow.footprint_bytes, slow.scratch)
    steps = data.draw(hs.lists(hs.integers(0, fast.n_segments - 1), min_size=1, max_size=4))
    for step in steps:
        for (lf, kf), (lr, kr) in zip(fast.segment(step), slow.segment(step)):
            assert np.array_equal(lf, lr) and np.array_equal(kf, kr)


def test_generate_stops_at_budget_and_min_steps():
    plan = st.cpu_conv_plan(_conv(), 2)
    one = sum(s[0].size for s in plan.segment(0))
    lines, kinds, off, done = plan.generate(0, plan.n_segments, budget=3 * one, min_segs=1)
    assert done == 3 and off.size == 2 * done + 1 and off[-1] == lines.size
    _, _, _, done = plan.generate(0, plan.n_segments, budget=1, min_segs=5)
    assert done == 5
    # groups laid out step-major, thread-minor, equal to the one-step call
    lines, kinds, off, done = plan.generate(0, 4)
    seg = plan.segment(2)
    assert np.array_equal(lines[off[4]:off[5]], seg[0][0]) and np.array_equal(lines[off[5]:off[6]], seg[1][0])


def _simulate_ref(plan, hier, budget):
    """The original per-step sampler over the reference plan and Hierarchy.run (the twin)."""
    snaps, done, used = [], 0, 0
    while done < plan.n_segments:
        segs = plan.segment(done)
        used += sum(s[0].shape[0] for s in segs)
        hier.run(segs)
        done += 1
        snaps.append((hier.counters().copy(), hier.dram_fills, hier.dram_writebacks))
        if used >= budget and done >= min(plan.n_segments, 3):
            break
    return snaps, hier.scratch_accesses


@pytest.mark.parametrize("op,unit", [(_conv(), "cpu"), (_conv("conv2d_wgrad"), "cpu"),
                                     (_conv("dwconv2d", b=2, c=16, hw=20, o=16), "cpu"),
                                     (_conv(dtype="int8", b=2, c=16, hw=12, o=8), "dsp")],
                         ids=["conv", "wgrad", "dw", "dsp-conv"])
def test_compiled_hierarchy_matches_per_step_reference(op, unit):
    threads = 3 if unit == "cpu" else 4
    if unit == "cpu":
        fast, slow = st.cpu_conv_plan(op, threads) if op.kind != "dwconv2d" else st.cpu_plane_plan(op, threads), None
        slow = ref.cpu_conv_plan(op, threads) if op.kind != "dwconv2d" else ref.cpu_plane_plan(op, threads)
        mk = lambda: _cpu_hier(threads)                                           # noqa: E731
    else:
        fast, slow = st.dsp_conv_plan(op, threads, 2, 128, 0), ref.dsp_conv_plan(op, threads, 2, 128, 0)
        mk = lambda: Hierarchy((), (CacheGeom("L2", 64 * 1024, 8, 128),), threads=threads,   # noqa: E731
                               stream_line_bytes=128, scratch=((0, 3),))
    budget = 20_000
    snaps, scratch = _simulate_ref(slow, mk(), budget)
    h = mk()
    lines, kinds, off, done = fast.generate(0, fast.n_segments, budget, min(fast.n_segments, 3))
    cnt, dram_ = h.run_steps(lines, kinds, off, done)
    assert done == len(snaps)
    for s, (c, f, w) in enumerate(snaps):
        assert np.array_equal(cnt[s], c) and tuple(dram_[s]) == (f, w)
    assert h.scratch_accesses == scratch


def _wgrad_regions(plan):
    """(lines, kinds, thread of each access, geometry) of a whole weight-gradient plan."""
    from socsim.hw.cache import streams_numba as sn

    g = dict(zip(sn.FIELDS[sn.CPU_CONV], (int(x) for x in plan.params)))
    lines, kinds, off, done = plan.generate()
    assert done == plan.n_segments
    thread = np.repeat(np.tile(np.arange(plan.threads), done), np.diff(off))
    return lines, kinds, thread, g


@pytest.mark.parametrize("b,chunks", [(2, 1), (8, 2), (32, 6)])
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_wgrad_writes_dw_once_per_chunk_split_by_rows(b, chunks, threads):
    """MNN's weight-gradient GEMM keeps each 12x8 dW tile in registers over a whole chunk of the
    reduction: dW is written once per chunk (partial product, then the add), never once per
    pixel tile, and each dW line belongs to one thread."""
    op = _conv("conv2d_wgrad", b=b)
    plan = st.cpu_conv_plan(op, threads)
    assert plan.notes["chunks"] == chunks
    lines, kinds, thread, g = _wgrad_regions(plan)
    line = plan.line_bytes
    dw_lines = (g["O4"] * g["K"] * 16) // line            # fp32 accumulators, [O/4, K, 4]
    in_dw = (lines >= g["w_base"] // line) & (lines < g["w_base"] // line + dw_lines)
    wr = kinds != 0
    assert int((in_dw & wr).sum()) == chunks * dw_lines
    assert np.unique(lines[in_dw & wr]).size == dw_lines
    if chunks > 1:
        in_ct = (lines >= g["ct_base"] // line) & (lines < g["ct_base"] // line + dw_lines)
        assert int((in_ct & wr).sum()) == chunks * dw_lines
    owners = {}
    for ln, t in zip(lines[in_dw & wr].tolist(), thread[in_dw & wr].tolist()):
        assert owners.setdefault(ln, t) == t


def test_wgrad_total_work_does_not_grow_with_threads():
    """The threads split dW's rows: the dY traffic in all (each row tile reads the chunk's dY
    once) is the same on 1, 2 or 4 threads (the old stream had every thread sweep every pixel
    tile for its share of dW)."""
    op = _conv("conv2d_wgrad", b=8)
    counts = []
    for threads in (1, 2, 4):
        lines, kinds, _, g = _wgrad_regions(st.cpu_conv_plan(op, threads))
        line = 64
        in_dy = (lines >= g["out_base"] // line) & (lines < g["pack_base"] // line)
        counts.append(int(in_dy.sum()))
    assert counts[0] == counts[1] == counts[2]


def test_kernels_pass_access_kinds_as_int64():
    """The kernels pass the access kinds to ``_emit`` as numpy int64 scalars, not as Python ints:
    numba types a global Python int as a literal and compiled ``_emit`` once per kind (a first
    run compiled it four times, ~1 CPU s; docs/performance.md, First run).  Checked on the
    kernels' code, since a kernel loaded from numba's cache compiles nothing to count."""
    import numba as nb

    from socsim.hw.cache import streams_numba as sn

    assert {nb.typeof(k) for k in (sn._READ, sn._WRITE, sn._WRITE_FULL)} == {nb.types.int64}
    assert (sn._READ, sn._WRITE, sn._WRITE_FULL) == (sn.READ, sn.WRITE, sn.WRITE_FULL)
    for kernel in (sn._cpu_conv_tile, sn._cpu_wgrad_step, sn._group_cpu, sn._group_dsp):
        names = set(kernel.py_func.__code__.co_names)
        assert not names & {"READ", "WRITE", "WRITE_FULL"}, kernel
        assert names & {"_READ", "_WRITE_FULL"}, kernel


def test_cpu_streams_compile_no_dsp_kernel():
    """A CPU kernel's streams come from the CPU generator, whose compiled code holds no HVX
    kernel: a CPU-only run (the quick-start) compiles none (docs/performance.md, First run)."""
    from socsim.hw.cache import streams_numba as sn

    names = set(sn._group_cpu.py_func.__code__.co_names)
    assert not names & {"DSP_CONV", "DSP_PLANE"}
    dw = _conv("dwconv2d", b=2, c=16, hw=20, o=16)
    cpu, dsp = st.cpu_plane_plan(dw, 2), st.dsp_plane_plan(dw, 2, 2)
    assert cpu.kernel == sn.CPU_PLANE and dsp.kernel == sn.DSP_PLANE
    for plan in (cpu, dsp):     # each through its own generator, equal to the one-step call
        lines, _, off, done = plan.generate(0, 2)
        assert done == 2 and np.array_equal(lines[off[2]:off[3]], plan.segment(1)[0][0])


@settings(max_examples=40, deadline=None)
@given(kind=hs.sampled_from(CONV_KINDS + PLANE_KINDS + ("relu",)), unit=hs.sampled_from(["cpu", "dsp"]),
       c=hs.integers(1, 20), hw=hs.integers(1, 13), o=hs.integers(1, 20), threads=hs.integers(1, 4),
       frac=hs.floats(0.0, 1.0))
def test_generate_into_a_short_buffer_counts_and_writes_the_prefix(kind, unit, c, hw, o, threads, frac):
    """Past its buffer the generator only counts (streams_numba._emit's one-step count): the
    count is at least the stream's length (the caller's second buffer size) and what fits is
    the stream's own prefix."""
    op = _random_op(kind, "fp32", 2, c, hw, o, 3 if hw >= 3 else 1, 1, 100_000)
    plan = _plans(op, unit, threads, 2, 0)[0]
    full, fk, _, steps = plan.generate(0, plan.n_segments)
    cap = int(full.size * frac)
    out_l = np.full(cap, -7, np.int64)
    out_k = np.zeros(cap, np.uint8)
    off = np.zeros(plan.n_segments * plan.threads + 1, np.int64)
    n, done = sn.generate(plan.kernel, plan.params, plan.line_bytes, 0, plan.n_segments, 1 << 62, 1, out_l, out_k, off)
    assert done == steps and n >= full.size
    assert np.array_equal(out_l, full[:cap]) and np.array_equal(out_k, fk[:cap])


@settings(max_examples=40, deadline=None)
@given(b=hs.integers(1, 3), c=hs.integers(1, 40), hw=hs.integers(1, 14), o=hs.integers(1, 12),
       k=hs.sampled_from([1, 3, 5]), stride=hs.integers(1, 2), threads=hs.integers(1, 4),
       vtcm=hs.sampled_from([0, 1 << 20]), wgrad=hs.booleans(), budget=hs.integers(1, 20_000),
       cap=hs.integers(1, 4_000))
def test_dsp_conv_steps_copied_rows_equal_each_step_alone(b, c, hw, o, k, stride, threads, vtcm, wgrad, budget,
                                                          cap):
    """The DSP conv driver copies a row's input part from the thread's previous step: every
    multi-step generation (whole, sampled, or into a buffer too small) equals the steps made one
    at a time, each from scratch, laid out one after the other."""
    if k > hw + 2 * (k // 2):
        k = 1
    kind = "conv2d_wgrad" if wgrad else "conv2d"
    op = _random_op(kind, "int8", b, c, hw, o, k, stride, 4)
    plan = st.dsp_conv_plan(op, threads, b, 128, vtcm)
    lines, kinds, off, done = plan.generate(0, plan.n_segments, budget, min(plan.n_segments, 3))
    parts = [s for step in range(done) for s in plan.segment(step)]
    assert np.array_equal(lines, np.concatenate([p[0] for p in parts]))
    assert np.array_equal(kinds, np.concatenate([p[1] for p in parts]))
    assert np.array_equal(np.diff(off), [p[0].size for p in parts])
    # into a buffer of ``cap``: what is written is the stream's start (and all of it when it fits)
    out_l, out_k = np.full(cap, -7, np.int64), np.zeros(cap, np.uint8)
    off2 = np.zeros(plan.n_segments * threads + 1, np.int64)
    n, done2 = sn.generate(plan.kernel, plan.params, plan.line_bytes, 0, plan.n_segments, budget,
                           min(plan.n_segments, 3), out_l, out_k, off2)
    if n <= cap:
        assert (n, done2) == (lines.size, done)
    m = min(n, cap, lines.size)
    assert np.array_equal(out_l[:m], lines[:m]) and np.array_equal(out_k[:m], kinds[:m])
