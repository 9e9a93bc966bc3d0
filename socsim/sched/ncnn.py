"""ncnn (Tencent/ncnn) inference as benchncnn runs it: the framework's own kernel choices, lowered
into socsim ops so that the CPU and GPU cost models see ncnn's work, not MNN's.

ncnn-fp32    an FP32 model on the CPU with ncnn's defaults (src/option.cpp: use_fp16_storage,
             use_fp16_arithmetic, use_winograd_convolution, use_winograd{23,43,63}_convolution and
             use_sgemm_convolution all true): on cores with ARMv8.2 FP16 arithmetic (asimdhp,
             socsim.spec.coretypes) every tensor is stored and computed in FP16, 8 lanes per
             128-bit FMLA; 3x3 stride-1 convolutions run as Winograd (:func:`winograd_m`), the
             others as im2col + GEMM.
ncnn-int8    an INT8 model (``_int8``, ncnn2int8) on the CPU: every convolution and inner product
             quantizes its input (a pass over it), runs an int8 GEMM into an int32 blob, and
             dequantizes that blob to FP16 (a second pass), with its activation a third pass
             (Convolution_arm::forward_int8_arm: quantize_to_int8, then
             dequantize_from_int32; the activation is not fused without requantization, which
             ncnn2int8's models do not use).  On cores with the dot-product instructions (asimddp)
             ncnn turns Winograd off for int8 (create_pipeline_int8_arm: ``if
             cpu_support_arm_asimddp() prefer_winograd = false``): 3x3 convolutions are im2col +
             SDOT GEMM, 9 MACs per output and input channel, where the FP16 path does 64/36.
             A convolution whose readers are all int8 convolutions writes int8 instead, in
             one requantize pass with its activation, and its readers quantize nothing
             (ncnn2int8's fuse_requantize, :func:`requantized`).
             The GEMM runs at the core's FP kernel efficiency times its int8 path's factor
             (ncnn's run-time choice of SMMLA, SDOT or SMLAL tiles: :data:`NCNN_INT8_PATH_RELATIVE`).
             Other layers run in FP16 as in ncnn-fp32, depthwise convolutions included,
             which ncnn runs in int8 too (ConvolutionDepthWise_arm::forward_int8_arm: quantize,
             int8 kernel, dequantize to FP32): not modelled, no INT8 row of the development list
             has them.
             Both take ncnn's thread count (option ``threads``, default one per core); more
             threads than cores share them (:func:`oversubscription`).
ncnn-vulkan  an FP32 model on the GPU through ncnn's Vulkan backend: FP16 storage and arithmetic
             where the GPU has them (Adreno: socsim.spec.soc.Gpu.fp16_rate), 3x3 stride-1
             convolutions with 16 or more input and output channels as Winograd F(4x4,3x3) in
             three dispatches (input transform, batched GEMM, output transform;
             src/layer/vulkan/convolution_vulkan.cpp), every other layer one dispatch, each at
             :data:`VULKAN_KERNEL_EFFICIENCY`, and a pipeline barrier between dependent dispatches
             (:data:`VULKAN_BARRIER_S`).

All three fold batch norms into the preceding convolution's weights and fuse a convolution's
activation into its kernel (ncnnoptimize: fuse_convolution_batchnorm,
fuse_convolution_activation; the fp16/fp32 Convolution layers apply activation_type in their
epilogue).  Facts are from Tencent/ncnn at a4d2ea1d4422c9e849f166fd7a4aefb52f942f6a, the commit
whose benchmark/README.md the development table (calibration/dev/ncnn_phones.yaml) was taken
from; the ncnn rows of ``socsim fidelity`` run these schedulers (socsim/fidelity/ncnn.py).
"""
from __future__ import annotations

import math
from dataclasses import replace

from pydantic import Field

from socsim.contract import BaseScheduler, Plan, single_unit_plan
from socsim.errors import ScheduleError
from socsim.sched.baselines import CpuOptions, GpuOptions, KernelGraph, scale_work
from socsim.sched.oversub import OMP_OVERSUBSCRIBED_SWITCH_S, oversubscription  # noqa: F401 (re-exported)
from socsim.spec.coretypes import has_dotprod, has_fp16_arithmetic, has_i8mm
from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op, with_cpu_framework

