"""How fast a CPU core runs host code: the branchy integer code around the kernels (a framework's
dispatch, a driver's marshalling of tensors) whose speed follows the core that runs it, not its
NEON units.

A host-code cost measured on one core is taken on the reference core below and, on another host
core, scales with CoreMark per MHz x the core's top clock (the clock under the governor is not
modelled: the cost is taken at the top clock, as it was measured).
"""
from __future__ import annotations

# CoreMark/MHz: calibration/hardware.yaml cpu_core_power_mw_at_max.coremark_per_mhz (freqbench:
# A55 3.71, A77 8.48, A78 9.10, X1 9.29).  Core types freqbench lacks are derived from the A55
# through the EAS capacity-dmips-mhz of their SoC's device tree (calibration/hardware.yaml
# cpu_energy_model, which reproduces the freqbench A77/A55 ratio on sd865: 1024/448 x 3.71 = 8.48):
# A76 3.71 x 1024/488 (sm8150.dtsi), A75 3.71 x 1024/611 (sdm845.dtsi), Exynos M4 and the 9820's
# A75 from exynos9820.dts capacities per MHz at their top clocks (785/2730, 531/2314 against the
# A55's 272/1950).  Others (A510, A715, X3): assumption, the A77's figure scaled by decode width
# (A510 3-wide in-order: 4.24, close to the A55 it replaces; A715 5-wide, X3 6-wide: no public
# CoreMark/MHz read here).
HOST_COREMARK_PER_MHZ = {"cortex-a55": 3.71, "cortex-a77": 8.48, "cortex-a78": 9.10, "cortex-x1": 9.29,
                         "cortex-a76": 7.78, "cortex-a75": 6.22, "exynos-m4": 7.65,
                         "cortex-a510": 4.24, "cortex-a715": 8.48 * 5 / 6, "cortex-x3": 8.48}
# The reference host: sd865's Cortex-A77 mid core at its top clock, the first core of the sets
# the host-code figures were measured on (PyTorch's four big cores in Swan; Mandheling's
# default two big cores, where pub:cpu_dsp_switch_ms was measured).
HOST_REF = ("cortex-a77", 2419.2)


def host_speed(soc, core: int) -> float:
    """How fast ``core`` of ``soc`` runs host code at its top clock, relative to HOST_REF."""
    cl = soc.cpu.cluster_of(core)
    per_mhz = HOST_COREMARK_PER_MHZ.get(cl.core_type)
    if per_mhz is None:     # a core type not in the table: the A77's figure scaled by decode width
        per_mhz = HOST_COREMARK_PER_MHZ["cortex-a77"] * cl.issue_width / 6
    ref_type, ref_mhz = HOST_REF
    return per_mhz * cl.max_mhz / (HOST_COREMARK_PER_MHZ[ref_type] * ref_mhz)
