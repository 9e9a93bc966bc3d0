"""Power of each rail: dynamic C*V^2*f*activity plus leakage that grows with voltage and temperature.

Rails are named like Android's power rails (``cpu.<cluster>``, ``cdsp``, ``gpu``, ``dram``,
``platform``).  Every function returns ``(dynamic_mw, static_mw)`` and accepts numpy arrays as
well as floats (element-wise, broadcasting), so the engine can evaluate a whole batch of
segments at once.  :class:`SocPower` precomputes the OPP tables of a spec for the hot path; the
module-level functions are the readable reference it is tested against.

Model (docs/modeling.md, Power):

- dynamic:  P = C * V^2 * f * activity per busy core, C = Linux EAS ``dynamic-power-coefficient``
  (uW/MHz/V^2, sm8250.dtsi), V from the OPP table, f in MHz.  EAS defines C for a core running
  flat out, so ``activity = 1`` is that reference load; stalled or integer-only code is lower.
- static:   leakage of a *powered* core = L * (V / 1 V)^3 * 2^((T - 25 C) / doubling_c), the V^3
  voltage law of Arm's IPA/Mali "simple power model" and the exponential temperature law of
  subthreshold leakage; ``L`` is the spec's leakage at 1 V, 25 C.
- idle:     a core that is not powered is power-collapsed and draws ``idle_mw_per_core``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

# the rail names live with the spec (its thermal block checks them) and are re-exported here
from socsim.spec.soc import (RAIL_CDSP, RAIL_DRAM, RAIL_GPU, RAIL_PLATFORM, Cluster, Dram, Dsp, Gpu, Opp,  # noqa: F401
                             Platform, SocSpec, cpu_rail, rail_names)

REFERENCE_TEMP_C = 25.0
# Subthreshold leakage roughly doubles every 20-30 C (Liao, He, Lepak, IEEE TCAD 24(7) 2005;
# HotLeakage), the figure the specs' thermal.leakage_doubling_c cite; 25 C is the midpoint.
DEFAULT_LEAKAGE_DOUBLING_C = 25.0

FloatOrArray = float | np.ndarray


def voltage_v(opps: list[Opp], freq_mhz: ArrayLike) -> FloatOrArray:
    """Supply voltage (V) at ``freq_mhz``, linearly interpolated in the OPP table, clamped at its ends."""
    f = np.fromiter((o.freq_mhz for o in opps), float, len(opps))
    v = np.fromiter((o.voltage_mv for o in opps), float, len(opps)) * 1e-3
    return _interp(freq_mhz, f, v)


def _interp(x: ArrayLike, xp: np.ndarray, fp: np.ndarray) -> FloatOrArray:
    out = np.interp(x, xp, fp)
    return float(out) if np.ndim(out) == 0 else out


def dynamic_mw(coeff_uw_mhz_v2: float, volt_v: ArrayLike, freq_mhz: ArrayLike) -> FloatOrArray:
    """EAS dynamic power of one fully active core: C * V^2 * f (uW) in mW."""
    return coeff_uw_mhz_v2 * np.square(volt_v) * np.asarray(freq_mhz, float) * 1e-3


def leakage_mw(leak_mw_1v_25c: float, volt_v: ArrayLike, temp_c: ArrayLike,
               doubling_c: float = DEFAULT_LEAKAGE_DOUBLING_C) -> FloatOrArray:
    """Static power of one powered core/unit: L * V^3 * 2^((T - 25) / doubling_c)."""
    v = np.asarray(volt_v, float)
    t = np.asarray(temp_c, float)
    return leak_mw_1v_25c * v * v * v * np.exp2((t - REFERENCE_TEMP_C) / doubling_c)


def cluster_power_mw(cluster: Cluster, freq_mhz: ArrayLike, busy_cores: ArrayLike,
                     activity: ArrayLike, temp_c: ArrayLike, *,
                     powered_cores: ArrayLike | None = None,
                     leakage_doubling_c: float = DEFAULT_LEAKAGE_DOUBLING_C,
                     ) -> tuple[FloatOrArray, FloatOrArray]:
    """(dynamic_mw, static_mw) of a CPU cluster.

    ``busy_cores`` (may be fractional: a time average) run at ``activity`` (1 = the EAS reference
    load).  ``powered_cores`` (>= busy, default = busy) leak; the rest of the cluster's cores are
    power-collapsed at ``idle_mw_per_core``, which is counted in the static term.
    """
    v = voltage_v(cluster.opps, freq_mhz)
    busy = np.asarray(busy_cores, float)
    powered = busy if powered_cores is None else np.maximum(np.asarray(powered_cores, float), busy)
    dyn = dynamic_mw(cluster.dyn_power_coeff_uw_mhz_v2, v, freq_mhz) * busy * np.asarray(activity, float)
    static = (leakage_mw(cluster.leakage_mw_per_core, v, temp_c, leakage_doubling_c) * powered
              + cluster.idle_mw_per_core * (cluster.count - powered))
    return _out(dyn), _out(static)


def unit_power_mw(unit: Dsp | Gpu, freq_mhz: ArrayLike, active: ArrayLike, temp_c: ArrayLike, *,
                  activity: ArrayLike = 1.0, powered: ArrayLike | None = None,
                  leakage_doubling_c: float = DEFAULT_LEAKAGE_DOUBLING_C,
                  ) -> tuple[FloatOrArray, FloatOrArray]:
    """(dynamic_mw, static_mw) of the cDSP or the GPU.

    ``active`` is the fraction of time the unit computes; ``powered`` the fraction it is powered
    (default = active: the unit power-collapses when idle, as the cDSP does between FastRPC calls).
    """
    v = voltage_v(unit.opps, freq_mhz)
    act = np.asarray(active, float)
    pw = act if powered is None else np.maximum(np.asarray(powered, float), act)
    dyn = dynamic_mw(unit.dyn_power_coeff_uw_mhz_v2, v, freq_mhz) * act * np.asarray(activity, float)
    static = leakage_mw(unit.leakage_mw, v, temp_c, leakage_doubling_c) * pw
    return _out(dyn), _out(static)


def dsp_power_mw(dsp: Dsp, freq_mhz: ArrayLike, active: ArrayLike, temp_c: ArrayLike,
                 **kw) -> tuple[FloatOrArray, FloatOrArray]:
    """(dynamic_mw, static_mw) of the cDSP rail; see :func:`unit_power_mw`."""
    return unit_power_mw(dsp, freq_mhz, active, temp_c, **kw)


def gpu_power_mw(gpu: Gpu, freq_mhz: ArrayLike, active: ArrayLike, temp_c: ArrayLike,
                 **kw) -> tuple[FloatOrArray, FloatOrArray]:
    """(dynamic_mw, static_mw) of the GPU rail; see :func:`unit_power_mw`."""
    return unit_power_mw(gpu, freq_mhz, active, temp_c, **kw)


def uncore_power_mw(uncore, ddr_mhz: float | None) -> float:
    """Power (mW) of the memory subsystem at the DDR clock the CPU's memory-latency governors vote
    (socsim.spec.soc.Uncore), above what it draws at the idle phone's vote (the floor, which the
    idle baseline holds).  The DDR, its controller and PHY, the LLCC and the NoC are clocked
    together by the votes and their supply corners rise with the clock, so the power follows
    C V^2 f with V rising with f: ``power_top_mw * ((f / f_top)**g - (f_floor / f_top)**g)``,
    g = ``power_exponent`` (3: V proportional to f over the range, the bound of that law; 1: a
    fixed voltage).  0 without an uncore block, a power figure or a vote."""
    if uncore is None or not uncore.power_top_mw or ddr_mhz is None:
        return 0.0
    top, g = uncore.ddr_peak_mhz, uncore.power_exponent
    lo = uncore.floor("ddr")
    f = max(float(ddr_mhz), lo)
    return uncore.power_top_mw * ((f / top) ** g - (lo / top) ** g)


def dram_power_mw(bytes_per_s: ArrayLike, dram: Dram) -> tuple[FloatOrArray, FloatOrArray]:
    """(dynamic_mw, static_mw) of DRAM: energy per byte moved plus background (refresh, PHY idle)."""
    dyn = np.asarray(bytes_per_s, float) * dram.energy_pj_per_byte * 1e-9  # pJ/s -> mW
    return _out(dyn), _out(np.full_like(dyn, dram.background_mw))


def platform_power_mw(platform: Platform, screen_on: bool = False) -> tuple[float, float]:
    """(0, static_mw) of everything else: PMIC, modem idle, sensors, and the screen when on."""
    return 0.0, platform.idle_mw + (platform.screen_mw if screen_on else 0.0)


def _out(x: np.ndarray) -> FloatOrArray:
    return float(x) if np.ndim(x) == 0 else x


@dataclass(frozen=True, eq=False)
class UnitPower:
    """Precomputed power constants of one rail with an OPP table (a cluster, the cDSP or the GPU).

    ``cores`` is the number of cores (1 for cDSP/GPU, whose ``busy`` is an active fraction).
    Same formulas as the module functions, without re-reading the spec on every call.
    """

    rail: str
    freqs_mhz: np.ndarray
    volts_v: np.ndarray
    coeff_uw_mhz_v2: float
    leak_mw_1v_25c: float
    idle_mw: float
    cores: int
    doubling_c: float

    def voltage_v(self, freq_mhz: ArrayLike) -> FloatOrArray:
        return _interp(freq_mhz, self.freqs_mhz, self.volts_v)

    def power_mw(self, freq_mhz: ArrayLike, busy: ArrayLike, activity: ArrayLike, temp_c: ArrayLike,
                 powered: ArrayLike | None = None) -> tuple[FloatOrArray, FloatOrArray]:
        """(dynamic_mw, static_mw); ``busy`` cores (or active fraction) at ``activity``."""
        v = np.interp(freq_mhz, self.freqs_mhz, self.volts_v)
        b = np.asarray(busy, float)
        pw = b if powered is None else np.maximum(np.asarray(powered, float), b)
        v2 = v * v
        dyn = self.coeff_uw_mhz_v2 * 1e-3 * v2 * np.asarray(freq_mhz, float) * b * np.asarray(activity, float)
        leak = self.leak_mw_1v_25c * v2 * v * np.exp2((np.asarray(temp_c, float) - REFERENCE_TEMP_C)
                                                      / self.doubling_c)
        static = leak * pw + self.idle_mw * (self.cores - pw)
        return _out(dyn), _out(static)


@dataclass(frozen=True, eq=False)
class SocPower:
    """The power model of one SoC: a :class:`UnitPower` per OPP rail, DRAM and platform constants."""

    units: dict[str, UnitPower]
    dram_pj_per_byte: float
    dram_background_mw: float
    platform_idle_mw: float
    screen_mw: float

    @staticmethod
    def from_spec(soc: SocSpec) -> "SocPower":
        doubling = soc.thermal.leakage_doubling_c
        units: dict[str, UnitPower] = {}
        for c in soc.cpu.clusters:
            units[cpu_rail(c.name)] = _unit(cpu_rail(c.name), c.opps, c.dyn_power_coeff_uw_mhz_v2,
                                            c.leakage_mw_per_core, c.idle_mw_per_core, c.count, doubling)
        if soc.dsp is not None:
            units[RAIL_CDSP] = _unit(RAIL_CDSP, soc.dsp.opps, soc.dsp.dyn_power_coeff_uw_mhz_v2,
                                     soc.dsp.leakage_mw, 0.0, 1, doubling)
        if soc.gpu is not None:
            units[RAIL_GPU] = _unit(RAIL_GPU, soc.gpu.opps, soc.gpu.dyn_power_coeff_uw_mhz_v2,
                                    soc.gpu.leakage_mw, 0.0, 1, doubling)
        return SocPower(units=units, dram_pj_per_byte=soc.dram.energy_pj_per_byte,
                        dram_background_mw=soc.dram.background_mw,
                        platform_idle_mw=soc.platform.idle_mw, screen_mw=soc.platform.screen_mw)

    def dram_mw(self, bytes_per_s: ArrayLike) -> tuple[FloatOrArray, FloatOrArray]:
        dyn = np.asarray(bytes_per_s, float) * self.dram_pj_per_byte * 1e-9
        return _out(dyn), _out(np.full_like(dyn, self.dram_background_mw))

    def platform_mw(self, screen_on: bool = False) -> tuple[float, float]:
        return 0.0, self.platform_idle_mw + (self.screen_mw if screen_on else 0.0)

    def idle_mw(self, screen_on: bool = False) -> dict[str, float]:
        """Power of every rail with nothing running (all cores collapsed, DSP/GPU off, no traffic):
        the baseline subtracted for training-attributable energy."""
        out = {rail: float(u.idle_mw * u.cores) for rail, u in self.units.items()}
        out[RAIL_DRAM] = self.dram_background_mw
        out[RAIL_PLATFORM] = self.platform_mw(screen_on)[1]
        return out


def _unit(rail: str, opps: list[Opp], coeff: float, leak: float, idle: float, cores: int,
          doubling: float) -> UnitPower:
    f = np.array([o.freq_mhz for o in opps], float)
    v = np.array([o.voltage_mv for o in opps], float) * 1e-3
    f.flags.writeable = False
    v.flags.writeable = False
    return UnitPower(rail=rail, freqs_mhz=f, volts_v=v, coeff_uw_mhz_v2=float(coeff),
                     leak_mw_1v_25c=float(leak), idle_mw=float(idle), cores=cores, doubling_c=float(doubling))
