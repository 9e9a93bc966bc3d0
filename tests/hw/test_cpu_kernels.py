"""The CPU cost model's compute cycles from the kernels' instruction streams (socsim.hw.armk)."""
import glob

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.hw import armk
from socsim.hw import cpu
from socsim.spec import load_soc
from socsim.workload.ops import Op, make_params, with_cpu_framework


def conv(kind="conv2d", phase="forward", k=3, stride=1, batch=8, c=64, hw=32, dtype="fp32"):
    o = (hw - 1) // stride + 1
    p = make_params(batch=batch, cin=c, h=hw, w=hw, cout=c, kh=k, kw=k, stride=stride, pad=k // 2, oh=o, ow=o)
    return Op("c", kind, phase, "l", dtype, p, macs=batch * o * o * c * c * k * k)


def test_every_shipped_core_type_has_a_model_in_the_table():
    types = set()
    for path in glob.glob("soc_specs/*.yaml"):
        for cl in yaml.safe_load(open(path))["cpu"]["clusters"]:
            types.add(cl["core_type"].lower())
    missing = {t for t in types if armk.cycles("gemm_f32_12x8", t) is None}
    assert not missing
    assert armk.cycles("gemm_f32_12x8", "no-such-core") is None


def test_a_core_type_without_a_model_keeps_the_instruction_mix_bound():
    cl = load_soc("sd865").cluster("mid")
    other = cl.model_copy(update={"core_type": "custom-core"})
    op = conv()
    assert cpu.compute_cycles(op, cl) != cpu.compute_cycles(op, other)
    units = op.macs / 4
    mix = max(cpu.unit_cycles(other, cpu.GEMM_MIX), 8 / other.fp32_flops_per_cycle)
    assert cpu.compute_cycles(op, other) > units * mix / other.fp32_efficiency


def test_the_gemm_tile_follows_the_table_per_core_type():
    soc = load_soc("sd865")    # A55 little, A77 mid and prime
    op = conv()
    for name in ("little", "mid"):
        cl = soc.cluster(name)
        tile = op.macs / 4 * armk.cycles("gemm_f32_12x8", cl.core_type) / cl.fp32_efficiency
        packed, added = cpu.gemm_data_movement(op)
        assert added == 0
        total = cpu.compute_cycles(op, cl)
        assert total == pytest.approx(tile + packed / 4 * armk.cycles("im2col_pack", cl.core_type))
        assert 0 < total - tile < 0.1 * tile      # packing is a few percent of a 64-channel conv


def test_col2im_only_where_windows_overlap():
    assert cpu.gemm_data_movement(conv("conv2d_dgrad", "error_grad", k=3))[1] > 0
    assert cpu.gemm_data_movement(conv("conv2d_dgrad", "error_grad", k=1, stride=2))[1] > 0
    assert cpu.gemm_data_movement(conv("conv2d_dgrad", "error_grad", k=1))[1] == 0
    assert cpu.gemm_data_movement(conv("conv2d_wgrad", "weight_grad", k=1))[1] == 0


def test_int8_sdot_on_the_a55_is_slower_per_mac_than_its_stream_peak():
    """llvm-mca's A55 model issues SDOT by element at ~1.6 cycles where the mix bound said 1:
    INT8's gain over FP32 is smaller on the little core than on the big one."""
    soc = load_soc("sd865")
    little, big = soc.cluster("little"), soc.cluster("mid")
    f32, i8 = conv(), conv(dtype="int8")

    def stream_gain(cl):
        # the efficiencies (fitted or assumed per core type, not from the streams) taken out
        return (cpu.compute_cycles(f32, cl) * cl.fp32_efficiency) / (cpu.compute_cycles(i8, cl) * cl.int8_efficiency)

    assert stream_gain(little) < stream_gain(big)


def test_eltwise_extra_arithmetic_is_not_charged_a_load_and_store():
    cl = load_soc("sd865").cluster("mid")
    n = 1 << 16
    one = Op("r", "relu", "forward", "l", "fp32", make_params(n=n), flops=n, bytes_read=4 * n,
             bytes_written=4 * n, out_bytes=4 * n)
    # another framework's fused kernel (MNN's training batch norm is its Express chain:
    # tests/hw/test_cpu_mnn_express.py)
    ten = with_cpu_framework(Op("b", "batchnorm_bwd", "error_grad", "l", "fp32", make_params(n=n), flops=10 * n,
                                bytes_read=12 * n, bytes_written=4 * n, out_bytes=4 * n), "pytorch")
    c1, c10 = cpu.compute_cycles(one, cl), cpu.compute_cycles(ten, cl)
    assert c1 < c10 < 10 * c1


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 16), c=st.sampled_from([4, 16, 64]), hw=st.integers(4, 28),
       k=st.sampled_from([1, 3]), stride=st.sampled_from([1, 2]))
def test_compute_cycles_grow_with_the_batch_and_split_linearly(batch, c, hw, k, stride):
    cl = load_soc("sd855").cluster("little")
    for kind, phase in (("conv2d", "forward"), ("conv2d_dgrad", "error_grad"), ("conv2d_wgrad", "weight_grad")):
        a = cpu.compute_cycles(conv(kind, phase, k, stride, batch, c, hw), cl)
        b = cpu.compute_cycles(conv(kind, phase, k, stride, batch + 1, c, hw), cl)
        assert 0 < a < b
        assert cpu.compute_cycles(conv(kind, phase, k, stride, batch, c, hw), cl, 0.25) == pytest.approx(a / 4)


def test_winograd_only_for_3x3_stride_1_fp32_forward():
    cl = load_soc("sd855").cluster("mid")
    assert cpu.winograd_cycles(conv(), cl) is not None
    assert cpu.winograd_cycles(conv(k=1), cl) is None
    assert cpu.winograd_cycles(conv(stride=2), cl) is None
    assert cpu.winograd_cycles(conv(dtype="int8"), cl) is None
    assert cpu.winograd_cycles(conv("conv2d_dgrad", "error_grad"), cl) is None
