"""Hexagon DSP cost model: HVX compute cycles + memory stalls from the DSP L2/VTCM/DRAM model.

time_s = compute cycles (HVX, split over the HVX contexts) / f + stall_s, where stall_s is the
DRAM time of the op's L2 misses (socsim.hw.memory simulates the Hexagon NN-style stream through
the 1 MB L2; weights sit in VTCM): each demand fill or eviction costs one DDR access, overlapped
across the HVX contexts (one outstanding miss per in-order context), and the dirty output left
in L2 is cleaned to DRAM at the op's end at the channel's achievable bandwidth.

Compute cycles come from the HVX emulator (``isa.kernels.costing.profile_op``) when it is
importable and supports the kind, else from :func:`analytic_hvx_cycles` (the spec's
``int8_macs_per_cycle_per_context``, 128: one vrmpy per cycle, x efficiency).
``detail['cycles_source']`` is 1.0 for the emulator, 0.0 for the analytic fallback.  The
emulated kernels issue up to two vrmpy per packet (two multiply resources, hw:hexagon.packet),
256 MACs per cycle per context, and each of the 4 contexts is timed issuing every cycle
(unpaired): the same assumption as Qualcomm's peak of 1024 8-bit MACs per MHz for SM8250
(hw:hexagon.peak_8bit_mac_per_mhz = 4 contexts x 256), which bounds every op
(tests/hw/test_dsp_cost.py).  Convolutions sustain 100-190 MACs per cycle per context.

Activation staging (``dsp.activation_staging``, a workload's ``dsp.activation_staging`` overrides):
``l2`` is the model above, Hexagon NN's path on V65/V66 (activations stream through the L2,
weights in VTCM; what Mandheling Table 4 measured).  ``vtcm_dma`` (V68 and later, which have a
user DMA engine) stages activation tiles into the VTCM while HVX computes on the previous tile:
DRAM bytes from :func:`vtcm_staged_bytes`, time = max(compute, DMA) + the first tile's fill.
Scalar walks (transpose, slice, weight rotation, channel shuffle) are staged the same way when
their tile fits a DMA tile (:func:`walk_tile_bytes`: the input rows one output run gathers from,
and that output); the walk's cycles are unchanged, only its memory path moves to the VTCM.

Batches: Hexagon NN pads a batch above 4 to a multiple of ``dsp.batch_pad_to`` (32)
(pub:dsp_conv_latency_ms note); with ``DspConfig.batch_padding`` the kernel computes and lays
out the padded batch.

Per-call overhead: a standalone invocation (what Mandheling Table 4 measured, and what
``socsim op`` reports) also pays the FastRPC call and the copy of the op's real tensors into
and out of the DSP's buffers: ``detail['call_overhead_s']``.  It is *not* in ``time_s``: inside
a training graph the engine charges FastRPC transitions itself (socsim.hw.fastrpc).  Use
:func:`standalone_time_s` for a single-op measurement.
"""
from __future__ import annotations

import json

from socsim.hw import dram as dram_mod
from socsim.hw import profile_store
from socsim.hw.cache.streams import op_macs
from socsim.hw.cost import DspConfig, OpCost, UnsupportedOp
from socsim.hw.memory import op_memory
from socsim.spec.soc import SocSpec
from socsim.workload.opkinds import OpKind, lookup
from socsim.workload.ops import Op