# Winograd F(m x m, 3 x 3) transform sizes: nonzeros of the input transform B^T ((m+2) x (m+2))
# and of the output transform A^T (m x (m+2)), counting one multiply-add per nonzero.  Matrices:
# F(2,3) and F(4,3) from Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR
# 2016 (sections 4.1-4.2), F(6,3) with interpolation points 0, +-1, +-2, +-1/2 (the matrices
# printed in ncnn's src/layer/arm/convolution_3x3_winograd.h comments and in Lavin's wincnn).
# A 2-D transform applies the 1-D one to every column and then every row: the input transform of
# a tile costs 2 (m+2) nnz(B^T), the output transform (m+2+m) nnz(A^T).  An upper bound: ncnn's
# hand-written transforms share common subexpressions.
WINOGRAD_NNZ: dict[int, tuple[int, int]] = {2: (8, 6), 4: (22, 18), 6: (44, 38)}
# ncnn's Vulkan convolution uses F(4,3) when the option is on (convolution_vulkan.cpp:
# use_winograd43 = use_winograd && opt.use_winograd43_convolution).
VULKAN_WINOGRAD_M = 4
# Channel thresholds of ncnn's Winograd choice (convolution_arm_asimdhp.cpp, create_pipeline):
# prefer_winograd when num_input >= 16 or num_output >= 16; F(6,3) when both <= 128, else F(4,3)
# when both >= 16, else F(2,3).  The Vulkan path requires both >= 16.
WINOGRAD_MIN_CHANNELS = 16
WINOGRAD63_MAX_CHANNELS = 128

# ncnn's Vulkan shaders against the tuned kernels the GPU cost model prices at the spec's
# fp32_efficiency: 0.25.  FITTED jointly with VULKAN_BARRIER_S on the 24 GPU/CPU ratios of
# calibration/dev/ncnn_phones.yaml (sd855+, sd888, sd8gen2; the CPU side run as ncnn-fp32), grid
# 0.2-0.3 x 10-30 us: ratio MAPE 23.4% at (0.25, 20 us), 24.6% at (0.2, 0), 25.7% at (0.3, 40 us)
# (docs/modeling.md, Fitted constants).  Plausible 0.15-0.4: ncnn's shaders are generic GLSL
# compute shaders (pack4 / pack8 layouts, no per-GPU tuning), MNN's OpenCL ones are fitted at 0.14.
VULKAN_KERNEL_EFFICIENCY = 0.25
# GPU idle time per pipeline barrier between dependent dispatches (vkCmdPipelineBarrier with a
# compute->compute dependency drains the shader cores and flushes / invalidates the GPU caches
# before the next dispatch starts; ncnn records one per dependent dispatch,
# src/command.cpp VkCompute::record_pipeline / barrier_readwrite): 20 us, FITTED with
# VULKAN_KERNEL_EFFICIENCY (above); no public per-barrier figure for Adreno; plausible 5-50 us.
# It adds to socsim.hw.gpu's per-kernel ramp and enqueue, which every GPU framework pays.
VULKAN_BARRIER_S = 20e-6

# OpenMP threads sharing a core: OMP_OVERSUBSCRIBED_SWITCH_S and oversubscription() live in
# socsim.sched.oversub, shared with PyTorch's two pools (its comment has the fit).

#: activations ncnn fuses into a convolution's or an inner product's epilogue
#: (ncnnoptimize.cpp fuse_convolution_activation: ReLU, Clip, Sigmoid, Mish, HardSwish)
FUSED_ACTIVATIONS = frozenset({"relu", "clip", "sigmoid", "hardswish"})


def is_conv3x3s1(op: Op) -> bool:
    p = op.p
    return (lookup(op.kind).kernel == "gemm" and lookup(op.kind).shape == "conv" and p.get("groups", 1) == 1
            and p.get("kh") == 3 and p.get("kw") == 3 and p.get("stride", 1) == 1
            and p.get("dilation", 1) == 1)


def _retype(op: Op, dtype: str, scale: float) -> Op:
    """``op`` with its tensors stored at ``scale`` times their FP32 size."""
    if op.dtype != "fp32":
        return op
    return replace(op, dtype=dtype, bytes_read=round(op.bytes_read * scale),  # type: ignore[arg-type]
                   bytes_written=round(op.bytes_written * scale), weight_bytes=round(op.weight_bytes * scale),
                   out_bytes=round(op.out_bytes * scale), saved_bytes=round(op.saved_bytes * scale))


