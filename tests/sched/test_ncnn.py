"""ncnn's kernel choices (socsim.sched.ncnn): Winograd by shape, FP16 on ARMv8.2 cores, the INT8
path's extra passes, the Vulkan lowering, and the core-type ISA flags they read."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import socsim
from socsim.errors import InputError
from socsim.hw.cpu import compute_cycles
from socsim.sched import ncnn as N
from socsim.spec import list_socs, load_soc
from socsim.spec.coretypes import has_dotprod, has_fp16_arithmetic
from socsim.workload import graph_for
from socsim.workload.graph import forward_only
from dataclasses import replace

from socsim.workload.ops import Op


def _conv(cin: int, cout: int, k: int = 3, stride: int = 1, hw: int = 56) -> Op:
    oh = hw // stride
    macs = cin * cout * k * k * oh * oh
    return Op(name="c", kind="conv2d", phase="forward", layer="c", dtype="fp32",
              params=(("batch", 1), ("cin", cin), ("cout", cout), ("groups", 1), ("h", hw), ("kh", k), ("kw", k),
                      ("oh", oh), ("ow", oh), ("pad", k // 2), ("stride", stride), ("w", hw)),
              macs=macs, bytes_read=4 * (cin * hw * hw + cin * cout * k * k), bytes_written=4 * cout * oh * oh,
              weight_bytes=4 * cin * cout * k * k, out_bytes=4 * cout * oh * oh, inputs=("x",))


@pytest.mark.parametrize("cin,cout,fp16,m", [
    (64, 64, True, 6), (128, 128, True, 6), (256, 256, True, 4), (128, 256, True, 4),
    (8, 8, True, 0), (8, 8, False, 6), (3, 64, True, 6), (4, 4, False, 0)])
def test_winograd_tile_follows_ncnn_thresholds(cin, cout, fp16, m):
    assert N.cpu_winograd_m(_conv(cin, cout), fp16) == m


def test_only_3x3_stride1_convolutions_take_winograd():
    assert N.cpu_winograd_m(_conv(64, 64, k=1), True) == 0
    assert N.cpu_winograd_m(_conv(64, 64, stride=2), True) == 0


@given(cin=st.integers(16, 512), cout=st.integers(16, 512), hw=st.integers(4, 64), m=st.sampled_from([2, 4, 6]))
@settings(max_examples=40, deadline=None)
def test_winograd_gemm_does_fewer_macs_and_keeps_the_output_name(cin, cout, hw, m):
    conv = _conv(cin, cout, hw=hw)
    tin, gemm, tout = N.winograd(conv, m, 4)
    tiles = (-(-hw // m)) ** 2
    assert gemm.macs == tiles * (m + 2) ** 2 * cin * cout
    # multiplies per output (m+2)^2/m^2 against 9, up to the tile rounding at the edges
    assert gemm.macs <= conv.macs * (m + 2) ** 2 / (9 * m * m) * (1 + m / hw) ** 2 + 1
    assert tout.name == conv.name and gemm.inputs == (tin.name,) and tout.inputs == (gemm.name,)
    assert gemm.kind == "gemm" and dict(gemm.params)["count"] == (m + 2) ** 2
    assert tin.flops > 0 and tout.flops > 0


def test_fold_joins_batchnorm_and_activation_into_the_convolution():
    g = forward_only(graph_for("resnet18", (3, 224, 224), 1000, 1))
    ops, sizes = N.fold(g.ops)
    assert sum(sizes) == len(g.ops) and len(ops) < len(g.ops)
    assert not any(o.kind == "batchnorm" for o in ops)
    stem = next(o for o in ops if o.layer.startswith("stem") and o.kind == "conv2d")
    assert stem.name == "stem.relu" and dict(stem.attrs)["fused"] == "conv2d+batchnorm+relu"
    # the residual add keeps its own kernel and its activation (ncnn's Eltwise is not fused)
    assert any(o.kind == "add" for o in ops)


def test_fp16_gemm_takes_half_the_cycles_of_fp32():
    cl = load_soc("sd855").cpu.clusters[-1]
    g = forward_only(graph_for("resnet18", (3, 224, 224), 1000, 1))
    conv = next(o for o in g.ops if o.kind == "conv2d")
    half = N._retype(conv, "fp16", 0.5)
    assert compute_cycles(half, cl) == pytest.approx(compute_cycles(conv, cl) / 2)


def test_int8_on_dotprod_cores_is_im2col_sdot_with_quantize_and_dequantize_passes():
    g = forward_only(graph_for("vgg16", (3, 224, 224), 1000, 1))
    run = N.ncnn_cpu_ops(g, fp16=True, int8=True, dotprod=True)
    gemms = [o for o in run.ops if o.dtype == "int8" and o.macs]
    assert gemms and all(dict(o.attrs)["algorithm"] == "im2col_sdot" for o in gemms)
    assert sum(o.macs for o in gemms) == sum(o.macs for o in g.ops if o.kind in ("conv2d", "gemm"))
    kinds = [o.kind for o in run.ops]
    roles = [dict(o.attrs).get("role") for o in run.ops]
    # every int8 GEMM has one pass into int8 before it or after it: its own quantize, or the
    # requantize of the convolution that feeds it (ncnn2int8's fuse_requantize: 8 of vgg16's 13
    # convolutions feed another convolution directly)
    assert kinds.count("quantize") == len(gemms) == 16
    assert roles.count("requantize_from_int32_to_int8") == 8 and kinds.count("dequantize") == 16 - 8
    # the others keep their ReLU as a separate pass after the dequantize (5 convolutions before
    # a pooling, the two hidden fully connected layers)
    assert roles.count("activation") == 7
    # without dot product ncnn runs int8 3x3 convolutions as Winograd F(4,3): fewer MACs
    nodot = N.ncnn_cpu_ops(g, fp16=True, int8=True, dotprod=False)
    assert sum(o.macs for o in nodot.ops if o.dtype == "int8") < sum(o.macs for o in gemms)


def test_fp16_winograd_model_does_far_fewer_macs_than_the_graph():
    g = forward_only(graph_for("vgg16", (3, 224, 224), 1000, 1))
    run = N.ncnn_cpu_ops(g, fp16=True, int8=False, dotprod=True)
    assert all(o.dtype == "fp16" for o in run.ops)
    assert sum(o.macs for o in run.ops) < 0.4 * sum(o.macs for o in g.ops)
    assert len(run.live_bytes) == len(run.ops)


def test_vulkan_lowering_uses_winograd43_at_16_channels_and_scales_every_kernel():
    g = forward_only(graph_for("vgg16", (3, 224, 224), 1000, 1))
    run = N.ncnn_vulkan_ops(g, fp16=True)
    algos = {dict(o.attrs).get("algorithm") for o in run.ops}
    assert "winograd43" in algos and "winograd63" not in algos
    first = run.ops[0]   # 3 input channels: direct
    assert first.kind == "conv2d" and dict(first.attrs)["kernel_efficiency"] == f"{N.VULKAN_KERNEL_EFFICIENCY:g}"


ARMV8_0 = {"cortex-a53", "cortex-a73"}   # kirin970 and sd835 (Kryo 280 as A73/A53)


def test_every_core_type_in_the_specs_has_fp16_and_dotprod_but_the_armv8_0_ones():
    """socsim's SoCs have ARMv8.2 cores (A55 and later) except the Kirin 970 and Snapdragon 835,
    whose ARMv8.0 A73/A53 have neither (ncnn falls back to FP32 and its plain-NEON int8); a core
    type the table does not know gets neither."""
    for soc in list_socs():
        for cl in load_soc(soc).cpu.clusters:
            v82 = has_fp16_arithmetic(cl.core_type) and has_dotprod(cl.core_type)
            assert v82 == (cl.core_type not in ARMV8_0), (soc, cl.core_type)
    assert not has_fp16_arithmetic("cortex-a53") and not has_dotprod("cortex-a73")
    assert not has_fp16_arithmetic("cortex-z9") and not has_dotprod("cortex-z9")


@pytest.mark.parametrize("scheduler", ["ncnn-fp32", "ncnn-int8", "ncnn-vulkan"])
def test_ncnn_schedulers_run_inference_only(scheduler):
    wl = {"name": "t", "model": "lenet", "input": [1, 28, 28], "num_classes": 10, "batch_size": 1, "batches": 1,
          "mode": "inference"}
    s = socsim.run("sd855", wl, scheduler=scheduler, deterministic=True, reports=False).summary
    assert s["per_batch"]["time_s"] > 0
    with pytest.raises(InputError):
        socsim.run("sd855", dict(wl, mode="train"), scheduler=scheduler)


def test_ncnn_fp32_is_faster_than_mnn_fp32_inference_on_a_3x3_network():
    wl = {"name": "t", "model": "vgg11", "input": [3, 32, 32], "num_classes": 10, "batch_size": 1, "batches": 1,
          "mode": "inference", "cpu": {"cores": "big1"}}
    t = {s: socsim.run("sd855", wl, scheduler=s, deterministic=True, reports=False).summary["per_batch"]["time_s"]
         for s in ("ncnn-fp32", "mnn-fp32")}
    assert t["ncnn-fp32"] < 0.6 * t["mnn-fp32"]


@pytest.mark.parametrize("threads,cores,switches,stretch", [
    (None, 4, 0, 1.0), (1, 4, 0, 1.0), (4, 4, 0, 1.0), (8, 4, 1, 1.0), (6, 4, 1, 8 / 6), (9, 4, 2, 12 / 9)])
def test_oversubscription_counts_the_busiest_cores_extra_threads(threads, cores, switches, stretch):
    assert N.oversubscription(threads, cores) == pytest.approx((switches, stretch))


@settings(max_examples=60, deadline=None)
@given(threads=st.integers(1, 64), cores=st.integers(1, 8))
def test_oversubscription_never_speeds_a_region_up(threads, cores):
    """More threads than cores never make a region cheaper than one thread per core: the busiest
    core runs at least its even share (stretch in [1, 2)) and pays a switch per extra thread."""
    switches, stretch = N.oversubscription(threads, cores)
    assert 1.0 <= stretch < 2.0
    assert switches == max(0, -(-threads // cores) - 1)
    assert (switches == 0) == (threads <= cores) and (stretch == 1.0 or switches > 0)


def _ncnn_run(threads: int | None, scheduler: str = "ncnn-fp32"):
    wl = {"name": "t", "model": "resnet18", "input": [3, 64, 64], "num_classes": 10, "batch_size": 1, "batches": 1,
          "mode": "inference", "cpu": {"cores": [4, 5, 6, 7]},
          "scheduler": {"name": scheduler, "options": {} if threads is None else {"threads": threads}}}
    return socsim.run("sd888", wl, deterministic=True, reports=False).summary["per_batch"]["time_s"]


def test_threads_beyond_the_cores_pay_one_switch_per_kernel_and_extra_thread():
    base = _ncnn_run(None)
    assert _ncnn_run(4) == base                     # one thread per core: the default
    g = forward_only(graph_for("resnet18", (3, 64, 64), 10, 1))
    kernels = len(N.ncnn_cpu_ops(g, fp16=True, int8=False, dotprod=True).ops)
    assert _ncnn_run(8) == pytest.approx(base + kernels * N.OMP_OVERSUBSCRIBED_SWITCH_S, rel=1e-6)
    assert _ncnn_run(12) == pytest.approx(base + 2 * kernels * N.OMP_OVERSUBSCRIBED_SWITCH_S, rel=1e-6)
    assert _ncnn_run(6) > _ncnn_run(8)              # two cores run two chunks: the region stretches


def test_a_bad_thread_count_is_an_input_error():
    with pytest.raises(InputError) as e:
        _ncnn_run(0)
    assert "threads" in e.value.render()


def test_int8_kernel_path_follows_ncnns_run_time_dispatch():
    """i8mm before dot product before plain NEON (convolution_im2col_gemm_int8.h, NCNN_RUNTIME_CPU)."""
    from socsim.spec.coretypes import has_i8mm

    assert [N.int8_kernel_path(t) for t in ("cortex-x3", "cortex-a715", "cortex-a510")] == ["i8mm"] * 3
    assert [N.int8_kernel_path(t) for t in ("cortex-a76", "cortex-a78", "cortex-x1", "cortex-a55")] == ["asimddp"] * 4
    assert N.int8_kernel_path("cortex-a73") == "neon"
    # every i8mm core has the dot product too (Armv8.6-A / Armv9-A)
    assert all(has_dotprod(t) for t in ("cortex-a510", "cortex-a710", "cortex-a715", "cortex-x2", "cortex-x3"))
    assert not has_i8mm("cortex-x1") and not has_i8mm("Cortex-A78") and has_i8mm("Cortex-X3")
    assert set(N.NCNN_INT8_PATH_RELATIVE) == {"i8mm", "asimddp", "neon"}


def test_int8_gemm_relative_is_the_fp_efficiency_times_the_paths_factor():
    for soc in ("sd855", "sd888", "sd8gen2"):
        for cl in load_soc(soc).cpu.clusters:
            f = N.NCNN_INT8_PATH_RELATIVE[N.int8_kernel_path(cl.core_type)]
            assert N.int8_gemm_relative([cl]) == pytest.approx(cl.fp32_efficiency * f / cl.int8_efficiency)
    # a fitted factor that would take a core past its instruction stream's cycles is not physical
    for cl in load_soc("sd855").cpu.clusters:
        assert cl.fp32_efficiency * N.NCNN_INT8_PATH_RELATIVE[N.int8_kernel_path(cl.core_type)] <= 1.0


def test_the_dot_product_paths_factor_speeds_the_int8_gemm_only():
    """The factor reaches the int8 GEMM's arithmetic (scale_work), not the quantize, dequantize
    and activation passes, and not the FP model."""
    g = forward_only(graph_for("resnet18", (3, 224, 224), 1000, 1))
    base = N.ncnn_cpu_ops(g, fp16=True, int8=True, dotprod=True, int8_rel=1.0)
    fast = N.ncnn_cpu_ops(g, fp16=True, int8=True, dotprod=True, int8_rel=1.2)
    for a, b in zip(base.ops, fast.ops):
        if a.dtype == "int8" and a.macs:
            assert b.macs == round(a.macs / 1.2)
        else:
            assert (a.macs, a.flops) == (b.macs, b.flops)


@pytest.mark.parametrize("model,fused", [("resnet18", 8), ("resnet50", 32), ("vgg16", 8)])
def test_requantize_fusion_matches_the_benchmarks_int8_models(model, fused):
    """ncnn2int8's fuse_requantize marks a convolution whose readers are all int8 convolutions
    (``8=102`` in benchmark/models/<model>_int8.param: 8 in resnet18, 32 in resnet50, 8 in
    vgg16); its output is int8 (1 byte per element, read from the int32 blob in one pass, named
    as the convolution so its readers find it) and its readers quantize nothing."""
    g = forward_only(graph_for(model, (3, 224, 224), 1000, 1))
    ops, _ = N.fold(g.ops)
    req = N.requantized(ops)
    assert len(req) == fused
    run = N.ncnn_cpu_ops(g, fp16=True, int8=True, dotprod=True)
    by_name = {o.name: o for o in run.ops}
    for name in req:
        rq = by_name[name]
        assert dict(rq.attrs)["role"] == "requantize_from_int32_to_int8" and rq.dtype == "int8"
        assert rq.bytes_written * 4 == rq.bytes_read
    for o in run.ops:
        if o.dtype == "int8" and o.macs and o.inputs[0] in req:
            assert not o.inputs[0].endswith(".quantize")
    plain = [o for o in run.ops if dict(o.attrs).get("role") == "quantize_to_int8"]
    assert all(not o.inputs or o.inputs[0] not in req for o in plain)


def test_a_convolution_read_by_anything_but_int8_convolutions_is_not_requantized():
    a = _conv(16, 16)
    a = replace(a, name="a", inputs=("x",))
    b = replace(_conv(16, 16), name="b", inputs=("a",))
    c = replace(_conv(16, 16), name="c", inputs=("a",))
    add = Op(name="d", kind="add", phase="forward", layer="d", dtype="fp32", params=(("n", 16),), inputs=("a", "b"))
    assert N.requantized((a, b, c)) == {"a"}                   # a Split to convolutions only
    assert N.requantized((a, b, c, add)) == set()              # one reader is an Eltwise
    dw = replace(_conv(16, 16), name="e", inputs=("a",), params=tuple(sorted(dict(_conv(16, 16).params, groups=16).items())))
    assert N.requantized((a, b, dw)) == set()                  # a depthwise reader stays FP16 in socsim


def test_requantize_fusion_cuts_passes_and_traffic():
    g = forward_only(graph_for("resnet50", (3, 224, 224), 1000, 1))
    run = N.ncnn_cpu_ops(g, fp16=True, int8=True, dotprod=True)
    ops, _ = N.fold(g.ops)
    plain = N._lower(g, lambda op: N._quantized(op, winograd_ok=False, elt=2)
                     if N.lookup(op.kind).kernel == "gemm" and (N.lookup(op.kind).shape == "gemm" or op.p.get("groups", 1) == 1)
                     else (N._retype(op, "fp16", 0.5),))
    # per fused convolution: one requantize for a dequantize and an activation, and its one
    # reader's quantize gone
    assert len(run.ops) == len(plain.ops) - 32 - 32
    assert sum(o.bytes_read + o.bytes_written for o in run.ops) < sum(o.bytes_read + o.bytes_written for o in plain.ops)
