"""Properties of a CPU core *type* (Cortex-A55, Cortex-A76, ...), the same on every SoC that has it.

A kernel efficiency fitted on one phone's measurements is a property of the core's
microarchitecture running the framework's kernels, not of the phone: it lives here, keyed by the
cluster's ``core_type``, and every spec whose cluster has that core type takes it
(``socsim.spec.soc.Cluster`` fills ``fp32_efficiency`` from this table; a spec that gives a
different value for a core type listed here is an error: it would be a per-phone correction).
Core types not listed keep their spec's own value (an assumption stated there).

Every value names the data it was fitted on; docs/modeling.md, "Fitted constants", has the fits.
"""
from __future__ import annotations

# Sustained fraction of the cycles of MNN's 12x8 FMLA GEMM tile as llvm-mca's model of the core
# type costs its inner loop (socsim.hw.armk; for core types without a model there, of the FP32
# NEON peak, fp32_flops_per_cycle): what the instruction stream leaves out (edge tiles, the loop
# nests around the tile, the front end, L1 misses).  The operands' packing and col2im are costed
# apart (socsim.hw.cpu.gemm_data_movement).
# FITTED on the development set's single-core rows (calibration/dev/minenergy_table2.yaml,
# Min-Energy Table II on sd855: BIG1 at H/M/L for the A76, LITTLE1 at H/M/L for the A55;
# benchmarks/fit_core_efficiency.py, grid 0.200-0.995 in steps of 0.005) at
# socsim.hw.cpu.BACKWARD_KERNEL_SLOWDOWN = 1.77 (its re-derivation's fixed point with this
# efficiency, see there; 1.62 before) and with MNN's weight gradient as costed now (the one-thread dY packing and
# MatMul passes, socsim.hw.cpu.serial_pack_elements / MNN_MATMUL_ONE_THREAD) and sd855's memlat
# gate: 0.930, BIG1 rows 3.2% off, with the training step's forward passes
# (socsim.hw.cpu.multi_input_weights) and MNN's SGD chain (socsim.hw.cpu.mnn_sgd_chain: its
# copies and binary ops, time the GEMM efficiency stood in for) costed (0.870 at s 1.62; 0.810
# before them, 0.82 before the one-thread MatMul passes).  The tile's stream
# gives the A76 (Neoverse N1 model) 0.50 cycles per FMLA, its two-pipe peak.  Plausible 0.6-0.95
# for the out-of-order A76 (a 12x8 tile with its loads hidden behind 24 FMLAs a k step).
_A76_FP32_EFFICIENCY = 0.930
# FITTED as below (the A55's entry says on what).
_A55_FP32_EFFICIENCY = 0.400

