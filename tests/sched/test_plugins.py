"""Scheduler plugins from other packages: found by entry point, selected by name, options
validated, broken plugins reported without hiding the others (docs/plugins.md).

Installing the example package is simulated the way pip leaves it: a ``*.dist-info`` folder with
``entry_points.txt`` on ``sys.path`` (what importlib.metadata reads), plus the package source.
"""
from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import socsim
from socsim.cli import main
from socsim.errors import InputError
from socsim.sched.registry import discover

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "socsim-plugin-example"
WL = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=2)


def _dist(site: Path, name: str, entry_points: str) -> None:
    d = site / f"{name}-0.1.0.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (d / "entry_points.txt").write_text(entry_points)


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    # the example's own entry point, as pip would write it to entry_points.txt
    section = (EXAMPLE / "pyproject.toml").read_text().split('[project.entry-points."socsim.schedulers"]')[1]
    name, value = next(x for x in section.splitlines() if "=" in x).split("=", 1)
    _dist(site, "socsim_plugin_example", f"[socsim.schedulers]\n{name.strip()} = {value.strip().strip(chr(34))}\n")
    _dist(site, "socsim_broken_plugin", "[socsim.schedulers]\nbroken-plugin = socsim_broken_plugin:Sched\n")
    (site / "socsim_broken_plugin.py").write_text("raise ImportError('needs libfoo, which is not installed')\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    importlib.invalidate_caches()
    yield site
    for m in ("socsim_plugin_example", "socsim_broken_plugin"):
        sys.modules.pop(m, None)


def test_example_plugin_runs_by_name(plugins):
    entries = discover()
    assert entries["big-only-greedy"].cls is not None
    s = socsim.run("sd865", {**WL, "scheduler": {"name": "big-only-greedy", "options": {"max_cores": 2}}}).summary
    assert s["scheduler"] == "big-only-greedy"
    assert set(s["placement"]["cpu_cores"]) <= {4, 5}
    assert len(s["scheduler_info"]["profiled"]) == 2


def test_plugin_options_are_validated(plugins):
    with pytest.raises(InputError) as e:
        socsim.run("sd865", WL, scheduler="big-only-greedy", overrides={"scheduler.options.max_cores": 0})
    assert e.value.field == "scheduler.options.max_cores"
    with pytest.raises(InputError) as e:
        socsim.run("sd865", WL, scheduler="big-only-greedy", overrides={"scheduler.options.nope": 1})
    assert e.value.field == "scheduler.options.nope" and "unknown option" in e.value.message


def test_broken_plugin_is_listed_and_the_others_still_list(plugins):
    r = CliRunner().invoke(main, ["list", "schedulers"], catch_exceptions=False, terminal_width=300)
    assert r.exit_code == 0
    assert "broken-plugin" in r.output and "broken" in r.output and "libfoo" in r.output
    for name in ("big-only-greedy", "sage", "swan", "mnn-fp32", "tflite-fp32", "pytorch", "mnn-fp32-gpu"):
        assert name in r.output


def test_selecting_a_broken_or_missing_plugin_exits_2(plugins, tmp_path):
    wl = tmp_path / "w.yaml"
    wl.write_text("name: t\nmodel: lenet\ninput: [1, 28, 28]\nbatch_size: 16\nbatches: 1\n")
    r = CliRunner().invoke(main, ["run", "--soc", "sd865", str(wl), "--scheduler", "broken-plugin", "--quiet"])
    assert r.exit_code == 2 and "broken" in r.output and "scheduler.name" in r.output
    r = CliRunner().invoke(main, ["run", "--soc", "sd865", str(wl), "--scheduler", "no-such-thing", "--quiet"])
    assert r.exit_code == 2 and "unknown scheduler" in r.output


def test_a_plugin_that_fails_to_import_is_located(plugins, tmp_path):
    """The error names the plugin's file and the line that raised; SOCSIM_DEBUG shows its traceback."""
    import os
    import subprocess
    entry = discover()["broken-plugin"]
    assert entry.error == (f"ImportError: needs libfoo, which is not installed "
                           f"(at {plugins / 'socsim_broken_plugin.py'}, line 1)")
    wl = tmp_path / "w.yaml"
    wl.write_text("name: t\nmodel: lenet\ninput: [1, 28, 28]\nbatch_size: 16\nbatches: 1\n")
    env = {**os.environ, "SOCSIM_DEBUG": "1", "PYTHONPATH": f"{plugins}:" + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, "-m", "socsim.cli", "run", "--soc", "sd865", str(wl),
                        "--scheduler", "broken-plugin", "--quiet"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2
    assert "Traceback" in r.stderr and "socsim_broken_plugin.py" in r.stderr and "needs libfoo" in r.stderr


# --------------------------------------------------------------------------- faulty plugins
# A third-party package with one scheduler per way a plugin can go wrong, installed like the
# example (dist-info + module on sys.path).  Its exceptions are the plugin's fault (exit 2,
# naming it); the same from a built-in is socsim's bug (exit 1).
FAULTY = '''
from pydantic import BaseModel, ConfigDict, Field, model_validator
from socsim.errors import ScheduleError
from socsim.sched.api import BaseScheduler, Plan
from socsim.sched.common import single_unit_plan


class _Simple(BaseScheduler):
    def plan(self, ctx):
        return single_unit_plan(ctx.graph(), "cpu", (4, 5, 6, 7), self.name)


class RaisePlan(_Simple):
    name = "raise-plan"
    def plan(self, ctx):
        raise RuntimeError("boom in plan")


class RaiseHook(_Simple):
    name = "raise-hook"
    def on_batch_end(self, ctx, batch, record):
        if batch == 1:
            raise ValueError("boom in on_batch_end")


class RaiseStart(_Simple):
    name = "raise-start"
    def on_batch_start(self, ctx, batch):
        raise KeyError("k")


class RaiseInterference(_Simple):
    name = "raise-interference"
    def on_interference(self, ctx, event):
        raise RuntimeError("boom in on_interference")


class RaiseSummary(_Simple):
    name = "raise-summary"
    def summary_extra(self):
        raise RuntimeError("boom in summary_extra")


class SchedErr(_Simple):
    name = "schedule-error"
    def on_batch_end(self, ctx, batch, record):
        raise ScheduleError("infeasible at runtime", field="scheduler.options.x", value=3)


class ExitHook(_Simple):
    name = "exit-hook"
    def on_batch_end(self, ctx, batch, record):
        raise SystemExit(3)


class NoFieldErr(_Simple):
    name = "no-field-error"
    def plan(self, ctx):
        raise ScheduleError("cannot fit anything")


class NanExtra(_Simple):
    name = "nan-extra"
    def summary_extra(self):
        return {"x": float("nan")}


class ListExtra(_Simple):
    name = "list-extra"
    def summary_extra(self):
        return [1, 2]


class MadeUpCores(_Simple):
    name = "made-up-cores"
    def plan(self, ctx):
        return single_unit_plan(ctx.graph(), "cpu", ctx.cores("huge9"), "x")


class TurboFreq(_Simple):
    name = "turbo-freq"
    def plan(self, ctx):
        ctx.freqs((4, 5), "turbo")


class NoCore42(_Simple):
    name = "no-core-42"
    def plan(self, ctx):
        return single_unit_plan(ctx.graph(), "cpu", (4, 42), "x")


class BadDefOpts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_cores: int = Field(0, ge=1)


class BadDefaults(_Simple):
    name = "bad-defaults"
    Options = BadDefOpts


class RequiredOpts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    level: int = Field(ge=1)
    cores: int = Field(2, ge=1)


class RequiredOption(_Simple):
    name = "required-option"
    Options = RequiredOpts


class EitherOpts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int | None = None
    b: int | None = None

    @model_validator(mode="after")
    def _either(self):
        if self.a is None and self.b is None:
            raise ValueError("give a or b")
        return self


class EitherOption(_Simple):
    name = "either-option"
    Options = EitherOpts


class ProtoOpts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cores: str = "big2"


class ProtoOnly:
    name = "proto-only"
    Options = ProtoOpts
    def plan(self, ctx):
        return single_unit_plan(ctx.graph(), "cpu", ctx.cores(self.options.cores), "proto")


class ProtoInit:
    name = "proto-init"
    Options = ProtoOpts
    def __init__(self):
        self.calls = 0
    def plan(self, ctx):
        return single_unit_plan(ctx.graph(), "cpu", ctx.cores(self.options.cores), "proto")
    def on_batch_end(self, ctx, batch, record):
        self.calls += 1
    def summary_extra(self):
        return {"calls": self.calls}


class ProtoRaise:
    Options = ProtoOpts
    def plan(self, ctx):
        raise RuntimeError("no name, still named")


class Shadow(_Simple):
    name = "mnn-fp32"
    description = "SHADOW"


class Niti(_Simple):
    name = "niti-plugin"
    precision = "niti"


class BadPrecision(_Simple):
    precision = "fp16"


class Impostor(_Simple):
    name = "pytorch"          # a built-in's name, registered under another


class NumOpts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cores: int = 2
    on: bool = False


class NumOption(_Simple):
    name = "num-option"
    Options = NumOpts


class NotJson(_Simple):
    name = "not-json"
    def summary_extra(self):
        return {"x": object()}


class NoFieldHookErr(_Simple):
    name = "no-field-hook-error"
    def on_batch_end(self, ctx, batch, record):
        raise ScheduleError("cannot fit anything")


class GenExitHook(_Simple):
    name = "genexit-hook"
    def on_batch_end(self, ctx, batch, record):
        raise GeneratorExit("odd")


class ListCores(_Simple):
    name = "list-cores"
    def plan(self, ctx):
        p = single_unit_plan(ctx.graph(), "cpu", (4, 5), "lists")
        return Plan(steps=list(p.steps), cpu_cores=[4, 5], cpu_freq_mhz=[["mid", 2419.2]], label="lists")


class Prints(_Simple):
    name = "prints"
    def plan(self, ctx):
        print("hello from plan")
        return super().plan(ctx)
    def on_batch_end(self, ctx, batch, record):
        print("hello from on_batch_end")


class StateSpy(_Simple):
    """What on_interference and on_batch_end read of the phone's state."""
    name = "state-spy"
    def __init__(self, options=None):
        super().__init__(options)
        self.seen = []
    def on_batch_end(self, ctx, batch, record):
        self.seen.append(("end", ctx.now_s, dict(ctx.temps_c), ctx.battery_soc))
    def on_interference(self, ctx, event):
        self.seen.append(("fg", ctx.now_s, dict(ctx.temps_c), ctx.battery_soc))
    def summary_extra(self):
        return {"seen": self.seen}


class PrintsInInit(_Simple):
    name = "prints-in-init"
    def __init__(self, options=None):
        print("hello from __init__")
        super().__init__(options)


class OtherGraph(_Simple):
    """precision None (the workload's), but plans on a graph of its own precision."""
    name = "other-graph"
    def plan(self, ctx):
        return single_unit_plan(ctx.graph(precision="niti"), "cpu", (4, 5), "niti on the cpu")


class SplitLater(_Simple):
    name = "split-later"
    def on_batch_end(self, ctx, batch, record):
        if batch == 0:
            import dataclasses
            p = ctx.plan
            return dataclasses.replace(p, micro_batches=(8, 8), label="split")
'''
FAULTY_EPS = {"raise-plan": "RaisePlan", "raise-hook": "RaiseHook", "raise-start": "RaiseStart",
              "raise-interference": "RaiseInterference", "raise-summary": "RaiseSummary",
              "schedule-error": "SchedErr", "bad-defaults": "BadDefaults",
              "required-option": "RequiredOption", "either-option": "EitherOption", "proto-only": "ProtoOnly", "proto-init": "ProtoInit",
              "proto-raise": "ProtoRaise", "mnn-fp32": "Shadow", "niti-plugin": "Niti",
              "bad-precision": "BadPrecision", "impostor": "Impostor", "num-option": "NumOption",
              "not-json": "NotJson", "split-later": "SplitLater", "exit-hook": "ExitHook",
              "no-field-error": "NoFieldErr", "nan-extra": "NanExtra", "list-extra": "ListExtra",
              "made-up-cores": "MadeUpCores", "turbo-freq": "TurboFreq", "no-core-42": "NoCore42",
              "no-field-hook-error": "NoFieldHookErr", "genexit-hook": "GenExitHook", "list-cores": "ListCores",
              "prints": "Prints", "state-spy": "StateSpy", "prints-in-init": "PrintsInInit",
              "other-graph": "OtherGraph"}


@pytest.fixture
def faulty(plugins):
    eps = "".join(f"{n} = socsim_faulty_plugin:{c}\n" for n, c in FAULTY_EPS.items())
    _dist(plugins, "socsim_faulty_plugin", "[socsim.schedulers]\n" + eps)
    (plugins / "socsim_faulty_plugin.py").write_text(FAULTY)
    importlib.invalidate_caches()
    yield plugins
    sys.modules.pop("socsim_faulty_plugin", None)


def _run_cli(*args):
    return CliRunner().invoke(main, list(args), terminal_width=300)


@pytest.fixture
def wl_file(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text("name: t\nmodel: lenet\ninput: [1, 28, 28]\nbatch_size: 16\nbatches: 3\n"
                 "environment:\n  foreground_load: {name: app, cores: [6], start_s: 0.001, duration_s: 0.002, "
                 "utilization: 0.5}\n")
    return p


@pytest.mark.parametrize("name, hook, exc", [
    ("raise-plan", "plan", "RuntimeError: boom in plan"),
    ("raise-hook", "on_batch_end", "ValueError: boom in on_batch_end"),
    ("raise-start", "on_batch_start", "KeyError: 'k'"),
    ("raise-interference", "on_interference", "RuntimeError: boom in on_interference"),
    ("raise-summary", "summary_extra", "RuntimeError: boom in summary_extra"),
    ("proto-raise", "plan", "RuntimeError: no name, still named"),
    ("genexit-hook", "on_batch_end", "GeneratorExit: odd"),
])
def test_a_plugin_raising_is_an_input_error_naming_it(faulty, wl_file, name, hook, exc):
    with pytest.raises(InputError) as e:
        socsim.run("sd865", str(wl_file), scheduler=name)
    assert e.value.field == "scheduler.name" and e.value.value == name
    # a runtime hook's failure says when: the batch and the simulated time
    when = r" at batch \d+ \(t = \d+\.\d{3} s\)" if hook not in ("plan", "summary_extra") else ""
    assert re.fullmatch(f"scheduler plugin {re.escape(repr(name))} failed in {hook}\\(\\){when}: {re.escape(exc)}",
                        e.value.message), e.value.message
    r = _run_cli("run", "--soc", "sd865", str(wl_file), "--scheduler", name, "--quiet")
    assert r.exit_code == 2, r.output
    assert f"failed in {hook}()" in r.output and name in r.output and "internal error" not in r.output


def test_a_plugin_raising_under_compare_sweep_and_validate_exits_2(faulty, wl_file, tmp_path):
    r = _run_cli("compare", "--soc", "sd865", str(wl_file), "--schedulers", "mnn-fp32,raise-hook", "--quiet")
    assert r.exit_code == 2 and "'raise-hook' failed in on_batch_end()" in r.output, r.output
    r = _run_cli("sweep", "--soc", "sd865", str(wl_file), "--schedulers", "raise-plan", "--quiet")
    assert r.exit_code == 2 and "'raise-plan' failed in plan()" in r.output, r.output
    v = tmp_path / "v.yaml"
    v.write_text(wl_file.read_text() + "scheduler: {name: raise-plan}\n")
    r = _run_cli("validate", str(v), "--soc", "sd865")
    assert r.exit_code == 2 and "'raise-plan' failed in plan()" in r.output, r.output


def test_input_errors_from_a_plugin_pass_through(faulty, wl_file):
    with pytest.raises(InputError) as e:
        socsim.run("sd865", str(wl_file), scheduler="schedule-error")
    assert e.value.field == "scheduler.options.x" and e.value.value == 3
    assert e.value.message == "infeasible at runtime"


def test_a_builtin_raising_stays_an_internal_error(faulty, wl_file, monkeypatch):
    from socsim.sched.baselines import MnnFp32

    def boom(self, ctx):
        raise RuntimeError("socsim's own bug")

    monkeypatch.setattr(MnnFp32, "plan", boom)
    with pytest.raises(RuntimeError, match="socsim's own bug"):
        socsim.run("sd865", str(wl_file), scheduler="mnn-fp32")
    r = _run_cli("run", "--soc", "sd865", str(wl_file), "--scheduler", "mnn-fp32", "--quiet")
    assert r.exit_code == 1 and "internal error" in r.output


def test_invalid_option_defaults_make_a_broken_plugin(faulty, wl_file):
    entries = discover()
    assert entries["bad-defaults"].cls is None
    assert "max_cores" in entries["bad-defaults"].error and "default 0" in entries["bad-defaults"].error
    # required options are fine when the defaults given are valid
    assert entries["required-option"].cls is not None
    # so is a model validator asking for options: the user's options are checked when selected
    assert entries["either-option"].cls is not None
    with pytest.raises(InputError, match="give a or b"):
        socsim.run("sd865", WL, scheduler="either-option")
    assert socsim.run("sd865", {**WL, "scheduler": {"name": "either-option", "options": {"a": 1}}}).summary
    r = _run_cli("list", "schedulers")
    assert r.exit_code == 0 and "invalid" in r.output and "default" in r.output  # the table may wrap
    r = _run_cli("run", "--soc", "sd865", str(wl_file), "--scheduler", "bad-defaults", "--quiet")
    assert r.exit_code == 2 and "broken" in r.output and "max_cores" in r.output
    # the built-ins' own defaults are valid
    assert all(e.cls is not None for e in entries.values() if e.builtin)


def test_a_required_option_missing_is_blamed_on_the_choice_that_made_the_scheduler(faulty, wl_file):
    """The file names mnn-fp32 (line-less here: no options); --scheduler chose the plugin, so its
    missing option comes from --scheduler, not from the file's line; one given with --set is --set's."""
    r = _run_cli("run", "--soc", "sd865", str(wl_file), "--scheduler", "required-option", "--quiet")
    assert r.exit_code == 2
    assert "field 'scheduler.options.level' (from --scheduler)" in " ".join(r.output.split())
    r = _run_cli("run", "--soc", "sd865", str(wl_file), "--scheduler", "required-option",
                 "--set", "scheduler.options.level=0", "--quiet")
    assert r.exit_code == 2 and "field 'scheduler.options.level' (from --set), value 0" in " ".join(r.output.split())


def test_protocol_only_classes_run_with_the_base_hooks(faulty):
    for name in ("proto-only", "proto-init"):
        s = socsim.run("sd865", {**WL, "scheduler": {"name": name, "options": {"cores": "big2"}}}).summary
        assert s["placement"]["cpu_cores"] == [4, 5]
    assert s["scheduler_info"] == {"calls": 2}


def test_a_plugin_cannot_take_a_builtin_name(faulty):
    entries = discover()
    assert entries["mnn-fp32"].builtin and entries["mnn-fp32"].target == "socsim.sched.baselines:MnnFp32"
    conflict = entries["mnn-fp32 (socsim_faulty_plugin)"]
    assert conflict.cls is None and "name taken by a built-in scheduler" in conflict.error
    r = _run_cli("list", "schedulers")
    assert r.exit_code == 0 and "SHADOW" not in r.output
    # listed as a conflict (words only: the table wraps and cuts to the terminal's width)
    assert all(w in r.output for w in ("(socsim_faulty", "taken", "built-in")), r.output
    s = socsim.run("sd865", WL, scheduler="mnn-fp32").summary
    assert "SHADOW" not in str(s) and s["scheduler"] == "mnn-fp32"


def test_a_plugin_exiting_while_imported_is_broken_and_the_others_run(plugins):
    """``argparse`` at a plugin's module level calls sys.exit during the import: that plugin is
    broken, what it printed stays off socsim's output, and every other scheduler still works."""
    _dist(plugins, "socsim_exiting_plugin", "[socsim.schedulers]\nexiting = socsim_exiting_plugin:S\n")
    (plugins / "socsim_exiting_plugin.py").write_text(
        "import argparse\nprint('hello from the plugin')\nargparse.ArgumentParser().parse_args(['--bogus'])\n")
    importlib.invalidate_caches()
    try:
        e = discover()["exiting"]
        assert e.cls is None and "sys.exit(2)" in e.error and "while being imported" in e.error
        r = _run_cli("list", "schedulers")
        assert r.exit_code == 0 and "mnn-fp32" in r.output and "hello from the plugin" not in r.output
        r = _run_cli("run", "--soc", "sd865", "--scheduler", "mnn-fp32", "--quiet", "--json", "-",
                     str(ROOT / "workloads" / "quickstart.yaml"), "--set", "batches=1")
        assert r.exit_code == 0 and r.output.lstrip().startswith("{"), r.output
    finally:
        sys.modules.pop("socsim_exiting_plugin", None)


def test_a_plugins_precision_is_what_it_trains(faulty):
    s = socsim.run("sd865", WL, scheduler="niti-plugin").summary
    fp32 = socsim.run("sd865", WL, scheduler="proto-only").summary
    assert s["precision"] == "niti"
    ops = s["placement"]["cpu_ops"]
    assert ops > fp32["placement"]["cpu_ops"]        # NITI's rescale/shift ops ran
    e = discover()["bad-precision"]
    assert e.cls is None and "precision is 'fp16'" in e.error


def test_runs_carry_the_entry_point_name(faulty):
    s = socsim.run("sd865", WL, scheduler="impostor").summary
    assert s["scheduler"] == "impostor"
    r = _run_cli("compare", "--soc", "sd865", str(ROOT / "workloads" / "quickstart.yaml"), "--schedulers",
                 "pytorch,impostor", "--set", "batches=1", "--json", "-")
    assert r.exit_code == 0, r.output
    import json
    assert [row["scheduler"] for row in json.loads(r.output)["rows"]] == ["pytorch", "impostor"]


def test_true_false_for_a_numeric_plugin_option_is_an_error(faulty):
    with pytest.raises(InputError) as e:
        socsim.run("sd865", {**WL, "scheduler": {"name": "num-option", "options": {"cores": True}}})
    assert e.value.field == "scheduler.options.cores" and "true/false" in e.value.message
    assert socsim.run("sd865", {**WL, "scheduler": {"name": "num-option", "options": {"on": True}}}).summary


def test_summary_extra_that_is_not_json_is_the_plugins_error(faulty, wl_file):
    r = _run_cli("run", "--soc", "sd865", str(wl_file), "--scheduler", "not-json", "--quiet")
    assert r.exit_code == 2 and "summary_extra()" in r.output and "not-json" in r.output, r.output


def test_splits_a_hook_makes_are_in_the_micro_batch_sequence(faulty):
    s = socsim.run("sd865", {**WL, "batches": 3}, scheduler="split-later").summary
    assert s["memory"]["micro_batch_sequence"] == [[16], [8, 8]]
    assert s["memory"]["micro_batches_final"] == [8, 8]


def test_debug_shows_the_plugins_own_traceback(faulty, wl_file, monkeypatch):
    import subprocess
    env = {**__import__("os").environ, "SOCSIM_DEBUG": "1",
           "PYTHONPATH": f"{faulty}:{EXAMPLE}:" + __import__("os").environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, "-m", "socsim.cli", "run", "--soc", "sd865", str(wl_file),
                        "--scheduler", "raise-hook", "--quiet"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2
    assert "Traceback" in r.stderr and "socsim_faulty_plugin.py" in r.stderr and "boom in on_batch_end" in r.stderr


@pytest.mark.parametrize("name, words", [
    # the batch's end time is the model's (it moves with the CPU's cycles): not part of the check
    ("exit-hook", ("failed in on_batch_end() at batch 0 (t = ", " s): called sys.exit(3)")),
    ("no-field-error", "scheduler plugin 'no-field-error' in plan(): cannot fit anything"),
    ("nan-extra", "summary_extra() what the summary cannot carry as JSON"),
    ("list-extra", "returned list from summary_extra(); expected a dict"),
    ("made-up-cores", "failed in plan(): ValueError: ctx.cores('huge9'): unknown core set"),
    ("turbo-freq", "failed in plan(): ValueError: ctx.freqs(): frequency setting 'turbo'"),
    ("no-core-42", "sd865 has no core 42"),
])
def test_what_a_plugin_does_wrong_is_its_own_error(faulty, wl_file, tmp_path, name, words):
    """Exit 2 naming the plugin (not the workload's fields: the file asks for none of it) and
    no output written."""
    out = tmp_path / "out"
    r = _run_cli("run", "--soc", "sd865", str(wl_file), "--scheduler", name, "--quiet", "--out", str(out))
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert all(w in said for w in (words if isinstance(words, tuple) else (words,))), r.output
    assert f"value {name!r}" in r.output, r.output
    assert "cpu.cores" not in r.output and not out.exists()


def test_two_plugins_with_one_name_run_neither(faulty):
    _dist(faulty, "aaa_dup", "[socsim.schedulers]\nproto-only = socsim_faulty_plugin:ProtoInit\n")
    importlib.invalidate_caches()
    with pytest.raises(InputError) as e:
        socsim.run("sd865", WL, scheduler="proto-only")
    assert "more than one plugin" in e.value.message and "ProtoOnly" in e.value.message \
        and "ProtoInit" in e.value.message
    r = _run_cli("list", "schedulers")
    assert r.exit_code == 0 and "mnn-fp32" in r.output
    # neither row reads "ok": the one that keeps the name says why it cannot be selected
    row = next(ln for ln in r.output.splitlines() if ln.split("│")[1:2] and ln.split("│")[1].strip() == "proto-only")
    assert "clash" in row and " ok " not in row, row


def test_a_quoted_entry_point_value_is_named(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    _dist(site, "socsim_quoted_plugin", "[socsim.schedulers]\nquoted-plugin = 'socsim_quoted_plugin:Sched'\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    e = discover()["quoted-plugin"]
    assert e.cls is None and "is not 'module:Class'" in e.error and "'socsim_quoted_plugin:Sched'" in e.error


def test_a_plugins_own_verdict_from_a_hook_names_it(faulty, wl_file):
    """A ScheduleError without a field from a hook says whose and where, as from plan()."""
    with pytest.raises(InputError) as e:
        socsim.run("sd865", str(wl_file), scheduler="no-field-hook-error")
    assert e.value.field == "scheduler.name" and e.value.value == "no-field-hook-error"
    assert e.value.message == "scheduler plugin 'no-field-hook-error' in on_batch_end(): cannot fit anything"


def test_a_plan_may_give_lists_for_tuples(faulty, wl_file):
    s = socsim.run("sd865", str(wl_file), scheduler="list-cores").summary
    assert s["placement"]["cpu_cores"] == [4, 5]


def test_what_a_plugin_prints_keeps_json_on_stdout_clean(faulty, wl_file):
    r = CliRunner().invoke(main, ["run", "--soc", "sd865", str(wl_file), "--scheduler", "prints", "--json", "-"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["scheduler"] == "prints"
    assert "hello from plan" in r.stderr and "hello from on_batch_end" in r.stderr


def test_a_hook_inside_a_batch_reads_the_state_of_the_last_finished_batch(faulty):
    """docs/plugins.md section 3: on_interference sees temperatures and battery as at the end of
    the last finished batch, not the end of the batch it falls in (the accounting's lookahead)."""
    base = {**WL, "batch_size": 64, "batches": 4}
    # the batches' ends without the app, so that the app starts in the middle of the second batch
    # and ends in the middle of the third whatever the cost model makes of a batch's length
    plain = socsim.run("sd865", base, scheduler="state-spy").summary["scheduler_info"]["seen"]
    e1, e2, e3 = [x[1] for x in plain if x[0] == "end"][:3]
    wl = {**base, "environment": {"foreground_load": {"name": "app", "cores": [0], "start_s": (e1 + e2) / 2,
                                                      "duration_s": (e3 - e1) / 2}}}
    seen = socsim.run("sd865", wl, scheduler="state-spy").summary["scheduler_info"]["seen"]
    ends = [x for x in seen if x[0] == "end"]
    fg = [x for x in seen if x[0] == "fg"]
    assert [sum(e[1] <= x[1] for e in ends) for x in fg] == [1, 2]   # both inside a batch
    for _, t, temps, soc in fg:
        last = [e for e in ends if e[1] <= t][-1]
        assert (temps, soc) == (last[2], last[3])


def test_what_a_plugin_prints_while_it_starts_keeps_json_on_stdout_clean(faulty, wl_file):
    r = CliRunner().invoke(main, ["run", "--soc", "sd865", str(wl_file), "--scheduler", "prints-in-init",
                                  "--json", "-"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["scheduler"] == "prints-in-init"
    assert "hello from __init__" in r.stderr


def test_a_hook_failure_says_at_which_batch(faulty, wl_file):
    with pytest.raises(InputError) as e:
        socsim.run("sd865", str(wl_file), scheduler="raise-hook")
    assert " at batch 1 (t = " in e.value.message   # it raises when batch 1 ends


def test_skip_infeasible_does_not_hide_a_broken_plugin(faulty, wl_file):
    """A plugin crash is not "this phone cannot run it": the sweep stops on it, exit 2."""
    r = _run_cli("sweep", "--soc", "sd865,exynos9820", str(wl_file), "--schedulers", "mnn-fp32,raise-hook",
                 "--skip-infeasible", "--quiet")
    assert r.exit_code == 2 and "'raise-hook' failed in on_batch_end()" in r.output, r.output
    assert "skipped" not in r.output


def test_the_summary_carries_the_options_the_run_used(plugins):
    wl = {**WL, "scheduler": {"name": "big-only-greedy", "options": {"max_cores": 2}}}
    s = socsim.run("sd865", wl).summary
    assert s["scheduler_options"]["max_cores"] == 2
    s = socsim.run("sd865", {**WL, "scheduler": {"name": "big-only-greedy"}}).summary
    assert s["scheduler_options"]["max_cores"] != 2


def test_the_precision_reported_is_that_of_the_graph_the_plan_ran(faulty):
    """A plugin without a precision of its own that plans on ctx.graph(precision="niti") trains
    in niti: the summary says so, and notes that the workload's precision was not used."""
    s = socsim.run("sd865", WL, scheduler="other-graph").summary
    assert s["precision"] == "niti" and s["precision_requested"] == "fp32"
    s = socsim.run("sd865", WL, scheduler="mnn-fp32").summary
    assert s["precision"] == "fp32" and "precision_requested" not in s
