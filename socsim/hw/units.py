"""The registry of compute units: one immutable entry per unit a plan step can run on.

An entry says everything the engine and the reports need of a unit: its cost model, whether a
SoC has it, how its configuration is built, the power rail its ops draw on (its heat goes to the
thermal node the SoC spec's ``thermal.heat_sources`` maps that rail to), how the host CPU hands
work to it, and what listings and traces call it.  The summary counts a unit's ops under
``placement.<name>_ops`` and its time under ``placement.time_s.<name>``.  Adding a unit is one
:func:`register` call with its entry (docs/adding-a-unit.md); nothing else names it.

The CPU is the *host* unit: it runs everything, drives the others and has per-core trace tracks
``cpu<N>``.  Cost models are imported when first built, as the engine used to.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from socsim.hw.cost import CostModel, CpuConfig, DspConfig, GpuConfig, UnitConfig
from socsim.hw.power import RAIL_CDSP, RAIL_GPU
from socsim.spec.soc import SocSpec
from socsim.workload.ops import Op


class ConfigBuilder(Protocol):
    """Builds a unit's configuration: CPU ``cores`` and per-cluster ``freqs`` (the host unit),
    the clock ``mhz`` (None: the unit's default), the DRAM bandwidth other masters take
    meanwhile, and the oracle's ``batch_padding`` option (the DSP's Hexagon NN padding)."""

    def __call__(self, soc: SocSpec, *, cores: tuple[int, ...], freqs: tuple[tuple[str, float], ...],
                 mhz: float | None, bg_dram_gbs: float, batch_padding: bool) -> UnitConfig: ...


@dataclass(frozen=True)
class Handover:
    """A hand-over between the host CPU and a unit inside a batch: its time for the bytes that
    cross (and whether the plan shares buffers), and the trace slice it makes (``name`` is a
    format string with ``{src}`` and ``{dst}``, the units on either side)."""

    time_s: Callable[..., float]
    track: str
    name: str
    kind: str
    # the hand-over has host code on the calling core: ``time_s`` also takes ``host_speed=``
    # (socsim.hw.host.host_speed of the batch's host core); else it is called with three arguments
    host_scaled: bool = False


@dataclass(frozen=True)
class ComputeUnit:
    """One compute unit.  ``name`` is what plan steps, summary keys and trace tracks use;
    ``title`` what messages and ``socsim list socs`` show; ``part`` the SoC's part for it;
    ``rail`` the power rail its ops draw on (None for the host: its clusters' own rails);
    ``clock_mhz`` its clock when the engine sets none; ``trace_tid`` its track's fixed thread id
    in Perfetto traces (None: the next free one); ``domain`` the subsystem it shares with other
    units, between which work passes without a hand-over (None: its own)."""

    name: str
    title: str
    present: Callable[[SocSpec], bool]
    cost_model: Callable[[SocSpec], CostModel]
    supports: Callable[[SocSpec, Op], bool]
    config: ConfigBuilder
    part: Callable[[SocSpec], str]
    rail: str | None = None
    clock_mhz: Callable[[SocSpec], float] | None = None
    handover: Handover | None = None
    trace_tid: int | None = None
    host: bool = False
    # units of one subsystem (the cDSP's HVX and HMX) pass work between them with no hand-over
    domain: str | None = None

    @property
    def ops_key(self) -> str:
        """The summary's count of this unit's ops (``placement.<name>_ops``)."""
        return f"{self.name}_ops"


_UNITS: dict[str, ComputeUnit] = {}


def register(unit: ComputeUnit) -> None:
    """Add ``unit`` to the registry (after the units there); a name taken is a ValueError."""
    if unit.name in _UNITS:
        raise ValueError(f"a compute unit named {unit.name!r} is registered already")
    if unit.host and any(u.host for u in _UNITS.values()):
        raise ValueError(f"unit {unit.name!r}: there is one host unit, {host().name!r}")
    if not unit.host and unit.rail is None:
        raise ValueError(f"unit {unit.name!r} names no power rail")
    _UNITS[unit.name] = unit


def unregister(name: str) -> None:
    """Remove the unit ``name`` (a unit a test or a plugin registered for a while)."""
    if _UNITS.get(name) is not None and _UNITS[name].host:
        raise ValueError(f"the host unit {name!r} cannot be removed")
    _UNITS.pop(name, None)


def units() -> tuple[ComputeUnit, ...]:
    """Every registered unit, in registration order (the host first)."""
    return tuple(_UNITS.values())


def names() -> tuple[str, ...]:
    """The registered units' names, in registration order."""
    return tuple(_UNITS)


def unit(name: str) -> ComputeUnit:
    """The unit called ``name``; an unknown name is a ValueError."""
    try:
        return _UNITS[name]
    except KeyError:
        raise ValueError(f"unknown unit {name!r}; units are {', '.join(_UNITS)}") from None


def unit_runs(soc: SocSpec, op: Op, name: str) -> bool:
    """Whether unit ``name`` of ``soc`` can run ``op`` at all: the SoC has the unit and its cost
    model supports the op (the CPU runs everything); an unknown unit runs nothing."""
    if name not in names():
        return False
    u = unit(name)
    return u.present(soc) and u.supports(soc, op)


def host() -> ComputeUnit:
    """The host unit (the CPU): it runs everything and hands work to the others."""
    return next(u for u in _UNITS.values() if u.host)


def accelerators() -> tuple[ComputeUnit, ...]:
    """Every unit but the host, in registration order."""
    return tuple(u for u in _UNITS.values() if not u.host)


def ops_keys() -> tuple[str, ...]:
    """The summary's per-unit op counts (``cpu_ops``, ``dsp_ops``, ...), in registration order."""
    return tuple(u.ops_key for u in _UNITS.values())


def same_domain(a: str, b: str) -> bool:
    """Whether units ``a`` and ``b`` pass work between them without a hand-over."""
    da, db = unit(a).domain, unit(b).domain
    return da is not None and da == db


def core_of_track(track: str) -> int | None:
    """The core id of a host core's trace track (``cpu3`` -> 3), else None."""
    prefix = host().name
    rest = track[len(prefix):]
    return int(rest) if track.startswith(prefix) and rest.isascii() and rest.isdigit() else None


# -- the built-in units ----------------------------------------------------------------------

def _cpu_model(soc: SocSpec) -> CostModel:
    from socsim.hw.cpu import CpuCostModel
    return CpuCostModel(soc)


def _dsp_model(soc: SocSpec) -> CostModel:
    from socsim.hw.dsp import DspCostModel
    return DspCostModel(soc)


def _hmx_model(soc: SocSpec) -> CostModel:
    from socsim.hw.hmx import HmxCostModel
    return HmxCostModel(soc)


def _hmx_supports(soc: SocSpec, op: Op) -> bool:
    from socsim.hw.hmx import hmx_supports
    return hmx_supports(soc, op)


def _gpu_model(soc: SocSpec) -> CostModel:
    from socsim.hw.gpu import GpuCostModel
    return GpuCostModel(soc)


def _dsp_supports(soc: SocSpec, op: Op) -> bool:
    from socsim.hw.dsp import dsp_supports
    return dsp_supports(soc, op)


def _gpu_supports(soc: SocSpec, op: Op) -> bool:
    from socsim.hw.gpu import gpu_supports
    return gpu_supports(soc, op)


def _cpu_config(soc: SocSpec, *, cores: tuple[int, ...], freqs: tuple[tuple[str, float], ...],
                mhz: float | None, bg_dram_gbs: float, batch_padding: bool) -> CpuConfig:
    return CpuConfig(cores=cores, freqs_mhz=freqs, bg_dram_gbs=bg_dram_gbs)


def _dsp_config(soc: SocSpec, *, cores: tuple[int, ...], freqs: tuple[tuple[str, float], ...],
                mhz: float | None, bg_dram_gbs: float, batch_padding: bool) -> DspConfig:
    return DspConfig(freq_mhz=mhz or soc.dsp.training_clock_mhz, batch_padding=batch_padding,
                     bg_dram_gbs=bg_dram_gbs)


def _gpu_config(soc: SocSpec, *, cores: tuple[int, ...], freqs: tuple[tuple[str, float], ...],
                mhz: float | None, bg_dram_gbs: float, batch_padding: bool) -> GpuConfig:
    return GpuConfig(freq_mhz=mhz or soc.gpu.opps[-1].freq_mhz, bg_dram_gbs=bg_dram_gbs)


def _fastrpc_s(soc: SocSpec, crossing: int, shared_buffers: bool, host_speed: float = 1.0) -> float:
    from socsim.hw import fastrpc
    return fastrpc.switch_s(soc.fastrpc, crossing, shared_buffers, host_speed)


def _gpu_switch_s(soc: SocSpec, crossing: int, shared_buffers: bool) -> float:
    from socsim.hw.gpu import cpu_gpu_switch_s
    return cpu_gpu_switch_s(soc, crossing)


def _cpu_part(soc: SocSpec) -> str:
    return " + ".join(f"{c.count}x {c.core_type}@{c.max_mhz:g}" for c in soc.cpu.clusters)


register(ComputeUnit(
    name="cpu", title="CPU", host=True, present=lambda soc: True, cost_model=_cpu_model,
    supports=lambda soc, op: True, config=_cpu_config, part=_cpu_part))
# the cDSP: FastRPC calls hand work over (socsim.hw.fastrpc)
register(ComputeUnit(
    name="dsp", title="DSP", present=lambda soc: soc.dsp is not None, cost_model=_dsp_model,
    supports=_dsp_supports, config=_dsp_config, part=lambda soc: soc.dsp.name, rail=RAIL_CDSP,
    clock_mhz=lambda soc: soc.dsp.training_clock_mhz, trace_tid=200, domain="cdsp",
    handover=Handover(_fastrpc_s, track="fastrpc", name="rpc {src}->{dst}", kind="fastrpc", host_scaled=True)))
# the GPU: a queue drain and a layout copy hand work over (socsim.hw.gpu.cpu_gpu_switch_s)
register(ComputeUnit(
    name="gpu", title="GPU", present=lambda soc: soc.gpu is not None, cost_model=_gpu_model,
    supports=_gpu_supports, config=_gpu_config, part=lambda soc: soc.gpu.name, rail=RAIL_GPU,
    clock_mhz=lambda soc: soc.gpu.opps[-1].freq_mhz, trace_tid=201,
    handover=Handover(_gpu_switch_s, track="engine", name="gpu hand-over {src}->{dst}", kind="gpu_switch")))
# HMX, the V68+ cDSP's matrix unit: reached through FastRPC like HVX, and sharing the cDSP's
# clock, rail and prepared graph, so work passes between the two without a hand-over
register(ComputeUnit(
    name="hmx", title="HMX", present=lambda soc: soc.dsp is not None and soc.dsp.hmx is not None,
    cost_model=_hmx_model, supports=_hmx_supports, config=_dsp_config,
    part=lambda soc: f"{soc.dsp.hvx_arch.upper()} HMX {soc.dsp.hmx.int8_macs_per_cycle} MAC/cycle", rail=RAIL_CDSP,
    clock_mhz=lambda soc: soc.dsp.training_clock_mhz, trace_tid=202, domain="cdsp",
    handover=Handover(_fastrpc_s, track="fastrpc", name="rpc {src}->{dst}", kind="fastrpc", host_scaled=True)))
