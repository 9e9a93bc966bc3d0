"""CPU cost model: per-core NEON throughput plus the cache hierarchy, threads split statically.

Compute: each op kind is a count of *inner-loop units* of the kernel MNN runs for it (an FMLA
of the 12x8 FP32 GEMM tile, an SDOT of the INT8 one, a depthwise output vector, an element-wise
pass, a packed or col2im-added vector); a unit takes the cycles that llvm-mca's scheduling model
of the core type gives the kernel's compiled inner loop (socsim.hw.armk: calibration/
armk_cycles.json, made by isa.arm.armk from isa/arm/kernels).  A core type without a model in
that table takes the instruction-mix bound max(vector ops / NEON pipes, instructions / issue
width, memory ops / load-store ports) of the loop (tests/hw/test_cpu_cost_oracle.py cross-checks
it).  The GEMM tile then runs at the core type's fitted efficiency (what the streams leave out:
edge tiles, loop nests, the front end, L1 misses) and, in the backward phases, the backward
kernel slowdown; the packing of its operands and the error gradient's col2im are costed apart.
Threads: work is split evenly (MNN's static split), but for MNN's MatMul row tiles and dW tiles
(split_shares); the slowest core sets the pace.
Training against inference: a training step's forward convolutions and fully connected layers
take their weights as inputs (``Op.in_training_step``), which MNN packs every step on one thread
(multi_input_weights, matmul_operands); an inference op's weights are packed once, at load.
Frameworks: MNN's GEMM-path mechanisms (CPUMatMul's one-thread passes, the weight gradient's
Raster buffers and round-robin dW tiles) apply to the ops MNN runs (``Op.cpu_framework``
"mnn", the default); another framework's GEMMs take the generic path, split evenly with their
operands packed by the threads (see mnn_gemm_path).
Memory: socsim.hw.memory simulates the op's MNN-style stream through private L1D/L2 and the
shared L3/SLC; cache-hit latency overlaps with compute (out-of-order cores) and DRAM time
overlaps with compute roofline-style (Williams et al., CACM 2009), with the channel shared by
the threads (socsim.hw.dram), which also loses row-buffer locality to the threads' interleaved
read and write streams; plane kernels pay a contended atomic per plane handed out.  Irregular
data movement (transpose, weight_rotate, slice) is walked per element (the kind's ``cpu_walk``).
time = compute cycles / f + the DRAM time left uncovered + synchronisation.
"""
from __future__ import annotations

from dataclasses import dataclass

from socsim.hw import armk
from socsim.hw import dram as dram_mod
from socsim.hw import forkjoin
from socsim.hw.cost import CpuConfig, OpCost, UnsupportedOp
from socsim.hw.cache.streams import CPU_TILE_PIXELS, op_macs
from socsim.hw.memory import op_memory
from socsim.hw.power import voltage_v
from socsim.spec.coretypes import kernel_power
from socsim.spec.soc import Cluster, SocSpec
from socsim.workload.opkinds import kinds_where, lookup
from socsim.workload.ops import Op


@dataclass(frozen=True, slots=True)
class Mix:
    """Instructions per inner-loop unit."""

    vec: float      # NEON arithmetic (FMLA / SDOT / FMAX / ADD ...)
    loads: float
    stores: float
    other: float = 0.0  # address arithmetic, loop control


# Inner-loop mixes.  GEMM: MNN arm64 12x8 FP32 micro-kernel per k step = 24 FMLA, 5 LDR q
# (3 for 12 A values, 2 for 8 B values); the INT8 kernel per 4-deep k step = 16 SDOT (8x8 tile
# of int32 accumulators, 4 lanes each ... 4 SDOT per 4x4 block), 4 LDR q.  Per unit = one FMLA/SDOT.
GEMM_MIX = Mix(vec=1.0, loads=5 / 24, stores=0.0, other=1 / 24)
GEMM_MIX_INT8 = Mix(vec=1.0, loads=4 / 16, stores=0.0, other=1 / 16)
# Depthwise 3x3 (MNN ConvolutionDepthwise3x3 style): per output vector 9 FMLA, 9 LDR (shifted
# windows loaded, not permuted), 1 STR, ~2 address/loop.  Scaled with kh*kw below.
DW_MIX_PER_TAP = Mix(vec=1.0, loads=1.0, stores=1 / 9, other=2 / 9)
# Element-wise: per vector one load per input, one op (two for the backward of activations),
# one store, one loop/address instruction.
ELT_MIX = Mix(vec=1.0, loads=1.0, stores=1.0, other=1.0)
# Packing (a 4x4 transpose per 4 vectors: 1 load, 1 store, 1 permute each) and col2im (2 loads,
# 1 add, 1 store per vector), for core types socsim.hw.armk's table lacks.
PACK_MIX = Mix(vec=1.0, loads=1.0, stores=1.0, other=0.25)
COL2IM_MIX = Mix(vec=1.0, loads=2.0, stores=1.0, other=0.25)

# Load/store ports: Cortex-A77 2 load + 1 store AGU (Arm Hot Chips 2019); Cortex-A55 one
# load/store pipe (A55 TRM).  Out-of-order cores (issue width 3 and up: A75 (3), A76 (4),
# A77/A78/Exynos M4 (6), X1 (8)) get the big-core values here, in _mlp and in cost()'s DRAM
# sharer kind (2 ports, MLP 8, "cpu-big"); the in-order 2-wide A55 the little-core ones.  The
# 3-wide A75 (sd845 big, exynos9820 mid) is out-of-order, issues two loads/stores per cycle and
# keeps 12 L1 misses outstanding for integer loads, 8 for NEON/FP (Arm's Hot Chips 29 (2017)
# Cortex-A75/A55 talk, as reported by Mynavi News).  (Keyed at issue width 4 before, the A75 got
# the A55's values, under-rating it on cache- and DRAM-bound ops.)
def _out_of_order(cl: Cluster) -> bool:
    return cl.issue_width >= 3


def _ls_ports(cl: Cluster) -> float:
    return 2.0 if _out_of_order(cl) else 1.0


# Memory-level parallelism for cache hits below L1 (misses in flight per core): out-of-order
# big cores overlap ~8 (A77 L1 has 12 outstanding fills, Arm A77 TRM); the in-order A55 ~2
# (it stalls on use; the A55 TRM's L1 has 3 linefill buffers, one usually blocking).
def _mlp(cl: Cluster) -> float:
    return 8.0 if _out_of_order(cl) else 2.0


# Fork-join of MNN's thread pool per parallel op: a futex wake-up and a barrier, a few
# microseconds per extra thread (assumption; Linux futex wake latency is ~2-5 us on phones).
THREAD_SYNC_S = 3e-6
# Plane kernels (depthwise conv, pools) hand out one (image, channel-group) plane at a time from
# a counter shared by the threads: one contended atomic per plane, i.e. a cache-line transfer
# between cores through the DSU (~100 ns; assumption from the L3 hit latency plus snoop).
ITEM_SYNC_S = 100e-9

# Irregular data movement (transpose, weight_rotate, slice, channel_shuffle) is walked per
# element: each such kind's (cycles per element, strided fraction) is its ``cpu_walk`` in the
# op-kinds table (socsim.workload.opkinds, with the sources and the Table 3 calibration).

# Kinds costed as GEMMs (the others by their opkinds ``kernel``); sched.baselines scales them.
GEMM_KINDS = kinds_where(kernel="gemm")


def _elt_bytes(dtype: str) -> int:
    return {"fp32": 4, "int32": 4, "fp16": 2, "int8": 1}.get(dtype, 4)


def lanes(dtype: str) -> int:
    """Elements per 128-bit NEON vector."""
    return 16 // _elt_bytes(dtype)


