"""Access streams and sampling: sampled simulation stays close to full simulation."""
import numpy as np
import pytest

from socsim.hw.cache import streams as st
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
    b1, b2 = st._Builder(64), st._Builder(64)
    starts = np.array([0, 100, 1000], dtype=np.int64)
    b1.runs(starts, np.array([10, 200, 64]), np.array([0, 2, 0]))
    for s, n, k in zip(starts, [10, 200, 64], [0, 2, 0]):
        b2.run(int(s), n, k)
    assert np.array_equal(b1.build()[0], b2.build()[0])


def test_consecutive_repeats_collapse():
    b = st._Builder(64)
    b.run(0, 32)
    b.run(32, 32, 2)
    lines, kinds = b.build()
    assert lines.tolist() == [0] and kinds.tolist() == [2]


@pytest.mark.parametrize("op", [_conv(), _conv("conv2d_wgrad"), _conv("conv2d_dgrad"),
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
