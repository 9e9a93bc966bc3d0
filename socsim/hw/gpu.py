"""Analytic GPU cost model (OpenCL training kernels on Adreno / Mali), a roofline per kernel.

time = enqueue + ramp / f + max(compute, memory), with
  compute = FLOPs / (peak FLOPs per cycle at the op's precision x class efficiency x occupancy x f)
  memory  = the op's traffic not resident in the GPU's L2 / achievable DRAM bandwidth.
- The peak is the spec's FP32 rate, times ``fp16_rate`` for FP16 ops (Adreno and Mali run FP16 at
  twice the FP32 rate).
- The class efficiency is the spec's ``fp32_efficiency`` (GEMM-like kernels: convolutions, their
  input gradients, matrix products) times :data:`CLASS_EFFICIENCY` of the kernel's class
  (:func:`kernel_class`): depthwise, weight gradient, element-wise.
- Occupancy: a kernel fills the shader cores when it has enough work-items to keep every FP32 lane
  busy with :data:`WAVES` waves in flight (latency hiding): occupancy = min(1, work-items /
  (lanes x WAVES)), work-items = parallel work / :data:`OUTPUTS_PER_ITEM`.  No floor: a kernel
  with few outputs runs at its own occupancy.
- Ramp: every kernel pays a ramp of GPU time filling and draining the shader cores
  (:data:`RAMP_CYCLES`; :data:`SAGE_JIT_RAMP_CYCLES` for Sage's JIT-compiled kernels)
  (its first and last waves), so small kernels cost more per output; with the enqueue cost
  (``kernel_launch_us``) this is what makes a small micro-batch slower per sample (Sage's
  micro-batch tipping point, MTP) and small models slower on the GPU than on the CPU (ncnn).
- Cache: the op's traffic is resident in the GPU's L2 in the fraction min(1, L2 / traffic)
  (a kernel whose operands fit streams them from the cache, the rest from DRAM).
"""
from __future__ import annotations

import math
from typing import Literal

from socsim.hw import dram as dram_mod
from socsim.hw.cost import GpuConfig, OpCost, UnsupportedOp
from socsim.spec.soc import Gpu, SocSpec
from socsim.workload.costs import elems
from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op

KernelClass = Literal["gemm", "depthwise", "wgrad", "eltwise"]