def fold(ops: tuple[Op, ...], activations: bool = True) -> tuple[tuple[Op, ...], tuple[int, ...]]:
    """ncnnoptimize's folding: a batch norm, and (``activations``) an activation, that reads
    only a convolution's or inner product's output and is its only reader joins that op (the
    kernel keeps the last member's name, so its readers find it); returns the ops and how many
    graph ops each stands for."""
    readers: dict[str, int] = {}
    for op in ops:
        for t in op.inputs:
            readers[t] = readers.get(t, 0) + 1
    out: list[Op] = []
    sizes: list[int] = []
    anchor_kind = ""
    for op in ops:
        prev = out[-1] if out else None
        joins = (prev is not None and op.inputs == (prev.name,) and readers.get(prev.name, 0) == 1
                 and lookup(anchor_kind).kernel in ("gemm", "depthwise")
                 and (op.kind == "batchnorm" or (activations and op.kind in FUSED_ACTIVATIONS)))
        if joins and prev is not None:
            # the batch norm is gone into the weights; the activation runs on the output in
            # registers (its arithmetic stays, its traffic goes)
            flops = prev.flops + (0 if op.kind == "batchnorm" else op.flops)
            out[-1] = replace(prev, name=op.name, flops=flops,
                              attrs=tuple(sorted(dict(prev.attrs, fused=dict(prev.attrs).get(
                                  "fused", prev.kind) + "+" + op.kind).items())))
            sizes[-1] += 1
            continue
        out.append(op)
        sizes.append(1)
        anchor_kind = op.kind
    return tuple(out), tuple(sizes)


def _eltwise(anchor: Op, suffix: str, kind: str, n: int, flops: int, read: int, written: int,
             dtype: str, inputs: tuple[str, ...], role: str) -> Op:
    return Op(name=f"{anchor.name}.{suffix}", kind=kind, phase="forward", layer=anchor.layer,
              dtype=dtype, params=(("batch", anchor.p.get("batch", 1)), ("n", n)),  # type: ignore[arg-type]
              flops=flops, bytes_read=read, bytes_written=written, out_bytes=written, inputs=inputs,
              attrs=(("framework", "ncnn"), ("role", role)))


def winograd(op: Op, m: int, elt: int) -> tuple[Op, ...]:
    """A 3x3 stride-1 convolution as Winograd F(m x m, 3 x 3): input transform, the batched GEMM
    over the (m+2)^2 transformed positions, output transform (ncnn's conv3x3s1_winograd{23,43,63}:
    the same three stages on the CPU and in the Vulkan shaders)."""
    p = op.p
    n = m + 2
    b, cin, cout = p.get("batch", 1), p["cin"], p["cout"]
    tiles = b * math.ceil(p["oh"] / m) * math.ceil(p["ow"] / m)
    nnz_b, nnz_a = WINOGRAD_NNZ[m]
    in_t = tiles * n * n * cin          # transformed input elements
    out_t = tiles * n * n * cout        # GEMM output elements
    x_bytes = b * cin * p["h"] * p["w"] * elt
    y_bytes = b * cout * p["oh"] * p["ow"] * elt
    w_bytes = n * n * cin * cout * elt  # the weights, transformed at load time
    src = op.inputs
    tin = _eltwise(op, "winograd_in", "clip", in_t, tiles * cin * 2 * n * nnz_b, x_bytes, in_t * elt, op.dtype, src,
                   f"winograd{m}3 input transform")
    # the (m+2)^2 transformed positions are independent GEMMs [tiles x cin] x [cin x cout]
    # (ncnn's winograd{23,43,63} "gemm" stage runs them as one batched GEMM): a gemm op of
    # that shape, so the cost models stream its real operands, not an im2col matrix
    gemm = replace(op, name=f"{op.name}.winograd_gemm", kind="gemm", macs=tiles * n * n * cin * cout,
                   params=(("batch", b), ("count", n * n), ("k", cin), ("m", tiles), ("n", cout)), inputs=(tin.name,),
                   bytes_read=in_t * elt + w_bytes, bytes_written=out_t * elt, weight_bytes=w_bytes,
                   out_bytes=out_t * elt,
                   attrs=tuple(sorted(dict(op.attrs, algorithm=f"winograd{m}3").items())))
    tout = replace(_eltwise(op, "winograd_out", "clip", b * cout * p["oh"] * p["ow"],
                            tiles * cout * (n + m) * nnz_a + op.flops, out_t * elt, y_bytes, op.dtype,
                            (gemm.name,), f"winograd{m}3 output transform"), name=op.name)
    return tin, gemm, tout