def unit_cycles(cl: Cluster, mix: Mix) -> float:
    """Steady-state cycles of one inner-loop unit on a core of ``cl`` (throughput bound)."""
    return max(mix.vec / cl.neon_pipes_128b,
               (mix.vec + mix.loads + mix.stores + mix.other) / cl.issue_width,
               (mix.loads + mix.stores) / _ls_ports(cl))


# Error- and weight-gradient GEMM kernels of mobile training frameworks sustain a lower fraction
# of peak than forward ones: a residual on the GEMM tile's cycles that the instruction streams do
# not explain.  What they do explain is costed apart: the operands' packing and the error
# gradient's col2im (gemm_data_movement, socsim.hw.armk's kernels), which the backward GEMMs pay
# on longer operands than the forward one.  Derived from pub:training_vs_inference (Mandheling
# 2.1): at batch 64 a training step takes 7.14x an inference step with MNN on the CPU, for ~3x
# the MACs.  The inference step is not im2col + GEMM: MNN's ConvolutionFloatFactory::create
# (alibaba/MNN source/backend/cpu/compute/) runs a convolution whose weights are constants
# (inference) as ConvolutionWinograd when bestWinogradUnit > 1 (3x3, stride 1), but one whose
# weights are inputs (training: the weights change every step) as
# ConvolutionTiledExecutorMultiInput, im2col + GEMM.  The inference step's Winograd convolutions
# are costed from the F(2x2,3x3) kernels' instruction streams (winograd_cycles: a speed-up of
# ~2.24 over im2col + GEMM on the A55 and the A76, where the assumption before was 2.25, the
# multiply cut alone).  tests/hw/test_backward_slowdown.py re-derives the slowdown on the
# source's workload (VGG-16 / CIFAR-10, batch 64, 4 big cores at the top OPP) on sd855, the
# spec with the interval-model stalls exposed: the s for which the model's training step /
# inference step (their stalls unchanged) is 7.14.  s = 1.77 (1.94 at a speed-up of 2, 1.39 at
# 3: MNN's larger Winograd units would lower it), since the training step carries the per-step
# work of MNN's Express training that its inference step does not (the forward passes' weights
# as inputs, multi_input_weights and matmul_operands; MNN's SGD and batch normalisation as
# Express chains, MNN_EXPRESS_CHAINS), fixed point with the efficiencies: derived 1.73 at the
# A76's 0.870, 1.76 at 0.910, 1.77 at 0.925, 1.774 at 0.930 (1.62 before those, with the
# derivation at ~2.32 against it: tests/hw/test_backward_slowdown.py).  The derivation depends on the A76's
# fp32_efficiency (compute against the stalls), fitted on the development set's single-core rows
# given s (socsim/spec/coretypes.py), and on socsim.hw.forkjoin.SERIAL_FRACTION: a fixed point
# (with the kernels' streams: s 1.59 -> eff 0.81 -> s 1.58; serial part re-fit 0.03 -> 0.06 ->
# s 1.55 -> eff 0.795 -> s 1.55; the joint fit's serial part 0.0: s 1.605 -> eff 0.815 -> s 1.618
# -> eff 0.82 -> s 1.621; before the streams 1.57 at 0.78),
# with the fork-join serial part (socsim.hw.forkjoin; the derivation runs on four big cores; the
# background-preemption factor stretches training and inference alike and leaves the ratio).
# A property of the CPU kernel libraries (MNN/TFLite), not of the SoC.
BACKWARD_KERNEL_SLOWDOWN = 1.77
BACKWARD_PHASES = ("error_grad", "weight_grad")


# Data movement around MNN's GEMM tile (socsim.hw.armk's im2col_pack and col2im_add kernels):
# every GEMM packs its two operands into the tile's panels (MNNPackC4ForMatMul_A / _B: the A
# panel is the im2col of a convolution's input; in training the weights change every step, so
# the B panel is packed every step too), and the error gradient of a convolution whose window
# overlaps (kernel > 1 or stride > 1) adds its GEMM's columns back into the input gradient
# (col2im).  Counted in elements of the op's dtype.  The passes that MNN's CPUMatMul runs on one
# thread (MNN_MATMUL_ONE_THREAD, matmul_operands) are left out: serial_pack_elements has them.
# Another framework's GEMM (mnn_gemm_path false) takes the generic path: its two operands packed
# once by the split threads, the weight gradient's im2col and dY included (no Raster buffers).
def gemm_data_movement(op: Op) -> tuple[float, float]:
    """(elements packed by the split threads, elements scatter-added by col2im) of a GEMM-kind
    op."""
    p = op.p
    mnn = mnn_gemm_path(op)
    one = set(MNN_MATMUL_ONE_THREAD) if matmul_operands(op) else set()
    if "cout" in p:                                     # convolutions and their gradients
        g = p.get("groups", 1)
        n = p.get("batch", 1) * p.get("oh", 1) * p.get("ow", 1)
        k = p["cin"] * p.get("kh", 1) * p.get("kw", 1)  # the im2col depth, all groups
        w = p["cout"] * k // max(g, 1)                  # weights
        if op.kind == "conv2d_dgrad":                   # dX cols = W^T dY, then col2im
            overlap = p.get("kh", 1) * p.get("kw", 1) > 1 or p.get("stride", 1) > 1
            packed = (0.0 if "B" in one else p["cout"] * n) + (0.0 if "A" in one else w)
            return packed, (k * n if overlap else 0.0)
        if op.kind == "conv2d_wgrad" and not mnn:       # generic: im2col(X) and dY packed once
            return k * n + p["cout"] * n, 0.0
        if op.kind == "conv2d_wgrad":                   # dW = dY im2col(X)^T: both long operands
            # the im2col is materialised by a Raster (im2col_buffer_bytes), then packed as A
            # (per tile in the threads, or on one thread: MNN_MATMUL_ONE_THREAD); dY's transpose
            # Raster for a batch above 1; dY's panel (B) on one thread: serial_pack_elements
            return ((1.0 if "A" in one else 2.0) * k * n
                    + (p["cout"] * n if p.get("batch", 1) > 1 else 0.0)), 0.0
        # forward: the im2col per tile; the weights too, but for a training step's convolution
        # (MNN's ConvolutionTiledExecutorMultiInput packs them on one thread: multi_input_weights)
        return k * n + (0.0 if multi_input_weights(op) else w), 0.0
    m, k, n = p.get("m", 1), p.get("k", 1), p.get("n", 1)
    return p.get("count", 1) * ((0.0 if "A" in one else m * k) + (0.0 if "B" in one else k * n)), 0.0


# MNN's CPUMatMul (alibaba/MNN source/backend/cpu/CPUMatMul.cpp) runs the training step's
# GEMMs: the geometry lowers a convolution whose weights are inputs to im2col + MatMul
# (source/geometry/GeometryConv2D.cpp: the error gradient, ConvTranspose2D, is C = MatMul(W, dY),
# W transposed, then col2im; GeometryConv2DBackPropFilter.cpp: the weight gradient is
# C = MatMul(im2col(X), dY), dY transposed), and a fully connected layer's gradients are MatMuls
# of the Express graph.  Which of its passes run on ONE thread depends on the release:
# * 1.2.0 (April 2021, commit d91fc63) to 2.7.0 (September 2023, commit ea4f13d): onResize
#   registers as pre-functions with one thread (``std::make_pair(..., 1)``) the packing of A
#   (MNNPackCUnit / MNNPackCUnitTranspose, e x l elements) and of B (MNNPackForMatMul_B, l x h),
#   and as a post-function with one thread the unpacking of C (MNNUnpackCUnitTranspose, e x h);
#   only StrassenMatrixComputor's products are split over the threads.
# * 2.8.0 (December 2023) on: only B's packing has one thread; A is packed per eP tile inside
#   each thread's loop (MNNPackForMatMul_A) and the tiles write C.
# Min-Energy's study (a Meizu 16T, released 2019; the paper names no MNN release) falls in the
# first window, the default; ("B",) gives the later releases.  A training step's fully connected
# layers go through the same MatMul in the forward pass too (tools/train/source/nn/NN.cpp,
# NN::Linear: ``_MatMul(input, weight, false, true)`` with the weight a trainable variable),
# an inference one through Convolution1x1Strassen on weights packed at load time: the forward
# MatMuls of a training step (Op.in_training_step) are costed this way, an inference graph's
# are not.  A training step's forward convolution is not a MatMul on the CPU (multi_input_weights).
MNN_MATMUL_ONE_THREAD: tuple[str, ...] = ("A", "B", "C")


