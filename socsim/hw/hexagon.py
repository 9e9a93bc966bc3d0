"""Hexagon cDSP generations: what each architecture version brings (threads, HVX contexts, L2,
VTCM, HMX), for the SoC specs to be checked against and for listings to name.

A SoC spec's ``dsp:`` section is the source of truth the cost models read; this table is the
public per-generation picture each spec is checked against (tests/hw/test_hexagon_generations.py),
with its source beside every number.  Where a spec departs from its generation (a mid-range part
with fewer HVX contexts), the spec says why in its ``sources``.

Packet and resource rules: LLVM's Hexagon processor models from V60 to V75 list the same HVX
functional units (load, store, shift, permute, two multiply halves) and an issue width of 4
(hw:hexagon.generations.hvx_functional_units), and their HVX itineraries are equal from V65 to
V68 but for the VTCM gathers' slots (hw:hexagon.generations.hvx_itineraries, an instruction the
emulator does not have), so one HVX kernel takes the same compute cycles on V65, V66 and V68 and
``isa/hvx``'s V66 rules stand for them; these generations differ in how many contexts run
kernels, in their memories (and so in memory stall cycles), their clocks, and in HMX.  From V69
the vector-by-vector vrmpy and the saturating halfword vdmpy/vmpy take one multiply half instead
of both (two per packet instead of one): not modelled, so V69/V73 are costed with V68's HVX
timing (docs/hvx.md, Gaps).
"""
from __future__ import annotations

from dataclasses import dataclass

from socsim.spec.soc import SocSpec


@dataclass(frozen=True, slots=True)
class HexagonGeneration:
    """One Hexagon architecture version's public figures (``hmx_int8_macs``: 0 without HMX)."""

    arch: str
    parts: str
    hardware_threads: int
    hvx_contexts: int
    l2_kb: int
    vtcm_kb: int
    hmx_int8_macs: int
    source: str


GENERATIONS: dict[str, HexagonGeneration] = {g.arch: g for g in (
    HexagonGeneration(
        "v65", "Hexagon 685 (sd845)", 4, 2, 512, 256, 0,
        "threads: hw:hexagon.hardware_threads (V66's 4, assumed for V65); HVX contexts: derived from "
        "hw:hexagon.peak_8bit_mac_per_mhz.sdm845 (512 = 2 contexts x 256); L2: hw:caches.cdsp_l2.sdm845; "
        "VTCM: assumption, V66's 256 KB (VTCM first appeared with V65)"),
    HexagonGeneration(
        "v66", "Hexagon 690/694/698 (sd855, sd865, sd750g)", 4, 4, 1024, 256, 0,
        "hw:hexagon.hardware_threads.v66; hw:hexagon.hvx_contexts_v66 (QEMU config and SDK overview: 4); "
        "hw:caches.cdsp_l2.sm8250; hw:hexagon.vtcm_kb.v66"),
    HexagonGeneration(
        "v68", "Hexagon 780 (sd888)", 6, 4, 1024, 4096, 2048,
        "hw:hexagon.generations.v68_config (qbox v68n_1024: 6 threads, 4 contexts, 1024 KB L2, 4096 KB VTCM); "
        "HMX: hw:hexagon.hmx.v68 (64 x 32 INT8 tile)"),
    HexagonGeneration(
        "v69", "Hexagon (Snapdragon 8 Gen 1)", 6, 4, 1024, 8192, 2048,
        "assumption: V68's threads, contexts, L2 and HMX tile (no public V69 config table in "
        "calibration/); VTCM 8 MB: assumption from Qualcomm's Hexagon SDK documentation of V69 "
        "(not re-read for this table)"),
    HexagonGeneration(
        "v73", "Hexagon (Snapdragon 8 Gen 2)", 6, 4, 1024, 8192, 2048,
        "assumption: as v69 (LLVM's V73 processor model lists the same HVX units, "
        "hw:hexagon.generations.hvx_functional_units; its HVX timing: hw:hexagon.generations.hvx_itineraries); "
        "no public V73 HMX tile figure, V68's taken"),
)}


def generation(soc: SocSpec) -> HexagonGeneration | None:
    """The generation of the SoC's Hexagon (None: no DSP, or a version the table lacks)."""
    return GENERATIONS.get(soc.dsp.hvx_arch) if soc.dsp is not None else None


def describe(soc: SocSpec) -> str:
    """One line for listings: the SoC's Hexagon version and the units it has."""
    dsp = soc.dsp
    if dsp is None:
        return "-"
    units = f"HVX x{dsp.hvx_contexts}"
    if dsp.hmx is not None:
        units += f" + HMX {dsp.hmx.int8_macs_per_cycle} MAC/cycle"
    return (f"{dsp.hvx_arch.upper()}: {units}, {dsp.hardware_threads} threads, "
            f"L2 {dsp.l2.size_kb:g} KB, VTCM {dsp.vtcm_kb:g} KB")
