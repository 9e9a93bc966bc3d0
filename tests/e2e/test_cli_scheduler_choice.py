"""Which options a scheduler chosen on the command line gets, and checking every scheduler of
``compare``/``sweep`` before the first run.

A workload's ``scheduler.options`` belong to its ``scheduler.name``: ``--scheduler``,
``compare --schedulers`` and ``sweep --schedulers`` run any other scheduler with its defaults,
while ``--set scheduler.options.k=v`` always applies to the scheduler that runs.
"""
from __future__ import annotations

import json

import pytest

import socsim.api
from socsim.api import prepare

from cli_helpers import LENET, invoke, write_workload as _wl  # noqa: E402


def _no_runs(monkeypatch):
    """Make any simulation fail the test: a check must come before the first run."""
    def boom(*a, **k):
        raise AssertionError("a run started before all schedulers were checked")
    monkeypatch.setattr(socsim.api, "run", boom)


# -- the file's options go to the file's scheduler only ----------------------------------------

def test_compare_gives_file_options_only_to_the_files_scheduler(tmp_path):
    """The shape of `compare workloads/sage_resnet50.yaml --schedulers sage,mnn-fp32-gpu`."""
    p = _wl(tmp_path, scheduler={"name": "sage", "options": {"strategy": "static-checkpoint", "mtp": 6}},
            environment={"memory_budget_mb": 500})
    out = tmp_path / "c.json"
    r = invoke("compare", "--soc", "sd865", str(p), "--schedulers", "sage,mnn-fp32-gpu", "--json", str(out),
               "--quiet", "--deterministic")
    assert r.exit_code == 0, r.output
    runs = json.loads(out.read_text())["runs"]
    assert [s["scheduler"] for s in runs] == ["sage", "mnn-fp32-gpu"]
    assert runs[0]["scheduler_info"]["strategy"] == "static-checkpoint"  # sage got the file's options
    assert runs[0]["scheduler_info"]["mtp"] == 6


def test_compare_composed_min_energy_and_its_base(tmp_path):
    """The shape of `compare workloads/compose_mandheling_min_energy.yaml --schedulers mandheling,min-energy`."""
    p = _wl(tmp_path, precision="niti", cpu={"cores": "big2"},
            scheduler={"name": "min-energy", "options": {"base": {"name": "mandheling"}, "slack": 1.3}})
    out = tmp_path / "c.json"
    r = invoke("compare", "--soc", "sd865", str(p), "--schedulers", "mandheling,min-energy", "--json", str(out),
               "--quiet", "--deterministic")
    assert r.exit_code == 0, r.output
    runs = json.loads(out.read_text())["runs"]
    assert [s["scheduler"] for s in runs] == ["mandheling", "min-energy"]
    # min-energy kept the file's base: it plans on top of Mandheling
    assert runs[1]["placement"]["plans"][0].startswith("mandheling")


def test_run_with_another_scheduler_ignores_the_files_options(tmp_path):
    p = _wl(tmp_path, scheduler={"name": "sage", "options": {"strategy": "hybrid", "mtp": 6}})
    r = invoke("run", "--soc", "sd865", str(p), "--scheduler", "mnn-fp32", "--json", "-")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["scheduler"] == "mnn-fp32"


def test_options_from_set_apply_to_the_chosen_scheduler(tmp_path):
    p = _wl(tmp_path)  # scheduler: the default mnn-fp32, no options
    wl, _, sched, _ = prepare(str(p), overrides=["scheduler.options.slack=0.2"], scheduler="min-energy")
    assert wl.scheduler.name == "min-energy" and sched.options.slack == 0.2
    # through the CLI: a bad --set value reaches min-energy's options and is reported as from --set
    r = invoke("run", "--soc", "sd865", str(p), "--scheduler", "min-energy", "--set", "scheduler.options.slack=-5",
               "--quiet")
    assert r.exit_code == 2, r.output
    assert "scheduler.options.slack" in r.output and "(from --set)" in r.output and "-5" in r.output
    r = invoke("run", "--soc", "sd865", str(p), "--scheduler", "min-energy", "--set", "scheduler.options.slack=1.2",
               "--json", "-")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["scheduler"] == "min-energy"


def test_file_options_kept_when_the_same_scheduler_is_named(tmp_path):
    p = _wl(tmp_path, scheduler={"name": "min-energy", "options": {"slack": 1.7}})
    assert prepare(str(p), scheduler="min-energy")[2].options.slack == 1.7
    assert prepare(str(p))[2].options.slack == 1.7
    # and a --set on top of the file's options wins for that option only
    s = prepare(str(p), overrides={"scheduler.options.mode": "fixed"}, scheduler="min-energy")[2]
    assert s.options.slack == 1.7 and s.options.mode == "fixed"


# -- every scheduler checked before the first run ----------------------------------------------