# A training step's forward convolution on MNN's CPU backend (releases 1.2.0 to 3.x): NN::Conv
# passes the weight as an input (``_Conv(weight, bias, _Convert(input, NC4HW4), ...)``,
# tools/train/source/nn/NN.cpp); GeometryConv2D leaves a convolution with an NC4HW4 input to
# the CPU backend (source/geometry/GeometryConv2D.cpp, ``MNN_DATA_FORMAT_NC4HW4 == format``),
# whose ConvolutionFloatFactory::create returns ConvolutionTiledExecutorMultiInput for more than
# one input (source/backend/cpu/compute/ConvolutionFloatFactory.cpp), never Winograd or
# Strassen.  Its onExecute (DenseConvolutionTiledExecutor.cpp) transposes the weights per output
# channel (MNNTranspose32Bit: ic x kh*kw -> kh*kw x ic, arm64 4x4 NEON tiles) into a cache and
# packs them (MNNPackForMatMul_B), both on the calling thread, then runs the tiled im2col + GEMM
# (DenseConvolutionTiledImpl) split over the threads, as an inference convolution without
# Winograd does.  An inference convolution's weights are transformed once, at load time.  FP32
# (and FP16) only: MNN-INT8 training's forward convolutions take their own quantised path
# (socsim.workload.mnn_int8).
def multi_input_weights(op: Op) -> float:
    """Weights (elements) that MNN transposes and packs on one thread in ``op``, a training step's
    forward convolution with groups 1 that MNN runs (0 for other ops)."""
    p = op.p
    if (op.kind != "conv2d" or "cout" not in p or p.get("groups", 1) != 1 or op.dtype not in ("fp32", "fp16")
            or not op.in_training_step or not mnn_gemm_path(op)):
        return 0.0
    return float(p["cout"] * p["cin"] * p.get("kh", 1) * p.get("kw", 1))


# MNN's SGD step (tools/train/source/optimizer/SGD.cpp and ParameterOptimizer.cpp, releases 1.2.0
# to 2.x; express/Expr.cpp for fix / input / _Const) is not one fused in-place update but a chain
# of Express ops per parameter tensor of P elements, whatever the momentum and weight decay (the
# ops are built with 0 too; the default regularisation is L2):
# * onGetNextParameter copies each computed gradient into a new constant (readMap + _Const, a
#   memcpy: COPY is Expr::create's default);
# * regularizeParameters: ``_Const(wd) * param + grad``, then ``fix(CONSTANT)``: computed and
#   copied into a new constant;
# * onComputeUpdateValue: ``lr * grad + _Const(momentum) * history``, then ``fix(CONSTANT)``;
# * ``param - update``, then ParameterOptimizer::step's ``fix(TRAINABLE)`` (a copy) and
#   ``param->input(new)`` (Variable::input: a memcpy into the parameter).
# That is six binary ops (CPUBinary, split over the threads: three scalar-by-tensor, reading one
# tensor, and three reading two; 9 P reads and 6 P writes, against the fused update's 2 and 1) and
# five memcpys on the calling thread (each a P read and a P write).  socsim's graph has the fused
# update (socsim.workload.lower.update); MNN's FP32 updates are costed as the chain.
MNN_SGD_BINARY_ONE_INPUT = 3    # scalar by tensor: wd * param, lr * g, momentum * history (SGD.cpp)
MNN_SGD_BINARY_TWO_INPUTS = 3   # wd * param + grad, lr * g + momentum * history, param - update
MNN_SGD_COPIES = 5              # gradient -> constant, two fix(CONSTANT), fix(TRAINABLE), input()


def mnn_sgd_chain(op: Op) -> bool:
    """Whether ``op`` is an FP32 weight update of ``n`` elements that MNN runs (as its SGD's chain
    of Express ops)."""
    return op.kind == "sgd_update" and op.dtype == "fp32" and mnn_gemm_path(op) and op.p.get("n", 0) > 0


# MNN's batch normalisation in training (tools/train/source/nn/NN.cpp, BatchNormModule::onForward
# with getIsTraining(), releases 1.2.0 to 2.x) is not a fused kernel either but Express ops over
# the activation tensor T (N x C x H x W), whose gradients OpGrad builds from each op's rule
# (tools/train/source/grad/: BinaryGrad.cpp, ReduceGrad.cpp, UnaryGrad.cpp, TensorConvertGrad.cpp):
# * forward: _Convert NC4HW4 -> NCHW, ReduceMean (mean), x - mean, Square, ReduceMean (variance),
#   (C-sized: + eps, Sqrt, Reciprocal), * rstd, * scale, + bias, _Convert back: 9 passes over T,
#   each reading it once (the per-channel operand is C-sized), 7 of them writing it (the
#   reductions write C): 9 + 7 tensor passes against the fused op's 1 + 1;
# * backward: the Convert's (a copy), + bias's (a ReduceSum), * scale's and * rstd's (a product
#   each way, the per-channel one reduced: 4 passes each), the variance's ReduceMean's
#   (ZerosLike, then Add: 3), Square's (x * dy, then Add(mul, mul): 6), the two gradients of
#   x - mean summed (3), its Negative and ReduceSum (3), the mean's ReduceMean (3), x's two
#   gradients summed (3), the Convert's (2): 19 ops, 6 of them reading two tensors, 23 reads and
#   15 writes against the fused backward's 2 + 1.
# An inference step's batch normalisation (eval mode) is one _Scale op, as the fused one.
# Per kind: (one-input passes, two-input passes, tensor reads, tensor writes).
MNN_EXPRESS_CHAINS: dict[str, tuple[int, int, int, int]] = {
    "sgd_update": (MNN_SGD_BINARY_ONE_INPUT, MNN_SGD_BINARY_TWO_INPUTS,
                   MNN_SGD_BINARY_ONE_INPUT + 2 * MNN_SGD_BINARY_TWO_INPUTS,
                   MNN_SGD_BINARY_ONE_INPUT + MNN_SGD_BINARY_TWO_INPUTS),
    "batchnorm": (9, 0, 9, 7),
    "batchnorm_bwd": (13, 6, 23, 15),
}


def mnn_express_chain(op: Op) -> tuple[int, int, int, int] | None:
    """The passes of the Express ops MNN's training runs for ``op`` (MNN_EXPRESS_CHAINS), or None:
    an FP32 weight update (its SGD), or an FP32 batch normalisation of a training step, that MNN
    runs (mnn_gemm_path)."""
    if op.dtype != "fp32" or not mnn_gemm_path(op) or not op.in_training_step or op.p.get("n", 0) <= 0:
        return None     # (the chain is per tensor: an op without its size ``n`` is not one)
    return MNN_EXPRESS_CHAINS.get(op.kind)


def split_traffic_factor(op: Op) -> float:
    """The traffic of ``op``'s split part over that of the op's own stream (socsim.hw.memory):
    the reads and writes of the tensor by MNN's Express chain (MNN_EXPRESS_CHAINS) against the
    op's own (its bytes over the tensor's); 1 for other ops."""
    chain = mnn_express_chain(op)
    n = op.p.get("n", 0)
    if chain is None or n <= 0 or op.bytes_read + op.bytes_written <= 0:
        return 1.0
    own = (op.bytes_read + op.bytes_written) / (n * _elt_bytes(op.dtype))
    return (chain[2] + chain[3]) / own


