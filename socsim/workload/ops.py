"""The operator record of a training graph.

An :class:`Op` is one operator of one training step (forward, error-gradient, weight-gradient
or weight-update) with the shape parameters its cost model needs and the work and traffic it
implies.  Ops are immutable and hashable; ``signature`` is the memoisation key of cost models.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

Phase = Literal["forward", "error_grad", "weight_grad", "update"]
DType = Literal["fp32", "int8", "int32", "fp16"]

PHASES: tuple[str, ...] = ("forward", "error_grad", "weight_grad", "update")

# The CPU framework whose kernels run an op: its ``cpu_framework`` attr, set by the scheduler that
# runs the graph as that framework does (socsim.sched.baselines: PyTorchRun for the pytorch
# baseline and Swan, TfliteFp32; socsim.sched.ncnn).  The CPU cost model (socsim.hw.cpu) applies
# MNN's GEMM-path mechanisms (CPUMatMul's one-thread passes, the weight gradient's Raster buffers
# and round-robin dW tiles) to MNN's ops only.  An op without the attr runs MNN's kernels: the CPU
# model's kernels are MNN's throughout (socsim.hw.cpu's module docstring), and MNN runs Min-Energy,
# Mandheling's CPU side, Octo and the mnn-* baselines.
CPU_FRAMEWORKS: tuple[str, ...] = ("mnn", "pytorch", "tflite", "ncnn")
DEFAULT_CPU_FRAMEWORK = "mnn"
# The GPU kernels that run an op: its ``gpu_kernels`` attr, set by the scheduler whose framework
# compiles them (socsim.sched.sage: Sage's JIT-compiled fused OpenCL kernels, "sage-jit"); without
# it, the kernels the GPU model is fitted on (ncnn's Vulkan and MNN's OpenCL kernels, "default").
# socsim.hw.gpu.RAMP_CYCLES_BY_KERNELS holds each one's per-kernel ramp.
GPU_KERNELS: tuple[str, ...] = ("default", "sage-jit")
DEFAULT_GPU_KERNELS = "default"

# A forward op of a training step carries the attr ("step", "train") (socsim.workload.graph and
# socsim.workload.precision set it on every forward op of a training graph; forward_only, the
# inference graph, drops it).  A framework runs such an op with its weights as inputs, changed
# every step, where an inference op's weights are constants prepared once at load time: MNN's
# CPU backend runs a training step's convolution as ConvolutionTiledExecutorMultiInput and its
# fully connected layer as a MatMul (socsim.hw.cpu.matmul_operands), an inference convolution
# as ConvolutionTiled / Winograd on weights packed at load.  An op without the attr (a graph's
# inference op, a single op costed on its own) is costed as inference.
TRAIN_STEP_ATTR = ("step", "train")


@dataclass(frozen=True, slots=True)
class Op:
    """One operator of the training graph.

    ``params`` holds the shape parameters as sorted (name, int) pairs, e.g. batch, cin, h, w,
    cout, kh, kw, stride, pad for a convolution.  ``macs`` counts multiply-accumulates, ``flops``
    the other arithmetic (element-wise, reductions).  Byte counts are for the op's own operands
    at its dtype, before any cache filtering.
    """

    name: str
    kind: str
    phase: Phase
    layer: str
    dtype: DType
    params: tuple[tuple[str, int], ...]
    macs: int = 0
    flops: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    weight_bytes: int = 0
    out_bytes: int = 0
    saved_bytes: int = 0
    inputs: tuple[str, ...] = ()
    attrs: tuple[tuple[str, str], ...] = field(default=())

    @property
    def p(self) -> dict[str, int]:
        """Shape parameters as a dict."""
        return dict(self.params)

    @property
    def cpu_framework(self) -> str:
        """The CPU framework whose kernels run the op (``cpu_framework`` attr; MNN without it)."""
        for k, v in self.attrs:
            if k == "cpu_framework":
                return v
        return DEFAULT_CPU_FRAMEWORK

    @property
    def in_training_step(self) -> bool:
        """Whether the op belongs to a training step: every gradient and update op, and a forward
        op marked with ``TRAIN_STEP_ATTR`` (a training graph's; not an inference graph's)."""
        return self.phase != "forward" or TRAIN_STEP_ATTR in self.attrs

    @property
    def gpu_kernels(self) -> str:
        """The GPU kernels that run the op (``gpu_kernels`` attr; the default ones without it)."""
        for k, v in self.attrs:
            if k == "gpu_kernels":
                return v
        return DEFAULT_GPU_KERNELS

    @property
    def signature(self) -> tuple:
        """What a cost model's result depends on (not the name or the layer): the kind, dtype and
        shape, the CPU framework and the GPU kernels that run it (so the memo and cost keys of two
        frameworks' ops never meet), and whether it belongs to a training step (a training forward op's
        weights are inputs, an inference op's constants)."""
        return (self.kind, self.dtype, self.params, self.cpu_framework, self.in_training_step,
                self.gpu_kernels)

    @property
    def batch(self) -> int:
        return dict(self.params).get("batch", 1)

    def attr(self, key: str, default: str | None = None) -> str | None:
        return dict(self.attrs).get(key, default)


def _with_attr(op: Op, key: str, value: str, known: tuple[str, ...], default: str, what: str) -> Op:
    """``op`` with its ``key`` attr set to ``value`` (none where ``value`` is ``default``)."""
    if value not in known:
        raise ValueError(f"unknown {what} {value!r} (known: {', '.join(known)})")
    attrs = {k: v for k, v in op.attrs if k != key}
    if value != default:
        attrs[key] = value
    new = tuple(sorted(attrs.items()))
    return op if new == op.attrs else replace(op, attrs=new)


def with_cpu_framework(op: Op, framework: str) -> Op:
    """``op`` as ``framework``'s CPU kernels run it (its ``cpu_framework`` attr; MNN's: no attr)."""
    return _with_attr(op, "cpu_framework", framework, CPU_FRAMEWORKS, DEFAULT_CPU_FRAMEWORK, "CPU framework")


def with_gpu_kernels(op: Op, kernels: str) -> Op:
    """``op`` as ``kernels`` (socsim.workload.ops.GPU_KERNELS) run it on the GPU."""
    return _with_attr(op, "gpu_kernels", kernels, GPU_KERNELS, DEFAULT_GPU_KERNELS, "GPU kernels")


def as_training_step(ops: list[Op]) -> list[Op]:
    """``ops`` (a training graph's) with every forward op marked ``TRAIN_STEP_ATTR``."""
    return [replace(op, attrs=tuple(sorted(op.attrs + (TRAIN_STEP_ATTR,))))
            if op.phase == "forward" and TRAIN_STEP_ATTR not in op.attrs else op for op in ops]


def as_inference(op: Op) -> Op:
    """``op`` without ``TRAIN_STEP_ATTR`` (an inference graph's op)."""
    if TRAIN_STEP_ATTR not in op.attrs:
        return op
    return replace(op, attrs=tuple(a for a in op.attrs if a != TRAIN_STEP_ATTR))


def make_params(**kw: int) -> tuple[tuple[str, int], ...]:
    """Canonical, hashable shape parameters."""
    return tuple(sorted((k, int(v)) for k, v in kw.items()))
