"""``socsim fidelity`` end to end (in-process): console tables, JSON, Markdown, and bad input
(exit 2, a message naming file, field and value, nothing written)."""
from __future__ import annotations

import copy
import json

import pytest

from tests.e2e.cli_helpers import invoke
from tests.fidelity.helpers import SMALL, write


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    """A console as wide as a piped run's, whatever COLUMNS the test process has."""
    from rich.console import Console
    monkeypatch.setattr("socsim.cli.out_console", Console(highlight=False, width=200))


def test_console_json_and_markdown(tmp_path):
    m = write(tmp_path)
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    res = invoke("fidelity", str(m), "--json", str(out), "--markdown", str(md))
    assert res.exit_code == 0, res.output
    for needle in ("time MAPE", "energy MAPE", "tau time", "lenet-train", "lenet-inference", "1->4 threads"):
        assert needle in res.output
    report = json.loads(out.read_text())
    train, ratios = report["tables"]
    assert (train["n"], train["compare"], ratios["compare"], ratios["n"]) == (3, "absolute", "ratios", 1)
    assert train["energy_mape_pct"] is not None and -1 <= train["time_tau"] <= 1
    row = train["rows"][0]
    assert row["simulated_time_s"] > 0 and row["measured_time_s"] == 0.004
    q = ratios["ratios"][0]
    assert q["measured"] == 2.0 and q["simulated"] > 0 and q["error_pct"] == pytest.approx((q["simulated"] / 2 - 1) * 100, rel=1e-4)
    assert ratios["rows"][0]["mode"] == "inference"
    assert md.read_text().startswith(f"`socsim fidelity {m}`")
    again = invoke("fidelity", str(m), "--json", "-")
    assert again.exit_code == 0 and json.loads(again.output) == report   # deterministic, '-' is stdout alone


def test_rows_flag_prints_every_row(tmp_path):
    res = invoke("fidelity", str(write(tmp_path)), "--rows")
    assert res.exit_code == 0 and "every row" in res.output and "little1" in res.output


def _bad(tmp_path, data, *needles):
    m = write(tmp_path, data)
    out = tmp_path / "out" / "r.json"
    res = invoke("fidelity", str(m), "--json", str(out), "--quiet")
    assert res.exit_code == 2, res.output
    assert "internal error" not in res.output
    for n in (str(m), *needles):
        assert n in res.output, f"{n!r} not in {res.output}"
    assert not out.exists() and not (tmp_path / "out").exists()


def _changed(path, value):
    data = copy.deepcopy(SMALL)
    cur = data
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return data


def test_malformed_yaml(tmp_path):
    _bad(tmp_path, "format: socsim-fidelity/1\ntables: [\n", "malformed YAML")


def test_not_a_measurement_file(tmp_path):
    _bad(tmp_path, {"name": "x", "model": "lenet"}, "not a measurement file")


def test_unknown_format(tmp_path):
    _bad(tmp_path, _changed(("format",), "socsim-fidelity/9"), "field 'format'", "'socsim-fidelity/9'")


def test_unknown_soc(tmp_path):
    _bad(tmp_path, _changed(("tables", 0, "rows", 1, "soc"), "sd999"), "field 'tables.0.rows.1.soc'", "'sd999'",
         "unknown SoC")


def test_unknown_model(tmp_path):
    _bad(tmp_path, _changed(("tables", 0, "defaults", "model"), "gpt5"), "field 'tables.0.rows.0.model'", "'gpt5'",
         "unknown model")


def test_bad_value_names_the_row_field(tmp_path):
    _bad(tmp_path, _changed(("tables", 0, "rows", 0, "time_s"), -1), "field 'tables.0.rows.0.time_s'", "-1")


def test_ratio_naming_a_missing_row(tmp_path):
    _bad(tmp_path, _changed(("tables", 1, "ratios", 0, "den"), "8t"), "field 'tables.1.ratios.0.den'", "'8t'")


def test_row_socsim_cannot_run(tmp_path):
    _bad(tmp_path, _changed(("tables", 0, "rows", 0, "cores"), "big9"), "field 'tables.0.rows.0'", "big9")


def test_minenergy_table_with_unknown_framework(tmp_path):
    data = {"source": "s", "soc": "sd855", "model": "alexnet", "batch": 16, "input": [3, 224, 224],
            "framework": "Caffe", "levels": ["H"], "big_ghz": [2.4], "little_ghz": [1.8],
            "rows": {"BIG1": {"time_s": [4.2], "energy_j": [10.6]}}}
    _bad(tmp_path, data, "field 'framework'", "'Caffe'")
    data["framework"] = "MNN (CPU, FP32)"
    data["rows"]["BIG1"]["time_s"] = [4.2, 1.0]
    _bad(tmp_path, data, "time_s has 2 values for 1 levels")


def test_ncnn_list_errors_name_the_list_path(tmp_path):
    data = [{"device": "Qualcomm Snapdragon 888", "runs": [{"threads": 0, "powersave": 2, "gpu_device": -1,
                                                          "avg_ms": {"alexnet": 14.5}}]}]
    _bad(tmp_path, data, "field '0.runs.0.threads'", "0")


@pytest.mark.parametrize("batches", ["0", "-1"])
def test_batches_must_be_positive(tmp_path, batches):
    res = invoke("fidelity", str(write(tmp_path)), "--batches", batches)
    assert res.exit_code == 2 and "--batches" in res.output


@pytest.mark.parametrize("value", [1.5, -0.2])
def test_a_background_outside_0_1_names_the_row_field(tmp_path, value):
    data = _changed(("tables", 0, "rows", 0, "background"), {"big": value})
    _bad(tmp_path, data, "field 'tables.0.rows.0.background.big'", f"value {value}")


def test_an_ncnn_devices_background_outside_0_1_names_the_list_path(tmp_path):
    data = [{"device": "Qualcomm Snapdragon 888", "background": {"big": 1.5},
             "runs": [{"threads": 1, "powersave": 2, "gpu_device": -1, "avg_ms": {"alexnet": 14.5}}]}]
    _bad(tmp_path, data, "field '0.background.big'", "1.5")