def serial_copy_elements(op: Op) -> float:
    """Elements ``op`` copies (memcpy) on the calling thread: MNN's SGD chain's copies (0 if none)."""
    return float(MNN_SGD_COPIES * op.p.get("n", 0)) if mnn_sgd_chain(op) else 0.0


# Which ops take MNN's GEMM path (CPUMatMul's one-thread passes, matmul_operands; the weight
# gradient's Raster buffers, im2col_buffer_bytes; its round-robin dW tiles, split_share): those
# MNN runs, Op.cpu_framework "mnn" (socsim.workload.ops: the default, set otherwise by the
# scheduler that runs a graph as another framework does).  The others take the generic split
# path, the model before MNN's passes: the GEMM split evenly over the threads, each packing its
# share of both operands, col2im split too.  PyTorch (the pytorch baseline, Swan) runs a
# convolution's gradients through ATen's slow_conv2d (pytorch/pytorch
# aten/src/ATen/native/ConvolutionMM2d.cpp, read at a later revision than Swan's 1.8, whose loops
# are the same): the input gradient is at::parallel_for over the batch, each thread a GEMM
# (W^T dY) and col2im (unfolded2d_acc) per image in a buffer of its own, so all of it splits;
# the weight gradient is a loop over the images on the calling thread, one GEMM
# (dY x finput^T, the im2col saved by the forward pass, so none is made in the backward) per
# image, whose threading is the BLAS's (cpublas::gemm): split evenly here, as the grouped
# layers' per-group GEMMs that PyTorchRun puts on one thread are not.  TFLite's gradient kernels
# (XNNPACK, TensorFlow's Eigen through the Flex delegate) and ncnn's (inference only: no
# gradients) do not go through CPUMatMul either.
def mnn_gemm_path(op: Op) -> bool:
    """Whether ``op`` runs on MNN's CPU kernels (its MatMul's one-thread passes, the weight
    gradient's Raster buffers and round-robin tiles apply)."""
    return op.cpu_framework == "mnn"


def matmul_operands(op: Op) -> dict[str, float]:
    """Elements of the A, B and C operands of the CPUMatMul that MNN runs for ``op``, a
    gradient's GEMM (error_grad or weight_grad phase, groups 1) or a training step's forward
    FP32 MatMul (a fully connected layer) that MNN runs (mnn_gemm_path); {} for other ops."""
    p = op.p
    if not mnn_gemm_path(op) or lookup(op.kind).kernel != "gemm" or p.get("groups", 1) != 1:
        return {}
    if op.phase not in BACKWARD_PHASES and (op.phase != "forward" or "cout" in p or not op.in_training_step
                                            or op.dtype not in ("fp32", "fp16")):
        return {}   # a convolution's forward pass is not a MatMul (multi_input_weights)
    if "cout" in p:
        n = p.get("batch", 1) * p.get("oh", 1) * p.get("ow", 1)
        k = p["cin"] * p.get("kh", 1) * p.get("kw", 1)
        if op.kind == "conv2d_dgrad":                   # C[k, n] = W^T[k, cout] dY[cout, n]
            return {"A": float(k * p["cout"]), "B": float(p["cout"] * n), "C": float(k * n)}
        if op.kind == "conv2d_wgrad":                   # C[k, cout] = im2col[k, n] dY^T[n, cout]
            return {"A": float(k * n), "B": float(p["cout"] * n), "C": float(k * p["cout"])}
        return {}
    m, k, n, c = p.get("m", 1), p.get("k", 1), p.get("n", 1), p.get("count", 1)
    return {"A": float(c * m * k), "B": float(c * k * n), "C": float(c * m * n)}


# The part of a GEMM-kind op's data movement that runs on ONE thread whatever the thread count:
# the operands of its CPUMatMul that MNN_MATMUL_ONE_THREAD names, packed before (A, B) and
# unpacked after (C) the split products, on the calling thread.  Counted in elements of the op's
# dtype, at the packing kernel's cycles; what of each operand the last-level caches cannot hold
# that thread reads and writes in DRAM (serial_dram_bytes).
# A training step's forward convolution adds its weights' transpose and packing on that thread
# (multi_input_weights): two passes over them, whatever the release.
def serial_pack_elements(op: Op) -> float:
    """Elements of ``op`` packed or unpacked on one thread (0 if none; the forward convolution's
    weight transpose is apart: serial_cycles)."""
    ops = matmul_operands(op)
    return float(sum(ops.get(x, 0.0) for x in MNN_MATMUL_ONE_THREAD)) + multi_input_weights(op)


def serial_dram_bytes(op: Op, soc: SocSpec) -> float:
    """DRAM bytes of ``op``'s one-thread passes: each operand's read and its packed copy's write,
    for the part of it that the L3 and SLC cannot hold (the forward convolution's weights: their
    transpose and their packing, two such passes)."""
    ops = matmul_operands(op)
    llc = (soc.cpu.l3.size_kb + (soc.cpu.slc.size_kb if soc.cpu.slc else 0.0)) * 1024
    eb = _elt_bytes(op.dtype)
    copies = MNN_SGD_COPIES if mnn_sgd_chain(op) else 0
    return float(sum(2.0 * max(0.0, ops.get(x, 0.0) * eb - llc) for x in MNN_MATMUL_ONE_THREAD)
                 + 2.0 * 2.0 * max(0.0, multi_input_weights(op) * eb - llc)
                 + copies * 2.0 * max(0.0, op.p.get("n", 0) * eb - llc))


# MNN's weight gradient materialises im2col(X) (GeometryConvUtils::im2Col makes a virtual tensor
# of kh*kw strided regions, which the MatMul's input forces through CPURaster: one blit per
# region, the regions dealt round-robin over the threads, ``for u = tId; u < size; u +=
# threadNum``), a k x n*oh*ow buffer that CPUMatMul's per-tile packing then reads back.  The
# cache streams model the packing reading X's rows directly (socsim.hw.cache.streams); the
# buffer's write and its read-back reach DRAM for the part of it the last-level caches (L3 and
# SLC) cannot hold.  Its copy cycles are one pass of the packing kernel (gemm_data_movement).
# dY goes the same way: the geometry's A operand is dY transposed (n, oc, oh*ow -> oc, n*oh*ow,
# one region, which CPURaster splits over the threads); an identity when the batch is 1.
def im2col_buffer_bytes(op: Op) -> float:
    """Bytes of the buffers an MNN weight gradient materialises before its MatMul: the im2col
    and, for a batch above 1, dY transposed (0 for other ops and other frameworks')."""
    p = op.p
    if op.kind != "conv2d_wgrad" or "cout" not in p or not mnn_gemm_path(op):
        return 0.0
    k = p["cin"] * p.get("kh", 1) * p.get("kw", 1)
    n = p.get("batch", 1) * p.get("oh", 1) * p.get("ow", 1)
    dy = p["cout"] * n if p.get("batch", 1) > 1 else 0
    return float((k * n + dy) * _elt_bytes(op.dtype))


def im2col_spill_bytes(op: Op, soc: SocSpec) -> float:
    """DRAM bytes of the im2col buffer: its write and its read-back, for what the L3 and SLC
    cannot hold (its write alone when the one-thread packing of A reads it back: that read is
    serial_dram_bytes')."""
    buf = im2col_buffer_bytes(op)
    llc = (soc.cpu.l3.size_kb + (soc.cpu.slc.size_kb if soc.cpu.slc else 0.0)) * 1024
    passes = 1.0 if "A" in MNN_MATMUL_ONE_THREAD and matmul_operands(op) else 2.0
    return passes * max(0.0, buf - llc)


