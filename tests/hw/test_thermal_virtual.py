"""Virtual thermal zones (a weighted sum, maximum or minimum of nodes, as Qualcomm's thermal-engine
``algo_type virtual`` and the msm kernel's qti_virtual_sensor compute them) and table zones (a
frequency cap per trip, thermal-engine's trig/clr/target tables): docs/modeling.md, Thermal."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.errors import InputError
from socsim.hw.thermal import ThermalNetwork, ThrottleGovernor, ZoneReader
from socsim.spec import load_soc, soc_specs_dir
from socsim.spec.soc import ThermalZone

SD865 = (soc_specs_dir() / "sd865.yaml").read_text()


@pytest.fixture(scope="module")
def soc():
    return load_soc("sd865")


def _zone(**kw) -> ThermalZone:
    return ThermalZone(name="vz", **kw)


def _net(soc, zones):
    spec = soc.thermal.model_copy(update={"zones": zones})
    return ThermalNetwork(spec, 25.0), spec


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(20.0, 110.0), min_size=9, max_size=9),
       st.lists(st.floats(-2.0, 2.0), min_size=3, max_size=3), st.floats(-5.0, 5.0))
def test_weighted_zone_reads_the_weighted_sum_plus_offset(temps, w, off):
    soc = load_soc("sd865")
    z = _zone(sensors={"soc": w[0], "board": w[1], "battery": w[2]}, offset_c=off)
    net, _ = _net(soc, [z])
    t = np.array([temps])
    got = ZoneReader(net, [z]).read(t)[0, 0]
    want = w[0] * t[0, net.index("soc")] + w[1] * t[0, net.index("board")] + w[2] * t[0, net.index("battery")] + off
    assert got == pytest.approx(want, rel=1e-12, abs=1e-9)


def test_max_and_min_zones(soc):
    zmax = _zone(sensors={"cpu_mid": 1.0, "cpu_prime": 1.0}, math="max")
    zmin = ThermalZone(name="lo", sensors={"cpu_mid": 1.0, "cpu_prime": 1.0}, math="min")
    net, _ = _net(soc, [zmax, zmin])
    t = net.initial_temps()[None, :].copy()
    t[0, net.index("cpu_mid")], t[0, net.index("cpu_prime")] = 71.0, 83.0
    assert ZoneReader(net, [zmax, zmin]).read(t).tolist() == [[83.0, 71.0]]


def test_node_zones_read_their_node_bit_for_bit(soc):
    """Without virtual zones the readings are the node columns themselves (outputs unchanged)."""
    net = ThermalNetwork(soc.thermal, 25.0)
    zones = [z for z in soc.thermal.zones if z.node is not None]
    rng = np.random.default_rng(0)
    t = 25.0 + 70.0 * rng.random((50, len(net.node_names)))
    got = ZoneReader(net, zones).read(t)
    want = t[:, [net.index(z.node) for z in zones]]
    assert np.array_equal(got, want)
    # with a virtual zone beside them, the node zones still read their nodes exactly
    vz = _zone(sensors={"board": 0.5, "skin": 0.5})
    got2 = ZoneReader(net, zones + [vz]).read(t)
    assert np.array_equal(got2[:, :len(zones)], want)
    assert np.allclose(got2[:, -1], 0.5 * t[:, net.index("board")] + 0.5 * t[:, net.index("skin")])


def test_zone_temps_includes_virtual_zones(soc):
    z = _zone(sensors={"skin": 1.0}, offset_c=2.0)
    net, _ = _net(soc, list(soc.thermal.zones) + [z])
    temps = net.initial_temps()
    temps[net.index("skin")] = 40.0
    assert net.zone_temps(temps)["vz"] == pytest.approx(42.0)


# -- table zones --------------------------------------------------------------------------------

MI10 = [1862.4, 1766.4, 1574.4, 1478.4, 1286.4, 710.4]   # Mi 10 Pro SS-CPU4 targets (kHz / 1000)


def _table_gov(soc, clear=None, polling_s=1.0):
    z = _zone(sensors={"board": 1.0}, trips_c=[37, 38, 39, 41, 43, 49],
              clear_c=clear, hysteresis_c=2.0, caps=["mid", "prime"],
              targets_mhz={"mid": MI10, "prime": MI10}, polling_s=polling_s)
    spec = soc.thermal.model_copy(update={"zones": [z]})
    return ThrottleGovernor(spec, soc.cpu.clusters)


def test_table_zone_caps_at_the_highest_opp_at_or_below_each_target(soc):
    gov = _table_gov(soc, clear=[35, 37, 38, 39, 41, 47])
    mid = [o.freq_mhz for c in soc.cpu.clusters if c.name == "mid" for o in c.opps]
    st_ = gov.initial_state()
    want_mid = {37: 1804.8, 38: 1574.4, 39: 1574.4, 41: 1286.4, 43: 1286.4, 49: 710.4}
    want_prime = {37: 1862.4, 38: 1478.4, 39: 1478.4, 41: 1478.4, 43: 1171.2, 49: 844.8}   # lowest OPP
    t = 0.0
    for trip in [37, 38, 39, 41, 43, 49]:
        t += 1.0
        dec = gov.update(st_, {"vz": trip + 0.1}, t)
        st_ = dec.state
        assert dec.caps_mhz["mid"] == want_mid[trip] and want_mid[trip] in mid
        assert dec.caps_mhz["prime"] == want_prime[trip]
        assert dec.caps_mhz["little"] == 1804.8          # not a capped cluster


def test_table_zone_jumps_levels_at_once_and_clears_per_trip(soc):
    gov = _table_gov(soc, clear=[35, 37, 38, 39, 41, 47])
    st_ = gov.initial_state()
    dec = gov.update(st_, {"vz": 43.5}, 1.0)          # five trips in one poll: level 5 at once
    assert dec.state.zones[0].steps == 5 and dec.caps_mhz["mid"] == 1286.4
    assert [e.trip for e in dec.events] == [0, 1, 2, 3, 4]
    dec = gov.update(dec.state, {"vz": 41.5}, 2.0)    # below 43 but not below its clear (41): hold
    assert dec.state.zones[0].steps == 5
    dec = gov.update(dec.state, {"vz": 40.9}, 3.0)    # below 41 clears trip 4; 40.9 >= 39: trip 3 holds
    assert dec.state.zones[0].steps == 4 and dec.caps_mhz["mid"] == 1286.4   # 1478.4 -> OPP 1286.4
    dec = gov.update(dec.state, {"vz": 34.0}, 4.0)    # every trip clears at once: no cap
    assert dec.state.zones[0].steps == 0 and dec.caps_mhz["mid"] == 2419.2
    assert [e.direction for e in dec.events] == ["down"] * 4


def test_table_zone_default_clear_is_trip_minus_hysteresis(soc):
    gov = _table_gov(soc)
    dec = gov.update(gov.initial_state(), {"vz": 37.0}, 1.0)
    assert dec.state.zones[0].steps == 1
    assert gov.update(dec.state, {"vz": 35.01}, 2.0).state.zones[0].steps == 1
    assert gov.update(dec.state, {"vz": 34.99}, 2.0).state.zones[0].steps == 0


def test_table_zone_polls_at_its_own_period(soc):
    gov = _table_gov(soc, polling_s=1.0)
    dec = gov.update(gov.initial_state(), {"vz": 30.0}, 1.0)
    assert gov.update(dec.state, {"vz": 50.0}, 1.5).state.zones[0].steps == 0   # not polled yet
    assert gov.update(dec.state, {"vz": 50.0}, 2.0).state.zones[0].steps == 6


# -- bad input ----------------------------------------------------------------------------------

GPU_ZONE = "    - {name: gpuss-0, node: gpu, trips_c: [90], hysteresis_c: 2, caps: [gpu]}"


def _spec_with(tmp_path, zone: str):
    assert GPU_ZONE in SD865
    p = tmp_path / "s.yaml"
    p.write_text(SD865.replace(GPU_ZONE, GPU_ZONE + "\n    - " + zone, 1))
    return p


@pytest.mark.parametrize("zone, words", [
    ("{name: v, node: skin, sensors: {skin: 1.0}}", "not both"),
    ("{name: v}", "not neither"),
    ("{name: v, sensors: {}}", "sensors is empty"),
    ("{name: v, sensors: {nowhere: 1.0}}", "unknown node 'nowhere'"),
    ("{name: v, sensors: {skin: .nan}}", "finite"),
    ("{name: v, sensors: {skin: 1000.0}}", "outside -100..100"),
    ("{name: v, node: skin, trips_c: [40, 45], clear_c: [38]}", "clear_c has 1 values for the 2 trips of trips_c"),
    ("{name: v, node: skin, trips_c: [40, 45], clear_c: [38, 46]}", "clear_c[1] = 46.0 is above its trip"),
    ("{name: v, node: skin, trips_c: [40], caps: [mid], targets_mhz: {prime: [1000]}}", "names 'prime', which caps"),
    ("{name: v, node: skin, trips_c: [40], caps: [mid], targets_mhz: {mid: [1000, 900]}}", "2 values for 1 trips"),
    ("{name: v, node: skin, trips_c: [40], caps: [mid, prime], targets_mhz: {mid: [1000]}}",
     "gives no frequencies for them"),
])
def test_bad_virtual_or_table_zones_are_input_errors(tmp_path, zone, words):
    with pytest.raises(InputError) as e:
        load_soc(_spec_with(tmp_path, zone))
    assert "thermal" in e.value.field
    assert words in e.value.message, e.value.message


# -- the engine's closed loop -------------------------------------------------------------------

@pytest.mark.slow
def test_sustained_cpu_fp32_training_runs_the_big_cores_at_about_half_clock(tmp_path):
    """Issue 26 (item 6): phones run their big cores at about half clock under sustained CPU
    FP32 training, within minutes (docs/validation.md, Thermal).  On sd865 the virtual skin sensor
    caps the big clusters long before a junction reaches the sm8250 90 C trip."""
    import csv

    import socsim
    from socsim.spec import load_soc as _load

    soc = _load("sd865")
    top = {c.name: c.max_mhz for c in soc.cpu.clusters}
    wl = soc_specs_dir().parent / "workloads" / "thermal_cpu_fp32.yaml"
    res = socsim.run("sd865", wl, overrides={"batches": 100}, out=tmp_path, deterministic=True)
    rows = list(csv.DictReader(open(tmp_path / "timeseries.csv")))
    t = np.array([float(r["t_s"]) for r in rows])
    # the four big cores' clock (three mid, one prime) as a share of their top clocks
    share = np.array([(3 * float(r["cpufreq.mid"]) + float(r["cpufreq.prime"]))
                      / (3 * top["mid"] + top["prime"]) for r in rows])
    low = np.flatnonzero(share <= 0.62)
    assert len(low) and t[low[0]] <= 300.0, "big cores not at about half clock within 5 minutes"
    # the caps alternate between the sensor's first two levels for a few minutes, then hold at
    # the second (61% of top: mid 1574.4, prime 1478.4 MHz)
    assert share[low[0]:].mean() <= 0.66
    assert (share[t >= t[-1] - 60.0] <= 0.62).all()
    th = res.summary["thermal"]
    assert th["zones_peak_c"]["cpu-1-2"] < 90.0                   # no junction trip: the skin sensor acts first
    # the sensor regulates itself a few trips up: it crosses the first trip (37 C) and stays below
    # the last (49 C, where the cap would drop to 710.4 MHz)
    assert 37.0 <= th["zones_peak_c"]["VIRTUAL-SENSOR"] < 49.0
    assert th["time_throttled_s"] > 0.5 * res.summary["sim_time_s"]
