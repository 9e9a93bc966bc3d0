"""GPU cost model: occupancy from parallel work, kernel classes, FP16, the L2 roofline (socsim/hw/gpu.py)."""
from dataclasses import replace

import pytest

from socsim.engine.context import build_graph
from socsim.hw import gpu
from socsim.hw.cost import GpuConfig, UnsupportedOp
from socsim.spec import load_soc
from socsim.workload.ops import Op, make_params

SOC = load_soc("sd865")
CFG = GpuConfig(freq_mhz=SOC.gpu.opps[-1].freq_mhz)


def _conv(kind, phase, b, cin, cout, hw, k=3, groups=1):
    p = make_params(batch=b, cin=cin, h=hw, w=hw, cout=cout, kh=k, kw=k, stride=1, pad=k // 2,
                    pad_w=k // 2, groups=groups, oh=hw, ow=hw)
    macs = b * cout * hw * hw * (cin // groups) * k * k
    return Op("c", kind, phase, "l", "fp32", p, macs=macs, bytes_read=4 * b * cin * hw * hw,
              bytes_written=4 * b * cout * hw * hw)


def _ew(kind, n, flops_per_elem=1):
    return Op("e", kind, "forward", "l", "fp32", make_params(batch=1, n=n), flops=flops_per_elem * n,
              bytes_read=4 * n, bytes_written=4 * n)


def test_depthwise_with_many_outputs_fills_despite_few_macs():
    dw = _conv("dwconv2d", "forward", 8, 96, 96, 112, groups=96)   # MobileNet-v2 block 2
    assert dw.macs < 0.35e9                  # the old MAC rule left it at < 25% utilisation
    assert gpu.parallel_work(dw) == 8 * 96 * 112 * 112
    assert gpu.utilisation(dw, SOC.gpu) == 1.0


def test_a_tiny_kernel_runs_at_its_own_occupancy_with_no_floor():
    tiny = _conv("conv2d", "forward", 1, 512, 512, 2)
    assert gpu.utilisation(tiny, SOC.gpu) == pytest.approx(512 * 4 / 4 / (1024 * gpu.WAVES))
    assert gpu.utilisation(_ew("relu", 8), SOC.gpu) == pytest.approx(2 / (1024 * gpu.WAVES))


@pytest.mark.parametrize("kind,groups", [("conv2d", 1), ("dwconv2d", 64), ("conv2d_dgrad", 1),
                                         ("dwconv2d_dgrad", 64), ("dwconv2d_wgrad", 64)])
def test_utilisation_is_monotone_in_batch(kind, groups):
    phase = "weight_grad" if kind.endswith("wgrad") else "forward"
    utils = [gpu.utilisation(_conv(kind, phase, b, 64, 64, 14, groups=groups), SOC.gpu) for b in (1, 2, 4, 8, 16, 32, 64)]
    assert utils == sorted(utils) and utils[0] < utils[-1]
    # time per sample never rises with the batch
    per_sample = [gpu.gpu_cost(SOC, _conv(kind, phase, b, 64, 64, 14, groups=groups), CFG.freq_mhz).time_s / b
                  for b in (1, 2, 4, 8, 16, 32, 64)]
    assert all(a >= b * (1 - 1e-12) for a, b in zip(per_sample, per_sample[1:]))


def test_weight_gradient_utilisation_does_not_depend_on_the_micro_batch():
    """dW is the output; the batch x spatial reduction runs inside each work-item."""
    for cin, cout, k in ((64, 64, 1), (256, 256, 3), (512, 2048, 1)):
        u = {b: gpu.utilisation(_conv("conv2d_wgrad", "weight_grad", b, cin, cout, 14, k=k), SOC.gpu)
             for b in (1, 6, 32)}
        assert u[1] == u[6] == u[32]
        assert gpu.parallel_work(_conv("conv2d_wgrad", "weight_grad", 6, cin, cout, 14, k=k)) == cin * cout * k * k


def test_gemm_parallel_work_is_its_output():
    g = build_graph("resnet50", (3, 224, 224), 1000, 4, "fp32")
    fc = {op.attr("role"): op for op in g.ops if op.kind == "gemm"}
    assert gpu.parallel_work(fc["forward"]) == 4 * 1000            # batch x classes
    assert gpu.parallel_work(fc["dgrad"]) == 4 * 2048              # batch x features
    assert gpu.parallel_work(fc["wgrad"]) == 2048 * 1000           # dW, whatever the batch


def test_every_op_of_the_zoo_models_has_a_parallel_work():
    for model, inp in (("resnet50", (3, 224, 224)), ("mobilenetv2", (3, 224, 224)), ("vgg16", (3, 32, 32))):
        for op in build_graph(model, inp, 1000, 2, "fp32").ops:
            assert gpu.parallel_work(op) >= 1, op.name
            assert 0 < gpu.utilisation(op, SOC.gpu) <= 1.0


def test_ops_without_arithmetic_stay_bandwidth_bound():
    copy = Op("t", "transpose", "forward", "l", "fp32", make_params(batch=1, n=10), bytes_read=40,
              bytes_written=40)
    assert gpu.utilisation(copy, SOC.gpu) == 1.0


def test_slower_kernels_keep_their_parallelism():
    """A framework's efficiency factor multiplies the work (socsim.sched.baselines.scale_work),
    not the work-items: the utilisation is unchanged and the time grows."""
    op = _conv("conv2d_wgrad", "weight_grad", 32, 64, 64, 28)
    slow = replace(op, macs=op.macs * 3)
    assert gpu.utilisation(slow, SOC.gpu) == gpu.utilisation(op, SOC.gpu)
    assert gpu.gpu_cost(SOC, slow, CFG.freq_mhz).time_s > 2 * gpu.gpu_cost(SOC, op, CFG.freq_mhz).time_s


def test_cost_model_reports_utilisation_and_rejects_int8():
    m = gpu.GpuCostModel(SOC)
    dw = _conv("dwconv2d", "forward", 1, 32, 32, 112, groups=32)
    c = m.cost(dw, CFG)
    assert dict(c.detail)["utilisation"] == 1.0 and dict(c.detail)["class_efficiency"] == 0.5
    assert m.cost(dw, CFG) is c
    with pytest.raises(UnsupportedOp):
        m.cost(replace(dw, dtype="int8"), CFG)


def test_fp16_runs_at_the_specs_fp16_rate():
    op = _conv("conv2d", "forward", 32, 256, 256, 28)
    half = replace(op, dtype="fp16", bytes_read=op.bytes_read // 2, bytes_written=op.bytes_written // 2)
    f32, f16 = (gpu.gpu_cost(SOC, o, CFG.freq_mhz) for o in (op, half))
    assert SOC.gpu.fp16_rate == 2
    ramp = gpu.RAMP_CYCLES
    assert (f32.cycles - ramp) == pytest.approx(2 * (f16.cycles - ramp), rel=1e-6)


def test_kernel_classes_set_the_efficiency():
    fwd = _conv("conv2d", "forward", 32, 64, 64, 28)
    wg = _conv("conv2d_wgrad", "weight_grad", 32, 64, 64, 28)
    assert [gpu.kernel_class(o) for o in (fwd, wg, _conv("dwconv2d", "forward", 1, 8, 8, 8, groups=8),
                                          _ew("relu", 10))] == ["gemm", "wgrad", "depthwise", "eltwise"]
    cw = gpu.gpu_cost(SOC, wg, CFG.freq_mhz)
    assert dict(cw.detail)["class_efficiency"] == gpu.CLASS_EFFICIENCY["wgrad"] < 1


def test_operands_that_fit_the_l2_never_reach_dram():
    small = _ew("relu", 1000)                      # 8 KB of traffic, well inside 256 KB
    assert gpu.gpu_cost(SOC, small, CFG.freq_mhz).dram_bytes == 0
    big = _ew("relu", 10_000_000)                  # 80 MB: almost all from DRAM
    c = gpu.gpu_cost(SOC, big, CFG.freq_mhz)
    assert c.dram_bytes == round(c.bytes * (1 - SOC.gpu.l2_kb * 1024 / c.bytes))


def test_roofline_takes_the_slower_of_compute_and_memory():
    """A bandwidth-bound kernel's time is its DRAM time (plus launch and ramp), whatever its FLOPs
    up to the point where they would take longer."""
    big = _ew("relu", 10_000_000)
    more = replace(big, flops=big.flops * 4)
    a, b = (gpu.gpu_cost(SOC, o, CFG.freq_mhz) for o in (big, more))
    assert a.time_s == pytest.approx(b.time_s, rel=1e-6)