# CPUMatMul deals the weight gradient's 12-row dW tiles (eP rows of C = im2col(X) x dY^T,
# ceil(k / 12) of them) round-robin to the threads (``for tx = tId; tx < tileCount; tx +=
# numberThread``), so the thread with the most tiles does ceil(tiles / threads) of them, not
# tiles / threads: the share of the split part that paces the op (applied to the whole split
# part; the im2col Raster is dealt by regions instead, a pass that is small beside the GEMM).
# MNN's weight gradients only (mnn_gemm_path); other frameworks' split evenly.
def split_share(op: Op, threads: int) -> float:
    """The pacing thread's share of ``op``'s split compute on ``threads`` threads (the larger of
    :func:`split_shares`, the share that paces the op on equal cores)."""
    return max(split_shares(op, threads))


# A MatMul's products (StrassenMatrixComputor::_generateTrivalMatMul, alibaba/MNN
# source/backend/cpu/compute/StrassenMatmulComputor.cpp, the same loop from the 2019 sources to
# 2.x) are split over the e dimension (C's rows) in tiles of eP = 12 (arm64 FP32,
# MNNGetMatMulPackMode; CPU_TILE_PIXELS): ``unitNumber = e / eP`` whole tiles dealt round-robin
# (``for i = tId; i < unitNumber; i += numberThread``) and the ``xCount = e - unitNumber * eP``
# remainder rows to the last thread (``if (tId != numberThread - 1) return;``).  A fully
# connected layer's forward product and its error gradient have e = the batch: at batch 16 one
# tile of 12 rows, on the calling thread, and a remainder of 4 on the last, so two threads do the
# work whatever the thread count, and the caller does 3/4 of it (its weight gradient has e = the
# layer's width: fine-grained).  Applied to the FP32 MatMuls MNN runs through CPUMatMul (the
# ``gemm`` kind, e = m, with matmul_operands: a gradient's, or a training step's forward one,
# Op.in_training_step); an inference fully connected layer runs as Convolution1x1Strassen on
# weights packed at load, whose small-e products are split over the output channels instead;
# convolutions' products have e in the thousands (their weight gradient's 12-row dW tiles:
# split_share above), other dtypes and frameworks split evenly.
MATMUL_EP = CPU_TILE_PIXELS


