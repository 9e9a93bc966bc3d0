"""The CPU framework that runs an op (Op.cpu_framework): MNN's GEMM-path mechanisms (CPUMatMul's
one-thread passes, the weight gradient's Raster buffers and round-robin dW tiles) apply to MNN's
ops only; other frameworks' gradients take the generic split path; cost keys tell them apart."""
import pytest
from hypothesis import given, settings, strategies as st

from socsim.engine.oracle import CostOracle
from socsim.hw import cpu
from socsim.hw.cost import CpuConfig
from socsim.spec import load_soc
from socsim.workload.ops import CPU_FRAMEWORKS, Op, make_params, with_cpu_framework


SOC = load_soc("sd865")


@pytest.fixture(scope="module")
def soc():
    return SOC


def _cfg(soc, cores):
    return CpuConfig(tuple(cores), tuple(sorted((c.name, c.max_mhz) for c in soc.cpu.clusters)))


def _conv(kind, batch=64, cin=64, cout=192, kk=5, o=27, stride=1):
    phase = "weight_grad" if kind == "conv2d_wgrad" else "error_grad" if kind == "conv2d_dgrad" else "forward"
    return Op("g", kind, phase, "l", "fp32", make_params(batch=batch, cin=cin, h=o * stride, w=o * stride,
                                                         cout=cout, kh=kk, kw=kk, stride=stride, pad=kk // 2,
                                                         groups=1, oh=o, ow=o))


WG = _conv("conv2d_wgrad")                  # AlexNet's second convolution's weight gradient, batch 64
DG = _conv("conv2d_dgrad")
FWD = _conv("conv2d")
FC_DGRAD = Op("fd", "gemm", "error_grad", "l", "fp32", make_params(batch=16, count=1, m=16, k=4096, n=9216))


def test_untagged_ops_run_mnn_and_tags_are_canonical():
    assert WG.cpu_framework == "mnn"
    pt = with_cpu_framework(WG, "pytorch")
    assert pt.cpu_framework == "pytorch" and pt.attr("cpu_framework") == "pytorch"
    # MNN, the default, is no attr: an op tagged back to MNN is the untagged op
    assert with_cpu_framework(pt, "mnn") == WG
    assert with_cpu_framework(WG, "mnn") is WG
    with pytest.raises(ValueError, match="unknown CPU framework"):
        with_cpu_framework(WG, "caffe")


@pytest.mark.parametrize("fw", [f for f in CPU_FRAMEWORKS if f != "mnn"])
def test_mnn_gemm_mechanisms_apply_to_mnn_ops_only(fw):
    n, k = 64 * 27 * 27, 64 * 25
    for op in (WG, DG, FC_DGRAD):
        other = with_cpu_framework(op, fw)
        assert cpu.matmul_operands(op) and cpu.serial_pack_elements(op) > 0
        assert cpu.matmul_operands(other) == {} and cpu.serial_pack_elements(other) == 0.0
    assert cpu.im2col_buffer_bytes(WG) > 0 and cpu.im2col_buffer_bytes(with_cpu_framework(WG, fw)) == 0.0
    # MNN deals 134 dW tiles round-robin (the busiest of 4 threads does 34); others split evenly
    assert cpu.split_share(WG, 4) == pytest.approx(34 / 134)
    assert cpu.split_share(with_cpu_framework(WG, fw), 4) == 0.25
    # the generic path packs both operands once, in the split threads: im2col(X) and dY for the
    # weight gradient, dY and the weights (plus col2im) for the error gradient
    assert cpu.gemm_data_movement(with_cpu_framework(WG, fw)) == (k * n + 192 * n, 0.0)
    assert cpu.gemm_data_movement(with_cpu_framework(DG, fw)) == (192 * n + 192 * k, k * n)


