"""End-to-end: the CLI as a user runs it (in process, via click's runner)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from socsim.cli import main
from socsim.spec import list_socs

from cli_helpers import write_workload

ROOT = Path(__file__).resolve().parents[2]
QUICK = str(ROOT / "workloads" / "quickstart.yaml")
SUMMARY_KEYS = {"soc", "workload", "scheduler", "batches", "sim_time_s", "per_batch", "energy_j", "thermal",
                "placement", "memory", "wall_time_s", "socsim_version"}


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_quickstart_json_has_contract_keys(tmp_path):
    out = tmp_path / "out.json"
    r = invoke("run", "--soc", "sd865", QUICK, "--json", str(out))
    assert r.exit_code == 0, r.output
    s = json.loads(out.read_text())
    assert SUMMARY_KEYS <= set(s)
    assert set(s["per_batch"]) >= {"time_s", "energy_j"}
    assert set(s["energy_j"]) >= {"total", "training", "rails"}
    assert set(s["thermal"]) >= {"peak_c", "final_c"}
    assert set(s["placement"]) >= {"cpu_ops", "dsp_ops", "gpu_ops", "switches"}
    assert s["batches"] == 2000 and s["per_batch"]["time_s"] > 0
    # rails sum to the total
    assert sum(s["energy_j"]["rails"].values()) == pytest.approx(s["energy_j"]["total"], rel=1e-6)
    assert 0 < s["energy_j"]["training"] < s["energy_j"]["total"]
    assert "quickstart" in r.output  # the console table


def test_json_to_stdout_is_pure_json():
    r = invoke("run", "--soc", "sd865", QUICK, "--json", "-", "--set", "batches=5")
    assert r.exit_code == 0
    assert json.loads(r.output)["batches"] == 5


@pytest.mark.parametrize("cmd", [["run", "--soc", "sd865", QUICK, "--set", "batches=3"],
                                 ["compare", "--soc", "sd865", QUICK, "--schedulers", "pytorch,mnn-fp32",
                                  "--set", "batches=2"]])
def test_json_to_a_path_that_is_stdout_is_pure_json(cmd, tmp_path):
    """``--json /dev/stdout`` gets what '-' gets: the JSON alone, no table printed after it
    (stdout a pipe, as in ``socsim run ... --json /dev/stdout | jq``)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "socsim.cli", *cmd, "--json", "/dev/stdout"],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    json.loads(r.stdout)


@pytest.mark.parametrize("soc", list_socs())
def test_quickstart_runs_on_every_soc(soc, tmp_path):
    out = tmp_path / "s.json"
    r = invoke("run", "--soc", soc, QUICK, "--json", str(out), "--set", "batches=20", "--quiet")
    assert r.exit_code == 0, r.output
    s = json.loads(out.read_text())
    assert s["soc"] == soc and s["per_batch"]["time_s"] > 0 and s["energy_j"]["total"] > 0