# --- calibrated against pub:dsp_conv_latency_ms (Mandheling Table 4); see docs/validation.md.
# Only memory and call parameters are fitted; compute cycles come from the HVX emulator.
# Analytic fallback only: sustained fraction of 128 MACs/cycle/context for conv/GEMM kernels,
# the emulator's rate on Table 4's 8x8 convolution (103 MACs/cycle/context, isa.kernels.costing).
HVX_CONV_EFFICIENCY = 0.80
# Time of one DDR access seen by an in-order HVX context (misses of the 4 contexts overlap).
# hw:hexagon.memory.ddr_access_ns = 250; the Table 4 fit gives 210 ns.
DDR_ACCESS_NS = 210.0
# Standalone call: fixed FastRPC + Hexagon NN execute overhead, and the copy of the real input
# and output tensors.  Table 4 fit: 0.525 ms fixed (within hw:fastrpc.sm8150_overhead_us_by_dsp_work,
# 431-792 us with QoS) and 1.65 GB/s for the copies (non-ION buffers are copied by the kernel
# driver, hw:fastrpc.notes).
CALL_FIXED_S = 0.525e-3
CALL_COPY_GBS = 1.65
# Activation staging by DMA (dsp.activation_staging "vtcm_dma", V68+): the tiles in flight; the
# VTCM's activation half is double-buffered, so a tile is a quarter of the VTCM and the first
# one is waited for before HVX starts.  Assumption (double buffering, as the HMX operands and
# Qualcomm's VTCM guidance for DMA'd buffers; no public figure of a runtime's tile size).
DMA_TILES = 4
# A scalar walk (an ``irregular`` kind) staged by DMA needs, per tile, one vector-width run
# (``DspSpec.vector_bytes``, 128 B) from each input row that one output run gathers from, and the
# output runs it emits: the rows (the dimension the permutation moves inwards) are the walk's
# ``batch`` for NITI's weight-gradient transposes (batch becomes the reduction dimension), a
# channel shuffle's ``groups`` and a weight rotation's ``cout`` (cin and cout swap); a slice (a
# crop) copies row by row (one row).  The user DMA moves such 2-D blocks (2-D descriptors: row
# size, rows, strides; qualcomm/hexagon-mlir's runtime UserDMADescriptors.h, after Qualcomm's
# Hexagon User DMA Specification 80-V9418-29; strides are 16-bit before V75) and
# scalar and vector loads reach the VTCM alike (Qualcomm, Hexagon HVX Programmer's Reference,
# 80-N2040-61, "Memory": every address, scalar or vector, goes through the same MMU; the VTCM is
# a scratch buffer "faster than L2").  Which key names the rows is read off socsim.workload.niti
# and socsim.workload.builder; nothing is fitted.
_WALK_ROWS_KEY = {"transpose": "batch", "channel_shuffle": "groups", "weight_rotate": "cout", "slice": None}

# Per-kind constants live in the op-kinds table (socsim.workload.opkinds, with their sources):
# ``dsp`` (Hexagon NN has an integer kernel; V66 has no floating point, pub:hexagon_hvx.float_unit,
# pub:op_latency_ms_cpu_vs_dsp.dsp_unsupported), ``dsp_packets`` (HVX packets per 128-byte output
# vector of an element-wise kind, analytic fallback) and ``dsp_walk`` (scalar cycles per element
# of an irregular kind: v66 HVX has no gather/scatter).


def _padded(kind: OpKind) -> bool:
    """Hexagon NN lays out (and pads) the batch of conv-like and plane kernels."""
    return kind.kernel in ("gemm", "depthwise", "pool")


