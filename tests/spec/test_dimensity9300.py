"""soc_specs/dimensity9300.yaml: the MediaTek Dimensity 9300 (MT6989) loads and validates, its new
core types (cortex-x4, cortex-a720) have the features ncnn reads and the carried constants their
sources state, and every core type a spec names has an instruction-stream cost model."""
from __future__ import annotations

import pytest

from socsim.hw import armk
from socsim.sched.ncnn import int8_kernel_path
from socsim.sched.oversub import SPIN_LOOP_CYCLES
from socsim.spec import list_socs, load_soc
from socsim.spec.coretypes import FP32_EFFICIENCY, has_dotprod, has_fp16_arithmetic, has_i8mm, kernel_power


def test_the_spec_loads_with_its_clusters_clocks_and_memory():
    soc = load_soc("dimensity9300")
    got = [(c.name, c.core_type, c.core_ids, c.max_mhz) for c in soc.cpu.clusters]
    assert got == [("little", "cortex-a720", [0, 1, 2, 3], 2000.0), ("mid", "cortex-x4", [4, 5, 6], 2850.0),
                   ("prime", "cortex-x4", [7], 3250.0)]
    assert soc.dram.bandwidth_gbs == pytest.approx(8 * 9.6)      # LPDDR5T 9600 MT/s, 64-bit bus
    assert soc.dsp is None and soc.fastrpc is None               # MediaTek's APU is not a Hexagon
    assert soc.gpu is not None and soc.gpu.fp32_flops_per_cycle == 12 * 128
    assert [c.neon_pipes_128b for c in soc.cpu.clusters] == [2, 4, 4]


@pytest.mark.parametrize("core_type", ["cortex-x4", "cortex-a720"])
def test_the_armv9_2_cores_have_fp16_dotprod_and_i8mm(core_type):
    assert has_fp16_arithmetic(core_type) and has_dotprod(core_type) and has_i8mm(core_type)
    assert int8_kernel_path(core_type) == "i8mm"


def test_carried_constants_are_their_sources_values():
    soc = load_soc("dimensity9300")
    # the A720 carries the A76's fitted efficiency (as the A715 does), the X4 the X3's 0.45
    assert soc.cluster("little").fp32_efficiency == FP32_EFFICIENCY["cortex-a76"] == FP32_EFFICIENCY["cortex-a720"]
    x3 = load_soc("sd8gen2").cluster("prime")
    assert soc.cluster("mid").fp32_efficiency == soc.cluster("prime").fp32_efficiency == x3.fp32_efficiency
    assert kernel_power("cortex-x4") == kernel_power("cortex-a720") == kernel_power("cortex-a76")
    assert "cortex-x4" not in FP32_EFFICIENCY     # an X-core's 0.45 is a spec assumption, not a fit


def test_the_new_cores_cost_as_their_llvm_mca_stand_ins():
    # X4 -> Neoverse V2 (the X3's stand-in), A720 -> LLVM's own Neoverse N2 (the A715's)
    for kernel in armk.table():
        assert armk.cycles(kernel, "cortex-x4") == armk.cycles(kernel, "cortex-x3"), kernel
        assert armk.cycles(kernel, "cortex-a720") == armk.cycles(kernel, "cortex-a715"), kernel
    # four FMLA pipes against two: half the cycles per FMLA of the GEMM tile
    assert armk.cycles("gemm_f32_12x8", "cortex-x4") < 0.55 * armk.cycles("gemm_f32_12x8", "cortex-a720")


@pytest.mark.parametrize("name", sorted(list_socs()))
def test_every_specs_core_type_has_a_cost_model_and_a_spin_loop(name):
    """A spec whose core type the armk table lacks would fall back to the instruction-mix bound
    silently, with an efficiency meant for the other stream; a new core type needs both."""
    for cl in load_soc(name).cpu.clusters:
        assert armk.cycles("gemm_f32_12x8", cl.core_type) is not None, (name, cl.core_type)
        assert all(cl.core_type in t for t in SPIN_LOOP_CYCLES.values()), (name, cl.core_type)