def test_compare_checks_every_scheduler_name_before_running(tmp_path, monkeypatch):
    _no_runs(monkeypatch)
    r = invoke("compare", "--soc", "sd865", str(_wl(tmp_path)), "--schedulers", "mnn-fp32,tflite-fp32,nosuch",
               "--quiet")
    assert r.exit_code == 2, r.output
    assert "nosuch" in r.output and "scheduler.name" in r.output and "unknown scheduler" in r.output


def test_compare_checks_every_schedulers_options_before_running(tmp_path, monkeypatch):
    _no_runs(monkeypatch)
    p = _wl(tmp_path, scheduler={"name": "sage", "options": {"strategy": "bogus"}})
    r = invoke("compare", "--soc", "sd865", str(p), "--schedulers", "mnn-fp32,sage", "--quiet")
    assert r.exit_code == 2, r.output
    assert "scheduler.options.strategy" in r.output and "bogus" in r.output


def test_compare_api_checks_before_running(tmp_path, monkeypatch):
    _no_runs(monkeypatch)
    with pytest.raises(socsim.api.InputError) as e:
        socsim.api.compare("sd865", {**LENET}, ["mnn-fp32", "no-such-one"])
    assert e.value.field == "scheduler.name" and e.value.value == "no-such-one"


def test_sweep_checks_every_scheduler_and_grid_value_before_running(tmp_path, monkeypatch):
    _no_runs(monkeypatch)
    p = _wl(tmp_path)
    r = invoke("sweep", "--soc", "sd865", str(p), "--schedulers", "mnn-fp32,nosuch", "--quiet")
    assert r.exit_code == 2 and "nosuch" in r.output, r.output
    r = invoke("sweep", "--soc", "sd865", str(p), "--grid", "batches=1,0", "--quiet")
    assert r.exit_code == 2 and "batches" in r.output and "(from --grid)" in r.output, r.output


def test_sweep_gives_file_options_only_to_the_files_scheduler(tmp_path):
    p = _wl(tmp_path, scheduler={"name": "sage", "options": {"strategy": "static-checkpoint"}},
            environment={"memory_budget_mb": 500})
    out = tmp_path / "s.json"
    r = invoke("sweep", "--soc", "sd865", str(p), "--schedulers", "sage,mnn-fp32", "--grid", "batches=1",
               "--json", str(out), "--quiet")
    assert r.exit_code == 0, r.output
    pts = json.loads(out.read_text())["points"]
    assert [x["summary"]["scheduler"] for x in pts] == ["sage", "mnn-fp32"]
    assert pts[0]["summary"]["scheduler_info"]["strategy"] == "static-checkpoint"


def test_compare_blames_a_compositions_parts_on_schedulers(tmp_path):
    """`base+scheduler` in --schedulers is the user's only way to give the base: its errors say
    so (not --set, which they never used); composing with a scheduler that takes no base names
    the one that does; a scheduler given twice is refused."""
    p = _wl(tmp_path)
    cases = [("foo+min-energy", "field 'scheduler.options.base.name' (from --schedulers), value 'foo'"),
             ("mnn-fp32+sage", "sage does not compose with a base scheduler (base+scheduler); min-energy does"),
             ("mnn-fp32,mnn-fp32", "scheduler given more than once: mnn-fp32"),
             ("+min-energy", "a composition is base+scheduler")]
    for names, words in cases:
        r = invoke("compare", "--soc", "sd865", str(p), "--schedulers", names, "--quiet")
        assert r.exit_code == 2 and words in " ".join(r.output.split()), (names, r.output)
        assert "(from --set)" not in r.output


def test_run_takes_a_composition_as_its_scheduler(tmp_path):
    p = _wl(tmp_path)
    r = invoke("run", "--soc", "sd865", str(p), "--scheduler", "mnn-fp32+min-energy", "--set", "batches=2",
               "--json", "-")
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)["scheduler_info"]
    assert info["mode"] == "compose" and info["base"] == "mnn-fp32"


@pytest.mark.parametrize("args, option", [
    (["run", "--soc", "sd865", "quickstart", "--scheduler", ""], "--scheduler"),
    (["compare", "--soc", "sd865", "quickstart", "--schedulers", "mnn-fp32,,pytorch"], "--schedulers"),
    (["compare", "--soc", "sd865", "quickstart", "--schedulers", "mnn-fp32,"], "--schedulers"),
    (["sweep", "--soc", "sd865,,sd888", "quickstart"], "--soc"),
])
def test_an_empty_name_is_exit_2_not_dropped(args, option):
    r = invoke(*args, "--quiet")
    assert r.exit_code == 2 and f"field '{option}'" in r.output, r.output


@pytest.mark.parametrize("args, words", [
    (["sweep", "--soc", "sd865", "quickstart", "--set", "batches=2"], "--grid batches=2"),
    (["compare", "--soc", "sd865", "quickstart", "--schedulers", "mnn-fp32", "--out", "d"], "socsim run --out"),
])
def test_an_option_of_another_command_says_which_to_use(args, words):
    r = invoke(*args, "--quiet")
    assert r.exit_code == 2 and words in r.output, r.output