def _quantized(op: Op, winograd_ok: bool, elt: int, int8_rel: float = 1.0, int8_in: bool = False,
               requantize: bool = False) -> tuple[Op, ...]:
    """ncnn's INT8 convolution / inner product: quantize the input, int8 GEMM into int32,
    dequantize to FP16 storage, then the activation (forward_int8_arm).  ``int8_in``: the input
    is already int8 (its producer requantized), no quantize pass; ``requantize``: the output
    goes to int8 convolutions only, so one pass turns the int32 blob into their int8 input,
    bias and activation included (requantize_from_int32_to_int8; :func:`requantized`)."""
    p = op.p
    kind = lookup(op.kind)
    if kind.shape == "conv":
        x_n = p.get("batch", 1) * p["cin"] * p["h"] * p["w"]
        y_n = p.get("batch", 1) * p["cout"] * p["oh"] * p["ow"]
    else:
        x_n = p.get("count", 1) * p["m"] * p["k"]
        y_n = p.get("count", 1) * p["m"] * p["n"]
    act = dict(op.attrs).get("fused", "").split("+")[1:]
    has_act = any(a in FUSED_ACTIVATIONS for a in act)
    q = _eltwise(op, "quantize", "quantize", x_n, 0, x_n * elt, x_n, "int8", op.inputs, "quantize_to_int8")
    q = replace(q, flops=x_n * lookup("quantize").flops_per_elem)
    w8 = op.weight_bytes // 4
    m = 4 if winograd_ok and is_conv3x3s1(op) and min(p["cin"], p["cout"]) >= 8 else 0
    gemm = replace(op, name=f"{op.name}.int8_gemm", dtype="int8", inputs=op.inputs if int8_in else (q.name,), flops=0,
                   bytes_read=x_n + w8, bytes_written=4 * y_n, weight_bytes=w8, out_bytes=4 * y_n,
                   attrs=tuple(sorted(dict(op.attrs, algorithm="winograd43_int8" if m else "im2col_sdot").items())))
    if m:
        # cores without dot product: ncnn's int8 Winograd F(4,3) (int16 transforms), GEMM MACs
        # 36/16 per output instead of 9
        gemm = replace(gemm, macs=round(op.macs * 36 / (16 * 9)))
    gemm = scale_work(gemm, int8_rel)
    front = () if int8_in else (q,)
    if requantize:
        # int32 -> float, scale and bias, the activation, scale to the consumer's int8 range,
        # round and saturate: dequantize's and quantize's arithmetic and the activation's
        flops = y_n * (lookup("dequantize").flops_per_elem + lookup("quantize").flops_per_elem + int(has_act))
        rq = _eltwise(op, "requantize", "quantize", y_n, flops, 4 * y_n, y_n, "int8", (gemm.name,),
                      "requantize_from_int32_to_int8")
        return (*front, gemm, replace(rq, name=op.name))
    dq = _eltwise(op, "dequantize", "dequantize", y_n, y_n * lookup("dequantize").flops_per_elem, 4 * y_n,
                  y_n * elt, "fp16" if elt == 2 else "fp32", (gemm.name,), "dequantize_from_int32")
    if not has_act:
        return (*front, gemm, replace(dq, name=op.name))
    a = _eltwise(op, "activation", "relu", y_n, y_n, y_n * elt, y_n * elt, dq.dtype, (dq.name,), "activation")
    return (*front, gemm, dq, replace(a, name=op.name))


def _int8_conv(op: Op) -> bool:
    """Whether ncnn runs ``op`` as an int8 Convolution (not an InnerProduct): what ncnn2int8's
    requantize fusion joins."""
    kind = lookup(op.kind)
    return (op.phase == "forward" and kind.kernel == "gemm" and kind.shape == "conv"
            and op.p.get("groups", 1) == 1)