def split_shares(op: Op, threads: int) -> tuple[float, float]:
    """(the calling thread's share, the largest share of any other thread) of ``op``'s split
    compute on ``threads`` threads; (1, 1) for one thread."""
    if threads <= 1:
        return 1.0, 1.0
    p = op.p
    if op.kind == "gemm" and op.dtype == "fp32" and "m" in p and matmul_operands(op):
        e = int(p["m"])
        units, rest = divmod(e, MATMUL_EP)
        work = [MATMUL_EP * max(0, -(-(units - t) // threads)) for t in range(threads)]
        work[-1] += rest
        return work[0] / e, max(work[1:]) / e
    if op.kind != "conv2d_wgrad" or "cout" not in p or not mnn_gemm_path(op):
        return 1.0 / threads, 1.0 / threads
    tiles = -(-p["cin"] * p.get("kh", 1) * p.get("kw", 1) // CPU_TILE_PIXELS)
    s = -(-tiles // threads) / tiles
    return s, s


def serial_cycles(op: Op, cl: Cluster) -> float:
    """Core cycles of ``op``'s one-thread passes on a core of ``cl``: the packing
    (serial_pack_elements) at the packing kernel's rate, MNN's SGD copies (serial_copy_elements)
    at the element-wise pass's, and a training forward convolution's
    weight transpose (multi_input_weights) walked as the transpose kind is (its ``cpu_walk``:
    NEON register tiles, a strided side served by L2)."""
    e = serial_pack_elements(op)
    copy = serial_copy_elements(op)
    if e <= 0 and copy <= 0:
        return 0.0
    cyc = e / lanes(op.dtype) * (armk.cycles("im2col_pack", cl.core_type) or unit_cycles(cl, PACK_MIX))
    if copy > 0:
        # a memcpy: a load and a store per vector, the element-wise pass's kernel less its operation
        cyc += copy / lanes(op.dtype) * (armk.cycles("relu", cl.core_type) or unit_cycles(cl, ELT_MIX))
    w = multi_input_weights(op)
    if w > 0:
        walk = lookup("transpose").cpu_walk
        assert walk is not None
        per_elem, strided_fraction = walk
        cyc += w * (per_elem + strided_fraction * cl.l2.hit_latency_cycles / _mlp(cl))
    return cyc


def winograd_cycles(op: Op, cl: Cluster, share: float = 1.0) -> float | None:
    """Core cycles of a forward FP32 3x3 stride-1 convolution run as MNN runs one with constant
    weights (inference): Winograd F(2x2, 3x3) -- the source transform per 4x4 input tile and
    4-channel group, 16 GEMMs of the transformed planes on the 12x8 tile (2.25x fewer multiplies
    than im2col + GEMM), the destination transform per 2x2 output tile and channel group
    (socsim.hw.armk's wino23_src, gemm_f32_12x8, wino23_dst; Lavin & Gray, CVPR 2016).  The
    weights are transformed once, at load time.  None when the op is not such a convolution or
    the core type has no table entry.  MNN picks larger units (F(4x4,3x3), F(6x6,3x3)) for large
    planes (ConvolutionWinograd::bestWinogradUnit), which cut more multiplies: F(2x2,3x3) is the
    smallest of its speed-ups."""
    p = op.p
    if (op.kind != "conv2d" or op.dtype != "fp32" or p.get("kh") != 3 or p.get("kw") != 3
            or p.get("stride", 1) != 1 or p.get("groups", 1) != 1):
        return None
    gemm = armk.cycles("gemm_f32_12x8", cl.core_type)
    src = armk.cycles("wino23_src", cl.core_type)
    dst = armk.cycles("wino23_dst", cl.core_type)
    if gemm is None or src is None or dst is None:
        return None
    tiles = p.get("batch", 1) * -(-p["oh"] // 2) * -(-p["ow"] // 2)
    cin4, cout4 = -(-p["cin"] // 4), -(-p["cout"] // 4)
    fmla = tiles * 16 * p["cin"] * p["cout"] / 4
    return (fmla * gemm / cl.fp32_efficiency + tiles * (cin4 * src + cout4 * dst)) * share


def _eltwise_kernel(bwd: bool, combines: bool) -> str:
    """The kernel whose pass stands for an element-wise op's loads, operation and store."""
    if bwd:
        return "relu_grad"      # reads the saved activation and the gradient
    if combines:
        return "add"
    return "relu"


def compute_cycles(op: Op, cl: Cluster, share: float = 1.0) -> float:
    """Core cycles for ``share`` of ``op`` on one core of ``cl``, data in L1.

    Per-core cycles per inner-loop unit come from the kernels' instruction streams
    (socsim.hw.armk, llvm-mca's model of the core type); a core type the table lacks keeps the
    instruction-mix bound (unit_cycles)."""
    kind = lookup(op.kind)
    if kind.kernel == "gemm":
        slow = BACKWARD_KERNEL_SLOWDOWN if op.phase in BACKWARD_PHASES else 1.0
        packed, added = gemm_data_movement(op)
        vec = lanes(op.dtype)
        move = (packed / vec * (armk.cycles("im2col_pack", cl.core_type) or unit_cycles(cl, PACK_MIX))
                + added / 4 * (armk.cycles("col2im_add", cl.core_type) or unit_cycles(cl, COL2IM_MIX)))
        if op.dtype == "int8":
            units = op_macs(op) / 16 * share                    # one SDOT = 16 MACs
            peak = cl.int8_macs_per_cycle / 16                # SDOTs per cycle
            per = armk.cycles("gemm_s8_sdot_12x8", cl.core_type) or max(unit_cycles(cl, GEMM_MIX_INT8), 1 / peak)
            return units * per * slow / cl.int8_efficiency + move * share
        # one FMLA = 4 FP32 MACs, or 8 FP16 MACs (ARMv8.2 FP16 arithmetic: an fp16 op on a CPU
        # is one a framework chose for a core that has it, socsim.spec.coretypes); an FP16 FMLA
        # issues as the FP32 one (the tile's cycles per FMLA stand for both)
        v = lanes(op.dtype) if op.dtype == "fp16" else 4
        units = op_macs(op) / v * share
        per = armk.cycles("gemm_f32_12x8", cl.core_type) or max(unit_cycles(cl, GEMM_MIX), 8 / cl.fp32_flops_per_cycle)
        return units * per * slow / cl.fp32_efficiency + move * share
    if kind.kernel == "depthwise":
        p = op.p
        taps = p.get("kh", 3) * p.get("kw", 3)
        outs = max(op_macs(op) // max(taps, 1), 1)
        mix = Mix(DW_MIX_PER_TAP.vec * taps, DW_MIX_PER_TAP.loads * taps, 1.0, DW_MIX_PER_TAP.other * taps)
        dw = armk.cycles("dw3x3", cl.core_type)
        # the 3x3 kernel's cycles per output vector, scaled by taps for other window sizes
        per = dw * taps / 9 if dw is not None else unit_cycles(cl, mix)
        return outs / lanes(op.dtype) * share * per
    if kind.kernel == "irregular":
        assert kind.cpu_walk is not None  # the table requires it of irregular kinds
        per_elem, strided_fraction = kind.cpu_walk
        elems = max(op.bytes_written // _elt_bytes(op.dtype), op.flops, 1)
        strided = strided_fraction * cl.l2.hit_latency_cycles / _mlp(cl)
        return elems * share * (per_elem + strided)
    # element-wise, reductions, pools: one pass of the kernel (loads, one operation, store) per
    # output vector, and the op's further arithmetic per element at the NEON pipes' rate
    outs = max(op.out_bytes // _elt_bytes(op.dtype), op.bytes_written // _elt_bytes(op.dtype), 1)
    elems = max(op.flops, outs)
    bwd = kind.backward == "bwd"
    ops_per = 2.0 if bwd else 1.0
    mix = Mix(ELT_MIX.vec * ops_per, ELT_MIX.loads * (2 if kind.combines or bwd else 1),
              ELT_MIX.stores, ELT_MIX.other)
    pass_cycles = armk.cycles(_eltwise_kernel(bwd, kind.combines), cl.core_type)
    chain = mnn_express_chain(op)
    if chain is not None:
        # MNN's Express chain (MNN_EXPRESS_CHAINS): one element-wise pass per op over the tensor
        # (an SGD's copies run on one thread: serial_cycles)
        one = armk.cycles("relu", cl.core_type)
        two = armk.cycles("add", cl.core_type)
        if one is None or two is None:
            one = unit_cycles(cl, ELT_MIX)
            two = unit_cycles(cl, Mix(ELT_MIX.vec, 2 * ELT_MIX.loads, ELT_MIX.stores, ELT_MIX.other))
        n = op.p.get("n", outs)
        return n * (chain[0] * one + chain[1] * two) / lanes(op.dtype) * share
    if pass_cycles is None:
        return elems / lanes(op.dtype) * share * unit_cycles(cl, mix)
    extra = max(0, elems - outs)
    return (outs * pass_cycles + extra / cl.neon_pipes_128b) / lanes(op.dtype) * share


def _mix_total(m: Mix) -> float:
    return m.vec + m.loads + m.stores + m.other


def op_instructions(op: Op) -> float:
    """Instructions the whole ``op`` retires (every thread): its inner-loop units times the
    instructions of the kernel's loop (the mixes above: the same kernels compute_cycles costs),
    what the memory-latency governors divide by the cache misses (:func:`misses_per_instruction`)."""
    kind = lookup(op.kind)
    if kind.kernel == "gemm":
        packed, added = gemm_data_movement(op)
        move = packed / lanes(op.dtype) * _mix_total(PACK_MIX) + added / 4 * _mix_total(COL2IM_MIX)
        if op.dtype == "int8":
            return op_macs(op) / 16 * _mix_total(GEMM_MIX_INT8) + move
        v = lanes(op.dtype) if op.dtype == "fp16" else 4
        return op_macs(op) / v * _mix_total(GEMM_MIX) + move
    if kind.kernel == "depthwise":
        taps = op.p.get("kh", 3) * op.p.get("kw", 3)
        outs = max(op_macs(op) // max(taps, 1), 1)
        return outs / lanes(op.dtype) * (_mix_total(DW_MIX_PER_TAP) * taps + 1.0)
    if kind.kernel == "irregular":
        assert kind.cpu_walk is not None
        # a scalar load, store and address update per element walked
        return 3.0 * max(op.bytes_written // _elt_bytes(op.dtype), op.flops, 1)
    outs = max(op.out_bytes // _elt_bytes(op.dtype), op.bytes_written // _elt_bytes(op.dtype), 1)
    elems = max(op.flops, outs)
    bwd = kind.backward == "bwd"
    per = _mix_total(ELT_MIX) + (1.0 if bwd else 0.0) + (1.0 if kind.combines or bwd else 0.0)
    return (outs * per + max(0, elems - outs)) / lanes(op.dtype)


def instructions_per_miss(op: Op, mem) -> dict[str, float]:
    """The op's instructions per L2 refill (``l2``: the event of the L3's latency monitors) and
    per L3 refill (``l3``: the LLCC's and the DDR's), as the memory-latency governors measure
    them (socsim.spec.soc.Uncore.ratio_ceil); no miss: infinite."""
    inst = op_instructions(op)
    lv = {l.name: l for l in mem.levels}
    out = {}
    for key, name in (("l2", "L2"), ("l3", "L3")):
        m = lv.get(name)
        misses = (m.read_misses + m.write_misses) if m is not None else 0
        out[key] = inst / misses if misses > 0 else float("inf")
    return out


class CpuCostModel:
    """Cost of an op on a set of CPU cores (implements socsim.hw.cost.CostModel)."""

    def __init__(self, soc: SocSpec) -> None:
        self.soc = soc
        self._memo: dict[tuple, OpCost] = {}

    def supports(self, op: Op) -> bool:
        return True

    def cost(self, op: Op, cfg: CpuConfig) -> OpCost:
        key = (op.signature, op.macs, op.flops, op.bytes_read, op.bytes_written, op.out_bytes, cfg)
        c = self._memo.get(key)
        if c is None:
            c = self._memo[key] = cpu_cost(self.soc, op, cfg)
        return c


# Which cache-hit latencies the core hides under its compute and which it exposes (interval
# analysis: Karkhanis & Smith, ISCA 2004; Eyerman et al., ACM TOCS 2009: a miss that outlasts
# what the reorder buffer can cover stalls the core, and only misses in flight together overlap,
# MLP-wide).  The in-order Cortex-A55 stalls on the first use of a missing load (A55 TRM), so
# every hit below L1 and every DRAM access adds to its time; an out-of-order big core (128-entry
# ROB on the A76/A77, 160+ on X1) covers an L2 hit (9-11 cycles) but not a DSU L3 / SLC hit
# (30-60+ cycles, more in ns when the uncore clocks drop) or a DRAM access.  Applied with the
# uncore clocks (soc.cpu.uncore); a spec without them keeps the roofline overlap (the fallback).
# Switching activity (scales C V^2 f, socsim.hw.power): the core type's KERNEL_POWER while the
# core computes (socsim.spec.coretypes; 1 where not fitted); a core stalled on cache hits, DRAM
# or the split's synchronisation still clocks its front end, L1/L2 and miss handling, so that
# time keeps 0.25 of the reference activity (a core waiting at the barrier: SPIN_ACTIVITY).  Assumption: no public per-core measurement of stall power on these phones; a stalled
# core drawing about a quarter of its busy dynamic power is plausible in the range 0.15-0.4.
STALL_ACTIVITY = 0.25
# Switching activity of a core that waits at a fork-join barrier (for the slowest core of an
# unequal set, or for a thread the phone's background work preempted, socsim.hw.forkjoin):
# MNN's workers and caller spin on an atomic flag with std::this_thread::yield() between tasks
# (alibaba/MNN source/backend/cpu/ThreadPool.cpp), a short load-compare-branch loop around a
# system call, no NEON work and no cache misses; and while a preempted thread's core runs the
# background work, that work is the phone's, not training's.  FITTED on the development set's
# 21 energies (benchmarks/fit_uncore_power.py --max-energy-mape 20, jointly with the uncore
# power and KERNEL_POWER; docs/modeling.md, Fitted constants): 0.15 at sd855's whole firmware
# voltage table (0.1 before it); 0.2 since the per-domain background preemption (forkjoin; the
# grid's best tau-b of the energies at MAPE <= 20% with power_exponent 3: 0.2 / 400 mW / A76 2.9 /
# A55 1.6, energy MAPE 19.1%, tau-b 0.721 outright; 0.15 with the old constants there: 0.663);
# 0.25 since MNN's training-step mechanisms and the background re-fit (the same command over
# spin 0.15 / 0.2 / 0.25, power_top_mw 200-800, A76 2.5-3.3, A55 1.2-1.8: 0.25 / 600 mW / A76 2.9
# / A55 1.6, energy MAPE 18.1 -> 17.0%, tau-b 0.730 -> 0.749; spin 0.4 / A76 2.7 / A55 1.4
# reaches tau-b 0.788 at 17.2%, kept out: a waiting core would draw more than a stalled one).
# Plausible 0-0.25 (at most STALL_ACTIVITY: no outstanding misses to keep the memory system busy).
SPIN_ACTIVITY = 0.25


def _exposed_levels(cl: Cluster) -> tuple[str, ...]:
    return ("L3", "SLC") if _out_of_order(cl) else ("L2", "L3", "SLC")


def uncore_clocks(soc: SocSpec, cfg: CpuConfig, cores: tuple[int, ...],
                  per_miss: dict[str, float] | None = None) -> dict[str, float]:
    """L3, LLCC and DDR clocks (MHz) the SoC's memory-latency governors vote for the clusters
    running ``cores`` at ``cfg``'s frequencies (socsim.spec.soc.Uncore); empty without an
    ``uncore`` block (the uncore then stays at its top clock, today's fallback).  ``per_miss``:
    the op's instructions per cache miss (:func:`instructions_per_miss`), which the governors'
    ``ratio_ceil`` gates their votes on."""
    unc = soc.cpu.uncore
    if unc is None:
        return {}
    clocks = {soc.cpu.cluster_of(c).name: cfg.freq(soc.cpu.cluster_of(c).name) for c in cores}
    out = {}
    for which in ("l3", "llcc", "ddr"):
        v = unc.vote(which, clocks, per_miss)
        if v is not None:
            out[which] = v
    return out


def hit_latencies_s(soc: SocSpec, cl: Cluster, f_mhz: float, unc: dict[str, float]) -> dict[str, float]:
    """Load-to-use latency (s) of a hit in L2, L3 and the SLC for a core of ``cl`` at ``f_mhz``.

    Without uncore clocks (``unc`` empty) every latency is the spec's cycle count at the core's
    clock (the fallback).  With them, the L2 is private and runs at the core clock; the L3's and
    SLC's spec cycle counts are load-to-use on the biggest core at its top clock with the uncore at
    its top (WikiChip's DSU figures), of which the part beyond that core's L2 latency is spent in
    the DSU / LLCC and stretches as the governors lower their clocks (top / voted)."""
    l2 = cl.l2.hit_latency_cycles / (f_mhz * 1e6)
    l3c = soc.cpu.l3.hit_latency_cycles
    slcc = soc.cpu.slc.hit_latency_cycles if soc.cpu.slc else 0
    if not unc:
        return {"L2": l2, "L3": l3c / (f_mhz * 1e6), "SLC": slcc / (f_mhz * 1e6)}
    big = soc.cpu.clusters[-1]
    ref_hz = big.max_mhz * 1e6
    u = soc.cpu.uncore
    l3_stretch = u.top("l3") / unc["l3"] if "l3" in unc else 1.0
    llcc_stretch = u.top("llcc") / unc["llcc"] if "llcc" in unc and u.llcc_mhz else 1.0
    l3 = l2 + max(0, l3c - big.l2.hit_latency_cycles) / ref_hz * l3_stretch
    slc = l3 + max(0, slcc - l3c) / ref_hz * llcc_stretch
    return {"L2": l2, "L3": l3, "SLC": slc}


def cpu_cost(soc: SocSpec, op: Op, cfg: CpuConfig) -> OpCost:
    if not cfg.cores:
        raise UnsupportedOp("no CPU cores chosen")
    cores = tuple(sorted(cfg.cores))
    n = len(cores)
    share = 1.0 / n
    # the slowest core sets the pace of a statically split op
    # (split_shares: MNN's MatMul deals its row tiles unevenly, the calling thread's share apart;
    # that thread runs on the fastest core of the set, as the one-thread packing below)
    s_caller, s_other = split_shares(op, n)
    per_core = []
    for c in cores:
        cl = soc.cpu.cluster_of(c)
        f = cfg.freq(cl.name)
        cyc = compute_cycles(op, cl, s_other)
        per_core.append((cyc / (f * 1e6), cyc, f, cl))
    if s_caller != s_other:
        fast = min(range(n), key=lambda i: per_core[i][0])
        _, _, f, cl = per_core[fast]
        cyc = compute_cycles(op, cl, s_caller)
        per_core[fast] = (cyc / (f * 1e6), cyc, f, cl)
    compute_s, cycles, f_mhz, slow = max(per_core, key=lambda t: t[0])
    # the one-thread packing (serial_pack_elements) runs on the calling thread, on the fastest
    # core of the set, before the split part; the other threads wait for it at the barrier
    ser = [serial_cycles(op, soc.cpu.cluster_of(c)) / (cfg.freq(soc.cpu.cluster_of(c).name) * 1e6)
           for c in cores]
    serial_pack_s = min(ser)
    caller = ser.index(serial_pack_s)
    compute_s += serial_pack_s
    # that thread's own DRAM traffic (serial_dram_bytes), at one sharer's bandwidth; the pass
    # takes the longer of its cycles and its traffic (a streaming copy overlaps the two)
    ser_dram = serial_dram_bytes(op, soc)
    ser_kind = "cpu-big" if _out_of_order(soc.cpu.cluster_of(cores[caller])) else "cpu-little"
    cycles = compute_s * f_mhz * 1e6
    if n > 1 and forkjoin.SERIAL_FRACTION > 0:
        # the op's serial part (socsim.hw.forkjoin, Amdahl) runs on the calling thread, which
        # the scheduler keeps on the fastest core of the set, before the split part; expressed
        # in the pacing core's cycles
        s = forkjoin.SERIAL_FRACTION
        serial_s = s * n * min(t[0] for t in per_core)
        compute_s = serial_s + (1.0 - s) * compute_s
        cycles = compute_s * f_mhz * 1e6

    mem = op_memory(op, "cpu", soc, cores)
    # the split part's traffic against the op's own stream (MNN's SGD chain: its binary ops)
    rep = split_traffic_factor(op)
    dram_bytes = mem.dram_bytes * rep + im2col_spill_bytes(op, soc)
    lv = {l.name: l for l in mem.levels}
    # accesses served by L2 / L3 / SLC (hits there), per thread, overlapped MLP-wide; latencies
    # in seconds at the clocks the uncore governors set (hit_latencies_s)
    unc = uncore_clocks(soc, cfg, cores,
                        instructions_per_miss(op, mem) if soc.cpu.uncore is not None and soc.cpu.uncore.ratio_ceil
                        else None)
    hidden_s = exposed_s = 0.0
    exposed = _exposed_levels(slow) if unc else ()
    for name, lat_s in hit_latencies_s(soc, slow, f_mhz, unc).items():
        if name in lv:
            t = lv[name].hits * rep * lat_s * share / _mlp(slow)
            if name in exposed:
                exposed_s += t
            else:
                hidden_s += t
    hit_cycles = (hidden_s + exposed_s) * f_mhz * 1e6
    core_cycles = max(cycles, hidden_s * f_mhz * 1e6)
    core_s = core_cycles / (f_mhz * 1e6)

    # DRAM: latency-bound per thread (MLP lines in flight) or bandwidth-bound, shared channel;
    # out-of-order cores (the A75 included, issue width 3) are "cpu-big" sharers, the in-order
    # A55 "cpu-little" (see the note above _out_of_order)
    kind = "cpu-big" if _out_of_order(slow) else "cpu-little"
    # each thread walks its input (reads) and its output (writebacks): interleaved address
    # streams that break each other's DRAM row-buffer locality (socsim.hw.dram)
    per_thread = int(mem.dram_read_bytes > 0) + int(mem.dram_write_bytes > 0)
    sync_s = THREAD_SYNC_S * (n - 1)
    if n > 1 and lookup(op.kind).is_plane:
        sync_s += ITEM_SYNC_S * mem.work_items / n
    # background work preempting threads that run in lockstep (socsim.hw.forkjoin): the op
    # waits for the preempted thread, its other threads spin meanwhile.  It waits for the last
    # of its threads, so a fully occupied domain's preemption stretches that domain's threads
    # only: on a hybrid set the big threads, done early under the static split, absorb theirs
    # in their slack (Petrini et al., SC'03: the noise that matters is on the critical path)
    bg_u = forkjoin.background_shares(soc, cfg, cores)
    ends = [t_c + (serial_pack_s if i == caller else 0.0) for i, (t_c, _, _, _) in enumerate(per_core)]
    split = 1.0 - (forkjoin.SERIAL_FRACTION if n > 1 else 0.0)
    dom_of = {c: name for name, ids in forkjoin.domains(soc).items() for c in ids}
    bg_slack = {d: split * (max(ends) - max(e for c, e in zip(cores, ends) if dom_of.get(c) == d))
                for d in bg_u}

    def timed(ddr_mhz: float | None) -> tuple[float, float, float, float]:
        """(DRAM latency ns, DRAM s, stall s, background-noise s) at DDR clock ``ddr_mhz``."""
        lat_ns, ddr_scale = dram_mod.uncore_dram(soc.dram, soc.cpu.uncore, ddr_mhz)
        sh = dram_mod.share(soc.dram, kind, {kind: n}, streams=max(1, n * per_thread),
                            background_bps=cfg.bg_dram_gbs * 1e9, latency_ns=lat_ns, clock_scale=ddr_scale)
        d_s = dram_bytes * share / sh.bandwidth_bps
        ser_s = 0.0
        if ser_dram > 0:
            one = dram_mod.share(soc.dram, ser_kind, {ser_kind: 1}, streams=2,
                                 background_bps=cfg.bg_dram_gbs * 1e9, latency_ns=lat_ns, clock_scale=ddr_scale)
            ser_s = max(0.0, ser_dram / one.bandwidth_bps - serial_pack_s)
        # interval model (with uncore clocks): exposed cache-miss time and the DRAM time add to
        # the compute; without them the roofline overlap
        st = (exposed_s + d_s + sync_s if unc else max(0.0, d_s - core_s) + sync_s) + ser_s
        nz = max([0.0] + [(core_s + st - bg_slack[d]) / (1.0 - u) - (core_s + st) for d, u in bg_u.items()])
        return lat_ns, d_s, st, nz

    dram_lat_ns, dram_s, stall_s, noise_s = timed(unc.get("ddr"))
    bwmon = soc.cpu.uncore.bwmon if soc.cpu.uncore is not None else None
    if bwmon is not None and "ddr" in unc and dram_bytes + ser_dram > 0:
        # the bandwidth governor (socsim.spec.soc.BwMon) votes from the traffic it measures, the
        # op's own plus the foreground apps'; the DDR runs at the higher of its vote and the
        # latency governors'.  A higher clock shortens the op and raises its traffic, so the
        # vote is taken again until it settles (it only rises, over a finite OPP list).
        for _ in range(len(bwmon.ddr_opps_mhz)):
            t = core_s + stall_s + noise_s
            v = bwmon.vote((dram_bytes + ser_dram) / t + cfg.bg_dram_gbs * 1e9)
            if v <= unc["ddr"]:
                break
            unc["ddr"] = v
            dram_lat_ns, dram_s, stall_s, noise_s = timed(v)
    stall_s += noise_s
    time_busy = core_s + stall_s
    # On unequal cores (a prime core with gold ones, big with little) the faster threads finish
    # their static share early and spin in MNN's yield loop until the slowest is done
    # (socsim.hw.forkjoin): a spinning core is charged SPIN_ACTIVITY, so the op's activity
    # is the cores' own, weighted by their dynamic power (C V^2 f), which is what the engine
    # multiplies it by.
    busy: dict[str, int] = {}
    wsum = asum = 0.0
    for i, (t_c, _, f_c, cl_c) in enumerate(per_core):
        name = cl_c.name
        busy[name] = busy.get(name, 0) + 1
        t_c += serial_pack_s if i == caller else 0.0
        own = t_c if t_c < compute_s else compute_s
        if time_busy > 0:
            # its own compute at its kernel power; waiting at the barrier (for the slowest core, or
            # for a preempted thread) at SPIN_ACTIVITY; the rest (cache and DRAM stalls, the
            # split's synchronisation) at STALL_ACTIVITY
            spin = (compute_s - own) + noise_s
            act_c = (kernel_power(cl_c.core_type) * own + SPIN_ACTIVITY * spin
                     + STALL_ACTIVITY * max(0.0, time_busy - own - spin)) / time_busy
        else:
            act_c = kernel_power(cl_c.core_type)
        w = cl_c.dyn_power_coeff_uw_mhz_v2 * float(voltage_v(cl_c.opps, f_c)) ** 2 * f_c
        wsum += w
        asum += w * act_c
    activity = asum / wsum if wsum > 0 else 1.0
    detail = [("threads", float(n)), ("dram_latency_ns", dram_lat_ns)] + [(f"{k}_mhz", v) for k, v in unc.items()]
    detail += [ ("compute_s", compute_s), ("dram_s", dram_s), ("sync_s", sync_s), ("noise_s", noise_s),
              ("cache_cycles", float(hit_cycles)), ("sampled_fraction", mem.simulated_fraction),
              ("dram_energy_j", dram_mod.energy_j(soc.dram, dram_bytes + ser_dram))]
    detail += [(f"hit_rate_{l.name}", l.hit_rate) for l in mem.levels]
    return OpCost.compose(int(core_cycles), f_mhz, stall_s,
                          bytes=int(op.bytes_read + op.bytes_written), dram_bytes=int(dram_bytes + ser_dram),
                          activity=activity, busy=tuple(sorted(busy.items())),
                          detail=tuple(sorted(detail)))
