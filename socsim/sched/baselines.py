"""Baseline training frameworks: the same graph, run as each framework runs it.

mnn-fp32     MNN, FP32 on the CPU (4 big cores by default), graph built once.  The reference
             the others are described against.
mnn-int8     MNN INT8 training on CPU NEON, same cores: by default (int8_path "mnn-int8") INT8
             (sdot) forward convolutions with run-time scales and FP32 gradient kernels, as
             MNN's CPU backend allows (socsim.workload.mnn_int8); "qat": MNN's fake-quantised
             training; "niti": every MAC op INT8.
tflite-fp32  TFLite, FP32 on the CPU (4 big cores); re-prepares its interpreter graph every
             batch, and its gradient kernels are slower than MNN's (see TFLITE_*).
mnn-fp32-gpu MNN's OpenCL backend: every op FP32 on the GPU, graph built once; its gradient
             convolutions are MNN's backend-independent decomposition (see MNN_GPU_*).
pytorch      PyTorch: FP32 with as many threads as big cores (docs/seeds.md 3), whatever the
             workload's cpu.cores; eager autograd pays a dispatch cost per op every batch, and
             grouped convolutions run as a loop over groups (see PyTorchRun).

The differences are modelled (per-batch overheads on the host core, kernel efficiency relative to
MNN's as a scaling of the op's work), not labels: the cost models see different work.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from socsim.contract.cores import core_set_error
from socsim.hw.cpu import BACKWARD_KERNEL_SLOWDOWN, BACKWARD_PHASES, GEMM_KINDS, THREAD_SYNC_S
from socsim.hw.host import HOST_COREMARK_PER_MHZ, HOST_REF, host_speed  # noqa: F401 - re-exported (tests, PyTorchRun)
from socsim.contract import BaseScheduler, Plan
from socsim.contract import single_unit_plan
from socsim.sched.fusion import fuse
from socsim.sched.mandheling import region_storage_bytes
from socsim.sched.oversub import OMP_OVERSUBSCRIBED_SWITCH_S, oversubscription, spin_window_s
from socsim.workload import memory
from socsim.workload.costs import BYTES
from socsim.workload.opkinds import lookup
from socsim.workload.ops import DEFAULT_CPU_FRAMEWORK, Op, with_cpu_framework

# TFLite re-prepares its interpreter (tensor allocation, op Prepare()) every training batch:
# 304 ms per batch for VGG-16 (pub:dsp_graph_preparation_ms.VGG16.tflite; MNN 212 ms when it
# re-prepares).  Costed as the DSP graph's preparation is (socsim.hw.fastrpc.graph_prep_s): a
# per-op term plus a per-MB term on the graph's storage (its weights and the peak of its live
# tensors, socsim.sched.mandheling.region_storage_bytes), so that a bigger graph costs more.
# Per MB: 21.1 us, rpcperf's cache-maintenance slope for mapped buffers
# (hw:fastrpc.sm8250_rpcperf_us_per_call, (430 - 92) us over 16 MB; sd865's graph_prep_us_per_mb).
# Per op, fitted: VGG-16/CIFAR-10 training at batch 64 is 132 ops and 368.1 MiB of storage in
# this model's FP32 graph, so (304 - 368.1 x 0.0211) ms / 132 = 2.244 ms (re-derived by
# tests/sched/test_baselines.py; it was a flat 304 / 132 = 2.303 ms before the per-MB term).
# Assumption: the entry was measured on Mandheling's DSP path (Mandheling 3.6); it is the only
# published figure for TFLite's per-batch re-preparation, and is used for the CPU interpreter
# too, whose AllocateTensors()/Prepare() pass is the same host-side work (plausibly less without
# a delegate: an upper bound).  One published graph cannot separate the two terms: the per-MB
# one is the FastRPC table's, not fitted.
TFLITE_PREP_S_PER_OP = 2.244e-3
TFLITE_PREP_US_PER_MB = 21.1
# Kernel throughput relative to MNN's (1.0 = MNN).  Assumptions, from how each framework runs
# training: TFLite's forward ops and the error gradients (lowered to CONV_2D/TRANSPOSE_CONV
# builtins) run on XNNPACK, which is within ~15% of MNN on ARM CPUs (MNN, Jiang et al. MLSys
# 2020, Fig. 8: MNN 8-45% faster than TF-Lite on CPU inference); the weight gradients
# (Conv2DBackpropFilter) have no TFLite builtin and run through the Flex delegate's TensorFlow
# (Eigen) kernel, assumed at 0.6x MNN's hand-written NEON kernel (plausible 0.4-0.8: Eigen's
# generic GEMM path against a tuned NEON kernel; no published mobile figure for either).
TFLITE_EFFICIENCY = {"forward": 0.85, "error_grad": 0.85, "weight_grad": 0.6, "update": 1.0}
# PyTorch mobile: eager execution through the dispatcher and autograd, ~30 us of host CPU per op
# per batch on a big core.  Assumption (plausible 10-100 us): eager PyTorch's per-op framework
# overhead is on the order of 10 us on desktop CPUs (dispatcher, autograd graph recording,
# tensor allocation), and a phone core runs such branchy host code ~2-4x slower.  Its conv
# kernels (XNNPACK forward; im2col + GEMM backward) are assumed 0.9x / 0.75x MNN's (plausible
# 0.7-1.0 / 0.5-1.0): no published PyTorch-vs-MNN training kernel comparison on a phone.  These
# set the pytorch baseline's (and Swan's) absolute times; docs/validation.md "Swan" shows how
# the Swan comparison depends on them.
PYTORCH_DISPATCH_S_PER_OP = 30e-6
PYTORCH_EFFICIENCY = {"forward": 0.9, "error_grad": 0.75, "weight_grad": 0.75, "update": 1.0}
# The PyTorch release modelled.  docs/seeds.md 3 names none; Swan's own set-up points to 1.8: an
# Ubuntu proot distro in Termux whose Python dependencies come from PyTorch's 1.8 LTS wheel index,
# torch then replaced by a build from source (github.com/SymbioticLab/FedScale, the Swan authors'
# lab: fedscale/edge/termux/README.md, "Install Ubuntu proot-distro for Swan", and
# install_mob_deps.sh; the build script's release is not shown, so this is an inference).  "1.8"
# stands for the releases up to 1.10, "1.11" for 1.11 and later; they differ in how a grouped
# convolution (depthwise: one group per channel) is differentiated.
PYTORCH_VERSIONS = ("1.8", "1.11")
PYTORCH_DEFAULT_VERSION = "1.8"
# On a CPU without MKLDNN (PyTorch's build turns it on by default only for x86) every PyTorch
# release runs a grouped convolution as a loop over its groups: the input's and the weight's
# slices (``narrow(...).contiguous()``), a one-group convolution, and one ``cat`` of the outputs
# (aten/src/ATen/native/Convolution.cpp, ``subtensor``).  The ATen calls the loop makes per
# group, each paying PYTORCH_DISPATCH_S_PER_OP: forward, narrow and contiguous of the input and
# of the weight and the convolution (5); backward, the convolution's backward and the four
# slices' and copies' backward or slicing of the gradients, two gradient sums (7).  (Bias-free
# convolutions, as depthwise layers are; the layer's own three ops stay counted as before.)
PYTORCH_GROUP_LOOP_CALLS = 12
# The dispatch cost above is host code (dispatcher, autograd, allocator): branchy integer code whose
# speed follows the core that runs it, not the NEON units.  PYTORCH_DISPATCH_S_PER_OP is taken on
# the reference core of socsim.hw.host (the Cortex-A77 mid core of Swan's sd865 at its top clock,
# the host core of PyTorch's four-big-core run there); on another host core it scales with
# CoreMark per MHz x the core's top clock (socsim.hw.host.host_speed).
PYTORCH_HOST_REF = HOST_REF
# PyTorch's intra-op parallelism: at::parallel_for opens one parallel region (fork-join of the
# intra-op thread pool: OpenMP in a Linux build from source, as Swan's; pthreadpool on Android)
# per parallel kernel call.  Inside the group loop each group's kernels are separate calls: the
# input slice's contiguous copy and the one-group slow_conv2d forward (at::parallel_for over the
# batch) in the forward pass; slow_conv2d's input gradient (parallel_for over the batch) in the
# backward; up to 1.10 also each group's slice_backward zero fill, the copy into it and the
# gradient sum (element-wise TensorIterator kernels, parallel above 32,768 elements:
# at::internal::GRAIN_SIZE).  Counted from aten/src/ATen/native/ConvolutionMM2d.cpp and
# Convolution.cpp (pytorch/pytorch).  Each region costs the CPU model's fork-join per extra thread
# (socsim.hw.cpu.THREAD_SYNC_S), paid on the host core while the others wait.
PYTORCH_GROUP_LOOP_REGIONS = {"1.8": 6, "1.11": 3}
# Up to 1.10 a non-mobile (Linux) build runs each group's one-group convolution through NNPACK
# when the batch has at least 16 images: ``_convolution_nogroup`` calls
# ``_nnpack_spatial_convolution`` whenever ``ConvParams::use_nnpack`` holds (float CPU tensors,
# not dilated or transposed, kernel under 17, and ``input.size(0) >= 16`` outside C10_MOBILE;
# aten/src/ATen/native/Convolution.cpp of 1.9/1.10, pytorch/pytorch).  NNPACK is built into
# PyTorch's aarch64 Linux builds by default, and Swan's mini-batch is 16.  1.11 uses NNPACK only
# when no gradient is needed (its convolution backend selection), so a training step there keeps
# slow_conv2d.  What NNPACK changes in the group loop:
# * the forward runs on NNPACK's own thread pool, a pthreadpool of at::get_num_threads() threads
#   beside ATen's OpenMP pool (aten/src/ATen/native/NNPACK.cpp, ``nnpack_threadpool``, which
#   follows the thread count since pytorch/pytorch#40707), opening the parallel regions that
#   nnpack_regions() counts, each a fork-join of that pool (THREAD_SYNC_S per extra thread); the
#   slow_conv2d forward's OpenMP region is gone;
# * the convolution's backward is ``slow_conv_dilated2d_backward``, a serial loop over the
#   images (one small GEMM, im2col and col2im per image on the calling thread; ATen's
#   NaiveDilatedConvolution.cpp): the input gradient no longer splits the batch over ATen's
#   threads and its OpenMP region is gone, so 4 of 1.8's 6 regions per group remain.  Inferred,
#   not read in the 1.8 derivatives.yaml: the autograd node generated for
#   ``_nnpack_spatial_convolution`` in 1.4-1.10 saves the input, the weight, the weight's sizes
#   2 and 3, the stride and the padding, the arguments of slow_conv_dilated2d_backward (kernel
#   size, stride, padding); NNPACK's own gradient functions take neither kernel size nor stride.
# * the bias-free call allocates a zero bias (``at::zeros({weight.size(0)})``): one more ATen
#   call per group (PYTORCH_NNPACK_EXTRA_CALLS).
PYTORCH_NNPACK_MIN_BATCH = 16
PYTORCH_NNPACK_REGIONS_1_8 = 4
PYTORCH_NNPACK_EXTRA_CALLS = 1
# NNPACK's cache blocking on ARM, where it does not read the caches (NNPACK src/init.c,
# ``init_static_hwinfo``: L1 16 KiB, L2 128 KiB inclusive of L1, L3 2 MiB inclusive of L2) and
# its NEON tuple GEMMs (``sxgemm`` 3x4 for Winograd, ``cxgemm`` 2x2 for the FFTs; SIMD width 4).
NNPACK_BLOCKING_BYTES = {"l1": 16 * 1024, "l2": 128 * 1024 - 16 * 1024, "l3": 2 * 1024 * 1024 - 128 * 1024}
NNPACK_SIMD_WIDTH = 4
NNPACK_SXGEMM_MR_NR = (3, 4)
NNPACK_CXGEMM_MR_NR = (2, 2)
# The two pools' collisions (socsim.sched.oversub): at a batch of 16 a 1.8 step runs ATen's OpenMP
# pool (n threads, the caller one of them) beside NNPACK's pthreadpool (n threads, the same caller),
# 2n - 1 threads on the n cores of the set, and both pools' idle workers spin without yielding
# (oversub.SPIN_ITERATIONS).  When the group loop passes from one pool's region to the other's
# within the first pool's spin window, the second pool's workers wait on their cores until the
# first pool's spinners give up (oversub.spin_window_s) and then switch in
# (oversub.OMP_OVERSUBSCRIBED_SWITCH_S, the ncnn fit).  Where the pools alternate, counted from
# ATen's source: an element-wise kernel (TensorIterator, the input slice's ``contiguous`` copy among
# them) opens an OpenMP region only over PYTORCH_GRAIN_SIZE elements or more
# (aten/src/ATen/Parallel.h at::internal::GRAIN_SIZE; TensorIteratorBase::for_each runs serially
# below it), so a group's forward has an OpenMP region (its input copy, batch x cin/G x h x w
# elements) only on the large early layers; elsewhere the OpenMP workers sleep through the layer's
# NNPACK calls, and the pools meet once as the layer starts and once as it ends (the ops around it
# are element-wise regions over whole tensors).  The backward of a group runs no NNPACK.  Gaps: the
# ATen calls between one pool's last region and the other's first, at the host core's dispatch
# speed: NNPACK -> OpenMP the next group's input narrow and contiguous (2), OpenMP -> NNPACK the
# weight's narrow and contiguous (a one-channel slice, serial), the zero bias and the convolution
# call (4).
PYTORCH_GRAIN_SIZE = 32768
PYTORCH_CALLS_NNPACK_TO_OMP = 2
PYTORCH_CALLS_OMP_TO_NNPACK = 4
# MNN builds its gradient convolutions by backend-independent "geometry computing":
# Conv2DBackPropFilter is an im2col raster, a transposing raster of dY, a generic MatMul and a
# transposing raster into dW (MNN source, source/geometry/GeometryConv2DBackPropFilter.cpp), the
# same commands on the OpenCL backend as on the CPU.  So MNN's GPU gradient convolutions pay the
# backward slowdown measured for MNN's CPU kernels (socsim.hw.cpu.BACKWARD_KERNEL_SLOWDOWN,
# pub:training_vs_inference), which the GPU cost model does not include: it prices forward and
# backward kernels at the spec's efficiency per MAC (as a JIT-compiling framework such as Sage
# gets), and only their parallel work (socsim.hw.gpu.parallel_work) differs.
MNN_GPU_GRAD_CONV_EFFICIENCY = 1.0 / BACKWARD_KERNEL_SLOWDOWN
# MNN's OpenCL kernels against the tuned, JIT-compiled kernels the GPU cost model prices at the
# spec's fp32_efficiency (Sage's): 0.14.  Calibrated on the ncnn GPU/CPU ratios of
# calibration/dev/ncnn_phones.yaml (ncnn's Vulkan GPU runs as mnn-fp32-gpu, its CPU runs as
# mnn-fp32; sd855+ and sd888, 12 ratios), with socsim.hw.gpu.RAMP_CYCLES: MAPE 24%, mean error
# +3% (0.12: 27%, 0.2: 34%; docs/validation.md, Development set); it applies to every op with arithmetic (MNN's generic
# image/buffer kernels are not specialised per shape as Sage's JIT-compiled ones are).
MNN_GPU_KERNEL_EFFICIENCY = 0.14
# MNN's gradient convolutions are geometry-computed (above): the im2col (weight gradient) or
# col2im (input gradient) raster writes the expanded KH*KW*Cin x B*OH*OW matrix and the MatMul
# reads it back, and the raster works on NCHW buffers while MNN's OpenCL convolutions keep NC4HW4
# images, so the tensors the op reads and writes are converted between the two layouts (a read
# and a write of each byte; source/backend/opencl/core/ImageBufferConvertor.cpp).
MNN_GPU_LAYOUT_PASSES = 2


def mnn_gpu_backward_traffic(op: Op) -> Op:
    """A gradient convolution as MNN's OpenCL backend runs it: plus its im2col/col2im matrix
    (written and read back) and the layout conversions of its operands."""
    kind = lookup(op.kind)
    if kind.shape != "conv" or kind.backward not in ("dgrad", "wgrad"):
        return op
    p = op.p
    elt = BYTES.get(op.dtype, 4)
    col = elt * (p["cin"] // p["groups"]) * p["kh"] * p["kw"] * p["batch"] * p["oh"] * p["ow"]
    layout = MNN_GPU_LAYOUT_PASSES * (op.bytes_read + op.bytes_written)
    return replace(op, bytes_read=op.bytes_read + col + layout // 2, bytes_written=op.bytes_written + col + layout // 2)


def scale_work(op: Op, efficiency: float) -> Op:
    """The op as a kernel of relative ``efficiency`` runs it: its arithmetic divided by the
    efficiency (traffic unchanged), so every cost model sees the slower kernel."""
    if efficiency == 1.0 or (op.macs == 0 and op.flops == 0):
        return op
    return replace(op, macs=round(op.macs / efficiency), flops=round(op.flops / efficiency),
                   attrs=tuple(sorted(dict(op.attrs, kernel_efficiency=f"{efficiency:g}").items())))


class _Scaled:
    """A graph whose ops run at framework-specific kernel efficiencies (phase -> factor; with
    ``kinds``, only ops of those kinds are scaled), on ``framework``'s CPU kernels
    (Op.cpu_framework: socsim.hw.cpu applies MNN's GEMM-path mechanisms to MNN's ops only)."""

    def __init__(self, graph, eff: dict[str, float], kinds: frozenset[str] | None = None,
                 framework: str = DEFAULT_CPU_FRAMEWORK) -> None:
        self.ops = tuple(with_cpu_framework(op if kinds is not None and op.kind not in kinds
                                            else scale_work(op, eff.get(op.phase, 1.0)), framework)
                         for op in graph.ops)
        self.batch = graph.batch
        self.peak_memory_bytes = graph.peak_memory_bytes
        self.live_bytes = graph.live_bytes


class CpuOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    cores: str | list[int] | None = Field(None, description="core set; default: the workload's cpu.cores, else 4 big cores")

    @field_validator("cores")
    @classmethod
    def _cores(cls, v):
        problem = core_set_error(v) if v is not None else None  # the SoC's cores: at plan time
        if problem:
            raise ValueError(problem)
        return v


def grouped_convs(graph) -> list[Op]:
    """The forward ops of ``graph``'s grouped convolutions (more than one group; a channel
    shuffle's ``groups`` is not a convolution's and runs no group loop)."""
    return [op for op in graph.ops if op.phase == "forward" and op.p.get("groups", 1) > 1
            and lookup(op.kind).shape == "conv"]


def group_grad_sum(conv: Op, dgrad: Op) -> Op:
    """What PyTorch up to 1.10 adds to a grouped convolution's backward.  Until 1.11 gave
    convolution one backward formula (``convolution_backward``, pytorch/pytorch#65219), autograd
    differentiated the group loop op by op: the backward of each group's ``narrow``
    (``slice_backward``) allocates a zero tensor the size of the whole input, copies the group's
    gradient into it, and autograd sums the G full-size gradients; the weight's slices likewise.
    Per group, one zero fill and (but for the first) one addition over the whole input and
    weight: traffic that grows with G times the input, memory-bound on every core."""
    p = conv.p
    g = p["groups"]
    elt = BYTES.get(conv.dtype, 4)
    x = p["batch"] * p["cin"] * p["h"] * p["w"] * elt + conv.weight_bytes  # one full-size gradient
    n = x // elt
    return Op(name=f"{conv.layer}.group_grad_sum", kind="add", phase="error_grad", layer=conv.layer,
              dtype=conv.dtype, params=(("batch", p["batch"]), ("n", n * g), ("n_in", 2)),
              flops=(g - 1) * n,
              bytes_read=2 * (g - 1) * x + x,           # the sums' operands, the groups' slices
              bytes_written=g * x + x + (g - 1) * x,    # zero fills, slice copies, sums
              out_bytes=x, inputs=(dgrad.name,),
              attrs=(("cpu_framework", "pytorch"), ("framework", "pytorch<=1.10 grouped-convolution autograd"),
                     ("grad_of", conv.inputs[0] if conv.inputs else conv.name), ("role", "grad_accum")))


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def uses_nnpack(conv: Op, version: str) -> bool:
    """Whether PyTorch ``version`` runs ``conv``'s per-group forward through NNPACK in a training
    step of a Linux build (``ConvParams::use_nnpack``: up to 1.10, batch of 16 or more, kernel
    under 17; see PYTORCH_NNPACK_MIN_BATCH)."""
    p = conv.p
    return (version == "1.8" and p.get("batch", 1) >= PYTORCH_NNPACK_MIN_BATCH
            and max(p.get("kh", 1), p.get("kw", 1)) < 17)


def nnpack_regions(conv: Op) -> int:
    """The parallel regions (pthreadpool calls that wake the pool's threads) NNPACK opens for one
    group of ``conv``'s forward.  Stride 1: one ``nnp_convolution_output`` over the batch, counted
    from NNPACK src/convolution-output.c: the algorithm its ``auto`` picks (Winograd F(6x6, 3x3)
    for 3x3 kernels, else 8x8 or 16x16 FFT tiles), its cache blocks (NNPACK_BLOCKING_BYTES), and
    per input-channel block a kernel transform, per tile block an input transform and per tuple
    and output-channel block a tuple GEMM, then one output transform; a call whose range fits in
    one tile runs on the calling thread (pthreadpool's portable API), so a one-channel group
    opens only its input transforms and the output transform.  Stride 2 or more: PyTorch calls
    ``nnp_convolution_inference`` once per image, counted as one region per image (assumption: a
    lower bound; the inference path of the NNPACK revision PyTorch 1.8 pins was not read)."""
    p = conv.p
    g = p.get("groups", 1)
    cin, cout, b = p["cin"] // g, p["cout"] // g, p["batch"]
    kh, kw = p.get("kh", 1), p.get("kw", 1)
    if p.get("stride", 1) != 1:
        return b
    oh, ow = p["oh"], p["ow"]
    if max(kh, kw) > 8:
        tile, fourier = 16, True
    else:
        t8 = _cdiv(oh, 8 - kh + 1) * _cdiv(ow, 8 - kw + 1)
        t16 = _cdiv(oh, 16 - kh + 1) * _cdiv(ow, 16 - kw + 1)
        tile, fourier = (8, not (kh == kw == 3)) if t8 <= 4 * t16 else (16, True)
    tuple_elements = NNPACK_SIMD_WIDTH * (2 if fourier else 1)
    tuple_count = tile * tile // tuple_elements
    mr, nr = NNPACK_CXGEMM_MR_NR if fourier else NNPACK_SXGEMM_MR_NR
    elems = {k: v // (tuple_elements * 4) for k, v in NNPACK_BLOCKING_BYTES.items()}
    icb_max = max(2, elems["l1"] // (mr + nr) // 2 * 2)
    tiles_block_max = max(mr, elems["l2"] // icb_max // mr * mr)
    ocb_max = max(nr, elems["l3"] // icb_max // nr * nr)
    tiles = b * _cdiv(oh, tile - kh + 1) * _cdiv(ow, tile - kw + 1)
    regions = 0
    for ic0 in range(0, cin, icb_max):
        icb = min(cin - ic0, icb_max)
        regions += int(not (cout <= nr and icb <= 1))                       # kernel transform
        for t0 in range(0, tiles, tiles_block_max):
            tbs = min(tiles - t0, tiles_block_max)
            regions += int(not (icb <= 1 and tbs <= mr))                     # input transform
            gemms = sum(int(min(cout - o0, ocb_max) > nr) for o0 in range(0, cout, ocb_max))
            regions += tuple_count * gemms                                   # tuple GEMMs
    return regions + int(not (cout <= nr and tiles <= mr))                  # output transform


def pool_switches(conv: Op) -> int:
    """How often the group loop of ``conv`` (a grouped layer whose groups run through NNPACK)
    hands the cores from NNPACK's pool to ATen's OpenMP pool, and as often back: once per group
    when each group's input-slice copy is an OpenMP region (PYTORCH_GRAIN_SIZE elements or more),
    else once as the layer ends (and once as it starts)."""
    p = conv.p
    g = p.get("groups", 1)
    copy = p.get("batch", 1) * (p["cin"] // g) * p["h"] * p["w"]
    return g if copy >= PYTORCH_GRAIN_SIZE else 1


def two_pool_waits_s(soc, cores: tuple[int, ...], nnpack_convs: Sequence[Op], speed: float) -> float:
    """Seconds per batch that the OpenMP and NNPACK pools of PyTorch 1.8 wait for each other's
    spinning workers on ``cores`` (the caller on ``cores[0]``): per switch (:func:`pool_switches`)
    the departing pool's spin window (socsim.sched.oversub.spin_window_s on the worker cores) less
    the gap of dispatch before the other pool's region, plus the switch of the two threads on the
    busiest core (OMP_OVERSUBSCRIBED_SWITCH_S per extra thread, 2n - 1 threads on n cores); nothing
    where the window has closed before the other pool starts, or on one core (no workers)."""
    n = len(cores)
    if n < 2 or not nnpack_convs:
        return 0.0
    workers = [(cl.core_type, cl.max_mhz, cl.issue_width) for cl in (soc.cpu.cluster_of(c) for c in cores[1:])]
    extra, _ = oversubscription(2 * n - 1, n)

    def wait(runtime: str, calls: int) -> float:
        left = spin_window_s(runtime, workers) - PYTORCH_DISPATCH_S_PER_OP * calls / speed
        return left + OMP_OVERSUBSCRIBED_SWITCH_S * extra if left > 0 else 0.0

    per_switch = wait("pthreadpool", PYTORCH_CALLS_NNPACK_TO_OMP) + wait("libgomp", PYTORCH_CALLS_OMP_TO_NNPACK)
    return per_switch * sum(pool_switches(c) for c in nnpack_convs)


def batch_split(batch: int, threads: int) -> float:
    """The slowest thread's share of an at::parallel_for over ``batch`` images on ``threads``
    threads, relative to an even split: the OpenMP backend gives each thread a chunk of
    ceil(batch / threads) images (aten/src/ATen/ParallelOpenMP.h, ``divup``), so 16 images on
    3 threads run as 6 + 6 + 4 and take 6/(16/3) = 1.125x the even split."""
    t = max(1, min(threads, batch))
    return -(-batch // t) * threads / batch if batch > 0 else 1.0


def _rethread(op: Op, factor: float, how: str) -> Op:
    """``op`` with its arithmetic scaled by ``factor``: the CPU model splits an op's work evenly
    over the plan's threads, so a kernel whose slowest thread does ``factor`` times its even
    share is the op with ``factor`` times the work (traffic unchanged)."""
    if factor == 1.0 or (op.macs == 0 and op.flops == 0):
        return op
    return replace(op, macs=round(op.macs * factor), flops=round(op.flops * factor),
                   attrs=tuple(sorted(dict(op.attrs, pytorch_threading=how).items())))


class PyTorchRun:
    """One training batch as PyTorch runs it: the graph's ops at PyTorch's kernel efficiencies,
    per-op dispatch and, for grouped convolutions, the group loop (its ATen calls; with
    ``version`` "1.8", the full-size gradient sums of :func:`group_grad_sum`).

    With ``soc`` and ``cores`` (the core set it runs on; its first core hosts the batch, as the
    engine's ``host_core``), also how PyTorch threads the group loop there: the dispatch at the
    host core's speed (:func:`host_speed`), a fork-join per parallel region of each group
    (PYTORCH_GROUP_LOOP_REGIONS), each group's forward and input gradient split over the batch
    in ceil(batch / threads) chunks (:func:`batch_split`), and each group's weight gradient on
    one thread (slow_conv2d's weight gradient loops over the batch's images serially, one small
    GEMM per image: ConvolutionMM2d.cpp, ``slow_conv2d_backward_weight_out_cpu_template``;
    a group's GEMM, kh*kw*cin/G x cout/G, is too small for the BLAS to thread).  Where 1.8 runs
    the group's convolution through NNPACK (:func:`uses_nnpack`, a batch of 16 or more), its
    forward is NNPACK's, split evenly over NNPACK's own pool with a fork-join per region
    (:func:`nnpack_regions`, overhead ``nnpack-fork-join``), and its input gradient is
    slow_conv_dilated2d's serial loop, on one thread (PYTORCH_NNPACK_*); and on two or more
    cores the two pools wait for each other's spinning workers where the loop passes from one to
    the other (:func:`two_pool_waits_s`, overhead ``two-pool-waits``).  Without ``soc`` and
    ``cores``, the core-independent model (dispatch at the reference core, no threading effects)."""

    def __init__(self, graph, version: str = PYTORCH_DEFAULT_VERSION, soc=None,
                 cores: tuple[int, ...] = ()) -> None:
        if version not in PYTORCH_VERSIONS:
            raise ValueError(f"unknown PyTorch version {version!r} (known: {', '.join(PYTORCH_VERSIONS)})")
        scaled = _Scaled(graph, PYTORCH_EFFICIENCY, framework="pytorch")
        convs = grouped_convs(graph)
        self.batch = graph.batch
        groups = sum(op.p["groups"] for op in convs)
        threaded = soc is not None and bool(cores)
        speed = host_speed(soc, cores[0]) if threaded else 1.0
        n = len(cores) if threaded else 1
        # the grouped layers whose per-group convolution runs through NNPACK (PYTORCH_NNPACK_*)
        nnp = {c.layer for c in convs if uses_nnpack(c, version)}
        nnp_groups = sum(c.p["groups"] for c in convs if c.layer in nnp)
        over = [("autograd-dispatch", PYTORCH_DISPATCH_S_PER_OP * len(graph.ops) / speed)]
        if groups:
            calls = PYTORCH_GROUP_LOOP_CALLS * groups + PYTORCH_NNPACK_EXTRA_CALLS * nnp_groups
            over.append(("group-loop-dispatch", PYTORCH_DISPATCH_S_PER_OP * calls / speed))
            if n > 1:
                regions = (PYTORCH_GROUP_LOOP_REGIONS[version] * (groups - nnp_groups)
                           + PYTORCH_NNPACK_REGIONS_1_8 * nnp_groups)
                over.append(("group-loop-fork-join", regions * THREAD_SYNC_S * (n - 1)))
                if nnp:
                    pool = sum(c.p["groups"] * nnpack_regions(c) for c in convs if c.layer in nnp)
                    over.append(("nnpack-fork-join", pool * THREAD_SYNC_S * (n - 1)))
                    over.append(("two-pool-waits", two_pool_waits_s(
                        soc, tuple(cores), [c for c in convs if c.layer in nnp], speed)))
        self.overheads = tuple(over)
        base_ops = scaled.ops
        if n > 1 and convs:
            grouped = {c.layer for c in convs}
            out = []
            for op in base_ops:
                role = lookup(op.kind).backward if op.layer in grouped else None
                fwd = op.layer in grouped and op.phase == "forward" and op.p.get("groups", 1) > 1
                if op.layer in nnp and fwd:
                    pass        # NNPACK's pool deals tiles with work stealing: an even split
                elif op.layer in nnp and role == "dgrad":
                    op = _rethread(op, float(n), "one thread (slow_conv_dilated2d_backward's serial loop over the batch)")
                elif fwd or role == "dgrad":
                    op = _rethread(op, batch_split(op.p.get("batch", graph.batch), n), f"batch split over {n}")
                elif role == "wgrad":
                    op = _rethread(op, float(n), "one thread (serial loop over the batch)")
                out.append(op)
            base_ops = tuple(out)
        if version != "1.8" or not convs:
            self.ops = base_ops
            self.peak_memory_bytes = scaled.peak_memory_bytes
            self.live_bytes = scaled.live_bytes
            return
        dgrad_of = {op.layer: op for op in base_ops if lookup(op.kind).backward == "dgrad"}
        extra = {dgrad_of[c.layer].name: group_grad_sum(c, dgrad_of[c.layer]) for c in convs if c.layer in dgrad_of}
        ops: list[Op] = []
        for op in base_ops:
            ops.append(op)
            if op.name in extra:
                ops.append(extra[op.name])
        self.ops = tuple(ops)
        live = memory.live_bytes(self.ops, graph.input_bytes)
        live.flags.writeable = False
        self.live_bytes = live
        self.peak_memory_bytes = int(live.max())


class _CpuBaseline(BaseScheduler):
    Options = CpuOptions
    #: the workload modes it runs: a framework's kernels serve a forward pass alone as well
    modes: tuple[str, ...] = ("train", "inference")
    framework = ""
    #: the CPU kernels its ops run (socsim.workload.ops.CPU_FRAMEWORKS)
    cpu_framework = DEFAULT_CPU_FRAMEWORK
    default_cores = "big4"

    efficiency: dict[str, float] = {}

    def plan(self, ctx) -> Plan:
        graph = ctx.graph(self.precision)
        cores = self.cores(ctx)
        run = _Scaled(graph, self.efficiency, framework=self.cpu_framework) if self.efficiency else graph
        return single_unit_plan(run, "cpu", cores, f"{self.name} cpu{''.join(map(str, cores))}",
                                cpu_graph_prep_s=self.graph_prep_s(ctx, graph),
                                prep_overheads=self.overheads(ctx, graph))

    def cores(self, ctx) -> tuple[int, ...]:
        if self.options.cores is not None:
            return ctx.cores(self.options.cores, field="scheduler.options.cores")
        return ctx.cores(default=self.default_cores)

    def graph_prep_s(self, ctx, graph) -> float:
        """Framework graph preparation on the host core, every batch."""
        return 0.0

    def overheads(self, ctx, graph) -> tuple[tuple[str, float], ...]:
        """Other per-batch host-core overheads."""
        return ()


class MnnFp32(_CpuBaseline):
    name = "mnn-fp32"
    precision = "fp32"
    description = "MNN FP32 training on the CPU (4 big cores)"


# The INT8 training paths of the mnn-int8 scheduler (socsim.workload.mnn_int8): "mnn-int8" (the
# default) is an INT8 algorithm on MNN's CPU kernels, INT8 (SDOT) forward convolutions with
# run-time scales and FP32 gradient kernels, since MNN's CPU backend has no INT8 deconvolution or
# MatMul (alibaba/MNN source/backend/cpu); "qat" is MNN's own quantisation-aware training
# (tools/train NN::turnQuantize: FP32 kernels, fake quantisation around each convolution);
# "niti" is NITI with every MAC op in INT8 (NITI's own integer backward), as if MNN had INT8
# gradient kernels -- the model of this baseline until the MNN source was read, kept for
# comparison.  Default "mnn-int8": Mandheling's MNN-INT8 baseline runs "the same INT8 algorithm
# on CPU NEON" (docs/seeds.md 1) and MNN's kernels allow INT8 only in the forward convolutions.
MNN_INT8_PATHS = ("mnn-int8", "qat", "niti")


class MnnInt8Options(CpuOptions):
    int8_path: Literal["mnn-int8", "qat", "niti"] = Field(
        "mnn-int8", description="INT8 training path: 'mnn-int8' (INT8 forward convolutions with run-time "
        "scales, FP32 gradients: MNN's CPU kernels), 'qat' (MNN's fake-quantised training), 'niti' (every "
        "MAC op INT8)")


class MnnInt8(_CpuBaseline):
    name = "mnn-int8"
    precision = "mnn-int8"
    description = "MNN INT8 training on CPU NEON: INT8 (sdot) forward convolutions, FP32 gradients"
    Options = MnnInt8Options

    def plan(self, ctx) -> Plan:
        graph = ctx.graph(self.options.int8_path)
        cores = self.cores(ctx)
        return single_unit_plan(graph, "cpu", cores, f"{self.name} cpu{''.join(map(str, cores))}")


class Octo(_CpuBaseline):
    name = "octo"
    precision = "octo"
    description = "Octo: INT8 training with loss-aware compensation on CPU NEON (ATC '21)"
    modes = ("train",)   # its compensation is a training algorithm


def tflite_graph_prep_s(ops: Sequence[Op]) -> float:
    """TFLite's per-batch re-preparation of a graph of ``ops``: per op and per MB of its storage."""
    storage = region_storage_bytes(ops, 0, len(ops))
    return TFLITE_PREP_S_PER_OP * len(ops) + TFLITE_PREP_US_PER_MB * 1e-6 * storage / (1 << 20)


class TfliteFp32(_CpuBaseline):
    name = "tflite-fp32"
    precision = "fp32"
    description = "TFLite FP32 training on the CPU (4 big cores), graph re-prepared every batch"
    efficiency = TFLITE_EFFICIENCY
    cpu_framework = "tflite"

    def graph_prep_s(self, ctx, graph) -> float:
        return tflite_graph_prep_s(graph.ops)


def torch_version_of(v: object) -> object:
    """A ``torch_version`` as written: YAML reads an unquoted 1.8 or 1.11 as a number, which
    names the release as well as the string does."""
    return repr(v) if isinstance(v, float) and repr(v) in PYTORCH_VERSIONS else v


class PyTorchOptions(CpuOptions):
    torch_version: Literal["1.8", "1.11"] = Field(
        PYTORCH_DEFAULT_VERSION, description="PyTorch release: '1.8' (up to 1.10, Swan's) or '1.11' (and later); "
        "they differ in a grouped convolution's backward")

    @field_validator("torch_version", mode="before")
    @classmethod
    def _torch_version(cls, v: object) -> object:
        return torch_version_of(v)


class PyTorch(_CpuBaseline):
    name = "pytorch"
    precision = "fp32"
    description = "PyTorch FP32 training, as many threads as big cores (Swan's baseline)"
    Options = PyTorchOptions

    def plan(self, ctx) -> Plan:
        graph = ctx.graph(self.precision)
        cores = self.cores(ctx)
        run = PyTorchRun(graph, self.options.torch_version, ctx.soc, cores)
        return single_unit_plan(run, "cpu", cores, f"{self.name} cpu{''.join(map(str, cores))}",
                                prep_overheads=run.overheads)

    def cores(self, ctx) -> tuple[int, ...]:
        if self.options.cores is not None:
            return ctx.cores(self.options.cores, field="scheduler.options.cores")
        from socsim.contract.cores import big_cores
        return tuple(big_cores(ctx.soc))


class GpuOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class MnnFp32Gpu(BaseScheduler):
    name = "mnn-fp32-gpu"
    precision = "fp32"
    description = "MNN FP32 training on the GPU (OpenCL), every op on the GPU"
    Options = GpuOptions
    modes = ("train", "inference")

    def plan(self, ctx) -> Plan:
        if ctx.soc.gpu is None:
            from socsim.errors import ScheduleError
            raise ScheduleError(f"{ctx.soc.name} has no GPU", field="scheduler.name", value=self.name)
        return single_unit_plan(mnn_gpu_graph(ctx.graph(self.precision)), "gpu", (), f"{self.name} gpu")


class KernelGraph:
    """A graph with its ops replaced, one for one, or by kernels fused from consecutive ops
    (``sizes``: how many of the graph's ops each kernel is), or lowered to kernels (``spans``:
    the graph ops ``[a, b)`` each kernel stands for; several kernels may share a span); its
    batch and peak kept, each kernel's memory the most any of its ops had in use."""

    def __init__(self, graph, ops: tuple[Op, ...], sizes: tuple[int, ...] | None = None,
                 spans: tuple[tuple[int, int], ...] | None = None) -> None:
        self.ops = ops
        self.batch = graph.batch
        self.peak_memory_bytes = graph.peak_memory_bytes
        live = graph.live_bytes() if callable(graph.live_bytes) else graph.live_bytes
        if spans is None:
            sizes = sizes or (1,) * len(ops)
            ends = [sum(sizes[:i + 1]) for i in range(len(sizes))]
            spans = tuple((e - n, e) for e, n in zip(ends, sizes))
        self.live_bytes = tuple(int(max(live[a:b])) for a, b in spans)


def mnn_gpu_graph(graph):
    """``graph`` as MNN's OpenCL backend runs it: an inference graph with its element-wise ops
    (activations, residual adds) merged into the kernel before them (MNN's converter fuses the
    activation, as ncnn's ncnnoptimize does; socsim.sched.fusion.fuse, one asymmetric op per
    kernel, so a batch norm stays its own kernel where the converters fold it into the weights:
    not modelled, the fit below absorbs it); every kernel at
    MNN_GPU_KERNEL_EFFICIENCY, gradient convolutions also at MNN's backward slowdown and with
    their geometry-computing traffic (mnn_gpu_backward_traffic)."""
    ops, sizes = graph.ops, None
    if all(op.phase not in BACKWARD_PHASES for op in ops):
        ops = fuse(ops)[0]
        sizes = tuple(dict(op.params).get("fused", 1) for op in ops)
    ops = tuple(scale_work(op, MNN_GPU_KERNEL_EFFICIENCY * (MNN_GPU_GRAD_CONV_EFFICIENCY if (
        op.phase in BACKWARD_PHASES and op.kind in GEMM_KINDS) else 1.0)) for op in ops)
    return KernelGraph(graph, tuple(mnn_gpu_backward_traffic(op) for op in ops), sizes)