def test_set_overrides_change_the_run(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    invoke("run", "--soc", "sd865", QUICK, "--json", str(a), "--set", "batches=10", "--quiet")
    invoke("run", "--soc", "sd865", QUICK, "--json", str(b), "--set", "batches=10", "--set", "batch_size=64",
           "--set", "cpu.cores=little1", "--quiet")
    sa, sb = json.loads(a.read_text()), json.loads(b.read_text())
    assert sb["batch_size"] == 64 and sb["placement"]["cpu_cores"] == [0]
    assert sb["per_batch"]["time_s"] > 2 * sa["per_batch"]["time_s"]


def test_runs_are_deterministic(tmp_path):
    dirs = []
    for name in ("r1", "r2"):
        d = tmp_path / name
        r = invoke("run", "--soc", "sd865", QUICK, "--out", str(d), "--deterministic", "--quiet",
                   "--set", "batches=30")
        assert r.exit_code == 0, r.output
        dirs.append(d)
    for f in ("summary.json", "timeseries.csv", "ops.csv", "trace.perfetto-trace"):
        assert (dirs[0] / f).read_bytes() == (dirs[1] / f).read_bytes(), f


def test_out_dir_and_report_regeneration(tmp_path):
    d = tmp_path / "run"
    r = invoke("run", "--soc", "sd865", QUICK, "--out", str(d), "--quiet", "--set", "batches=20")
    assert r.exit_code == 0, r.output
    for f in ("summary.json", "timeseries.csv", "trace.perfetto-trace", "report.html"):
        assert (d / f).stat().st_size > 0, f
    (d / "report.html").unlink()
    r = invoke("report", str(d))
    assert r.exit_code == 0 and (d / "report.html").exists()
    assert not list(tmp_path.glob(".run.*")), "temporary run directory left behind"


def test_trace_option_writes_only_the_trace(tmp_path):
    t = tmp_path / "t.perfetto-trace"
    r = invoke("run", "--soc", "sd865", QUICK, "--trace", str(t), "--quiet", "--set", "batches=5")
    assert r.exit_code == 0, r.output
    assert t.stat().st_size > 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.perfetto-trace"]


def test_validate_and_list():
    assert invoke("validate", QUICK).exit_code == 0
    for what in ("socs", "schedulers", "models", "workloads"):
        r = invoke("list", what)
        assert r.exit_code == 0, (what, r.output)
    assert "sd865" in invoke("list", "socs").output
    assert "mnn-fp32" in invoke("list", "schedulers").output


@pytest.mark.parametrize("unit", ["cpu", "dsp", "gpu"])
def test_op_profiles_one_operator(unit, tmp_path):
    out = tmp_path / "op.json"
    r = invoke("op", "--soc", "sd865", "--unit", unit, "conv2d", "--batch", "4", "--in", "64x16x16",
               "--out-channels", "64", "--kernel", "3", "--json", str(out))
    assert r.exit_code == 0, r.output
    res = json.loads(out.read_text())
    assert res["time_s"] > 0 and res["cycles"] > 0 and res["bytes"] > 0
    assert res["macs"] == 4 * 64 * 64 * 9 * 16 * 16


def test_bad_input_exits_2_and_writes_nothing(tmp_path):
    out, d = tmp_path / "o.json", tmp_path / "run"
    r = CliRunner().invoke(main, ["run", "--soc", "sd865", QUICK, "--set", "batch_size=-3",
                                  "--json", str(out), "--out", str(d)])
    assert r.exit_code == 2
    assert "batch_size" in r.output and "-3" in r.output
    assert not out.exists() and not d.exists()
    assert list(tmp_path.iterdir()) == []


def test_builtin_workload_by_bare_name_from_any_directory(tmp_path, monkeypatch):
    """`socsim list workloads` shows file names; a bare one (with or without .yaml) that is not in
    the working directory is the built-in workload."""
    monkeypatch.chdir(tmp_path)
    for name in ("quickstart", "quickstart.yaml"):
        r = CliRunner().invoke(main, ["run", "--soc", "sd865", name, "--set", "batches=2", "--json", "-"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["workload"] == "quickstart-lenet"
        r = CliRunner().invoke(main, ["validate", name])
        assert r.exit_code == 0 and "quickstart-lenet" in r.output, r.output
    # a file of that name in the working directory comes first
    write_workload(tmp_path, name="mine").rename(tmp_path / "quickstart.yaml")
    r = CliRunner().invoke(main, ["run", "--soc", "sd865", "quickstart.yaml", "--json", "-"])
    assert r.exit_code == 0 and json.loads(r.output)["workload"] == "mine", r.output


def test_missing_workload_points_at_the_list(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("nosuch", "nosuch.yaml", "./quickstart.yaml", "sub/quickstart.yaml"):
        r = CliRunner().invoke(main, ["run", "--soc", "sd865", name, "--quiet"])
        assert r.exit_code == 2, r.output
        out = " ".join(r.output.split())
        assert f"{name}: file not found" in out and "socsim list workloads" in out
