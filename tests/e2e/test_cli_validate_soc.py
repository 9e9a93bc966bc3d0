"""``socsim validate W.yaml --soc S``: also plans the workload on the SoC (no batch run), so
errors that depend on the phone exit 2 from validate, as they would from run."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import socsim.engine.sim
from socsim.cli import main

ROOT = Path(__file__).resolve().parents[2]
from cli_helpers import invoke, write_workload as _wl  # noqa: E402


BAD_ON_SD865 = {
    "foreground core the SoC lacks": (dict(environment={"foreground_load": {"cores": [12], "duration_s": 1}}),
                                      ["environment.foreground_load", "12"]),
    "sage budget below its minimum": (dict(scheduler={"name": "sage"}, environment={"memory_budget_mb": 0.5}),
                                      ["environment.memory_budget_mb", "0.5", "minimum"]),
    "cores the SoC lacks": (dict(cpu={"cores": [4, 9]}), ["cpu.cores"]),
}


@pytest.mark.parametrize("case", sorted(BAD_ON_SD865))
def test_soc_dependent_errors_exit_2_with_soc(tmp_path, case):
    changes, needles = BAD_ON_SD865[case]
    p = _wl(tmp_path, **changes)
    assert invoke("validate", str(p)).exit_code == 0  # fine on its own...
    r = invoke("validate", str(p), "--soc", "sd865")  # ...but not on this phone
    assert r.exit_code == 2, r.output
    assert "wl.yaml" in r.output and "internal error" not in r.output
    for n in needles:
        assert n in r.output, (n, r.output)
    # and run agrees
    r = invoke("run", "--soc", "sd865", str(p), "--quiet")
    assert r.exit_code == 2, r.output


def test_good_workload_plans_without_running(tmp_path, monkeypatch):
    def no_batches(self):
        raise AssertionError("validate --soc ran the simulation")
    monkeypatch.setattr(socsim.engine.sim.Engine, "run", no_batches)
    r = CliRunner().invoke(main, ["validate", str(ROOT / "workloads" / "quickstart.yaml"), "--soc", "sd865"],
                           terminal_width=300)
    assert r.exit_code == 0, r.output
    assert "ok: workload" in r.output and "planned on sd865" in r.output


def test_validate_soc_errors(tmp_path):
    r = invoke("validate", str(_wl(tmp_path)), "--soc", "nosuch")
    assert r.exit_code == 2 and "--soc" in r.output and "nosuch" in r.output
    r = invoke("validate", str(ROOT / "soc_specs" / "sd865.yaml"), "--soc", "sd865")
    assert r.exit_code == 2 and "--soc" in r.output


def test_validate_knows_a_soc_spec_missing_a_block(tmp_path):
    """A spec without its thermal block is reported as a spec missing 'thermal', not as a
    workload missing 'model'."""
    import yaml
    from socsim.spec import soc_specs_dir
    d = yaml.safe_load((soc_specs_dir() / "sd865.yaml").read_text())
    del d["thermal"]
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(d))
    r = invoke("validate", str(p))
    assert r.exit_code == 2 and "field 'thermal': required field is missing" in r.output


def test_validate_reads_set_and_scheduler_as_run_does(tmp_path):
    """validate --set/--scheduler check the workload run would read with them: the same errors,
    labelled as coming from the option, and the same plan."""
    p = _wl(tmp_path)
    r = invoke("validate", str(p), "--set", "batch_size=-3")
    assert r.exit_code == 2 and "batch_size" in r.output and "(from --set)" in r.output
    r = invoke("validate", str(p), "--scheduler", "nosuch")
    assert r.exit_code == 2 and "(from --scheduler)" in r.output and "nosuch" in r.output
    r = invoke("validate", str(p), "--set", "batch_size=32", "--scheduler", "mnn-int8", "--soc", "sd865")
    assert r.exit_code == 0, r.output
    assert "batch 32" in r.output and "scheduler mnn-int8" in r.output
    r = invoke("validate", str(p), "--soc", "sd865", "--set", "scheduler.name=sage",
               "--set", "environment.memory_budget_mb=0.5")
    assert r.exit_code == 2 and "minimum" in r.output and "(from --set)" in r.output


def test_validate_options_for_workloads_refused_on_a_soc_spec():
    spec = str(ROOT / "soc_specs" / "sd865.yaml")
    for opt, val in (("--set", "x=1"), ("--scheduler", "sage"), ("--soc", "sd865")):
        r = invoke("validate", spec, opt, val)
        assert r.exit_code == 2 and f"field '{opt}'" in r.output and "SoC spec" in r.output
