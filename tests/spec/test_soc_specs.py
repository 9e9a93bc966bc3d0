"""Every SoC spec in soc_specs/ loads, is self-consistent and carries the published facts.

The published facts are the seed papers' device tables (calibration/published.yaml):
Mandheling Table 5 (sd888, sd865, sd750g), Min-Energy Table II (sd855), Sage/Swan (exynos9820,
sd845), written out here as the papers state them (tests/spec/test_calibration_refs.py checks
that every "pub:" and "hw:" reference names an entry of those files).
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from socsim.cli import main
from socsim.hw.power import rail_names
from socsim.spec import list_socs, load_soc, soc_specs_dir

EXPECTED_SOCS = {"sd865", "sd888", "sd855", "sd750g", "exynos9820", "sd845"}
ALL_SOCS = sorted(set(list_socs()) | EXPECTED_SOCS)


def _close(a: float, b: float, rel: float = 0.02) -> bool:
    return abs(a - b) <= rel * b


def test_the_six_socs_are_there():
    assert EXPECTED_SOCS <= set(list_socs())


@pytest.mark.parametrize("name", ALL_SOCS)
def test_spec_loads_and_is_consistent(name):
    soc = load_soc(name)
    assert soc.name == name
    ids = [i for c in soc.cpu.clusters for i in c.core_ids]
    assert len(ids) == len(set(ids)), "core ids repeat"
    assert sorted(ids) == list(range(len(ids))), "core ids are 0..N-1"
    # little cluster first (core 0), prime/fastest last
    assert 0 in soc.cpu.clusters[0].core_ids
    maxes = [c.max_mhz for c in soc.cpu.clusters]
    assert soc.cpu.clusters[-1].max_mhz == max(maxes)
    assert soc.cpu.clusters[0].max_mhz == min(maxes) or soc.cpu.clusters[0].core_type.endswith("a55")
    for c in soc.cpu.clusters:
        freqs = [o.freq_mhz for o in c.opps]
        assert freqs == sorted(set(freqs)), f"{c.name}: OPPs not strictly increasing"
        volts = [o.voltage_mv for o in c.opps]
        assert volts == sorted(volts), f"{c.name}: voltage falls with frequency"
        assert all(400 <= v <= 1200 for v in volts)
        assert c.core_ids == sorted(c.core_ids)
        # 4 FP32 lanes x FMA per 128-bit pipe; the Cortex-A53's NEON datapath is 64 bits wide (its
        # TRM): one pipe (the schema's least) at half the rate
        half = 2 if c.core_type == "cortex-a53" else 1
        assert c.fp32_flops_per_cycle == 8 * c.neon_pipes_128b / half
    for unit in (soc.dsp, soc.gpu):
        if unit is not None:
            freqs = [o.freq_mhz for o in unit.opps]
            assert freqs == sorted(set(freqs))
    if soc.dsp is not None:
        assert soc.fastrpc is not None
        assert soc.dsp.training_clock_mhz in [o.freq_mhz for o in soc.dsp.opps]


@pytest.mark.parametrize("name", ALL_SOCS)
def test_thermal_network_covers_every_rail_and_cluster(name):
    soc = load_soc(name)
    rails = set(rail_names(soc))
    assert rails <= set(soc.thermal.heat_sources), f"rails without a heat source: {rails - set(soc.thermal.heat_sources)}"
    clusters = {c.name for c in soc.cpu.clusters} | ({"gpu"} if soc.gpu is not None else set())
    for z in soc.thermal.zones:
        assert set(z.caps) <= clusters, f"zone {z.name} caps unknown clusters {set(z.caps) - clusters}"
    nodes = {n.name for n in soc.thermal.nodes}
    assert soc.battery.thermal_node in nodes


@pytest.mark.parametrize("name", ALL_SOCS)
def test_every_block_names_a_source(name):
    soc = load_soc(name)
    blocks = [soc, soc.cpu, *soc.cpu.clusters, soc.dram, soc.platform, soc.thermal, soc.battery]
    blocks += [b for b in (soc.dsp, soc.gpu, soc.fastrpc) if b is not None]
    for b in blocks:
        assert len(b.source.strip()) >= 10
        fields = set(type(b).model_fields)
        # a per-field source must name a field of its block (cpu.sources may refine clusters' fields)
        if b is not soc.cpu:
            unknown = {k for k in b.sources if k.split(".")[0] not in fields}
            assert not unknown, f"{type(b).__name__}.sources names unknown fields {unknown}"


# -- published facts ---------------------------------------------------------------------------

def _cluster_summary(soc):
    return [(c.core_type, c.count, c.max_mhz) for c in soc.cpu.clusters]


def test_sd865_mandheling_table5():
    soc = load_soc("sd865")
    assert soc.dsp.training_clock_mhz == 500  # Mandheling trains at 500 MHz
    assert soc.dsp.hvx_arch == "v66" and soc.dsp.name == "Hexagon 698"
    assert soc.gpu.name == "Adreno 650" and soc.gpu.opps[-1].freq_mhz == 587
    counts = {(t, n) for t, n, _ in _cluster_summary(soc)}
    assert counts == {("cortex-a55", 4), ("cortex-a77", 3), ("cortex-a77", 1)}
    assert _close(soc.cpu.clusters[-1].max_mhz, 2840)


def test_sd855_min_energy_table2_frequencies_are_opps():
    soc = load_soc("sd855")
    big = soc.cpu.clusters[1:]
    assert sum(c.count for c in big) == 4 and soc.cpu.clusters[0].count == 4
    for c in big:  # all four big cores can run the published high/medium/low levels
        freqs = {o.freq_mhz for o in c.opps}
        assert {2400.0, 1600.0, 800.0} <= freqs, c.name
    little = {o.freq_mhz for o in soc.cpu.clusters[0].opps}
    assert {1800.0, 1200.0, 600.0} <= little
    assert [c.core_type for c in soc.cpu.clusters] == ["cortex-a55", "cortex-a76", "cortex-a76"]
    assert _close(soc.cpu.clusters[-1].max_mhz, 2840)  # the A76 prime is its own frequency domain
    # EAS coefficients from sm8150.dtsi
    assert [c.dyn_power_coeff_uw_mhz_v2 for c in soc.cpu.clusters] == [232, 369, 421]
    assert soc.dram.bandwidth_gbs == 29.9 and soc.dram.capacity_gb == 6
    assert soc.dsp.hvx_arch == "v66" and soc.gpu.name == "Adreno 640"


def test_sd888_mandheling_table5():
    soc = load_soc("sd888")
    s = _cluster_summary(soc)
    assert [(t, n) for t, n, _ in s] == [("cortex-a55", 4), ("cortex-a78", 3), ("cortex-x1", 1)]
    assert _close(s[0][2], 1800) and _close(s[1][2], 2400) and _close(s[2][2], 2840)
    assert soc.dsp.name == "Hexagon 780" and soc.dsp.training_clock_mhz == 500
    assert soc.dsp.hvx_arch == "v68" and soc.dsp.hardware_threads == 6
    assert soc.dsp.vtcm_kb > load_soc("sd865").dsp.vtcm_kb
    assert soc.gpu.name == "Adreno 660" and 700 in [o.freq_mhz for o in soc.gpu.opps]
    assert soc.dram.bandwidth_gbs == 51.2
    assert soc.cpu.clusters[-1].neon_pipes_128b == 4  # X1


def test_sd750g_mandheling_table5():
    soc = load_soc("sd750g")
    s = _cluster_summary(soc)
    assert [(t, n) for t, n, _ in s] == [("cortex-a55", 6), ("cortex-a77", 2)]
    assert _close(s[0][2], 1800) and _close(s[1][2], 2200)
    assert soc.dsp.name == "Hexagon 694" and soc.dsp.training_clock_mhz == 500
    assert soc.gpu.name == "Adreno 619" and soc.gpu.opps[-1].freq_mhz == 950


def test_exynos9820_has_no_hexagon():
    soc = load_soc("exynos9820")
    assert soc.dsp is None and soc.fastrpc is None
    assert "cdsp" not in rail_names(soc)
    s = _cluster_summary(soc)
    assert [(t, n) for t, n, _ in s] == [("cortex-a55", 4), ("cortex-a75", 2), ("exynos-m4", 2)]
    assert _close(s[0][2], 1950) and _close(s[1][2], 2310) and _close(s[2][2], 2730)
    assert soc.gpu.name.startswith("Mali-G76")
    # Samsung's sched-energy-data coefficients carry over unchanged (unit conversion factor 1)
    assert [c.dyn_power_coeff_uw_mhz_v2 for c in soc.cpu.clusters] == [160, 320, 760]


def test_exynos_energy_unit_conversion_is_identity():
    """power_mW = c * MHz * mV^2 / 1e9 equals EAS c * MHz * V^2 in uW."""
    c, f_mhz, v_mv = 760, 2730, 1050
    samsung_mw = c * f_mhz * v_mv ** 2 / 1e9
    eas_uw = c * f_mhz * (v_mv / 1000) ** 2
    assert samsung_mw == pytest.approx(eas_uw / 1000)


def test_sd845_pixel3():
    soc = load_soc("sd845")
    s = _cluster_summary(soc)
    assert [(t, n) for t, n, _ in s] == [("cortex-a55", 4), ("cortex-a75", 4)]
    assert _close(s[0][2], 1770) and _close(s[1][2], 2800)
    assert soc.dsp.hvx_arch == "v65" and soc.dsp.l2.size_kb == 512
    assert soc.battery.capacity_mah == 2915
    skin = [z for z in soc.thermal.zones if z.node == "skin"]
    assert skin and skin[0].trips_c == [39, 43, 45, 47, 51, 55]


# -- `socsim validate` ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL_SOCS)
def test_cli_validate_each_spec(name):
    path = soc_specs_dir() / f"{name}.yaml"
    res = CliRunner().invoke(main, ["validate", str(path)])
    assert res.exit_code == 0, res.output
    assert f"SoC spec {name}" in res.output
