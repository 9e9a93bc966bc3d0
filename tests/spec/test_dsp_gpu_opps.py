"""DSP and GPU frequencies checked against their OPP tables: ``dsp.training_clock_mhz`` in a SoC
spec must be one of the DSP's OPPs and DSP/GPU OPPs must increase (socsim.spec.soc); a workload's
``dsp.freq_mhz`` outside the DSP's OPP range is exit 2 from validate --soc and run, one between
OPPs is floored to an OPP as ``cpu.freq`` is (socsim.engine.sim Engine, PlanContext.dsp_mhz)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from socsim.api import validate_on_soc
from socsim.engine.context import PlanContext
from socsim.engine.oracle import CostOracle
from socsim.errors import InputError
from socsim.spec import load_soc, workload_from_dict

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cli_helpers import invoke, write_workload  # noqa: E402


def _spec(tmp_path: Path, change) -> Path:
    data = yaml.safe_load((ROOT / "soc_specs" / "sd865.yaml").read_text())
    change(data)
    p = tmp_path / "soc.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


@pytest.mark.parametrize("mhz,word", [(99999, "above"), (1, "below"), (700, "not an")])
def test_training_clock_off_the_dsp_opps_is_exit_2(tmp_path, mhz, word):
    p = _spec(tmp_path, lambda d: d["dsp"].__setitem__("training_clock_mhz", mhz))
    r = invoke("validate", str(p))
    assert r.exit_code == 2, r.output
    for needle in ("soc.yaml", "dsp.training_clock_mhz", str(mhz), word, "500-1497 MHz"):
        assert needle in r.output, (needle, r.output)
    with pytest.raises(InputError):
        load_soc(str(p))


def test_training_clock_on_another_opp_is_fine(tmp_path):
    p = _spec(tmp_path, lambda d: d["dsp"].__setitem__("training_clock_mhz", 1171))
    assert load_soc(str(p)).dsp.training_clock_mhz == 1171


@pytest.mark.parametrize("unit", ["dsp", "gpu"])
def test_unsorted_unit_opps_are_exit_2(tmp_path, unit):
    p = _spec(tmp_path, lambda d: d[unit]["opps"].reverse())
    r = invoke("validate", str(p))
    assert r.exit_code == 2, r.output
    assert f"{unit}.opps" in r.output and "increasing" in r.output


@pytest.mark.parametrize("mhz,word", [(99999, "above"), (1, "below"), (499, "below")])
def test_workload_dsp_freq_outside_the_opps_is_exit_2(tmp_path, mhz, word):
    p = write_workload(tmp_path, dsp={"freq_mhz": mhz})
    assert invoke("validate", str(p)).exit_code == 0  # fine without a SoC...
    for args in (("validate", str(p), "--soc", "sd865"), ("run", "--soc", "sd865", str(p), "--quiet")):
        r = invoke(*args)
        assert r.exit_code == 2, r.output
        for needle in ("wl.yaml", "dsp.freq_mhz", word, "500-1497 MHz"):
            assert needle in r.output, (needle, r.output)


def test_workload_dsp_freq_from_set_is_marked():
    with pytest.raises(InputError) as e:
        validate_on_soc("sd865", str(ROOT / "workloads" / "quickstart.yaml"), overrides=["dsp.freq_mhz=99999"])
    assert e.value.field == "dsp.freq_mhz" and e.value.origin == "--set"


def test_workload_dsp_freq_on_a_soc_without_dsp_is_exit_2(tmp_path):
    p = write_workload(tmp_path, dsp={"freq_mhz": 500})
    r = invoke("validate", str(p), "--soc", "exynos9820")
    assert r.exit_code == 2, r.output
    assert "dsp.freq_mhz" in r.output and "no DSP" in r.output


def test_workload_dsp_freq_between_opps_is_floored():
    soc = load_soc("sd865")
    oracle = CostOracle(soc)

    def mhz(f):
        wl = workload_from_dict({"name": "t", "model": "lenet", "input": [1, 28, 28], "batch_size": 1,
                                 "batches": 1, "dsp": {"freq_mhz": f}})
        return PlanContext(soc, wl, oracle).dsp_mhz

    assert mhz(None) == 500.0 and mhz(800) == 500.0 and mhz(1171) == 1171.0 and mhz(1497) == 1497.0
    assert mhz(1450) == 1402.0