# Output elements one work-item computes: 4, a float4 / half4 texel.  MNN's OpenCL backend keeps
# tensors as NC4HW4 images (4 channels per texel, one work-item per output texel or more:
# source/backend/opencl/core/ImageBufferConvertor.cpp, execution/image/ConvExecution.cpp), ncnn's
# Vulkan backend packs 4 channels likewise (elempack 4, src/layer/vulkan/*_pack4.comp).
OUTPUTS_PER_ITEM = 4
# Waves (work-items per FP32 lane) a kernel needs in flight to hide memory latency: assumption, 4.
# Adreno shader processors keep several waves per ALU (the "wave slots" of Qualcomm's Adreno
# OpenCL programming guide, 80-NB295-11, section on occupancy), and a GPU reaches its sustained
# rate only with a few in flight; plausible 2-8.
WAVES = 4
# Efficiency of a kernel class relative to the spec's GEMM-like fp32_efficiency (assumptions,
# calibrated with the ncnn GPU/CPU ratios of calibration/dev/ncnn_phones.yaml, docs/validation.md):
# - depthwise: no reuse of the input across output channels, ~1/4 the arithmetic intensity of a
#   dense convolution, so about half the ALU efficiency (ncnn/MNN depthwise kernels are
#   load-bound; ncnn's mobilenet rows, dominated by depthwise + 1x1, are the check);
# - wgrad: a GEMM whose reduction (batch x spatial) runs inside each work-item over strided
#   im2col rows of the input and the error gradient, without the image-path texture cache reuse
#   of a forward convolution: half the forward efficiency (assumption; the backward kernels of
#   both public OpenCL training frameworks are im2col + a generic buffer GEMM, socsim/hw/gpu.py
#   parallel_work);
# - eltwise: element-wise, pooling, normalisation and update kernels are bandwidth-bound; their
#   few FLOPs run at the peak rate (they never set the time unless the roofline says so).
CLASS_EFFICIENCY: dict[str, float] = {"gemm": 1.0, "depthwise": 0.5, "wgrad": 0.5, "eltwise": 1.0}
# GPU cycles per kernel filling and draining the shader cores (the first wave starts, the last
# finishes while the rest of the GPU idles): 30k (51 us at the Adreno 650's 587 MHz).  Fitted with
# socsim.sched.baselines.MNN_GPU_KERNEL_EFFICIENCY on the ncnn GPU/CPU ratios of
# calibration/dev/ncnn_phones.yaml (12 ratios, sd855+ and sd888; 30k against 60k and 110k: MAPE
# 24% against 27% and 36%, docs/validation.md).  It sets the ResNet-50 training knee at micro-batch
# 3 where Sage publishes 6 (pub:gpu_micro_batch_tipping_point.resnet50_mobile_gpu_mtp; 110k would
# give 6 but misfit the ncnn small models); tests/hw/test_gpu_calibration.py pins both.
RAMP_CYCLES = 30_000
# The ramp of Sage's kernels (Op.gpu_kernels "sage-jit": the fused OpenCL kernels Sage compiles
# at run time, socsim.sched.sage): 110k cycles (187 us at 587 MHz), fitted on Sage's own
# measurement of its kernels, the ResNet-50 micro-batch tipping point of 6 on the Note 20's
# Adreno 650 (pub:gpu_micro_batch_tipping_point.resnet50_mobile_gpu_mtp, Sage section 3.4.3;
# 30k puts the knee at 3, 110k at 6, docs/validation.md, Sage).  The two sources conflict: ncnn's
# Vulkan ratios want 30k, Sage's MTP 110k; they measure different kernels (ncnn's hand-written
# Vulkan shaders against Sage's JIT-generated fused kernels, whose fill/drain and per-kernel
# set-up Sage reports as the cause of its tipping point), so each framework's kernels keep their
# own.  Default (kernels without the attr): 30k, the fit on the larger data set (12 ratios).
SAGE_JIT_RAMP_CYCLES = 110_000
RAMP_CYCLES_BY_KERNELS: dict[str, float] = {"default": RAMP_CYCLES, "sage-jit": SAGE_JIT_RAMP_CYCLES}

# How the kernels parallelise (assumption, from the two OpenCL training frameworks whose source
# is public):
# - forward and input-gradient kernels: one work-item per output element (or small output tile);
#   Sage's GEMM (ingim/sage src/ops/gemm.rs, CLBlast XgemmDirect, global work size = output rows
#   x columns) and MNN's OpenCL convolutions both launch over the output;
# - conv2d / gemm weight gradients: the output is dW and the reduction (batch x spatial) runs
#   inside each work-item, with no split-K.  Sage lowers a convolution to im2col + matmul
#   (src/ops/conv.rs), so its filter gradient is a GEMM whose output is the KH*KW*Cin x Cout
#   gradient; MNN lowers Conv2DBackPropFilter to im2col + MatMul with output dW
#   (source/geometry/GeometryConv2DBackPropFilter.cpp) and its OpenCL MatMul launches one
#   work-item per output tile (source/backend/opencl/execution/MatmulExecution.cpp; the older
#   dedicated kernel, opencl/execution/Conv2DBackPropFilter.cpp, one per 4x4 block of dW and
#   kernel tap).  A weight gradient's parallel work is therefore fixed by the layer, not the
#   micro-batch: its utilisation does not change with the batch;
# - depthwise weight gradients: MNN's geometry lowering multiplies each kernel tap's shifted
#   input by dY element-wise (batch x C x OH x OW work-items) and sums with grouped reductions,
#   so the parallel work is the forward output's element count;
# - element-wise, pooling, normalisation and update kernels: one work-item per output element.
# Which case an op is follows from its kind's traits (socsim.workload.opkinds: shape, backward,
# kernel).


