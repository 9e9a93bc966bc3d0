"""An MNN mechanism that limits big-core thread scaling (docs/validation.md, "Big-core scaling
at the top steps"): a MatMul's row tiles of eP = 12 dealt round-robin with the remainder on the
last thread (a training step's fully connected layer at batch 16 runs on two threads whatever the
thread count).  MNN's SGD is its Express chain (tests/hw/test_cpu_mnn_sgd.py)."""
import pytest
from hypothesis import given, settings, strategies as st

from socsim.hw import cpu
from socsim.hw.cost import CpuConfig
from socsim.spec import load_soc
from socsim.workload.ops import CPU_FRAMEWORKS, Op, as_inference, as_training_step, make_params, with_cpu_framework

SOC = load_soc("sd855")


def _cfg(cores, big=2400.0, little=1800.0):
    return CpuConfig(tuple(cores), (("little", little), ("mid", big), ("prime", big)))


def _fc(m=16, phase="forward", dtype="fp32", k=9216, n=4096):
    """A training step's MatMul (CPUMatMul: the forward one takes its weights as an input)."""
    return as_training_step([Op("fc", "gemm", phase, "l", dtype, make_params(batch=m, count=1, m=m, k=k, n=n))])[0]


def _work(e, threads):
    """Rows of C each thread computes under StrassenMatrixComputor's loop (independent of the
    implementation under test)."""
    rows = [0] * threads
    for i in range(e // 12):
        rows[i % threads] += 12
    rows[-1] += e % 12
    return rows


def test_fc_at_batch_16_runs_on_two_threads():
    # one tile of 12 rows on the calling thread, the 4 remaining rows on the last thread
    for threads in (2, 3, 4, 8):
        assert cpu.split_shares(_fc(), threads) == (pytest.approx(0.75), pytest.approx(0.25))
    assert cpu.split_shares(_fc(), 1) == (1.0, 1.0)
    assert cpu.split_shares(_fc(m=48), 4) == (0.25, 0.25)
    assert cpu.split_shares(_fc(m=30), 2) == (pytest.approx(0.4), pytest.approx(0.6))
    # the weight gradient's MatMul has e = the layer's width: fine-grained
    wg = cpu.split_shares(_fc(m=4096, phase="weight_grad", k=16), 4)
    assert wg == (pytest.approx(0.25, abs=0.005), pytest.approx(0.25, abs=0.005))


@pytest.mark.parametrize("fw", [f for f in CPU_FRAMEWORKS if f != "mnn"])
def test_other_frameworks_and_int8_split_evenly(fw):
    assert cpu.split_shares(with_cpu_framework(_fc(), fw), 4) == (0.25, 0.25)
    assert cpu.split_shares(_fc(dtype="int8"), 4) == (0.25, 0.25)


def test_an_inference_fc_splits_evenly():
    # MNN infers a fully connected layer as Convolution1x1Strassen on weights packed at load,
    # split over its output channels: no CPUMatMul row tiles
    inf = as_inference(_fc())
    assert not inf.in_training_step
    assert cpu.split_shares(inf, 4) == (0.25, 0.25)
    # the backward MatMuls are CPUMatMul's in any graph
    assert cpu.split_shares(_fc(phase="error_grad"), 4) == (pytest.approx(0.75), pytest.approx(0.25))


@settings(max_examples=80, deadline=None)
@given(e=st.integers(1, 400), threads=st.integers(1, 8))
def test_split_shares_follow_the_tile_loop(e, threads):
    caller, other = cpu.split_shares(_fc(m=e), threads)
    if threads == 1:
        assert (caller, other) == (1.0, 1.0)
        return
    rows = _work(e, threads)
    assert sum(rows) == e
    assert caller == pytest.approx(rows[0] / e)
    assert other == pytest.approx(max(rows[1:]) / e)
    # the pacing share never beats an even split
    assert max(caller, other) >= 1.0 / threads - 1e-12
    assert cpu.split_share(_fc(m=e), threads) == max(caller, other)


def test_fc_compute_does_not_shrink_beyond_two_big_cores():
    fc = _fc()
    one, two, four = (cpu.cpu_cost(SOC, fc, _cfg(c)) for c in ([4], [4, 5], [4, 5, 6, 7]))
    c1, c2, c4 = (dict(x.detail)["compute_s"] for x in (one, two, four))
    # a training step's forward MatMul also packs its operands on the calling thread
    # (matmul_operands, serial_pack_elements): that part is the same on any number of threads,
    # and the tiles split what is left
    serial = cpu.serial_cycles(fc, SOC.cpu.cluster_of(4)) / 2400e6
    assert serial > 0
    assert c2 - serial == pytest.approx(0.75 * (c1 - serial), rel=1e-6)
    assert c4 == pytest.approx(c2, rel=1e-6)
    # the inference graph's layer (no CPUMatMul: no packing on one thread, an even split)
    inf = as_inference(fc)
    i1, i4 = (dict(cpu.cpu_cost(SOC, inf, _cfg(c)).detail)["compute_s"] for c in ([4], [4, 5, 6, 7]))
    assert i4 == pytest.approx(i1 / 4, rel=1e-6)
    # a batch that fills the tiles still splits four ways
    big = _fc(m=48)
    b1, b4 = (dict(cpu.cpu_cost(SOC, big, _cfg(c)).detail)["compute_s"] for c in ([4], [4, 5, 6, 7]))
    bs = cpu.serial_cycles(big, SOC.cpu.cluster_of(4)) / 2400e6
    assert b4 - bs == pytest.approx((b1 - bs) / 4, rel=1e-6)