FP32_EFFICIENCY: dict[str, float] = {
    "cortex-a76": _A76_FP32_EFFICIENCY,
    # FITTED as above (LITTLE1): 0.400, LITTLE1 rows 6.4% off, with MNN's SGD chain at s 1.77
    # (0.370 at s 1.62; 0.355, 7.0% off, before it; 0.365 before MNN's one-thread
    # weight-gradient passes were costed).  llvm-mca's Cortex-A55 model gives the tile 1.04 cycles
    # per FMLA (the peak of its one 128-bit pipe: the stream itself is not what makes the A55
    # slow); the in-order A55 then loses what no back-end model sees: it stalls on every L1 miss
    # and load-use it cannot hide, and MNN's arm64 kernels are not scheduled for its pairing
    # rules.  Plausible 0.25-0.5.  Carried to every spec's A55 (sd845, sd750g, sd865, sd888,
    # exynos9820).
    "cortex-a55": _A55_FP32_EFFICIENCY,
    # CARRIED from the A76 (not fitted): the Cortex-A715 (and the A710 it stands for on sd8gen2)
    # issues the same two 128-bit FMLA pipes (Arm Cortex-A715 Software Optimization Guide: ASIMD
    # FMLA throughput 2 per cycle, pipes V0/V1; llvm-mca's Neoverse N2 model gives the tile 0.50
    # cycles per FMLA, as the N1 model does the A76) behind a wider front end (5-wide against
    # 4) and a larger window, so nothing the efficiency stands for (edge tiles, loop nests, the
    # front end, L1 misses) is worse than on the A76.  The spec's 0.45 assumption before it made
    # an A715 0.55x an A76 per clock, and sd8gen2's four-thread ncnn runs (paced by the A715s
    # under the static split) 1.8x too slow.  Checked, not fitted, on calibration/dev/
    # ncnn_phones.yaml's SM8550 runs: threads 1->4 on sd8gen2, ratio MAPE ~38% -> 21%
    # (docs/modeling.md, Fitted constants).
    "cortex-a715": _A76_FP32_EFFICIENCY,
    # CARRIED from the A76 (not fitted), for the reason given for the A715: the Cortex-A77 and
    # Cortex-A78, the A76's direct successors, issue the same two 128-bit ASIMD FMLA pipes
    # (calibration/hardware.yaml neon.a77/a78 simd_pipes_128b 2; Arm Cortex-A77 and Cortex-A78
    # Software Optimization Guides, pipes V0/V1) behind a wider front end (6-wide dispatch, a
    # macro-op cache), so nothing the efficiency stands for is worse than on the A76.  The
    # spec's 0.45 assumption before it made an A77 0.55x an A76 per clock, against CoreMark's
    # 8.48 vs the A76's ~7.9 per MHz (calibration/hardware.yaml coremark_per_mhz).
    "cortex-a77": _A76_FP32_EFFICIENCY,
    "cortex-a78": _A76_FP32_EFFICIENCY,
    # CARRIED from the A76 (not fitted), for the reason given for the A715: the Cortex-A720
    # (Dimensity 9300) is the A715's successor with the same two 128-bit ASIMD FMLA pipes (Arm
    # Cortex-A720 Software Optimization Guide, pipes V0/V1) behind the same 5-wide front end, and
    # llvm-mca's Neoverse N2 model stands in for it as for the A715 (LLVM 19 gives cortex-a720 that
    # model itself: isa/arm/armk.py).  Not checked on any row before it was set: the Dimensity
    # 9300's ncnn rows are predictions.
    "cortex-a720": _A76_FP32_EFFICIENCY,
    # CARRIED from the A55 (not fitted): the Cortex-A53 (Kirin 970's little cluster) is the A55's
    # in-order, dual-issue predecessor (Arm Cortex-A53 TRM: in-order, dual-issue, a 64-bit NEON
    # datapath), costed with its own llvm-mca model (isa/arm/armk.py), and it loses what the A55
    # loses beyond the model: stalls on every L1 miss and load-use it cannot hide.  No
    # development row runs on it (ncnn's Kirin 970 rows are big-core runs).  The Cortex-A73 is not
    # listed: like the A75 after it (the same llvm-mca stand-in, the A57 model) it keeps its
    # spec's 0.45 assumption; the A76's 0.93 on the A57 model's cycles would make it 2.1x an
    # A75 per clock.
    "cortex-a53": _A55_FP32_EFFICIENCY,
}


def fitted_fp32_efficiency(core_type: str) -> float | None:
    """The core type's fitted FP32 kernel efficiency, or None when the type has none."""
    return FP32_EFFICIENCY.get(core_type.lower())


