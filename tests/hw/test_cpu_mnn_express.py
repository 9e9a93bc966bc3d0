"""MNN's Express chains (socsim.hw.cpu.MNN_EXPRESS_CHAINS): its SGD step (mnn_sgd_chain), six binary ops split
over the threads and five copies on the calling thread per parameter tensor, against the fused
in-place update other frameworks' ops keep."""
import pytest
from hypothesis import given, settings, strategies as st

from socsim.hw import cpu
from socsim.hw.cost import CpuConfig
from socsim.spec import load_soc
from socsim.workload.ops import Op, as_training_step, make_params, with_cpu_framework


@pytest.fixture(scope="module")
def soc():
    return load_soc("sd855")


def _cfg(soc, cores, scale=1.0):
    return CpuConfig(tuple(cores), tuple(sorted((c.name, c.max_mhz * scale) for c in soc.cpu.clusters)))


def _upd(n, dtype="fp32"):
    eb = 4 if dtype == "fp32" else 1
    return Op("u", "sgd_update", "update", "l", dtype, make_params(n=n), flops=2 * n,
              bytes_read=2 * n * eb, bytes_written=n * eb, weight_bytes=n * eb, out_bytes=n * eb)


FC1_UPD = _upd(9216 * 4096)      # AlexNet's fc1, 151 MB
SMALL_UPD = _upd(64 * 3 * 11 * 11)


def test_the_chain_counts_follow_mnns_sgd():
    """3 scalar-by-tensor products and 3 two-tensor ops (9 reads, 6 writes of the tensor against the
    fused update's 2 and 1), and 5 memcpys (gradient to constant, two fix(CONSTANT), fix(TRAINABLE),
    Variable::input)."""
    assert cpu.mnn_sgd_chain(FC1_UPD)
    assert cpu.split_traffic_factor(FC1_UPD) == pytest.approx(15 / 3)
    assert cpu.serial_copy_elements(FC1_UPD) == 5 * 9216 * 4096
    for op in (with_cpu_framework(FC1_UPD, "pytorch"), with_cpu_framework(FC1_UPD, "tflite"), _upd(1000, "int8")):
        assert not cpu.mnn_sgd_chain(op)
        assert cpu.split_traffic_factor(op) == 1.0 and cpu.serial_copy_elements(op) == 0.0
        assert cpu.serial_cycles(op, load_soc("sd855").cpu.clusters[-1]) == 0.0


def test_the_copies_of_a_large_tensor_reach_dram_on_one_thread(soc):
    llc = (soc.cpu.l3.size_kb + soc.cpu.slc.size_kb) * 1024
    p = 9216 * 4096 * 4
    assert cpu.serial_dram_bytes(FC1_UPD, soc) == pytest.approx(5 * 2 * (p - llc))
    assert cpu.serial_dram_bytes(SMALL_UPD, soc) == 0.0
    c = cpu.cpu_cost(soc, FC1_UPD, _cfg(soc, [4, 5, 6, 7]))
    assert c.dram_bytes >= 5 * 2 * (p - llc)


@pytest.mark.parametrize("cores", [[4], [4, 5, 6, 7], [0], [0, 1, 2, 3]])
def test_mnns_update_costs_more_than_the_fused_one(soc, cores):
    cfg = _cfg(soc, cores)
    for op in (FC1_UPD, SMALL_UPD):
        mnn = cpu.cpu_cost(soc, op, cfg)
        fused = cpu.cpu_cost(soc, with_cpu_framework(op, "pytorch"), cfg)
        # 25 passes over the tensor against 3: more, and not beyond the ratio of the passes
        # (with some slack for the one thread's lower bandwidth)
        assert 2.0 < mnn.time_s / fused.time_s < 25 / 3 * 2.0
        assert mnn.dram_bytes >= fused.dram_bytes


@pytest.mark.parametrize("cores", [[4, 5, 6, 7], [0, 1, 2, 3], [0, 1, 2, 3, 4, 5, 6, 7]])
def test_the_copies_do_not_split(soc, cores):
    """The five copies run on the calling thread: the op's compute is at least their cycles on one
    core, however many threads split the binary ops."""
    cfg = _cfg(soc, cores)
    c = cpu.cpu_cost(soc, FC1_UPD, cfg)
    fastest = min(cpu.serial_cycles(FC1_UPD, soc.cpu.cluster_of(k)) / (cfg.freq(soc.cpu.cluster_of(k).name) * 1e6)
                  for k in cores)
    assert fastest > 0
    assert dict(c.detail)["compute_s"] >= fastest
    split = cpu.compute_cycles(FC1_UPD, soc.cpu.cluster_of(cores[0]), 1 / len(cores))
    assert split < cpu.compute_cycles(FC1_UPD, soc.cpu.cluster_of(cores[0]))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 50_000_000))
def test_chain_compute_is_six_passes(n):
    """The split part's cycles are the binary ops' passes: three one-input and three two-input
    element-wise passes, linear in the tensor."""
    cl = load_soc("sd855").cpu.clusters[-1]
    op = _upd(n)
    c = cpu.compute_cycles(op, cl)
    one = cpu.compute_cycles(Op("r", "relu", "forward", "l", "fp32", make_params(n=n), flops=n, bytes_read=4 * n,
                                bytes_written=4 * n, out_bytes=4 * n), cl)
    assert c == pytest.approx(3 * one + 3 * cpu.armk.cycles("add", cl.core_type) * n / 4, rel=1e-9)
    assert cpu.serial_copy_elements(op) == 5 * n


# MNN's training batch normalisation (BatchNormModule in training, and OpGrad's rules)
def _bn(kind, n=64 * 64 * 32 * 32, c=64, train=True):
    reads = 2 * n if kind == "batchnorm_bwd" else n
    op = Op("b", kind, "forward" if kind == "batchnorm" else "error_grad", "l", "fp32",
            make_params(batch=64, c=c, n=n), flops=8 * n, bytes_read=4 * reads + 8 * c, bytes_written=4 * n,
            out_bytes=4 * n)
    return as_training_step([op])[0] if train else op


def test_training_batchnorm_is_mnns_express_chain(soc):
    """Forward 9 passes (9 reads, 7 writes of the activations), backward 19 (23 reads, 15 writes),
    against the fused op's own stream; the inference op (eval mode: one _Scale) keeps the fused
    cost, and so do other frameworks'."""
    fwd, bwd, inf = _bn("batchnorm"), _bn("batchnorm_bwd"), _bn("batchnorm", train=False)
    assert cpu.mnn_express_chain(fwd) == (9, 0, 9, 7) and cpu.mnn_express_chain(bwd) == (13, 6, 23, 15)
    assert cpu.mnn_express_chain(inf) is None
    assert cpu.split_traffic_factor(fwd) == pytest.approx(16 / 2, rel=1e-4)
    assert cpu.split_traffic_factor(bwd) == pytest.approx(38 / 3, rel=1e-4)
    assert cpu.serial_copy_elements(fwd) == 0.0
    cfg = _cfg(soc, [4, 5, 6, 7])
    t_fwd, t_inf = cpu.cpu_cost(soc, fwd, cfg), cpu.cpu_cost(soc, inf, cfg)
    assert 4.0 < t_fwd.time_s / t_inf.time_s < 16.0
    assert cpu.cpu_cost(soc, with_cpu_framework(fwd, "pytorch"), cfg).time_s == pytest.approx(t_inf.time_s)
    assert cpu.cpu_cost(soc, bwd, cfg).dram_bytes > cpu.cpu_cost(soc, with_cpu_framework(bwd, "pytorch"), cfg).dram_bytes