def requantized(ops: tuple[Op, ...]) -> set[str]:
    """Names of the (folded) int8 convolutions whose output ncnn2int8 requantizes: every reader of
    it is an int8 convolution taking it as its only input (tools/quantize/ncnn2int8.cpp,
    fuse_requantize: Convolution -> Convolution, or Convolution -> Split -> Convolutions only;
    int8_scale_term += 100, so forward_int8_arm writes int8 through requantize_from_int32_to_int8
    and the readers skip quantize_to_int8).  The benchmark's int8 models carry it
    (benchmark/resnet18_int8.param: the eight res*_branch2a convolutions, ``8=102``).
    ncnn2int8 fuses a ConvolutionDepthWise reader too; socsim's ncnn-int8 runs depthwise
    convolutions in FP16 (module docstring), so a depthwise reader keeps the dequantize."""
    readers: dict[str, list[Op]] = {}
    for op in ops:
        for t in op.inputs:
            readers.setdefault(t, []).append(op)
    return {op.name for op in ops
            if _int8_conv(op) and readers.get(op.name)
            and all(_int8_conv(r) and r.inputs == (op.name,) for r in readers[op.name])}


def _lower(graph, each) -> KernelGraph:
    """Fold ``graph``'s ops (:func:`fold`) and lower each folded op with ``each`` (op -> kernels)."""
    ops, sizes = fold(graph.ops, activations=True)
    out: list[Op] = []
    spans: list[tuple[int, int]] = []
    start = 0
    for op, size in zip(ops, sizes):
        new = each(op)
        out.extend(new)
        spans.extend([(start, start + size)] * len(new))
        start += size
    return KernelGraph(graph, tuple(out), spans=tuple(spans))


def ncnn_cpu_ops(graph, fp16: bool, int8: bool, dotprod: bool, int8_rel: float = 1.0,
                 stretch: float = 1.0) -> KernelGraph:
    """``graph`` (an inference graph) as ncnn runs it on CPU cores with (``fp16``) ARMv8.2 FP16
    arithmetic and (``dotprod``) the dot-product instructions; ``int8``: an ncnn2int8 model whose
    int8 GEMMs run ``int8_rel`` times as efficiently as the spec's int8_efficiency says
    (:func:`int8_gemm_relative`); ``stretch``: every kernel's arithmetic that many times its
    one-thread-per-core share (more threads than cores, :func:`oversubscription`)."""
    elt = 2 if fp16 else 4
    req = requantized(fold(graph.ops, activations=True)[0]) if int8 else set()

    def lowered(op: Op) -> tuple[Op, ...]:
        kind = lookup(op.kind)
        conv_like = kind.kernel == "gemm" and (kind.shape == "gemm" or op.p.get("groups", 1) == 1)
        if int8 and conv_like and op.phase == "forward":
            int8_in = len(op.inputs) == 1 and op.inputs[0] in req
            return _quantized(op, winograd_ok=not dotprod, elt=elt, int8_rel=int8_rel, int8_in=int8_in,
                              requantize=op.name in req)
        op16 = _retype(op, "fp16", 0.5) if fp16 else op
        m = cpu_winograd_m(op, fp16)
        return winograd(op16, m, elt) if m else (op16,)

    def each(op: Op) -> tuple[Op, ...]:
        ks = tuple(scale_work(k, 1 / stretch) for k in lowered(op)) if stretch != 1.0 else lowered(op)
        return tuple(with_cpu_framework(k, "ncnn") for k in ks)

    return _lower(graph, each)


def cpu_winograd_m(op: Op, fp16: bool) -> int:
    """ncnn's Winograd tile for ``op`` on the CPU (0: im2col + GEMM or direct).  The FP16 path
    (convolution_arm_asimdhp.cpp) and the FP32 one (convolution_arm.cpp) choose alike, the FP32
    one at 8 channels where the FP16 one needs 16."""
    if not is_conv3x3s1(op):
        return 0
    p = op.p
    low = WINOGRAD_MIN_CHANNELS if fp16 else 8
    if p["cin"] < low and p["cout"] < low:
        return 0
    if p["cin"] <= WINOGRAD63_MAX_CHANNELS and p["cout"] <= WINOGRAD63_MAX_CHANNELS:
        return 6
    return 4 if min(p["cin"], p["cout"]) >= low else 2


