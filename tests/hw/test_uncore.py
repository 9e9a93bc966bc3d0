"""Uncore clocks (socsim.spec.soc.Uncore, socsim.hw.dram.uncore_dram) and the CPU cost model's
interval-model stalls: the memory-latency governors' votes, DRAM latency/bandwidth at the voted
DDR clock, the explicit fallback of a spec without an uncore block."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.hw import dram as dram_mod
from socsim.hw.cost import CpuConfig
from socsim.hw.cpu import cpu_cost, hit_latencies_s, uncore_clocks
from socsim.spec import load_soc
from socsim.workload.ops import Op


@pytest.fixture(scope="module")
def sd855():
    return load_soc("sd855")


def _cfg(cores, little, big):
    return CpuConfig(cores=tuple(cores), freqs_mhz=(("little", little), ("mid", big), ("prime", big)))


def test_votes_follow_the_memlat_tables(sd855):
    u = sd855.cpu.uncore
    # first row whose CPU MHz >= f (sm8150.dtsi cpu4-llcc-ddr-latmon), the last row above the table
    assert u.vote("ddr", {"mid": 800}) == 768
    assert u.vote("ddr", {"mid": 1600}) == 1555
    assert u.vote("ddr", {"mid": 2400}) == 2092
    assert u.vote("ddr", {"little": 600}) == 451
    assert u.vote("ddr", {"little": 1800}) == 768
    assert u.vote("l3", {"little": 600}) == 480
    # the highest vote of the clusters in use wins
    assert u.vote("ddr", {"little": 1800, "mid": 2400}) == 2092
    assert u.vote("l3", {"little": 600, "mid": 800}) == 768


def test_dram_latency_and_bandwidth_at_a_lower_ddr_clock(sd855):
    u = sd855.cpu.uncore
    lat_top, scale_top = dram_mod.uncore_dram(sd855.dram, u, u.ddr_peak_mhz)
    assert lat_top == pytest.approx(sd855.dram.latency_ns)
    assert scale_top == 1.0
    lat, scale = dram_mod.uncore_dram(sd855.dram, u, 451)
    assert lat > lat_top + 50
    assert scale == pytest.approx(451 / u.ddr_peak_mhz)
    # a spec without an uncore block: the spec's latency, full bandwidth
    assert dram_mod.uncore_dram(sd855.dram, None, 451) == (sd855.dram.latency_ns, 1.0)


def test_fallback_without_uncore_block():
    soc = load_soc("sd865")
    assert soc.cpu.uncore is None
    cl = soc.cpu.clusters[-1]
    cfg = CpuConfig(cores=(7,), freqs_mhz=tuple((c.name, c.max_mhz) for c in soc.cpu.clusters))
    assert uncore_clocks(soc, cfg, (7,)) == {}
    lat = hit_latencies_s(soc, cl, cl.max_mhz, {})
    assert lat["L3"] == pytest.approx(soc.cpu.l3.hit_latency_cycles / (cl.max_mhz * 1e6))


def test_l3_latency_in_ns_stretches_as_the_l3_clock_drops(sd855):
    little = sd855.cpu.clusters[0]
    hi = hit_latencies_s(sd855, little, 1800, uncore_clocks(sd855, _cfg((0,), 1800, 2400), (0,)))
    lo = hit_latencies_s(sd855, little, 600, uncore_clocks(sd855, _cfg((0,), 600, 800), (0,)))
    assert lo["L3"] > hi["L3"] and lo["SLC"] > hi["SLC"]
    # the private L2 runs at the core clock
    assert lo["L2"] == pytest.approx(3 * hi["L2"])


def test_part_of_an_op_does_not_scale_with_the_core_clock(sd855):
    op = Op(name="fc", kind="gemm", phase="forward", layer="fc", dtype="fp32",
            params=(("k", 4096), ("m", 16), ("n", 4096)), macs=16 * 4096 * 4096,
            bytes_read=4 * (16 * 4096 + 4096 * 4096), bytes_written=4 * 16 * 4096, out_bytes=4 * 16 * 4096)
    for cores, hi, lo in (((0,), (1800, 2400), (600, 800)), ((4,), (1800, 2400), (600, 800))):
        t_hi = cpu_cost(sd855, op, _cfg(cores, *hi))
        t_lo = cpu_cost(sd855, op, _cfg(cores, *lo))
        assert t_hi.stall_s > 0
        # 3x lower clock, less than 3x (the stall part is in ns) but the stall itself grows
        # (lower L3/DDR clocks)
        assert t_lo.time_s < 3 * t_hi.time_s
        assert t_lo.stall_s > t_hi.stall_s


def test_memory_subsystem_power_follows_the_voted_ddr_clock():
    """socsim.hw.power.uncore_power_mw: 0 at the idle vote, the spec's figure at the top, rising
    steeply (exponent 3) between; none without an uncore block."""
    from socsim.hw.power import uncore_power_mw
    from socsim.spec import load_soc
    u = load_soc("sd855").cpu.uncore
    assert uncore_power_mw(u, u.floor("ddr")) == 0.0
    top = uncore_power_mw(u, u.ddr_peak_mhz)
    assert top == pytest.approx(u.power_top_mw * (1 - (u.floor("ddr") / u.ddr_peak_mhz) ** 3))
    assert 0 < uncore_power_mw(u, 451) < uncore_power_mw(u, 768) < uncore_power_mw(u, 1555) < top
    assert uncore_power_mw(None, 2092) == 0.0 and uncore_power_mw(u, None) == 0.0


def test_bandwidth_governor_votes_the_lowest_opp_covering_traffic_over_io_percent(sd855):
    """socsim.spec.soc.BwMon.vote: freq = MB/s * 100 / io_percent, the lowest OPP at or above it
    (governor_bw_hwmon.c; sm8150's ddr-bw-opp-table, 3.8147 MB/s per MHz)."""
    bw = sd855.cpu.uncore.bwmon
    assert bw is not None and bw.io_percent == 80
    mb = float(1 << 20)
    assert bw.vote(0.0) == 200
    # 451 MHz is 1720 MB/s: traffic up to 80% of it votes 451, a little more the next OPP (547)
    assert bw.vote(0.8 * 451 * bw.mbps_per_mhz * mb * 0.999) == 451
    assert bw.vote(0.8 * 451 * bw.mbps_per_mhz * mb * 1.01) == 547
    # beyond the top OPP's bandwidth: the top OPP
    assert bw.vote(100e9) == 2092


@given(st.floats(min_value=0.0, max_value=20e9), st.floats(min_value=0.0, max_value=20e9))
@settings(max_examples=60, deadline=None)
def test_bandwidth_vote_is_monotone_and_an_opp(a, b):
    bw = load_soc("sd855").cpu.uncore.bwmon
    lo, hi = sorted((a, b))
    assert bw.vote(lo) <= bw.vote(hi)
    assert bw.vote(hi) in bw.ddr_opps_mhz


def test_streaming_op_on_a_slow_big_core_gets_the_bandwidth_vote(sd855):
    """A big core at 0.8 GHz votes DDR 768 MHz by latency; an op streaming more than 80% of that
    clock's bandwidth unit (2.3 GB/s) makes the bandwidth governor vote higher, and the op then runs with the
    faster DRAM.  Without a bwmon block the DDR stays at the latency vote."""
    op = Op(name="sgd", kind="sgd_update", phase="update", layer="fc", dtype="fp32", params=(),
            macs=0, flops=2 * 4096 * 4096, bytes_read=3 * 4 * 4096 * 4096, bytes_written=2 * 4 * 4096 * 4096,
            out_bytes=4 * 4096 * 4096)
    cfg = _cfg((4,), 600, 800)
    with_bw = cpu_cost(sd855, op, cfg)
    no_bw = sd855.model_copy(update={"cpu": sd855.cpu.model_copy(update={
        "uncore": sd855.cpu.uncore.model_copy(update={"bwmon": None})})})
    without = cpu_cost(no_bw, op, cfg)
    d_with, d_without = dict(with_bw.detail), dict(without.detail)
    assert d_without["ddr_mhz"] == 768
    assert d_with["ddr_mhz"] > 768
    assert with_bw.time_s < without.time_s
    # the vote settles: the traffic at the voted clock does not ask for a higher one
    assert sd855.cpu.uncore.bwmon.vote(with_bw.dram_bytes / with_bw.time_s) <= d_with["ddr_mhz"]


def test_bwmon_opps_out_of_order_are_bad_input(tmp_path):
    import yaml
    from pathlib import Path

    from socsim.errors import InputError
    root = Path(__file__).resolve().parents[2]
    data = yaml.safe_load((root / "soc_specs" / "sd855.yaml").read_text())
    data["cpu"]["uncore"]["bwmon"]["ddr_opps_mhz"] = [200, 768, 451]
    p = tmp_path / "soc.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(InputError) as e:
        load_soc(str(p))
    assert "ddr_opps_mhz" in str(e.value)


def test_a_spec_without_a_bwmon_block_keeps_the_latency_vote(sd855):
    """SoCs without a bandwidth-governor table (every spec but sd855's) get no bandwidth vote."""
    no_bw = sd855.model_copy(update={"cpu": sd855.cpu.model_copy(update={
        "uncore": sd855.cpu.uncore.model_copy(update={"bwmon": None})})})
    op = Op(name="fc", kind="gemm", phase="forward", layer="fc", dtype="fp32",
            params=(("k", 4096), ("m", 16), ("n", 4096)), macs=16 * 4096 * 4096,
            bytes_read=4 * (16 * 4096 + 4096 * 4096), bytes_written=4 * 16 * 4096, out_bytes=4 * 16 * 4096)
    cfg = _cfg((4,), 600, 800)
    assert dict(cpu_cost(no_bw, op, cfg).detail)["ddr_mhz"] == sd855.cpu.uncore.vote("ddr", {"mid": 800})