# Dynamic power of a core computing the frameworks' dense NEON kernels, relative to the EAS
# reference load its dynamic-power-coefficient describes (activity 1: C V^2 f, socsim.hw.power).
# The coefficients agree with freqbench's CoreMark power (tests/hw/test_power.py): integer code
# with few memory accesses.  A GEMM tile keeps both NEON pipes issuing FMLAs and streams its
# operands through L1 and L2 every cycle, and the core's share of the cache and interconnect
# traffic that work causes rises with it; the factor multiplies the compute part of a CPU op's
# activity (socsim.hw.cpu.cpu_cost), not its stalls or barrier waits.  Core types not listed: 1.
# FITTED on the development set's 21 rows (calibration/dev/minenergy_table2.yaml, energies;
# benchmarks/fit_uncore_power.py --max-energy-mape 20, jointly with the uncore power and
# SPIN_ACTIVITY; docs/modeling.md, Fitted constants): the A76's and the A55's factors, re-fitted
# at sd855's whole firmware voltage table (2.5 / 1.6 at the endpoints' linear voltages; 3.0 / 1.7
# before the per-domain background preemption, 2.9 / 1.6 after it, with SPIN_ACTIVITY 0.2).  The
# phone's energy per batch on one big core follows the square of the core voltage (10.6 / 8.0 /
# 6.9 J at 1.0 / 0.804 / 0.756 V) and is ~3x the EAS energy of the work at every step: per-work
# power, not a clock-driven uncore; the real voltages at the M and L steps are lower than the
# endpoints' line, so the same energies ask for a larger factor.  The fitted value sits above a
# core alone (AnandTech's SPECfp active power of the sd855's A76s, 1.5-2x their EAS C V^2 f,
# includes the memory system): it also stands in for the work-proportional power of the L3/DSU,
# the interconnect and the DRAM traffic that the model does not price per access.  Plausible 1-2
# for the core alone; the grid's upper end is 3.
_A76_KERNEL_POWER = 2.9
_A55_KERNEL_POWER = 1.6
KERNEL_POWER: dict[str, float] = {
    "cortex-a76": _A76_KERNEL_POWER,
    # FITTED as above (LITTLE rows).  Carried to every spec's A55.
    "cortex-a55": _A55_KERNEL_POWER,
    # CARRIED (not fitted; no development energies on these cores).  What the factor stands
    # for is not the A76's alone: dense NEON kernels against an integer-benchmark reference
    # load, and the work-proportional power of the caches, interconnect and DRAM traffic, which
    # every phone's battery-side measurement includes.  The big cores of every spec take the
    # A76's value (the A75 before it, the A77/A78/A715 after it with the same two FMLA pipes,
    # the X1/X3 and Exynos M4 with four: their own EAS coefficients carry their higher power),
    # and the in-order A510 takes the A55's.  Left at 1 they would make a core of the same
    # phone 3x cheaper per unit of work than its A76-family neighbour and tilt every core
    # choice (Swan, Min-Energy) towards it.
    "cortex-a75": _A76_KERNEL_POWER,
    "cortex-a77": _A76_KERNEL_POWER,
    "cortex-a78": _A76_KERNEL_POWER,
    "cortex-a715": _A76_KERNEL_POWER,
    "cortex-x1": _A76_KERNEL_POWER,
    "cortex-x3": _A76_KERNEL_POWER,
    "exynos-m4": _A76_KERNEL_POWER,
    "cortex-a510": _A55_KERNEL_POWER,
    # The Dimensity 9300's cores, carried the same way: the A720 (two FMLA pipes, the A715's
    # successor) and the X4 (four, the X3's successor) take the A76's value.
    "cortex-a720": _A76_KERNEL_POWER,
    "cortex-x4": _A76_KERNEL_POWER,
    # The Kirin 970's cores, carried the same way: the out-of-order A73 (the A75's predecessor)
    # takes the A76 family's value, the in-order A53 the A55's.
    "cortex-a73": _A76_KERNEL_POWER,
    "cortex-a53": _A55_KERNEL_POWER,
}


def kernel_power(core_type: str) -> float:
    """The core type's dense-kernel power relative to its EAS reference load (1 if not fitted)."""
    return KERNEL_POWER.get(core_type.lower(), 1.0)