def ncnn_vulkan_ops(graph, fp16: bool) -> KernelGraph:
    """``graph`` as ncnn's Vulkan backend runs it: one dispatch per layer, three per Winograd
    convolution, every kernel at VULKAN_KERNEL_EFFICIENCY."""
    elt = 2 if fp16 else 4

    def each(op: Op) -> tuple[Op, ...]:
        op16 = _retype(op, "fp16", 0.5) if fp16 else op
        p = op.p
        use = is_conv3x3s1(op) and p["cin"] >= WINOGRAD_MIN_CHANNELS and p["cout"] >= WINOGRAD_MIN_CHANNELS
        return tuple(scale_work(k, VULKAN_KERNEL_EFFICIENCY)
                     for k in (winograd(op16, VULKAN_WINOGRAD_M, elt) if use else (op16,)))

    return _lower(graph, each)


# ncnn's int8 GEMM against its FP16/FP32 one, per int8 kernel path.  ncnn builds its int8
# im2col GEMM (src/layer/arm/convolution_im2col_gemm_int8.h) in three variants and picks one at
# run time by the core's features (NCNN_RUNTIME_CPU: cpu_support_arm_i8mm(), then
# cpu_support_arm_asimddp()): SMMLA tiles ("i8mm"), SDOT tiles ("asimddp"), and SMLAL int16
# widening without either; the FP kernel efficiency (socsim.spec.coretypes.FP32_EFFICIENCY) was
# fitted on MNN's FP32 training kernels, a compiled C/intrinsics stream with packing and edge
# tiles, where ncnn's int8 tiles are hand-scheduled inline assembly over panels packed once per
# L2 tile.  One factor per path, multiplying the core's fp32_efficiency (int8_gemm_relative):
# * "asimddp": FITTED on the 10 INT8/FP32 ratios of the dot-product cores in
#   calibration/dev/ncnn_phones.yaml (Snapdragon 855+: four A76; Snapdragon 888: X1 + three A78;
#   1, 4 and 8 threads), jointly scored with the 1->4 thread ratios (docs/modeling.md, Fitted
#   constants), with ncnn2int8's requantize fusion (:func:`requantized`): factor 1.0 / 1.1 /
#   1.15 / 1.2 gives INT8/FP32 MAPE 16.0 / 14.7 / 14.8 / 14.9% over the whole table (threads
#   1->4 11.5 / 11.8 / 11.9 / 12.0%), at the A76's FP efficiency 0.82.  Re-checked at its re-fit
#   0.810: 1.05 / 1.1 / 1.15 / 1.2 give 15.0 / 14.7 / 14.7 / 14.9% (threads 11.7 / 11.8 / 11.9 /
#   12.0%), so 1.1 stays.  1.1 puts the A76's int8 GEMM at 0.89 of its SDOT stream's llvm-mca
#   cycles (0.810 x 1.1), plausible for a hand-scheduled tile with its operands in L1 (0.85-1.0
#   of the stream; 1.23 would pass it).  Before the requantize fusion the scan gave 1.2 (14.6%):
#   part of what the factor stood for was the passes ncnn does not run.  At the A76's re-fit
#   0.930 (MNN's Express training step costed, socsim.spec.coretypes) 1.1 would pass the stream
#   (1.02): 1.0 / 1.05 / 1.1 give INT8/FP32 16.4 / 15.4 / 15.2% (threads 1->4 11.8 / 11.9 /
#   12.0%); 1.05, 0.98 of the SDOT stream, the largest grid point within it.
# * "i8mm": 1.0, ASSUMPTION (not fitted): the only phone of the development set whose cores have
#   FEAT_I8MM is the Snapdragon 8 Gen 2 (X3, A715/A710, A510), so a factor fitted on its rows
#   would be a per-phone correction.  Its GEMM is costed on the SDOT stream's cycles: llvm-mca
#   (LLVM 19) gives SMMLA the SDOT's throughput on Neoverse N2/V2 and Cortex-A510, with twice
#   its MACs, so the instruction stream alone would make this path 2x faster; the phone shows
#   the opposite (its INT8 VGG-16 on one thread takes 2.7x its FP32 time, the 855+'s 1.6x).
#   Scanned, not kept (before the requantize fusion): 0.8 with "asimddp" 1.2 gave INT8/FP32
#   10.7% (docs/modeling.md).
# * cores with neither: 1.0 (their SMLAL path; no development row runs one).
NCNN_INT8_PATH_RELATIVE: dict[str, float] = {"asimddp": 1.05, "i8mm": 1.0, "neon": 1.0}


