"""The op-kinds table: its invariants, unknown kinds as errors (graph building and every cost
model), and hard-swish, the element-wise kind added through the table alone
(docs/adding-an-op-kind.md), built into a small graph and costed on the CPU, the DSP and the GPU."""
from __future__ import annotations

import pytest

from socsim.hw.cost import CpuConfig, DspConfig, GpuConfig
from socsim.hw.cpu import CpuCostModel
from socsim.hw.dsp import DspCostModel
from socsim.hw.gpu import GpuCostModel
from socsim.sched.fusion import op_class
from socsim.spec import load_soc
from socsim.tools.op import time_op
from socsim.workload import training_graph, translate
from socsim.workload.builder import NetBuilder
from socsim.workload.costs import OpFactory
from socsim.workload.model import LAYER_KINDS, Model
from socsim.workload.opkinds import KINDS, TABLE, UnknownOpKind, kinds_where, lookup
from socsim.workload.ops import Op, make_params

SOC = load_soc("sd865")


def _hardswish_block() -> Model:
    """A MobileNet-v3-style conv-BN-hardswish unit on a 16x16 map, pooled into a classifier
    (test-only: no zoo model uses hard-swish)."""
    b = NetBuilder("hswish-block", (3, 16, 16), 10)
    x = b.conv_bn_relu("input", 16, 3, 1, 1, name="stem", act=False)
    x = b.unary(x, "hardswish", name="stem.act")
    x = b.flatten(b.global_avgpool(x))
    return b.build(b.linear(x, 10, name="fc"), "test")


def _cpu_cfg() -> CpuConfig:
    return CpuConfig((4, 5), tuple((c.name, c.opps[-1].freq_mhz) for c in SOC.cpu.clusters))


def test_every_grad_and_every_emulated_kernel_is_a_kind() -> None:
    from isa.kernels.costing import KINDS as EMULATED

    assert all(lookup(k.grad) for k in TABLE.values() if k.grad)
    assert set(EMULATED) <= set(KINDS)
    assert kinds_where(kernel="gemm") == {"conv2d", "conv2d_dgrad", "conv2d_wgrad", "gemm"}
    assert {k for k in KINDS if lookup(k).grad} <= LAYER_KINDS


def test_an_unknown_kind_is_an_error_naming_it() -> None:
    with pytest.raises(UnknownOpKind, match="'hardswish2'"):
        lookup("hardswish2")
    with pytest.raises(UnknownOpKind, match="'hardswish2'"):
        OpFactory("layer", 2).op("x", "hardswish2", "forward", dict(batch=2, n=8), read=8, write=8)
    b = NetBuilder("m", (3, 8, 8), 10)
    with pytest.raises(UnknownOpKind, match="'hardswish2'"):
        b.unary("input", "hardswish2")
    with pytest.raises(ValueError, match="'conv2d' is not a unary"):
        b.unary("input", "conv2d")


@pytest.mark.parametrize("unit", ["cpu", "dsp", "gpu"])
def test_a_cost_model_rejects_an_unknown_kind(unit: str) -> None:
    dtype = "int8" if unit == "dsp" else "fp32"
    op = Op("x", "hardswish2", "forward", "x", dtype, make_params(batch=1, n=64),  # type: ignore[arg-type]
            bytes_read=64, bytes_written=64, out_bytes=64)
    with pytest.raises(UnknownOpKind, match="'hardswish2'"):
        if unit == "cpu":
            CpuCostModel(SOC).cost(op, _cpu_cfg())
        elif unit == "dsp":
            DspCostModel(SOC).cost(op, DspConfig(SOC.dsp.training_clock_mhz))
        else:
            GpuCostModel(SOC).cost(op, GpuConfig(SOC.gpu.opps[-1].freq_mhz))


def test_hardswish_lowers_to_its_kind_and_gradient() -> None:
    g = training_graph(_hardswish_block(), 2)
    fwd = next(op for op in g.ops if op.kind == "hardswish")
    bwd = next(op for op in g.ops if op.kind == "hardswish_bwd")
    n = 2 * 16 * 16 * 16
    assert fwd.flops == 5 * n and bwd.flops == 5 * n
    # the backward op reads dy and the saved input x (the batch norm's output), like GELU's
    assert bwd.inputs[1] == fwd.inputs[0] and bwd.bytes_read == 2 * n * 4
    assert fwd.inputs[0] in {op.name for op in g.ops if op.kind == "batchnorm"}
    assert op_class(fwd) == "sym" and op_class(bwd) == "sym"


def test_hardswish_is_costed_on_every_unit() -> None:
    g = training_graph(_hardswish_block(), 2)
    cpu, gpu, dsp = CpuCostModel(SOC), GpuCostModel(SOC), DspCostModel(SOC)
    for op in g.ops:
        assert cpu.cost(op, _cpu_cfg()).time_s > 0
        assert gpu.cost(op, GpuConfig(SOC.gpu.opps[-1].freq_mhz)).time_s > 0
    # NITI defines no integer hard-swish: it stays FP32 between a dequantize and a quantize
    niti = translate(g, "niti")
    hs = [op for op in niti.ops if op.kind.startswith("hardswish")]
    assert hs and all(op.dtype == "fp32" for op in hs)
    assert not any(dsp.supports(op) for op in hs)
    # in int8 the DSP runs it (analytic HVX model: 3 packets per output vector)
    int8 = Op("hs", "hardswish", "forward", "hs", "int8", make_params(batch=2, n=4096),
              flops=5 * 4096, bytes_read=4096, bytes_written=4096, out_bytes=4096)
    assert dsp.supports(int8)
    cost = dsp.cost(int8, DspConfig(SOC.dsp.training_clock_mhz))
    assert cost.cycles == round(4096 / 128 * 3.0 / SOC.dsp.hvx_contexts)
    # and socsim op times it on each unit
    for unit in ("cpu", "dsp", "gpu"):
        assert time_op("sd865", unit, "hardswish", in_shape="16x8x8")["time_s"] > 0
