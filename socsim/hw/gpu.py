"""Analytic GPU cost model (OpenCL training kernels on Adreno / Mali).

time = FLOPs / (peak FLOPs per cycle x efficiency x utilisation x f) + DRAM bytes / achievable
       bandwidth + kernel launch overhead.
The GPU streams its operands from DRAM (its caches are small next to training tensors), so the
memory term is the op's full traffic.  A kernel fills the shader cores only if it has enough
independent work-items: utilisation = min(1, max(MIN_UTILISATION, parallel work / FILL_WORK)),
where the parallel work is the number of output elements the kernel computes independently
(:func:`parallel_work`).  Small micro-batches shrink the parallel work of forward and
input-gradient kernels (Sage's micro-batch tipping point, MTP).
"""
from __future__ import annotations

from socsim.hw import dram as dram_mod
from socsim.hw.cost import GpuConfig, OpCost, UnsupportedOp
from socsim.spec.soc import SocSpec
from socsim.workload.costs import elems
from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op

# Parallel work (independent output elements) of one kernel that keeps every shader core of an
# Adreno 650 busy; below it utilisation scales as work / FILL_WORK.
# Calibrated on pub:gpu_micro_batch_tipping_point.resnet50_mobile_gpu_mtp = 6 (Sage 3.4.3:
# ResNet-50 at 3x224x224 stops gaining GPU efficiency below micro-batch 6 on a mobile GPU), read
# as a throughput knee, because a throughput curve is what one profiles to find an MTP:
#   t(m) = GPU time per sample of one ResNet-50 training step (3x224x224, 1000 classes, FP32,
#          forward + backward + SGD update, every op through gpu_cost on the sd865 Adreno 650 at
#          587 MHz) at batch m;
#   MTP  = the smallest m with t(m) <= 1.10 x t(32) (within 10% of the throughput at Sage's
#          mini-batch; 10% is the usual knee threshold, and the MAC rule this replaced put
#          t(6)/t(32) at 1.09, so the reading of the published figure is unchanged).
# MTP = 6 holds for FILL_WORK in (3.63e5, 4.70e5] (t(5)/t(32) = 1.10 at 3.63e5, t(6)/t(32) =
# 1.10 at 4.70e5, by bisection); FILL_WORK is the geometric middle of that interval, 4.13e5,
# rounded.  At 4.1e5: t(4), t(5), t(6), t(8), t(16) = 1.17, 1.12, 1.08, 1.04, 1.005 x t(32).
# tests/hw/test_gpu_calibration.py re-derives the interval and MTP = 6.  Sensitivity: a 5% knee
# would give 2.5e5, a 15% knee 5.8e5.  One constant for every GPU (the Adreno 650 value; not
# scaled by ALU count).
# Caveat: 4.1e5 is ~400 outputs per FP32 lane of the Adreno 650 (2048 FLOPs/cycle), more than
# occupancy alone needs, so the tipping point it encodes is not occupancy only.  Weight gradients,
# whose output is fixed by the layer (below), inherit it: at batch 32 they are about two thirds
# of ResNet-50's GPU time (194 of 296 ms per sample; 41 of 143 under the MAC rule this replaced,
# utilisation = MACs / 0.35e9), which is probably pessimistic.  No per-kernel Adreno timing is
# published to check it.
FILL_WORK = 4.1e5
# A kernel too small to fill the GPU still runs at >= 5% of the sustained rate (assumption: the
# floor of the MAC rule this replaced; it bounds the penalty of a kernel with a few thousand
# outputs, which still occupies a few waves on every shader processor).  It matters: kernels at
# the floor are ~28% of ResNet-50's GPU time at batch 32 (the weight gradients of the stem and
# of layer1's 1x1 convolutions, 4-16 k outputs).
MIN_UTILISATION = 0.05

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


def utilisation(op: Op, fill_work: float = FILL_WORK) -> float:
    """Fraction of the GPU's sustained rate a kernel for ``op`` reaches (1 for ops with no
    arithmetic: they are bandwidth-bound)."""
    if not (op.macs or op.flops):
        return 1.0
    return min(1.0, max(MIN_UTILISATION, parallel_work(op) / fill_work))


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


def gpu_cost(soc: SocSpec, op: Op, freq_mhz: float, fill_work: float = FILL_WORK,
             bg_dram_gbs: float = 0.0) -> OpCost:
    """Cost of ``op`` on the SoC's GPU at ``freq_mhz`` while other masters take ``bg_dram_gbs``
    of DRAM bandwidth (``fill_work`` is for calibration)."""
    gpu = soc.gpu
    lookup(op.kind)  # an unknown kind is an error here too, even for an op with no arithmetic
    if op.dtype not in ("fp32", "fp16"):
        raise UnsupportedOp(f"{gpu.name} model runs fp32/fp16 kernels, not {op.dtype} ({op.kind})")
    flops = 2 * op.macs + op.flops
    util = utilisation(op, fill_work)
    rate = gpu.fp32_flops_per_cycle * gpu.fp32_efficiency * util
    cycles = int(flops / rate) if flops else 0
    traffic = op.bytes_read + op.bytes_written
    bw = dram_mod.achievable_bps(soc.dram, background_bps=bg_dram_gbs * 1e9)
    stall_s = traffic / bw + gpu.kernel_launch_us * 1e-6
    # activity = 0.3 + 0.7 x utilisation: ALUs a small kernel leaves idle stop switching, but the
    # launched kernel still clocks the command processor, shader front ends, caches and memory
    # path, kept as a 0.3 floor.  Assumption (no public Adreno/Mali power breakdown); plausible
    # 0.2-0.5.
    return OpCost.compose(cycles, freq_mhz, stall_s, bytes=traffic, dram_bytes=traffic,
                          activity=min(1.0, 0.3 + 0.7 * util), busy=(("gpu", 1),),
                          detail=(("utilisation", util),))