def int8_kernel_path(core_type: str) -> str:
    """The int8 GEMM variant ncnn runs on a ``core_type`` core: "i8mm", "asimddp" or "neon"."""
    if has_i8mm(core_type):
        return "i8mm"
    return "asimddp" if has_dotprod(core_type) else "neon"


def int8_gemm_relative(clusters) -> float:
    """ncnn's int8 GEMM efficiency relative to the spec's ``int8_efficiency`` (MNN's int8
    training kernels), averaged over the cores' clusters: the core's fp32_efficiency (ncnn's int8
    im2col GEMM, src/layer/arm/convolution_im2col_gemm_int8.h, is built like its FP16/FP32 one,
    convolution_im2col_gemm.h: the same packing of A and B into panels, the same tiling by L2
    size) times its int8 path's factor (:data:`NCNN_INT8_PATH_RELATIVE`)."""
    return sum(c.fp32_efficiency * NCNN_INT8_PATH_RELATIVE[int8_kernel_path(c.core_type)] / c.int8_efficiency
               for c in clusters) / len(clusters)


class NcnnCpuOptions(CpuOptions):
    threads: int | None = Field(None, ge=1, description="ncnn's num_threads; default one per core; more threads than "
                                "cores share them (socsim.sched.ncnn.oversubscription)")


class _NcnnCpu(BaseScheduler):
    Options = NcnnCpuOptions
    modes: tuple[str, ...] = ("inference",)
    precision = "fp32"
    int8 = False

    def plan(self, ctx) -> Plan:
        graph = ctx.graph(self.precision)
        chosen = getattr(self.options, "cores", None)
        if chosen is not None:
            cores = ctx.cores(chosen, field="scheduler.options.cores")
        else:
            cores = ctx.cores(default="big4")
        types = {ctx.soc.cpu.cluster_of(c).core_type for c in cores}
        fp16 = all(has_fp16_arithmetic(t) for t in types)
        dot = all(has_dotprod(t) for t in types)
        rel = int8_gemm_relative([ctx.soc.cpu.cluster_of(c) for c in cores])
        switches, stretch = oversubscription(getattr(self.options, "threads", None), len(cores))
        run = ncnn_cpu_ops(graph, fp16=fp16, int8=self.int8, dotprod=dot, int8_rel=rel, stretch=stretch)
        label = f"{self.name} cpu{''.join(map(str, cores))}"
        if not switches:
            return single_unit_plan(run, "cpu", cores, label)
        return single_unit_plan(run, "cpu", cores, f"{label} {self.options.threads} threads",
                                prep_overheads=(("omp-oversubscription",
                                                 OMP_OVERSUBSCRIBED_SWITCH_S * switches * len(run.ops)),))


class NcnnFp32(_NcnnCpu):
    name = "ncnn-fp32"
    description = "ncnn inference of an FP32 model on the CPU (FP16 arithmetic on ARMv8.2 cores, Winograd 3x3)"


class NcnnInt8(_NcnnCpu):
    name = "ncnn-int8"
    int8 = True
    description = "ncnn inference of an INT8 model on the CPU (per-layer quantize/dequantize, SDOT GEMM)"


class NcnnVulkan(BaseScheduler):
    name = "ncnn-vulkan"
    precision = "fp32"
    description = "ncnn inference of an FP32 model on the GPU (Vulkan, FP16 storage and arithmetic)"
    Options = GpuOptions
    modes = ("inference",)

    def plan(self, ctx) -> Plan:
        if ctx.soc.gpu is None:
            raise ScheduleError(f"{ctx.soc.name} has no GPU", field="scheduler.name", value=self.name)
        graph = ctx.graph(self.precision)
        run = ncnn_vulkan_ops(graph, fp16=ctx.soc.gpu.fp16_rate > 1)
        barriers = max(len(run.ops) - 1, 0)
        return single_unit_plan(run, "gpu", (), f"{self.name} gpu",
                                prep_overheads=(("vulkan-barriers", VULKAN_BARRIER_S * barriers),))
