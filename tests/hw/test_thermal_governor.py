"""Step-wise throttling: caps never above the OPP range, trips and release with hysteresis,
and the closed loop power -> RC network -> governor keeps the junction near its trip."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.hw.power import SocPower, cpu_rail
from socsim.hw.thermal import ThermalNetwork, ThrottleGovernor
from socsim.spec import load_soc


@pytest.fixture(scope="module")
def soc():
    return load_soc("sd865")


@pytest.fixture(scope="module")
def gov(soc):
    return ThrottleGovernor(soc.thermal, soc.cpu.clusters)


def temps(**kw: float) -> dict[str, float]:
    base = {"cpu-1-0": 40.0, "cpu-1-2": 40.0, "cpu-0-0": 40.0, "skin-therm": 30.0, "battery": 30.0}
    base.update({k.replace("_", "-"): v for k, v in kw.items()})
    return base


def opp_index(soc, cluster: str, mhz: float) -> int:
    return [o.freq_mhz for o in soc.cluster(cluster).opps].index(mhz)


def test_cool_phone_is_uncapped(soc, gov):
    d = gov.update(gov.initial_state(), temps())
    assert d.caps_mhz == {c.name: c.max_mhz for c in soc.cpu.clusters}
    assert d.events == ()


def test_trip_steps_down_while_rising_and_releases_with_hysteresis(soc, gov):
    s = gov.initial_state()
    top = len(soc.cluster("mid").opps) - 1
    # rising through the first trip: one more OPP step per poll
    seen = []
    for t in (89.0, 90.0, 90.5, 91.0, 91.5):
        d = gov.update(s, temps(cpu_1_0=t))
        s = d.state
        seen.append(opp_index(soc, "mid", d.caps_mhz["mid"]))
        if t == 90.0:
            assert [(e.zone, e.trip, e.direction) for e in d.events] == [("cpu-1-0", 0, "up")]
    assert seen[0] == top and seen[1] == top - 1
    assert all(b <= a for a, b in zip(seen, seen[1:]))
    # the first of two trips reaches at most half the OPP range
    assert seen[-1] >= top - (-(-top // 2))
    assert d.caps_mhz["prime"] < soc.cluster("prime").max_mhz   # the big zone caps prime too
    assert d.caps_mhz["little"] == soc.cluster("little").max_mhz
    held = seen[-1]
    # falling inside the hysteresis band (trip 90, hysteresis 2): hold, no release
    for t in (90.5, 89.0, 88.5, 88.1):
        d = gov.update(s, temps(cpu_1_0=t))
        s = d.state
        assert opp_index(soc, "mid", d.caps_mhz["mid"]) == held
        assert d.events == ()
    # below trip - hysteresis: the trip clears and steps come back one per poll
    d = gov.update(s, temps(cpu_1_0=87.9))
    assert [(e.trip, e.direction) for e in d.events] == [(0, "down")]
    s = d.state
    released = [opp_index(soc, "mid", d.caps_mhz["mid"])]
    for _ in range(10):
        d = gov.update(s, temps(cpu_1_0=87.9))
        s = d.state
        released.append(opp_index(soc, "mid", d.caps_mhz["mid"]))
    assert released[0] == held + 1
    assert all(b == min(a + 1, top) for a, b in zip(released, released[1:]))
    assert released[-1] == top


def test_second_trip_and_floor(soc, gov):
    d = gov.update(gov.initial_state(), temps(cpu_1_2=96.0))   # crosses both trips at once
    assert [e.trip for e in d.events] == [0, 1]
    assert opp_index(soc, "mid", d.caps_mhz["mid"]) <= len(soc.cluster("mid").opps) - 1 - 2
    s = d.state
    for _ in range(30):
        s = gov.update(s, temps(cpu_1_2=97.0)).state
    caps = gov.caps_mhz(s)
    assert caps["mid"] == soc.cluster("mid").min_mhz and caps["prime"] == soc.cluster("prime").min_mhz


def test_first_skin_trip_is_gentle(soc, gov):
    s = gov.initial_state()
    for t in np.linspace(39.0, 40.0, 40):
        s = gov.update(s, temps(skin_therm=float(t))).state
    # six skin trips share the OPP range: the first removes at most ceil(7/6) = 2 steps
    assert opp_index(soc, "mid", gov.caps_mhz(s)["mid"]) == len(soc.cluster("mid").opps) - 1 - 2


def test_zone_without_caps_only_reports(gov):
    d = gov.update(gov.initial_state(), temps(battery=61.0))
    assert [(e.zone, e.direction) for e in d.events] == [("battery", "up")]
    assert d.caps_mhz == gov.uncapped()


def test_per_zone_polling(soc):
    g = ThrottleGovernor(soc.thermal, soc.cpu.clusters, polling_s={"skin-therm": 5.0})
    s = g.update(g.initial_state(), temps(skin_therm=44.0), time_s=0.0).state
    steps0 = s.zones[3].steps
    for k in range(1, 19):            # 0.25 .. 4.5 s: the skin zone is not polled again
        s = g.update(s, temps(skin_therm=44.0 + 0.1 * k), time_s=0.25 * k).state
    assert s.zones[3].steps == steps0
    s = g.update(s, temps(skin_therm=46.5), time_s=5.0).state
    assert s.zones[3].steps > steps0


def test_clamp(gov):
    caps = {"mid": 1804.8}
    assert gov.clamp(caps, "mid", 2419.2) == 1804.8
    assert gov.clamp(caps, "mid", 1056.0) == 1056.0
    assert gov.clamp(caps, "little", 1804.8) == 1804.8


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(20.0, 120.0), st.floats(20.0, 120.0), st.floats(20.0, 60.0)),
                min_size=1, max_size=60),
       st.sampled_from(["little", "mid", "prime"]), st.floats(300.0, 4000.0))
def test_caps_never_above_range_and_clamp_never_raises(soc, gov, seq, cluster, request_mhz):
    s = gov.initial_state()
    opps = {c.name: [o.freq_mhz for o in c.opps] for c in soc.cpu.clusters}
    ever_tripped = False
    for mid_t, prime_t, skin_t in seq:
        d = gov.update(s, temps(cpu_1_0=mid_t, cpu_1_2=prime_t, skin_therm=skin_t))
        s = d.state
        ever_tripped |= any(z.tripped for z in s.zones)
        for name, cap in d.caps_mhz.items():
            assert cap in opps[name] and cap <= opps[name][-1]
        f = gov.clamp(d.caps_mhz, cluster, request_mhz)
        assert f <= d.caps_mhz[cluster] and f <= request_mhz
        for z, zs in zip(soc.thermal.zones, s.zones):
            assert zs.steps >= zs.tripped or not z.caps
    if not ever_tripped:
        assert gov.caps_mhz(s) == gov.uncapped()


def junction_zones_only(soc):
    """The spec with its node zones only (the sm8250 junction trips, the skin and battery zones),
    without the virtual skin sensor (tests/hw/test_thermal_virtual.py closes that loop)."""
    th = soc.thermal.model_copy(update={"zones": [z for z in soc.thermal.zones if z.sensors is None]})
    return soc.model_copy(update={"thermal": th})


def _run(soc, seconds: float, busy: dict[str, float], dsp_w: float = 0.0, governor: bool = True):
    """Closed loop at the 250 ms governor period: power (leakage from node temperature) ->
    network -> zone temperatures -> caps -> frequency."""
    net = ThermalNetwork(soc.thermal, 25.0)
    sp = SocPower.from_spec(soc)
    gov = ThrottleGovernor(soc.thermal, soc.cpu.clusters)
    s, caps = gov.initial_state(), gov.uncapped()
    t = net.initial_temps()
    node = {c.name: net.index(f"cpu_{c.name}") for c in soc.cpu.clusters}
    dt, peak, min_cap = 0.25, -np.inf, dict(caps)
    for k in range(int(seconds / dt)):
        rails = {}
        for c in soc.cpu.clusters:
            rails[cpu_rail(c.name)] = sum(sp.units[cpu_rail(c.name)].power_mw(
                caps[c.name], busy.get(c.name, 0.0), 0.9, t[node[c.name]])) / 1e3
        rails.update(cdsp=dsp_w, dram=sum(sp.dram_mw(2e9)) / 1e3, platform=sp.platform_mw()[1] / 1e3)
        t = net.advance(t, net.node_power(rails), dt)
        peak = max(peak, t[node["mid"]], t[node["prime"]])
        if governor:
            d = gov.update(s, net.zone_temps(t), (k + 1) * dt)
            s, caps = d.state, d.caps_mhz
            min_cap = {n: min(min_cap[n], caps[n]) for n in caps}
    return peak, min_cap


def test_closed_loop_cpu_training_throttles_near_trip(soc):
    soc = junction_zones_only(soc)
    busy = {"mid": 3, "prime": 1}
    peak_free, _ = _run(soc, 900.0, busy, governor=False)
    peak, min_cap = _run(soc, 900.0, busy)
    assert peak_free > 95.0                       # unthrottled, it would pass the trips
    assert 90.0 <= peak <= 93.0                   # throttled, the junction stays near the first trip
    assert min_cap["mid"] < soc.cluster("mid").max_mhz
    assert min_cap["little"] == soc.cluster("little").max_mhz


def test_closed_loop_dsp_training_never_throttles(soc):
    soc = junction_zones_only(soc)
    peak, min_cap = _run(soc, 1800.0, {"little": 0.3, "mid": 0.2}, dsp_w=1.3)
    assert peak < 60.0
    assert min_cap == {c.name: c.max_mhz for c in soc.cpu.clusters}