def parallel_work(op: Op) -> int:
    """Output elements a GPU kernel for ``op`` computes independently (its work-items).

    Read from the op's shape parameters, so a fused kernel counts its anchor's outputs and a
    kernel slowed by a framework's efficiency factor (more MACs) keeps its parallelism.
    """
    p = op.p
    kind = lookup(op.kind)
    b = p.get("batch", 1)
    if kind.shape == "conv":
        if kind.backward == "dgrad":  # the input-shaped error gradient
            return b * p["cin"] * p["h"] * p["w"]
        if kind.backward == "wgrad" and kind.kernel == "gemm":  # dW, reduction inside each item
            return p["cout"] * (p["cin"] // p["groups"]) * p["kh"] * p["kw"]
        return b * p["cout"] * p["oh"] * p["ow"]  # forward, depthwise weight gradient
    if kind.shape == "gemm":  # the weight gradient's output is dW: m = out features, n = in features
        return p["count"] * p["m"] * p["n"]
    if kind.shape == "pool":
        if kind.backward == "bwd":
            return b * p["c"] * p["h"] * p["w"]
        return b * p["c"] * p["oh"] * p["ow"]
    if "n" in p:  # element-wise, normalisation, loss, update: n elements
        return p["n"]
    return max(1, elems(op, "write"))


def kernel_class(op: Op) -> KernelClass:
    """The class of ``op``'s GPU kernel, which sets its efficiency (:data:`CLASS_EFFICIENCY`)."""
    kind = lookup(op.kind)
    if kind.kernel == "depthwise":
        return "depthwise"
    if kind.kernel == "gemm":
        return "wgrad" if kind.backward == "wgrad" else "gemm"
    return "eltwise"


def lanes(gpu: Gpu) -> float:
    """FP32 lanes of the GPU (an FMA is 2 FLOPs)."""
    return gpu.fp32_flops_per_cycle / 2


def utilisation(op: Op, gpu: Gpu) -> float:
    """Occupancy of a kernel for ``op`` on ``gpu``: its work-items over what keeps every lane
    busy with :data:`WAVES` waves (1 for ops with no arithmetic: they are bandwidth-bound)."""
    if not (op.macs or op.flops):
        return 1.0
    items = math.ceil(parallel_work(op) / OUTPUTS_PER_ITEM)
    return min(1.0, items / (lanes(gpu) * WAVES))


def peak_flops_per_cycle(gpu: Gpu, dtype: str) -> float:
    """Peak FLOPs per cycle at ``dtype`` (fp16 at the spec's ``fp16_rate`` times FP32's)."""
    return gpu.fp32_flops_per_cycle * (gpu.fp16_rate if dtype == "fp16" else 1.0)


def resident_fraction(gpu: Gpu, traffic: int) -> float:
    """Share of a kernel's traffic served from the GPU's L2: all of it when its operands fit,
    else the L2's share of them (a streaming kernel reuses at most what the cache holds)."""
    if traffic <= 0:
        return 1.0
    return min(1.0, gpu.l2_kb * 1024 / traffic)


# Handing work between the CPU and the GPU inside a batch (MNN inserts a copy between its CPU and
# OpenCL backends): the host waits for the GPU's queue to drain (clFinish) and the tensors that
# cross are converted between the CPU's layout and the GPU's (a read and a write of each byte,
# at the DRAM's achievable bandwidth).  SYNC: assumption, ~0.1 ms for a clFinish round trip plus
# mapping a buffer on a mobile OpenCL driver (no public per-call figure for Adreno/Mali; an
# empty FastRPC invoke of the same phones is 92 us, hw:fastrpc.sm8250_rpcperf_us_per_call.no_buffer,
# a driver round trip of the same kind; plausible 0.05-0.5 ms).
CPU_GPU_SYNC_S = 100e-6


def cpu_gpu_switch_s(soc: SocSpec, crossing_bytes: int) -> float:
    """One CPU<->GPU hand-over inside a batch moving ``crossing_bytes``."""
    bw = soc.dram.bandwidth_gbs * 1e9 * soc.dram.achievable_fraction
    return CPU_GPU_SYNC_S + 2 * crossing_bytes / bw


def gpu_supports(soc: SocSpec, op: Op) -> bool:
    """Whether the SoC's GPU runs ``op``: floating-point ops only (MNN's OpenCL backend)."""
    return soc.gpu is not None and op.dtype in ("fp32", "fp16")


class GpuCostModel:
    def __init__(self, soc: SocSpec) -> None:
        if soc.gpu is None:
            raise ValueError(f"{soc.name} has no GPU")
        self.soc = soc
        self.gpu = soc.gpu
        self._memo: dict[tuple, OpCost] = {}

    def supports(self, op: Op) -> bool:
        return gpu_supports(self.soc, op)

    def cost(self, op: Op, cfg: GpuConfig) -> OpCost:
        key = (op.signature, op.macs, op.flops, op.bytes_read, op.bytes_written, cfg.freq_mhz, cfg.bg_dram_gbs)
        c = self._memo.get(key)
        if c is None:
            c = self._memo[key] = gpu_cost(self.soc, op, cfg.freq_mhz, bg_dram_gbs=cfg.bg_dram_gbs)
        return c


def gpu_cost(soc: SocSpec, op: Op, freq_mhz: float, bg_dram_gbs: float = 0.0,
             ramp_cycles: float | None = None) -> OpCost:
    """Cost of ``op`` on the SoC's GPU at ``freq_mhz`` while other masters take ``bg_dram_gbs``
    of DRAM bandwidth.  The per-kernel ramp is that of the kernels that run the op
    (:data:`RAMP_CYCLES_BY_KERNELS` by ``op.gpu_kernels``); ``ramp_cycles`` overrides it (for
    calibration)."""
    if ramp_cycles is None:
        ramp_cycles = RAMP_CYCLES_BY_KERNELS[op.gpu_kernels]
    gpu = soc.gpu
    lookup(op.kind)  # an unknown kind is an error here too, even for an op with no arithmetic
    if op.dtype not in ("fp32", "fp16"):
        raise UnsupportedOp(f"{gpu.name} model runs fp32/fp16 kernels, not {op.dtype} ({op.kind})")
    flops = 2 * op.macs + op.flops
    util = utilisation(op, gpu)
    cls = kernel_class(op)
    rate = peak_flops_per_cycle(gpu, op.dtype) * gpu.fp32_efficiency * CLASS_EFFICIENCY[cls] * util
    compute_cycles = flops / rate if flops else 0.0
    traffic = op.bytes_read + op.bytes_written
    dram_bytes = round(traffic * (1.0 - resident_fraction(gpu, traffic)))
    bw = dram_mod.achievable_bps(soc.dram, background_bps=bg_dram_gbs * 1e9)
    memory_s = dram_bytes / bw
    compute_s = compute_cycles / (freq_mhz * 1e6)
    # roofline: the kernel's arithmetic and its DRAM traffic overlap; the one that takes longer
    # sets the time, the enqueue and the ramp are paid on top
    stall_s = max(0.0, memory_s - compute_s) + gpu.kernel_launch_us * 1e-6
    # activity = 0.3 + 0.7 x occupancy: ALUs a small kernel leaves idle stop switching, but the
    # launched kernel still clocks the command processor, shader front ends, caches and memory
    # path, kept as a 0.3 floor.  Assumption (no public Adreno/Mali power breakdown); plausible
    # 0.2-0.5.
    return OpCost.compose(int(compute_cycles + ramp_cycles), freq_mhz, stall_s, bytes=traffic,
                          dram_bytes=dram_bytes, activity=min(1.0, 0.3 + 0.7 * util), busy=(("gpu", 1),),
                          detail=(("class_efficiency", CLASS_EFFICIENCY[cls]), ("utilisation", util)))
