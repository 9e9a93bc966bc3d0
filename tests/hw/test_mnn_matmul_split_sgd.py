"""Two MNN mechanisms that limit big-core thread scaling (docs/validation.md, "Big-core scaling
at the top steps"): a MatMul's row tiles of eP = 12 dealt round-robin with the remainder on the
last thread (a fully connected layer at batch 16 runs on two threads whatever the thread count),
and MNN's SGD updating each parameter with six element-wise passes instead of one."""
import pytest
from hypothesis import given, settings, strategies as st

from socsim.hw import cpu
from socsim.hw.cost import CpuConfig
from socsim.spec import load_soc
from socsim.workload.ops import CPU_FRAMEWORKS, Op, make_params, with_cpu_framework

SOC = load_soc("sd855")


def _cfg(cores, big=2400.0, little=1800.0):
    return CpuConfig(tuple(cores), (("little", little), ("mid", big), ("prime", big)))


def _fc(m=16, phase="forward", dtype="fp32", k=9216, n=4096):
    return Op("fc", "gemm", phase, "l", dtype, make_params(batch=m, count=1, m=m, k=k, n=n))


def _update(n=37752832, dtype="fp32"):
    eb = {"fp32": 4, "int8": 1}[dtype]
    return Op("fc.update", "sgd_update", "update", "l", dtype, make_params(n=n),
              flops=2 * n, bytes_read=2 * n * eb, bytes_written=n * eb, weight_bytes=n * eb, out_bytes=n * eb)


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
    one, two, four = (cpu.cpu_cost(SOC, _fc(), _cfg(c)) for c in ([4], [4, 5], [4, 5, 6, 7]))
    c1, c2, c4 = (dict(x.detail)["compute_s"] for x in (one, two, four))
    assert c2 == pytest.approx(0.75 * c1, rel=1e-6)
    assert c4 == pytest.approx(c2, rel=1e-6)
    # a batch that fills the tiles still splits four ways
    big = _fc(m=48)
    b1, b4 = (dict(cpu.cpu_cost(SOC, big, _cfg(c)).detail)["compute_s"] for c in ([4], [4, 5, 6, 7]))
    assert b4 == pytest.approx(b1 / 4, rel=1e-6)


def test_mnn_sgd_is_six_elementwise_passes():
    n = 1000
    passes = cpu.mnn_sgd_passes(_update(n))
    assert [p.kind for p in passes] == ["mul", "add", "mul", "mul", "add", "sub"]
    assert sum(p.bytes_read for p in passes) == 9 * n * 4
    assert sum(p.bytes_written for p in passes) == 6 * n * 4
    assert all(p.phase == "update" and p.flops == n for p in passes)
    # other frameworks' optimizers and NITI's int8 update keep the one fused pass
    for fw in CPU_FRAMEWORKS:
        if fw != "mnn":
            assert cpu.mnn_sgd_passes(with_cpu_framework(_update(n), fw)) == ()
    assert cpu.mnn_sgd_passes(_update(n, dtype="int8")) == ()
    assert cpu.mnn_sgd_passes(_fc()) == ()


@pytest.mark.parametrize("cores", [[4], [0, 1], [4, 5, 6, 7]])
def test_mnn_update_costs_its_passes_in_sequence(cores):
    up = _update()
    cfg = _cfg(cores)
    whole = cpu.cpu_cost(SOC, up, cfg)
    parts = [cpu.cpu_cost(SOC, p, cfg) for p in cpu.mnn_sgd_passes(up)]
    assert whole.time_s == pytest.approx(sum(p.time_s for p in parts), rel=1e-9)
    assert whole.dram_bytes == sum(p.dram_bytes for p in parts)
    assert whole.bytes == sum(p.bytes for p in parts)
    assert min(p.activity for p in parts) - 1e-12 <= whole.activity <= max(p.activity for p in parts) + 1e-12
    d = dict(whole.detail)
    assert d["passes"] == 6.0
    assert d["dram_s"] == pytest.approx(sum(dict(p.detail)["dram_s"] for p in parts))
    # the fused update (another framework's) moves a third of the bytes and is faster
    fused = cpu.cpu_cost(SOC, with_cpu_framework(up, "pytorch"), cfg)
    assert fused.time_s < whole.time_s / 3
    assert 5 * fused.bytes == whole.bytes


def test_more_big_threads_do_not_speed_up_mnns_update():
    """Six streaming passes over fc1's 151 MB are bound by DRAM: four big cores are no faster
    than one at the top step (the phone's BIG1 -> BIG4 gains 2.1x, not 4x)."""
    up = _update()
    t1 = cpu.cpu_cost(SOC, up, _cfg([4])).time_s
    t4 = cpu.cpu_cost(SOC, up, _cfg([4, 5, 6, 7])).time_s
    assert t4 >= 0.9 * t1
