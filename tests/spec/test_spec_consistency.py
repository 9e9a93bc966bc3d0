"""A spec that names what does not exist, or numbers no phone has, is bad input (exit 2, naming
the field) when it is loaded, not a crash or an internal error when it is simulated."""
from __future__ import annotations

import re

import pytest

import socsim
from socsim.errors import InputError
from socsim.spec import load_soc, soc_specs_dir

SD865 = (soc_specs_dir() / "sd865.yaml").read_text()


def _spec(tmp_path, old: str, new: str):
    text = SD865.replace(old, new, 1)
    assert text != SD865, old
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("old, new, field, words", [
    ("l1d: {size_kb: 32, assoc: 4", "l1d: {size_kb: 0.5, assoc: 16", r"cpu\.clusters\.\d\.l1d", "not even one set"),
    ("line_bytes: 64", "line_bytes: 3", r"cpu\.clusters\.\d\.l1d\.line_bytes", "power of two"),
    ("- {a: cpu_little, b: soc", "- {a: cpu_little, b: cpu_little", r"thermal\.links", "joins 'cpu_little' to itself"),
    ("trips_c: [90, 95], hysteresis_c: 2, caps: [mid, prime]}", "trips_c: [95, 90], hysteresis_c: 2, caps: [mid, prime]}",
     r"thermal\.zones", "trips_c must increase"),
    ("caps: [mid, prime]", "caps: [huge]", r"thermal\.zones\.0\.caps", "caps unknown cluster 'huge'"),
    ("cpu.mid: cpu_mid, ", "", r"thermal\.heat_sources", "no node for rail(s) cpu.mid"),
    ("gpu: gpu, ", "gpu: gpu, npu: soc, ", r"thermal\.heat_sources\.npu", "names npu, which is no rail"),
    ("cpu.mid: cpu_mid, ", "cpu.mid: cpu_mid, cpu.huge: soc, ", r"cpu\.clusters", "no cluster 'huge'"),
    ("- name: mid", "- name: middle", r"cpu\.clusters\.1\.name", "'middle' (rail cpu.middle) is in no"),
    ("  thermal_node: battery", "  thermal_node: nowhere", r"battery\.thermal_node", "'nowhere' is no thermal node"),
    ("leakage_mw_per_core: 6.0", "leakage_mw_per_core: .inf", r"cpu\.clusters\.0\.leakage_mw_per_core", "finite"),
    ("{freq_mhz: 300.0, voltage_mv: 584.0}", "{freq_mhz: 300.0, voltage_mv: 1400.0}", r"cpu\.clusters\.0\.opps",
     "voltages must not fall"),
    ("hvx_arch: v66", "hvx_arch: v99", r"dsp\.hvx_arch", "'v66'"),
])
def test_inconsistent_specs_are_input_errors(tmp_path, old, new, field, words):
    with pytest.raises(InputError) as e:
        load_soc(_spec(tmp_path, old, new))
    assert re.fullmatch(field, e.value.field), e.value.field
    assert words in e.value.message


@pytest.mark.parametrize("path, value, field", [
    ("environment.memory_budget_mb", float("nan"), "environment.memory_budget_mb"),
    ("environment.charger_w", float("inf"), "environment.charger_w"),
    ("scheduler.options.slack", float("inf"), "scheduler.options.slack"),
])
def test_non_finite_workload_values_are_input_errors(path, value, field):
    w = dict(name="t", model="lenet", input=[1, 28, 28], batch_size=16, batches=1,
             scheduler={"name": "min-energy"} if "slack" in path else {"name": "mnn-fp32"})
    with pytest.raises(InputError) as e:
        socsim.run("sd865", w, overrides={path: value})
    assert e.value.field == field and "finite" in e.value.message


def test_clusters_listed_big_first_are_refused(tmp_path):
    import yaml
    d = yaml.safe_load(SD865)
    d["cpu"]["clusters"] = d["cpu"]["clusters"][::-1]
    p = tmp_path / "rev.yaml"
    p.write_text(yaml.safe_dump(d))
    with pytest.raises(InputError) as e:
        load_soc(p)
    assert e.value.field == "cpu.clusters" and "from the little to the biggest" in e.value.message


def test_repeated_min_energy_configurations_are_refused():
    w = dict(name="t", model="lenet", input=[1, 28, 28], batch_size=16, batches=1)
    with pytest.raises(InputError, match="level given more than once"):
        socsim.run("sd855", {**w, "scheduler": {"name": "min-energy", "options": {"levels": ["high", "high"]}}})
    with pytest.raises(InputError, match="core set given more than once"):
        socsim.run("sd855", {**w, "scheduler": {"name": "min-energy", "options": {"core_sets": ["big4", "big4"]}}})


def test_a_set_value_that_is_not_utf8_is_an_input_error():
    w = dict(name="t", model="lenet", input=[1, 28, 28], batch_size=16, batches=1)
    with pytest.raises(InputError, match="not valid UTF-8") as e:
        socsim.run("sd865", w, overrides=["name=a\udcffb"])
    assert e.value.field == "--set"


@pytest.mark.parametrize("old, new, field, words", [
    ("leakage_doubling_c: 25", "leakage_doubling_c: 0.000001", r"thermal\.leakage_doubling_c", "greater than or equal"),
    ("    - {a: board, b: ambient, conductance_w_per_k: 0.03}\n", "", None, None),   # still linked via skin: fine
    ("    - {a: soc, b: board, conductance_w_per_k: 0.08}\n", "", r"thermal\.links", "no path of links to 'ambient'"),
    ("- name: little", "- name: ''", r"cpu\.clusters\.0\.name", "pattern"),
    ("trips_c: [90, 95], hysteresis_c: 2, caps: [little]", "trips_c: [-300], hysteresis_c: 2, caps: [little]",
     r"thermal\.zones\.2\.trips_c\.0", "greater than or equal"),
])
def test_physically_impossible_specs_are_input_errors(tmp_path, old, new, field, words):
    """Values that would run a simulated lifetime or overflow (isolated heat, leakage doubling
    every microdegree) are refused where they are written."""
    p = _spec(tmp_path, old, new)
    if field is None:
        load_soc(p)
        return
    with pytest.raises(InputError) as e:
        load_soc(p)
    assert re.fullmatch(field, e.value.field), e.value.field
    assert words in e.value.message


def test_battery_ocv_curve_must_rise_within_0_1(tmp_path):
    text = SD865
    import yaml as _y
    data = _y.safe_load(text)
    for curve, words in (([[0.0, -3.8], [1.0, -3.0]], "positive"), ([[0.0, 3.4], [1.5, 4.3]], "within 0..1"),
                         ([[0.0, 4.3], [1.0, 3.4]], "rise with the charge")):
        data["battery"]["ocv_soc"] = curve
        p = tmp_path / "s.yaml"
        p.write_text(_y.safe_dump(data))
        with pytest.raises(InputError) as e:
            load_soc(p)
        assert e.value.field == "battery.ocv_soc" and words in e.value.message
