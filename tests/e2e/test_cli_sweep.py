"""socsim sweep: SoCs x schedulers x grid, in order, in parallel."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from socsim.cli import main

QUICK = str(Path(__file__).resolve().parents[2] / "workloads" / "quickstart.yaml")


def test_sweep_grid_in_order_with_two_jobs(tmp_path):
    out = tmp_path / "sweep.json"
    r = CliRunner().invoke(main, ["sweep", "--soc", "sd865,sd888", QUICK, "--grid", "batch_size=16,64",
                                  "--grid", "batches=5", "--jobs", "2", "--json", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    pts = json.loads(out.read_text())["points"]
    assert [(p["point"]["soc"], p["point"]["set"]["batch_size"]) for p in pts] == \
        [("sd865", 16), ("sd865", 64), ("sd888", 16), ("sd888", 64)]
    t = {(p["point"]["soc"], p["summary"]["batch_size"]): p["summary"]["per_batch"]["time_s"] for p in pts}
    assert t[("sd865", 64)] > t[("sd865", 16)]


def test_sweep_bad_grid_exits_2(tmp_path):
    r = CliRunner().invoke(main, ["sweep", "--soc", "sd865", QUICK, "--grid", "batch_size"])
    assert r.exit_code == 2 and "--grid" in r.output
    r = CliRunner().invoke(main, ["sweep", "--soc", "nosuch", QUICK])
    assert r.exit_code == 2 and "nosuch" in r.output


def test_sweep_errors_name_the_sweep_options(tmp_path):
    """A value only a run can refuse (a core sd865 lacks, a scheduler the SoC cannot run) names
    the option the user typed, not the run's --set / --scheduler."""
    r = CliRunner().invoke(main, ["sweep", "--soc", "sd865", QUICK, "--grid", "cpu.cores=[12]", "--grid",
                                  "batches=2", "--quiet"])
    assert r.exit_code == 2, r.output
    assert "field 'cpu.cores' (from --grid)" in r.output and "--set" not in r.output
    r = CliRunner().invoke(main, ["sweep", "--soc", "exynos9820", QUICK, "--schedulers", "mnn-fp32,mandheling",
                                  "--grid", "batches=2", "--quiet"])
    assert r.exit_code == 2, r.output
    assert "field 'scheduler.name' (from --schedulers)" in r.output and "(from --scheduler)" not in r.output
    # and which point failed: the same workload ran at the point before it
    assert "sweep point: exynos9820 mandheling batches=2" in " ".join(r.output.split()), r.output


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_skip_infeasible_lists_the_points_a_phone_cannot_run_and_goes_on(tmp_path, jobs):
    """A fleet with a phone that has no DSP: mandheling is skipped there, with why, and every other
    point runs; without the flag the sweep stops at that point (the test above)."""
    out = tmp_path / "sweep.json"
    r = CliRunner().invoke(main, ["sweep", "--soc", "exynos9820,sd865", QUICK, "--schedulers", "mandheling,mnn-fp32",
                                  "--grid", "batches=2", "--skip-infeasible", "--jobs", jobs, "--json", str(out)])
    assert r.exit_code == 0, r.output
    pts = json.loads(out.read_text())["points"]
    assert [(p["point"]["soc"], p["point"]["scheduler"], "skipped" in p) for p in pts] == \
        [("exynos9820", "mandheling", True), ("exynos9820", "mnn-fp32", False),
         ("sd865", "mandheling", False), ("sd865", "mnn-fp32", False)]
    assert "exynos9820 has no DSP" in pts[0]["skipped"] and "summary" not in pts[0]
    assert all(p["summary"]["batches"] == 2 for p in pts[1:])
    text = " ".join(r.output.split())
    assert "skipped" in text and "exynos9820 has no DSP" in text and "(point: exynos9820 mandheling batches=2)" in text


def test_skip_infeasible_with_no_point_left_is_an_error_and_writes_nothing(tmp_path):
    out = tmp_path / "sweep.json"
    r = CliRunner().invoke(main, ["sweep", "--soc", "exynos9820", QUICK, "--schedulers", "mandheling",
                                  "--grid", "batches=2", "--skip-infeasible", "--json", str(out), "--quiet"])
    assert r.exit_code == 2, r.output
    assert "no point of the sweep can run" in r.output and "exynos9820 has no DSP" in r.output
    assert not out.exists()


def test_sweep_from_python_names_the_sweep_options():
    """socsim.sweep.sweep() called directly labels a point's error as the sweep's option too."""
    from socsim.errors import InputError
    from socsim.sweep import sweep

    with pytest.raises(InputError) as e:
        sweep(QUICK, ["sd865"], grid={"cpu.cores": [[12]], "batches": [2]})
    assert e.value.field == "cpu.cores" and e.value.origin == "--grid"


def test_sweep_prints_each_note_once_naming_its_points(tmp_path):
    """As run and compare do: mandheling does not train in the workload's fp32, which the sweep
    says once for both of its points, and not for mnn-fp32's; with the JSON on stdout, on stderr."""
    args = ["sweep", "--soc", "sd865", QUICK, "--schedulers", "mandheling,mnn-fp32", "--grid", "batches=2,3"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())   # the console may wrap a long note
    assert text.count("note:") == 1, r.output
    note = text[text.index("note:"):]
    assert "mandheling" in note and "batches=2" in note and "batches=3" in note
    assert "mnn-fp32" not in note
    r = CliRunner().invoke(main, [*args, "--json", "-"])
    assert r.exit_code == 0
    json.loads(r.stdout)
    assert "note: mandheling" in r.stderr
    r = CliRunner().invoke(main, [*args, "--quiet"])
    assert r.exit_code == 0 and r.output == ""


def test_sweep_address_needs_the_ray_backend():
    r = CliRunner().invoke(main, ["sweep", "--soc", "sd865", QUICK, "--grid", "batches=2", "--address", "auto"])
    assert r.exit_code == 2 and "--address" in r.output and "--backend ray" in r.output