def padded_batch(batch: int, pad_to: int, enabled: bool = True) -> int:
    """Hexagon NN's batch: above 4, rounded up to a multiple of ``pad_to``."""
    if not enabled or batch <= 4:
        return batch
    return -(-batch // pad_to) * pad_to


def _elt(dtype: str) -> int:
    return {"int8": 1, "int32": 4}.get(dtype, 1)


def analytic_hvx_cycles(op: Op, macs: int, contexts: int, threads: int, macs_per_cycle: int = 128) -> float:
    """The analytic fallback: HVX cycles for the whole op split over the contexts, at
    ``macs_per_cycle`` per context (the spec's ``int8_macs_per_cycle_per_context``: one vrmpy)."""
    # depthwise: x 0.5, an assumption: vrmpy's 4-deep byte dot product has no channel
    # reduction to fill in a depthwise conv, so the kernel falls back to halfword multiplies
    # over the taps (isa/kernels/conv.py build_dwconv_tile: per tap and 128 positions one vmemu,
    # one sign-extend and two vmpyh accumulates), assumed to reach half the dense rate.  The
    # emulated kernel, used whenever available, measures lower: ~21 MACs/cycle per context for
    # a 3x3, 32-channel, 32x32 dwconv2d (isa.kernels.costing.profile_op) vs 128 x 0.8 x 0.5 = 51.
    kind = lookup(op.kind)
    if kind.is_mac:
        rate = macs_per_cycle * HVX_CONV_EFFICIENCY * (0.5 if kind.kernel == "depthwise" else 1.0)
        return macs / (rate * contexts)
    if kind.kernel == "irregular":
        if kind.dsp_walk is None:
            raise UnsupportedOp(f"the DSP model has no scalar walk for {op.kind}")
        elems = max(op.bytes_written // _elt(op.dtype), op.flops, 1)
        return elems * kind.dsp_walk / threads
    if kind.kernel == "pool":
        p = op.p
        out = max(op.bytes_written, 1)
        # per output vector: k*k input vectors, each one load packet with its vmax, plus one
        # packet for the store (assumption from the packet rules above; ignores the phase
        # split of stride 2 and unaligned window loads)
        return out / 128 * (p.get("k", 2) ** 2 + 1) / contexts
    if kind.dsp_packets is None:
        raise UnsupportedOp(f"the DSP model has no HVX packet count for {op.kind}")
    # a requantisation is sized by its int32 input (4 bytes per int8 output element)
    requant = kind.reads_int32 and not kind.reduces
    vectors = max(op.bytes_written, op.bytes_read // 4 if requant else 0, 1) / 128
    return vectors * kind.dsp_packets / contexts


def _emulated_cycles(op: Op, batch: int, contexts: int) -> float | None:
    """HVX-emulator cycles (one context, data resident) split over contexts, if available."""
    try:
        import isa.kernels.costing  # noqa: F401, PLC0415 - optional, built in parallel
    except Exception:  # the emulator is optional: the analytic model stands in
        return None
    from isa.kernels.costing import PARAMS  # noqa: PLC0415 - importable: checked above

    p = dict(op.p)
    if "batch" in p:
        p["batch"] = batch
    if lookup(op.kind).kernel == "depthwise" and "c" not in p:
        p["c"] = p.get("cin")
    keys = PARAMS.get(op.kind)  # the emulator's kernels, by kind (others: the analytic model)
    if keys is None or any(k not in p for k in keys):
        return None
    cycles = _hvx_cycles(op.kind, tuple((k, int(p[k])) for k in keys))
    return None if cycles is None else float(cycles) / contexts


def _cycles_or_none(text: str) -> int | None:
    v = json.loads(text)
    if v is not None and not isinstance(v, int):
        raise ValueError(f"not a cycle count: {text!r}")
    return v


@profile_store.memoised("hvxprofiles", decode=_cycles_or_none)
def _hvx_cycles(kind: str, args: tuple) -> int | None:
    """One HVX context's cycles for ``kind(**args)`` from the emulator (None: it has no kernel
    for that shape), kept between runs in socsim.hw.profile_store (the 'hvxprofiles' file,
    named after a digest of ``isa/``'s source)."""
    from isa.kernels.costing import profile_op  # noqa: PLC0415 - importable: _emulated_cycles checked

    try:
        return int(profile_op(kind, **dict(args)).compute_cycles)
    except (NotImplementedError, KeyError, ValueError, TypeError):
        return None


# The operators Mandheling lists as unsupported on the DSP (pub:op_latency_ms_cpu_vs_dsp.
# dsp_unsupported) and the op kinds that carry them: normalisation's square root of the variance,
# quantisation's float scale and rounding.  Refused on every generation, a V68+ with HVX float
# included: the seed systems' DSP graphs have no such kernels.  NITI's rescale (reducemax, the
# shift by the clz-derived amount) is integer work and stays on the DSP, where Mandheling's listing
# runs it (docs/seeds.md 1).
DSP_UNSUPPORTED: dict[str, tuple[str, ...]] = {
    "Normalization": ("batchnorm", "batchnorm_bwd", "layernorm", "layernorm_bwd"),
    "Quantization": ("quantize", "dequantize"),
    "Round": ("quantize",),
    "Sqrt": ("batchnorm", "batchnorm_bwd", "layernorm", "layernorm_bwd"),
}
_UNSUPPORTED_KINDS = {k: name for name, kinds in DSP_UNSUPPORTED.items() for k in kinds}


def dsp_supports(soc: SocSpec, op: Op) -> bool:
    """Whether the SoC's DSP runs ``op``: an op kind Hexagon NN has, not one of the published
    unsupported operators, in integer types unless the DSP has a float unit (V66 has none,
    pub:hexagon_hvx.float_unit)."""
    if soc.dsp is None or op.kind in _UNSUPPORTED_KINDS:
        return False
    if op.dtype not in ("int8", "int32") and not soc.dsp.has_float:
        return False
    return lookup(op.kind).dsp


class DspCostModel:
    """Cost of an op on the Hexagon cDSP (implements socsim.hw.cost.CostModel)."""

    def __init__(self, soc: SocSpec, use_emulator: bool = True) -> None:
        if soc.dsp is None:
            raise ValueError(f"{soc.name} has no DSP")
        self.soc = soc
        self.use_emulator = use_emulator
        self._memo: dict[tuple, OpCost] = {}

    def supports(self, op: Op) -> bool:
        return dsp_supports(self.soc, op)

    def cost(self, op: Op, cfg: DspConfig) -> OpCost:
        key = (op.signature, op.macs, op.flops, op.bytes_read, op.bytes_written, cfg)
        c = self._memo.get(key)
        if c is None:
            if not self.supports(op):
                why = (f"Mandheling lists {_UNSUPPORTED_KINDS[op.kind]} as unsupported on the DSP"
                       if op.kind in _UNSUPPORTED_KINDS else
                       "no floating point on its HVX" if op.dtype not in ("int8", "int32") else
                       "Hexagon NN has no kernel for it")
                raise UnsupportedOp(f"{self.soc.dsp.name} (HVX {self.soc.dsp.hvx_arch}) cannot run "
                                    f"{op.kind} in {op.dtype}: {why}")
            c = self._memo[key] = dsp_cost(self.soc, op, cfg, self.use_emulator)
        return c


def dsp_cost(soc: SocSpec, op: Op, cfg: DspConfig, use_emulator: bool = True) -> OpCost:
    dsp = soc.dsp
    ctx = dsp.hvx_contexts
    b = op.batch
    pb = padded_batch(b, dsp.batch_pad_to, cfg.batch_padding) if _padded(lookup(op.kind)) and "batch" in op.p else b
    macs = op_macs(op) * pb // max(b, 1)
    emu = _emulated_cycles(op, pb, ctx) if use_emulator else None
    cycles = emu if emu is not None else analytic_hvx_cycles(op, macs, ctx, dsp.hardware_threads,
                                                             dsp.int8_macs_per_cycle_per_context)

    compute_s = cycles / (cfg.freq_mhz * 1e6)
    bw = dram_mod.achievable_bps(soc.dram, background_bps=cfg.bg_dram_gbs * 1e9)
    staged = dsp.activation_staging == "vtcm_dma" and (
        lookup(op.kind).kernel != "irregular"
        or walk_tile_bytes(op, dsp.vector_bytes) <= dsp.vtcm_kb * 1024 / DMA_TILES)
    if staged:
        # V68+: activation tiles DMA'd into the VTCM while HVX computes on the previous one
        dram_bytes, sweeps = vtcm_staged_bytes(op, dsp.vtcm_kb * 1024, pb / max(b, 1))
        dma_s = dram_bytes / dma_bps(soc, cfg.bg_dram_gbs)
        fill_s = DDR_ACCESS_NS * 1e-9 + min(dram_bytes, dsp.vtcm_kb * 1024 / DMA_TILES) / dma_bps(soc, cfg.bg_dram_gbs)
        lat_s, clean_s = dma_s, 0.0
        stall_s = max(0.0, dma_s - compute_s) + fill_s
        hit_l2, sampled, scratch = 1.0, 1.0, 0.0
    else:
        mem = op_memory(op, "dsp", soc, threads=ctx, batch=pb)
        dram_bytes, sweeps = int(mem.dram_bytes), 0.0
        lines_missed = (mem.dram_bytes - mem.dram_clean_bytes) / mem.line_bytes
        lat_s = lines_missed * DDR_ACCESS_NS * 1e-9 / ctx
        # the end-of-op clean streams at the channel's achievable bandwidth
        clean_s = mem.dram_clean_bytes / bw
        bw_s = mem.dram_bytes / bw
        stall_s = max(lat_s + clean_s, bw_s)
        hit_l2 = mem.levels[0].hit_rate if mem.levels else 1.0
        sampled, scratch = mem.simulated_fraction, float(mem.scratch_accesses)

    call_s = call_overhead_s(op)
    # Switching activity: 1 while HVX computes; an in-order context waiting on DDR still clocks
    # the scalar core, the L2 and the vector register file, so stalled time keeps 0.3.
    # Assumption (no public cDSP power breakdown); plausible 0.2-0.5.
    activity = 0.3 + 0.7 * compute_s / (compute_s + stall_s) if compute_s + stall_s else 1.0
    detail = (("call_overhead_s", call_s), ("clean_s", clean_s), ("compute_s", compute_s),
              ("cycles_source", 1.0 if emu is not None else 0.0), ("dram_energy_j", dram_mod.energy_j(soc.dram, dram_bytes)),
              ("dram_s", lat_s), ("hit_rate_L2", hit_l2),
              ("padded_batch", float(pb)), ("sampled_fraction", sampled),
              ("vtcm_accesses", scratch), ("vtcm_dma", 1.0 if staged else 0.0), ("vtcm_sweeps", float(sweeps)))
    return OpCost.compose(int(round(cycles)), cfg.freq_mhz, stall_s,
                          bytes=int(op.bytes_read + op.bytes_written), dram_bytes=int(dram_bytes),
                          activity=min(1.0, activity), busy=(("dsp", 1),), detail=detail)


def dma_bps(soc: SocSpec, bg_dram_gbs: float = 0.0) -> float:
    """DRAM bandwidth of VTCM staging: the channel's achievable rate for two interleaved streams
    (tiles in, results out; socsim.hw.dram's row-buffer interference).  No public figure bounds the
    cDSP's DMA engine or its NoC port below the channel (an assumption: it does not bind)."""
    return dram_mod.achievable_bps(soc.dram, streams=2, background_bps=bg_dram_gbs * 1e9)


def vtcm_staged_bytes(op: Op, vtcm_bytes: float, batch_scale: float = 1.0) -> tuple[int, int]:
    """DRAM bytes of ``op`` when its operands are staged through the VTCM by DMA, and how many
    times its activations are swept.  Half the VTCM holds the operand that stays (a conv's or
    matrix product's weights; a weight gradient's int32 accumulators), the other half the
    double-buffered activation tiles; the activations are read once per VTCM-half of the staying
    operand, the output written once.  Plane and element-wise kernels stream their operands once
    per pass (a dynamic requantisation reads its int32 input twice).  ``batch_scale``: the padded
    batch over the real one (Hexagon NN lays out the padded batch)."""
    kind = lookup(op.kind)
    half = max(vtcm_bytes / 2, 1.0)
    read, written, weights = int(op.bytes_read), int(op.bytes_written), int(op.weight_bytes)
    if kind.kernel == "gemm":
        if op.phase == "weight_grad":   # dW accumulates over the batch where it stays
            stay, acts, once = written, read, 0
        else:
            stay, acts, once = weights, max(read - weights, 0), weights
        sweeps = max(1, -(-stay // int(half))) if stay else 1
        return int(acts * batch_scale * sweeps + once + written * (1.0 if op.phase == "weight_grad" else batch_scale)), sweeps
    passes = max(1, kind.passes)
    return int(((read - weights) * passes + weights + written) * batch_scale), passes


def walk_tile_bytes(op: Op, vector_bytes: int = 128) -> int:
    """Bytes of VTCM one DMA tile of a scalar walk (an ``irregular`` kind) needs: a
    ``vector_bytes`` run from each input row one output run gathers from, and as many bytes of
    output (the rows: ``_WALK_ROWS_KEY``; a kind not listed there gathers from its ``batch``)."""
    key = _WALK_ROWS_KEY.get(op.kind, "batch")
    rows = max(1, int(op.p.get(key, 1))) if key is not None else 1
    return 2 * rows * vector_bytes


def _real_tensor_bytes(op: Op) -> int:
    """Bytes of the op's real (unpadded) operands crossing a standalone call."""
    if op.bytes_read or op.bytes_written:
        return int(op.bytes_read + op.bytes_written)
    p = op.p
    kind = lookup(op.kind)
    if kind.kernel == "gemm" and kind.shape == "conv":
        oh = p.get("oh", p["h"])
        ow = p.get("ow", p["w"])
        return p["batch"] * (p["cin"] * p["h"] * p["w"] + 4 * p["cout"] * oh * ow)
    return 0


def call_overhead_s(op: Op) -> float:
    """A standalone invocation's FastRPC call and the copy of the op's real tensors (Table 4 fit)."""
    return CALL_FIXED_S + _real_tensor_bytes(op) / (CALL_COPY_GBS * 1e9)


def standalone_time_s(cost: OpCost) -> float:
    """Latency of the op invoked alone from the CPU (Table 4's measurement): time + call."""
    return cost.time_s + dict(cost.detail).get("call_overhead_s", 0.0)
