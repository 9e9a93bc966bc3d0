"""The GPU's devfreq governor (simple_ondemand) and the GPU as a thermal cooling device."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from socsim.errors import InputError
from socsim.hw import gpu_dvfs
from socsim.hw.thermal import ThrottleGovernor
from socsim.spec import load_soc

OPPS = (257.0, 345.0, 427.0, 499.0, 587.0)


def test_simple_ondemand_thresholds():
    f = gpu_dvfs.next_freq
    assert f("simple_ondemand", OPPS, 257.0, 0.95) == 587.0          # above 90 %: top
    assert f("simple_ondemand", OPPS, 427.0, 0.87) == 427.0          # 85-90 %: hold
    # 50 % at 587 MHz: 587 x 50 / 87.5 = 335 MHz, rounded up to the 345 MHz OPP
    assert f("simple_ondemand", OPPS, 587.0, 0.50) == 345.0
    assert f("simple_ondemand", OPPS, 587.0, 0.0) == 257.0
    assert f("performance", OPPS, 257.0, 0.1) == 587.0
    with pytest.raises(ValueError):
        f("ondemand", OPPS, 587.0, 0.5)


@settings(max_examples=200, deadline=None)
@given(cur=hs.sampled_from(OPPS), load=hs.floats(0, 1), more=hs.floats(0, 1))
def test_simple_ondemand_is_an_opp_and_monotone_in_load(cur, load, more):
    a = gpu_dvfs.next_freq("simple_ondemand", OPPS, cur, load)
    b = gpu_dvfs.next_freq("simple_ondemand", OPPS, cur, min(1.0, load + more))
    assert a in OPPS and b in OPPS and b >= a


def test_gpu_zone_caps_the_gpu_over_its_range():
    soc = load_soc("sd865")
    zone = next(z for z in soc.thermal.zones if z.name == "gpuss-0")
    assert zone.trips_c == [90] and zone.caps == ["gpu"]
    gov = ThrottleGovernor(soc.thermal, soc.cpu.clusters, gpu=soc.gpu)
    st = gov.initial_state()
    assert gov.caps_mhz(st)["gpu"] == 587.0
    temps = {z.name: 30.0 for z in soc.thermal.zones}   # below every other trip
    for k in range(6):                      # hot and rising: one more step per poll
        temps["gpuss-0"] = 91.0 + k
        dec = gov.update(st, temps)
        st = dec.state
    assert dec.caps_mhz["gpu"] == 257.0     # THERMAL_NO_LIMIT: down to the lowest OPP
    assert all(dec.caps_mhz[c.name] == c.max_mhz for c in soc.cpu.clusters)   # the CPU is not capped
    temps["gpuss-0"] = 80.0                 # below trip - hysteresis: released a step per poll
    dec = gov.update(st, temps)
    assert dec.caps_mhz["gpu"] == 345.0


def test_zone_capping_a_missing_gpu_is_an_input_error(tmp_path):
    import yaml
    from socsim.spec import load_soc as load
    soc = load_soc("sd865").model_dump(mode="json")
    soc.pop("gpu")
    soc["thermal"]["heat_sources"].pop("gpu")
    p = tmp_path / "nogpu.yaml"
    p.write_text(yaml.safe_dump(soc))
    with pytest.raises(InputError) as e:
        load(str(p))
    assert "gpu" in str(e.value)


def test_gpu_thresholds_are_checked(tmp_path):
    import yaml
    soc = load_soc("sd865").model_dump(mode="json")
    soc["gpu"]["governor_downdifferential"] = 95
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(soc))
    with pytest.raises(InputError) as e:
        load_soc(str(p))
    assert "governor_downdifferential" in str(e.value)


def test_a_partly_idle_gpu_is_clocked_down_by_the_engine():
    # Sage's MobileNetV2 leaves the GPU idle part of each batch (CPU work between its kernels):
    # simple_ondemand lowers the clock after the first batch, so later batches take longer and
    # the GPU rail draws less than under the performance governor (the old fixed top OPP)
    from socsim.api import run
    soc = load_soc("sd865")
    perf = soc.model_copy(update={"gpu": soc.gpu.model_copy(update={"governor": "performance"})})
    wl = Path(__file__).resolve().parents[2] / "workloads" / "sage_mobilenetv2.yaml"
    kw = dict(overrides=["batches=3"], reports=False, deterministic=True)
    a = run(soc, wl, **kw).summary
    b = run(perf, wl, **kw).summary
    assert a["sim_time_s"] > b["sim_time_s"]
    assert a["energy_j"]["rails"]["gpu"] < b["energy_j"]["rails"]["gpu"]
