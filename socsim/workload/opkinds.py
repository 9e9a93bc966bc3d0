"""The table of op kinds: every kind an op of a training graph may have, with the traits that the
lowering, the precision rewriters, the cost models, the cache streams and the schedulers read.

An op's ``kind`` is looked up here (:func:`lookup`); a kind that is not in the table is an error
naming it, never a silent default.  docs/adding-an-op-kind.md explains each trait and walks
through adding one (``hardswish``).

Traits (see :class:`OpKind`):

- ``kernel``: how the cost models compute it and which access stream the caches see:
  ``gemm`` (im2col + GEMM: convolutions, their gradients, matrix products), ``depthwise``
  (per-channel planes with kernel taps), ``pool`` (per-channel planes, no weights),
  ``irregular`` (a permutation walked element by element), ``eltwise`` (contiguous streams);
- ``shape``: which shape parameters its ops carry: ``conv`` (batch, cin, h, w, cout, kh, kw,
  stride, pad, groups, oh, ow), ``gemm`` (batch, count, m, k, n), ``pool`` (batch, c, h, w, k,
  stride, oh, ow) or ``elems`` (an element count ``n`` and kind-specific extras);
- ``backward``: '' for a forward (or phase-free) kind, ``dgrad`` / ``wgrad`` for the error and
  weight gradient of a convolution, ``bwd`` for the backward of another op (it reads the
  incoming gradient and a second operand);
- ``flops_per_elem`` and ``reduces``: FLOPs per element written (per element read for a
  reduction) when the lowering does not pass them explicitly;
- ``fusion`` and ``recompute``: Sage's operator classes (``sym``, ``asym``, ``opaque``) and
  whether its subgraph reduction may rebuild the op in the backward pass (``replay``) or
  re-apply it from saved statistics (``apply``); ``batch_stats``: it uses batch statistics;
- ``niti`` / ``octo``: what each precision algorithm does to an op of this kind in an FP32 graph
  (``int8``: run in INT8; ``fp32``: stay FP32; ``drop``: removed);
- ``dsp``: Hexagon NN has an integer kernel for it; ``dsp_packets`` (element-wise kinds) and
  ``cpu_walk`` / ``dsp_walk`` (irregular kinds) are the per-unit constants of its cost;
- ``grad`` and ``saves``: for a kind that a unary element-wise layer lowers to directly, the
  kind of its backward op and which forward tensor that backward op reads;
- ``combines``, ``passes``, ``reads_int32``: details of the element-wise cost and stream.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, Mapping

Kernel = Literal["gemm", "depthwise", "pool", "irregular", "eltwise"]
Shape = Literal["conv", "gemm", "pool", "elems"]
Backward = Literal["", "dgrad", "wgrad", "bwd"]
Fusion = Literal["sym", "asym", "opaque"]
Recompute = Literal["", "replay", "apply"]
Precision = Literal["int8", "fp32", "drop"]


class UnknownOpKind(ValueError):
    """An op kind that is not in the table (:data:`KINDS`)."""

    def __init__(self, kind: object) -> None:
        super().__init__(f"unknown op kind {kind!r}: it is not in socsim.workload.opkinds "
                         f"(docs/adding-an-op-kind.md); known: {', '.join(KINDS)}")
        self.kind = kind


@dataclass(frozen=True, slots=True)
class OpKind:
    """One op kind and its traits (the module docstring says what each one means)."""

    name: str
    kernel: Kernel
    shape: Shape
    fusion: Fusion
    flops_per_elem: int = 0
    reduces: bool = False            # FLOPs count per element read (a reduction), not written
    backward: Backward = ""
    recompute: Recompute = ""
    batch_stats: bool = False
    niti: Precision = "fp32"
    octo: Precision = "fp32"
    dsp: bool = False
    dsp_packets: float | None = None            # HVX packets per 128-byte output vector
    cpu_walk: tuple[float, float] | None = None  # (core cycles per element, strided fraction)
    dsp_walk: float | None = None               # scalar cycles per element on one DSP thread
    grad: str = ""                   # a unary element-wise layer's backward kind
    saves: Literal["", "input", "output"] = ""  # the forward tensor that backward op reads
    combines: bool = False           # an element-wise op over two or more operands (add)
    passes: int = 1                  # passes of its element-wise stream over the data
    reads_int32: bool = False        # integer versions read int32 accumulators

    def __post_init__(self) -> None:
        if self.kernel == "irregular" and self.cpu_walk is None:
            raise ValueError(f"op kind {self.name!r}: an irregular kind needs cpu_walk")
        if self.dsp and self.kernel == "irregular" and self.dsp_walk is None:
            raise ValueError(f"op kind {self.name!r}: an irregular kind the DSP runs needs dsp_walk")
        if self.dsp and self.kernel == "eltwise" and self.dsp_packets is None:
            raise ValueError(f"op kind {self.name!r}: an element-wise kind the DSP runs needs dsp_packets")
        if self.saves and not self.grad:
            raise ValueError(f"op kind {self.name!r}: saves is only meaningful with grad")

    @property
    def is_mac(self) -> bool:
        """Multiply-accumulate kinds (convolutions, their gradients, GEMMs): they count MACs
        and, in INT8, accumulate to int32."""
        return self.kernel in ("gemm", "depthwise")

    @property
    def is_plane(self) -> bool:
        """Kinds whose kernels walk one (image, channel) plane at a time."""
        return self.kernel in ("depthwise", "pool")


def _k(name: str, kernel: Kernel, shape: Shape, fusion: Fusion, **traits) -> OpKind:
    """An entry; symmetrical kinds are recomputable by replaying them unless told otherwise."""
    traits.setdefault("recompute", "replay" if fusion == "sym" else "")
    return OpKind(name, kernel, shape, fusion, **traits)


_MAC = dict(niti="int8", octo="int8", dsp=True)

# FLOPs per element (flops_per_elem).  Batch-norm/layer-norm forward: mean 1, variance 3,
# normalise 2, scale-shift 2; backward: recompute x_hat 2, the two reductions 3, the dx formula 5.
# GELU: the tanh approximation (Hendrycks & Gimpel 2016) has 9 operations, its derivative about
# 14.  Softmax: max 1, subtract 1, exp 1, sum 1, divide 1; backward y * (dy - sum(dy * y)) = 4.
# Softmax-cross-entropy adds the log and the pick of the label; its gradient is p - onehot,
# scaled by 1/batch.  Plain SGD: w -= lr * g (2); requant: shift and saturate (2); quantize:
# scale, stochastic-rounding add, round, clamp (4); PRC clip: min/max and the 95% interval (4,
# per element read, as reducemax's 1: reductions work per element read).  Octo's LAC (Zhou et
# al., ATC '21) outputs y + alpha * mu + beta: 3 operations (multiply, two adds) per output
# element if delta_hat were formed per element, so "lac": 1 counts only the add of delta_hat to
# the conv output -- an undercount (by up to 3x) for any op that relies on this default.
# socsim.workload.octo passes its LAC op's flops explicitly (n + 2 x per-sample elements:
# delta_hat is shaped like one sample's output, formed once per batch and added to each of the
# n elements), so the entry is a known approximation that Octo's graphs do not use.  Kinds at 0
# get their FLOPs from the lowering (convolutions, pools, add) or have no arithmetic.
# minmax: MNN's MNNCountMaxMinValue, the min and the max of a tensor in one pass (2 per element
# read; source/backend/cpu/CPUDynamicQuant.cpp); fake_quant: MNN's training fake quantisation
# (tools/train/source/nn/NN.cpp, fakeQuantFeatureWithMinMax): divide, add zero point, round,
# minimum, maximum, subtract zero point, multiply = 7, each an Express op of its own, so 7
# passes over the tensor (socsim.workload.mnn_int8).
# Hard-swish (Howard et al., "Searching for MobileNetV3", ICCV 2019; torch.nn.Hardswish):
# x * min(max(x + 3, 0), 6) / 6 = add, max, min, multiply, divide: 5; its gradient (PyTorch's
# hardswish_backward: dy * (x / 3 + 0.5) between -3 and 3, 0 below, dy above) = two compares,
# divide, add, multiply: 5.
# Sigmoid 1 / (1 + exp(-x)): negate, exp, add, divide = 4; its gradient dy * y * (1 - y) (it
# reads the output) = subtract, two multiplies = 3.  SiLU x * sigmoid(x) (Elfwing et al. 2018;
# torch.nn.SiLU): the sigmoid's 4 and a multiply = 5; its gradient (PyTorch's silu_backward:
# dy * s * (1 + x * (1 - s)), s recomputed from x) = 4 + subtract, multiply, add, two
# multiplies = 9.  Hexagon NN int8 kernels for these (its look-up-table sigmoid) are not
# modelled: dsp False, they run on the CPU or the GPU (assumption, on the pessimistic side).
# Tanh (torch.nn.Tanh) as (e^2x - 1) / (e^2x + 1): multiply, exp, subtract, add, divide = 5; its
# gradient dy * (1 - y^2) (it reads the output) = multiply, subtract, multiply = 3.  LeakyReLU
# max(x, alpha x) (torch.nn.LeakyReLU; the slope does not change the cost): multiply, max = 2;
# its gradient dy * (x > 0 ? 1 : alpha) (it reads the input) = compare, select-multiply = 2.
# Derived counts, as for the kinds above; dsp False (no Hexagon NN kernel modelled).
# Binary element-wise (ONNX Mul, Div, Sub, numpy broadcasting): one operation per output element
# forward; backward, per input, one per element of dy (dy * b; dy / b; -dy) -- Div's divisor
# gradient -dy * y / b is 3 -- plus one add per element summed away where that input was
# broadcast (the reduction back to its shape).  Resize (ONNX Resize, nearest or linear over H
# and W): nearest copies (0 per output element), linear blends 4 taps (4 multiplies + 3 adds =
# 7); its gradient scatters dy back (1 add per dy element, linear 4 multiply-adds = 8).  Both
# are costed as contiguous streams (kernel eltwise): an integer-factor upsample reads and writes
# rows in order; a gather-like walk would cost more (assumption, on the optimistic side).
#
# HVX packets per 128-byte output vector (dsp_packets; one HVX ALU op per packet; loads in slots
# 0/1, one store per packet; hw:hexagon.packet).  requant_static: 4 int32 input vectors -> shift
# (4) + 2 packs per int8 output vector; requant_dynamic adds the reduce-max pass (4 loads/vmax +
# clz) and the re-read: >= 2x static (pub:dynamic_rescale).  The other entries (analytic
# fallback only; the emulator costs relu, reducemax and the requants when it is importable) are
# counts of packets per output vector under the packet rules of isa/hvx/resources.py (one vector
# load per packet in slot 0/1, one store in slot 0, each taking one of the four HVX units; ALU
# ops in any slot):
#   relu 1.0: load + vmax with 0 + store fit one packet (derived).
#   relu_bwd 2.0: two input vectors (gradient, activation) = two loads = two packets; the
#     compare and the mux fit beside them (derived).
#   add 1.5: assumption.  Two input loads would take two packets at one vector load per packet,
#     so 1.5 sits below that bound; it corresponds to the reading of hw:hexagon.packet in which
#     both slots 0/1 take an aligned load (1 packet) plus about half a packet for operand
#     realignment/saturation.  Plausible 1-2.
#   clip 1.0: load + vmin + vmax + store are four instructions on the four HVX units, one packet
#     (derived; a full packet).
#   reducemax 1.0: load + vmax into the running maximum per vector (derived); note the count is
#     per *output* vector, which for a reduction is nearly 0 (the emulated kernel, used whenever
#     available, counts the input).
#   concat 1.0: a copy, load + store per vector (derived, aligned; unaligned vmemu would add a
#     packet).
#   sgd_update 3.0: assumption: two input loads (weight, gradient; two packets) plus the shift of
#     the gradient and the saturating subtract and store (about one more); plausible 2-4.
#   hardswish 3.0: derived from the same rules for an int8 kernel shaped like TFLite's reference
#     int8 HardSwish (tensorflow/lite/kernels/internal/reference/hard_swish.h; that Hexagon NN
#     ships such a kernel, hence dsp True, is an assumption not checked against its op list;
#     NITI defines no integer hard-swish, so NITI graphs keep it FP32): a load; add 3 in the
#     input scale and clamp to [0, 6] (vadd, vmax, vmin: one HVX unit each); the widening
#     multiply by x and the multiply-shift by 1/6 (two double-width vmpy, both multipliers each);
#     the pack to int8 (vpacke, the permute unit) and the store: 10 uses of the four HVX units,
#     so at least 2.5 packets; 3 with the multiplies in slots 2/3.  Plausible 2.5-4.
#   hardswish_bwd 3.0: assumption: two input loads (gradient, activation; two packets) plus the
#     compares, the mux and the multiply by the slope (about one more), as sgd_update.
# Floating point and the ops built on it have no HVX v66 implementation (pub:hexagon_hvx.float_unit,
# pub:op_latency_ms_cpu_vs_dsp.dsp_unsupported): norms, quantize/dequantize, softmax, GELU,
# embeddings and Octo's LAC run on the CPU or the GPU (dsp False).
#
# Irregular data movement (pub:op_latency_ms_cpu_vs_dsp: Transpose, WeightRotate, Slice).  These
# are permutations, not lane-wise maps.
# CPU (cpu_walk): the core walks them element by element (or in small register tiles) instead
# of streaming 16-byte vectors:
#   core cycles per element: scalar load + store + the index arithmetic of the walk (A77: one
#     store port, so >= ~1 per element for a scalar loop); transpose uses 8x8 NEON register
#     tiles (TRN1/TRN2, MNN's MNNTranspose), so less than one;
#   strided fraction: the walk stores (or loads) at a stride of a row, so each access touches a
#     line of which it uses one element (transpose: one 8-byte tile row; weight_rotate: one
#     element, the kernel is written as [ci][co][kh][kw] from [co][ci][kh][kw] reversed; slice:
#     the crop restarts every row) -- that line is an L1 miss served by L2 (TLB reach included),
#     costed at L2 latency / MLP like other cache hits below L1.
# Calibrated (micro level) so the DSP/CPU ratios at VGG-16 sizes (2 A77 threads vs the cDSP at
# 500 MHz) fall in Table 3's 4-8x band (docs/validation.md "Irregular ops"); the paper gives no
# tensor sizes, so only the ratios are fitted.
# channel_shuffle (ShuffleNet's reshape (g, c/g) -> transpose -> flatten of the channels) is not
# in Table 3 and not fitted: it is costed as a scalar walk, 1.0 cycle per element (a load and a
# store per element, >= 1 cycle on the A77's single store port), with a strided fraction of 1.0,
# as if every element's access on the strided side touched a new line.  Assumption, on the
# pessimistic side: in NC4HW4 an output 4-channel pack gathers from g input plane streams (for
# fp32 about one new line per 4 elements), and a plane-wise (NCHW) shuffle is a contiguous copy;
# plausible 0.3-1.5 cycles per element and a fraction between 1/16 and 1.
# DSP (dsp_walk): v66 HVX has no gather/scatter, so these run as scalar byte loads and stores on
# the hardware threads (cycles per element on one thread: a load, a store and address
# arithmetic, ~1 packet each when dual-issued; transpose adds the index shuffle).  Their DRAM
# traffic is costed like any other stream; pub:op_latency_ms_cpu_vs_dsp (Transpose 25 vs 3 ms,
# WeightRotate 20 vs 4, Slice 17 vs 4) is reproduced in order and magnitude (several times
# slower than the CPU), not per cell: the paper does not give the tensor sizes.  Per entry
# (assumptions; the scalar core issues up to two memory ops per packet in slots 0/1, a load and a
# store together, and post-increment addressing folds the pointer update in):
#   slice 1.0: a row-by-row contiguous copy, one load + store packet per element;
#   weight_rotate 1.5: the same plus the reversed (kh, kw) index arithmetic, ~half a packet;
#   transpose 2.0: load + store plus a second packet of index arithmetic for the permuted address;
#   channel_shuffle 2.0: a transpose of the (g, c/g) channel grid, costed as transpose.
# Plausible 1-3 cycles per element each; Table 3 checks transpose/weight_rotate/slice only in
# order and magnitude (above), channel_shuffle not at all.
_TABLE: tuple[OpKind, ...] = (
    # convolutions and matrix products
    _k("conv2d", "gemm", "conv", "asym", **_MAC),
    _k("conv2d_dgrad", "gemm", "conv", "asym", backward="dgrad", **_MAC),
    _k("conv2d_wgrad", "gemm", "conv", "asym", backward="wgrad", **_MAC),
    _k("gemm", "gemm", "gemm", "asym", **_MAC),
    _k("dwconv2d", "depthwise", "conv", "asym", **_MAC),
    _k("dwconv2d_dgrad", "depthwise", "conv", "asym", backward="dgrad", **_MAC),
    _k("dwconv2d_wgrad", "depthwise", "conv", "asym", backward="wgrad", **_MAC),
    # pooling
    _k("maxpool", "pool", "pool", "asym", niti="int8", dsp=True),
    _k("maxpool_bwd", "pool", "pool", "asym", backward="bwd", niti="int8", dsp=True),
    _k("avgpool", "pool", "pool", "asym", niti="int8", dsp=True),
    _k("avgpool_bwd", "pool", "pool", "asym", backward="bwd", niti="int8", dsp=True),
    # normalisation (NITI has none: its per-layer rescale normalises)
    _k("batchnorm", "eltwise", "elems", "asym", flops_per_elem=8, recompute="apply",
       batch_stats=True, niti="drop"),
    _k("batchnorm_bwd", "eltwise", "elems", "asym", flops_per_elem=10, backward="bwd",
       batch_stats=True, niti="drop"),
    _k("layernorm", "eltwise", "elems", "asym", flops_per_elem=8),
    _k("layernorm_bwd", "eltwise", "elems", "asym", flops_per_elem=10, backward="bwd"),
    # activations (a unary layer of each lowers to it and its grad)
    _k("relu", "eltwise", "elems", "sym", flops_per_elem=1, niti="int8", dsp=True,
       dsp_packets=1.0, grad="relu_bwd", saves="output"),
    _k("relu_bwd", "eltwise", "elems", "sym", flops_per_elem=1, backward="bwd", niti="int8",
       dsp=True, dsp_packets=2.0),
    _k("gelu", "eltwise", "elems", "sym", flops_per_elem=9, grad="gelu_bwd", saves="input"),
    _k("gelu_bwd", "eltwise", "elems", "sym", flops_per_elem=14, backward="bwd"),
    _k("hardswish", "eltwise", "elems", "sym", flops_per_elem=5, dsp=True, dsp_packets=3.0,
       grad="hardswish_bwd", saves="input"),
    _k("hardswish_bwd", "eltwise", "elems", "sym", flops_per_elem=5, backward="bwd", dsp=True,
       dsp_packets=3.0),
    _k("sigmoid", "eltwise", "elems", "sym", flops_per_elem=4, grad="sigmoid_bwd",
       saves="output"),
    _k("sigmoid_bwd", "eltwise", "elems", "sym", flops_per_elem=3, backward="bwd"),
    _k("silu", "eltwise", "elems", "sym", flops_per_elem=5, grad="silu_bwd", saves="input"),
    _k("silu_bwd", "eltwise", "elems", "sym", flops_per_elem=9, backward="bwd"),
    _k("softmax", "eltwise", "elems", "asym", flops_per_elem=5, grad="softmax_bwd",
       saves="output"),
    _k("softmax_bwd", "eltwise", "elems", "asym", flops_per_elem=4, backward="bwd"),
    _k("tanh", "eltwise", "elems", "sym", flops_per_elem=5, grad="tanh_bwd", saves="output"),
    _k("tanh_bwd", "eltwise", "elems", "sym", flops_per_elem=3, backward="bwd"),
    _k("leaky_relu", "eltwise", "elems", "sym", flops_per_elem=2, grad="leaky_relu_bwd", saves="input"),
    _k("leaky_relu_bwd", "eltwise", "elems", "sym", flops_per_elem=2, backward="bwd"),
    # binary element-wise with broadcasting (ONNX Mul, Div, Sub; the lowering passes FLOPs)
    _k("mul", "eltwise", "elems", "sym", combines=True),
    _k("mul_bwd", "eltwise", "elems", "sym", backward="bwd"),
    _k("div", "eltwise", "elems", "sym", combines=True),
    _k("div_bwd", "eltwise", "elems", "sym", backward="bwd"),
    _k("sub", "eltwise", "elems", "sym", combines=True),
    _k("sub_bwd", "eltwise", "elems", "sym", backward="bwd"),
    # resampling (ONNX Resize: nearest or linear; the lowering passes FLOPs)
    _k("resize", "eltwise", "elems", "sym"),
    _k("resize_bwd", "eltwise", "elems", "sym", backward="bwd"),
    # the loss
    _k("softmax_ce", "eltwise", "elems", "asym", flops_per_elem=6),
    _k("softmax_ce_bwd", "eltwise", "elems", "sym", flops_per_elem=2, backward="bwd"),
    # data movement
    _k("add", "eltwise", "elems", "sym", combines=True, niti="int8", dsp=True, dsp_packets=1.5),
    _k("concat", "eltwise", "elems", "sym", niti="int8", dsp=True, dsp_packets=1.0),
    _k("channel_shuffle", "irregular", "elems", "sym", niti="int8", dsp=True,
       cpu_walk=(1.0, 1.0), dsp_walk=2.0, grad="channel_shuffle"),
    _k("transpose", "irregular", "elems", "sym", niti="int8", dsp=True, cpu_walk=(0.85, 1 / 8),
       dsp_walk=2.0, grad="transpose"),
    _k("slice", "irregular", "elems", "sym", niti="int8", dsp=True, cpu_walk=(3.0, 1 / 8),
       dsp_walk=1.0),
    _k("weight_rotate", "irregular", "elems", "opaque", dsp=True, cpu_walk=(1.1, 1 / 9),
       dsp_walk=1.5),
    # embeddings (data-dependent gathers and scatters)
    _k("embedding", "eltwise", "elems", "opaque"),
    _k("embedding_bwd", "eltwise", "elems", "opaque", flops_per_elem=1, backward="bwd"),
    # the weight update
    _k("sgd_update", "eltwise", "elems", "sym", flops_per_elem=2, dsp=True, dsp_packets=3.0),
    # quantisation (emitted by the NITI and Octo rewriters)
    _k("reducemax", "eltwise", "elems", "asym", flops_per_elem=1, reduces=True, reads_int32=True,
       dsp=True, dsp_packets=1.0),
    _k("requant_dynamic", "eltwise", "elems", "sym", flops_per_elem=2, passes=2, reads_int32=True,
       dsp=True, dsp_packets=13.0),
    _k("requant_static", "eltwise", "elems", "sym", flops_per_elem=2, reads_int32=True, dsp=True,
       dsp_packets=6.0),
    _k("quantize", "eltwise", "elems", "sym", flops_per_elem=4),
    _k("dequantize", "eltwise", "elems", "sym", flops_per_elem=1),
    _k("minmax", "eltwise", "elems", "asym", flops_per_elem=2, reduces=True),
    _k("fake_quant", "eltwise", "elems", "sym", flops_per_elem=7, passes=7),
    _k("clip", "eltwise", "elems", "sym", flops_per_elem=4, reduces=True, dsp=True, dsp_packets=1.0),
    _k("lac", "eltwise", "elems", "sym", flops_per_elem=1),
    _k("lac_bwd", "eltwise", "elems", "sym", flops_per_elem=3, backward="bwd"),
)

#: kind name -> its entry, in table order (read-only)
TABLE: Mapping[str, OpKind] = MappingProxyType({k.name: k for k in _TABLE})
#: every known kind, in table order
KINDS: tuple[str, ...] = tuple(TABLE)


def lookup(kind: str) -> OpKind:
    """The entry of ``kind``; :class:`UnknownOpKind` (naming it) if the table has none."""
    try:
        return TABLE[kind]
    except (KeyError, TypeError):
        raise UnknownOpKind(kind) from None


def unary_layer(kind: str) -> OpKind | None:
    """The entry of a layer kind that lowers to one op of the same kind plus its ``grad`` op (a
    unary element-wise layer), or None for any other layer kind."""
    entry = TABLE.get(kind)
    return entry if entry is not None and entry.grad else None


def kinds_where(**traits: object) -> frozenset[str]:
    """The kinds whose entries have every given trait value (``kinds_where(kernel="gemm")``)."""
    return frozenset(k.name for k in _TABLE
                     if all(getattr(k, t) == v for t, v in traits.items()))


def _check() -> None:
    """Every gradient a layer lowers to is itself a kind."""
    for k in _TABLE:
        if k.grad and k.grad not in TABLE:
            raise ValueError(f"op kind {k.name!r}: its grad {k.grad!r} is not in the table")


_check()
