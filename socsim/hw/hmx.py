"""HMX cost model: the V68+ cDSP's matrix unit, INT8 GEMM-like ops with operands staged in VTCM.

HMX multiplies tiles of ``spatial`` output channels by ``depth``-deep reductions (the SoC spec's
``dsp.hmx``, from the v68n_1024 config table, hw:hexagon.hmx.v68), so an op's reduction
(cin x kh x kw) and output channels are padded up to those tiles:

    cycles = batch x oh x ow x pad(reduction, depth) x pad(cout, spatial) / (MACs per cycle x efficiency)

Operands reach HMX only through VTCM: each tile's inputs are DMA'd in from DRAM while the previous
tile computes, so memory time overlaps compute and the op takes the longer of the two.  Traffic
(socsim.hw.dsp.vtcm_staged_bytes, shared with HVX's "vtcm_dma" staging): results out once, the
operand that stays (weights; a weight gradient's int32 accumulators) once, the activations once
per half-VTCM chunk of it (the other half holds the activation tiles).  The output is int32 accumulators, as the HVX kernels write
(docs/hvx.md, requantisation), so the model's requant ops stay where they are.
"""
from __future__ import annotations

from socsim.hw import dram as dram_mod
from socsim.hw.cache.streams import gemm_like_shape, op_macs
from socsim.hw.cost import DspConfig, OpCost, UnsupportedOp
from socsim.hw.dsp import call_overhead_s, dma_bps, vtcm_staged_bytes
from socsim.spec.soc import SocSpec
from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op

# Switching activity of the cDSP while HMX streams: the tile array, VTCM and the DMA engine.
# Assumption (no public HMX power figure); the HVX model's 1.0 computing / 0.3 stalled span.
HMX_ACTIVITY = 0.8


def hmx_supports(soc: SocSpec, op: Op) -> bool:
    """Whether the SoC's HMX runs ``op``: an INT8 convolution, its gradients or a matrix product."""
    if soc.dsp is None or soc.dsp.hmx is None:
        return False
    kind = lookup(op.kind)
    return kind.kernel == "gemm" and kind.dsp and op.dtype == "int8"


def _pad(n: int, tile: int) -> int:
    return -(-max(n, 1) // tile) * tile


def padded_macs(op: Op, depth: int, spatial: int) -> int:
    """The op's MACs with its reduction padded to ``depth`` and its output channels to ``spatial``."""
    s = gemm_like_shape(op)
    red = s["cin"] * s["kh"] * s["kw"]
    rows = op_macs(op) // max(red * s["cout"], 1)   # output positions (x batch) the op computes
    return int(rows) * _pad(red, depth) * _pad(s["cout"], spatial)


class HmxCostModel:
    """Cost of an op on the cDSP's HMX (implements socsim.hw.cost.CostModel)."""

    def __init__(self, soc: SocSpec) -> None:
        if soc.dsp is None or soc.dsp.hmx is None:
            raise ValueError(f"{soc.name} has no HMX")
        self.soc = soc
        self._memo: dict[tuple, OpCost] = {}

    def supports(self, op: Op) -> bool:
        return hmx_supports(self.soc, op)

    def cost(self, op: Op, cfg: DspConfig) -> OpCost:
        key = (op.signature, op.macs, op.bytes_read, op.bytes_written, cfg)
        c = self._memo.get(key)
        if c is None:
            if not self.supports(op):
                raise UnsupportedOp(f"{self.soc.dsp.name} HMX runs INT8 convolutions and matrix "
                                    f"products only, not {op.kind} in {op.dtype}")
            c = self._memo[key] = hmx_cost(self.soc, op, cfg)
        return c


def hmx_cost(soc: SocSpec, op: Op, cfg: DspConfig) -> OpCost:
    """Time of ``op`` on HMX at ``cfg``: padded-tile compute overlapped with its VTCM staging."""
    hmx = soc.dsp.hmx
    macs = padded_macs(op, hmx.depth, hmx.spatial)
    cycles = macs / (hmx.int8_macs_per_cycle * hmx.efficiency)
    compute_s = cycles / (cfg.freq_mhz * 1e6)
    # the same VTCM staging as HVX's "vtcm_dma" path (socsim.hw.dsp.vtcm_staged_bytes)
    dram_bytes, sweeps = vtcm_staged_bytes(op, soc.dsp.vtcm_kb * 1024)
    mem_s = dram_bytes / dma_bps(soc, cfg.bg_dram_gbs)
    stall_s = max(0.0, mem_s - compute_s)
    # a standalone call (``socsim op``) pays the cDSP's FastRPC call as an HVX op does
    detail = (("call_overhead_s", call_overhead_s(op)), ("compute_s", compute_s), ("dram_energy_j", dram_mod.energy_j(soc.dram, dram_bytes)),
              ("input_sweeps", float(sweeps)), ("mem_s", mem_s), ("padded_macs", float(macs)))
    return OpCost.compose(int(round(cycles)), cfg.freq_mhz, stall_s, bytes=int(op.bytes_read + op.bytes_written),
                          dram_bytes=int(dram_bytes), activity=HMX_ACTIVITY, busy=(("hmx", 1),), detail=detail)