def test_same_gradient_op_costs_differently_under_mnn_and_pytorch(soc):
    """The weight gradient MNN runs packs A and B and unpacks C on one thread, and writes and
    reads back its im2col buffer: slower than PyTorch's on four big cores, and it gains less from
    them.  A forward convolution (no mechanism differs) costs the same under either tag."""
    pt = with_cpu_framework(WG, "pytorch")
    four, one = _cfg(soc, [4, 5, 6, 7]), _cfg(soc, [4])
    m4, p4 = cpu.cpu_cost(soc, WG, four), cpu.cpu_cost(soc, pt, four)
    m1, p1 = cpu.cpu_cost(soc, WG, one), cpu.cpu_cost(soc, pt, one)
    assert m4.time_s > 1.05 * p4.time_s                     # 0.526 against 0.465 s
    assert p1.time_s / p4.time_s > m1.time_s / m4.time_s
    # the one-thread passes' DRAM traffic and the im2col spill are MNN's only
    assert m4.dram_bytes > p4.dram_bytes
    f = cpu.cpu_cost(soc, FWD, four)
    assert cpu.cpu_cost(soc, with_cpu_framework(FWD, "pytorch"), four) == f


def test_cost_keys_of_two_frameworks_never_meet(soc):
    """The framework is part of the op's signature, so the cost model's memo, the oracle's memo
    (shared between a fleet's runs: socsim.reuse) and its keys hold one entry per framework.  The
    cache simulation (socsim.hw.memory, the on-disk profile store) is keyed on the op's access
    stream, which no framework changes, so that profile is shared: the same hit rates and DRAM
    bytes for both, simulated once."""
    from socsim.hw.memory import _stream_key

    pt = with_cpu_framework(WG, "pytorch")
    assert WG.signature != pt.signature
    assert with_cpu_framework(pt, "mnn").signature == WG.signature
    oracle = CostOracle(soc)
    cfg = oracle.config("cpu", cores=(4, 5, 6, 7), freqs=_cfg(soc, [4]).freqs_mhz)
    assert oracle._key(WG, "cpu", cfg) != oracle._key(pt, "cpu", cfg)
    a, b = oracle.cost(WG, "cpu", cfg), oracle.cost(pt, "cpu", cfg)
    assert a is not None and b is not None and a.time_s != b.time_s
    assert len(oracle._memo) == 2
    model = oracle.model("cpu")
    assert model.cost(pt, cfg) == b and model.cost(WG, cfg) == a
    assert _stream_key(WG) == _stream_key(pt)
    # asking again in the other order gives the same answers (no entry was shared)
    fresh = CostOracle(soc)
    assert fresh.cost(pt, "cpu", cfg) == b and fresh.cost(WG, "cpu", cfg) == a


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["conv2d_dgrad", "conv2d_wgrad"]), batch=st.integers(1, 32),
       cin=st.integers(1, 512), cout=st.integers(1, 512), kk=st.sampled_from([1, 3, 5]),
       o=st.integers(1, 56), stride=st.sampled_from([1, 2]), threads=st.integers(1, 8),
       fw=st.sampled_from([f for f in CPU_FRAMEWORKS if f != "mnn"]))
def test_generic_path_has_no_serial_part_and_packs_no_more_than_mnn(kind, batch, cin, cout, kk, o, stride,
                                                                    threads, fw):
    op = _conv(kind, batch, cin, cout, kk, o, stride)
    other = with_cpu_framework(op, fw)
    assert cpu.serial_pack_elements(other) == 0.0 and cpu.serial_dram_bytes(other, SOC) == 0.0
    assert cpu.split_share(other, threads) == pytest.approx(1.0 / threads)
    generic = cpu.gemm_data_movement(other)[0]
    assert generic > 0
    # MNN moves every element the generic path packs and more (its buffers, C's unpacking)
    assert cpu.gemm_data_movement(op)[0] + cpu.serial_pack_elements(op) >= generic
    # col2im is the same in both
    assert cpu.gemm_data_movement(op)[1] == cpu.gemm_data_movement(other)[1]
