"""The cost-model interface every processing unit implements.

The engine asks a unit's cost model for the cost of an op at a configuration and holds the unit
for ``time_s``.  Time is compute cycles at the unit clock plus memory stall time that does not
scale with the clock (DRAM bandwidth and latency), so DVFS behaves realistically for memory-bound
ops (docs/architecture.md, Timing, power and heat).  Implementations are pure and memoised per (op signature, config).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from socsim.workload.ops import Op


@dataclass(frozen=True, slots=True)
class CpuConfig:
    """CPU cores an op runs on and the frequency of each cluster involved."""

    cores: tuple[int, ...]
    freqs_mhz: tuple[tuple[str, float], ...]  # (cluster name, MHz), sorted by name
    bg_dram_gbs: float = 0.0  # DRAM bandwidth other masters (foreground apps) take meanwhile
    # the phone's own background work per core domain during the run, (domain, core-seconds per
    # second at the domain's top OPP) sorted by domain (socsim.hw.forkjoin; the workload's
    # environment.background); None: the fitted forkjoin.BACKGROUND_UTIL_TOP
    background: tuple[tuple[str, float], ...] | None = None

    def freq(self, cluster: str) -> float:
        return dict(self.freqs_mhz)[cluster]


@dataclass(frozen=True, slots=True)
class DspConfig:
    freq_mhz: float
    batch_padding: bool = True  # Hexagon NN pads batches above 4 to a multiple of 32
    bg_dram_gbs: float = 0.0


@dataclass(frozen=True, slots=True)
class GpuConfig:
    freq_mhz: float
    bg_dram_gbs: float = 0.0


# the built-in units' configurations; a unit registered in socsim.hw.units may bring its own
UnitConfig = CpuConfig | DspConfig | GpuConfig


@dataclass(frozen=True, slots=True)
class OpCost:
    """What running one op on one unit costs.

    ``cycles`` are compute cycles at ``freq_mhz``; ``stall_s`` is memory time that does not
    scale with the clock; ``time_s = cycles / f + stall_s``.  ``activity`` scales the
    busy cores' dynamic power relative to the reference load of their EAS coefficient (1; a
    stalled core switches less, a core computing dense NEON kernels may switch more:
    socsim.spec.coretypes.KERNEL_POWER).  ``busy`` maps cluster name
    (or another unit's name, socsim.hw.units) to how many cores are busy.  ``detail`` carries model-specific figures
    (cache hit rates, packets, stall causes) as sorted pairs.
    """

    time_s: float
    cycles: int
    freq_mhz: float
    stall_s: float
    bytes: int
    dram_bytes: int
    activity: float
    busy: tuple[tuple[str, int], ...]
    detail: tuple[tuple[str, float], ...] = ()

    @staticmethod
    def compose(cycles: int, freq_mhz: float, stall_s: float, **kw) -> "OpCost":
        time_s = cycles / (freq_mhz * 1e6) + stall_s
        return OpCost(time_s=time_s, cycles=int(cycles), freq_mhz=freq_mhz, stall_s=stall_s, **kw)


class UnsupportedOp(Exception):
    """The unit cannot run this op (e.g. floating point on HVX v66): infinite latency."""


class CostModel(Protocol):
    """A unit's timing model."""

    def cost(self, op: Op, cfg: UnitConfig) -> OpCost:
        """Cost of ``op`` at ``cfg``; raises :class:`UnsupportedOp` if the unit cannot run it."""
        ...

    def supports(self, op: Op) -> bool:
        ...