# ISA features a framework's kernel selection reads (ncnn's cpu_support_arm_asimdhp() and
# cpu_support_arm_asimddp(), src/cpu.cpp, from the kernel's HWCAP_ASIMDHP / HWCAP_ASIMDDP).
# FP16: ARMv8.2-A half-precision data processing (FEAT_FP16), 8 FP16 lanes per 128-bit FMLA.
# DOTPROD: the SDOT/UDOT instructions (FEAT_DotProd).  Sources: Arm's Technical Reference
# Manuals, "Features" section of each core: Cortex-A55 (100442) and Cortex-A75 (100403) list
# the ARMv8.2-A extensions with half-precision floating point and the dot product instructions
# (introduced with these two cores, Arm DynamIQ launch, 2017); Cortex-A76 (100798), A77
# (101111), A78 (101430), X1 (101433) implement ARMv8.2-A with FP16 and DotProd; the Armv9-A
# cores Cortex-A510 (101604), A710 (101800), A715 (101590), X2 (101803), X3 (101593) include both.
# The Armv9.2-A cores Cortex-A720 (102530) and Cortex-X4 (102484) include both (Arm TRMs,
# "Features": FEAT_FP16, FEAT_DotProd, FEAT_I8MM and the Armv9.2 base).
# The ARMv8.0-A cores Cortex-A53 (Arm 100479) and Cortex-A73 (Arm 100048) have neither: their
# TRMs list the Advanced SIMD and FP extension of ARMv8.0 (no FEAT_FP16 arithmetic, no
# FEAT_DotProd), so ncnn runs its FP32 kernels and its plain-NEON (SMLAL) int8 path on them.
# Samsung's Exynos M4 (Mongoose 4): ARMv8.2-A with FP16 and dot product (Samsung's Hot Chips 31
# (2019) M-series talk, Grayson et al., ISCA 2020 "Evolution of the Samsung Exynos CPU
# microarchitecture", Table 1); an assumption where those name the ISA level only.
_V82_FP16_DOTPROD = ("cortex-a55", "cortex-a75", "cortex-a76", "cortex-a77", "cortex-a78", "cortex-x1",
                     "cortex-a510", "cortex-a710", "cortex-a715", "cortex-x2", "cortex-x3", "exynos-m4",
                     "cortex-a720", "cortex-x4")
FP16_ARITHMETIC: frozenset[str] = frozenset(_V82_FP16_DOTPROD)
DOTPROD: frozenset[str] = frozenset(_V82_FP16_DOTPROD)


# I8MM: the int8 matrix multiply-accumulate instructions (FEAT_I8MM: SMMLA/UMMLA/USMMLA, a 2x8 by
# 8x2 int8 product into a 2x2 int32 block, 32 MACs per instruction against SDOT's 16), optional
# from Armv8.2 and mandatory from Armv8.6-A; ncnn reads it as cpu_support_arm_i8mm() (src/cpu.cpp,
# HWCAP2_I8MM).  Sources: Arm's Technical Reference Manuals, "Features": the Armv9-A cores
# Cortex-A510 (101604), A710 (101800), A715 (101590), X2 (101803) and X3 (101593) implement
# FEAT_I8MM, as do the Armv9.2-A Cortex-A720 (102530) and Cortex-X4 (102484) (mandatory from
# Armv8.6-A); the Armv8.2-A cores above (A55, A75, A76, A77, A78, X1) and the Exynos M4 do not.
I8MM: frozenset[str] = frozenset(("cortex-a510", "cortex-a710", "cortex-a715", "cortex-x2", "cortex-x3",
                                  "cortex-a720", "cortex-x4"))


def has_i8mm(core_type: str) -> bool:
    """Whether cores of ``core_type`` have SMMLA (FEAT_I8MM); unknown types: no."""
    return core_type.lower() in I8MM


def has_fp16_arithmetic(core_type: str) -> bool:
    """Whether cores of ``core_type`` compute in FP16 (ARMv8.2 FEAT_FP16); unknown types: no."""
    return core_type.lower() in FP16_ARITHMETIC


def has_dotprod(core_type: str) -> bool:
    """Whether cores of ``core_type`` have SDOT/UDOT (FEAT_DotProd); unknown types: no."""
    return core_type.lower() in DOTPROD
