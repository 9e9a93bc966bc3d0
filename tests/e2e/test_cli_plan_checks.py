"""A third-party scheduler's bad plans at the command line: `run` and `validate --soc` both exit 2
naming the scheduler (the error's value) and the method that returned the plan, never an
internal error or a run of a plan the engine cannot execute (docs/plugins.md section 5)."""
from __future__ import annotations

import importlib
import sys

import pytest

from cli_helpers import invoke, write_workload

PLUGIN = '''
from socsim.sched.api import BaseScheduler, Plan, Step
from socsim.sched.common import single_unit_plan


class _Simple(BaseScheduler):
    def plan(self, ctx):
        return single_unit_plan(ctx.graph(), "cpu", (4, 5, 6, 7), self.name)


class NpuPlan(_Simple):
    name = "npu-plan"
    def plan(self, ctx):
        return Plan(steps=tuple(Step(op, "npu") for op in ctx.graph().ops), cpu_cores=(4, 5, 6, 7))


class EmptyPlan(_Simple):
    name = "empty-plan"
    def plan(self, ctx):
        return Plan(steps=(), cpu_cores=(4,), label="empty")


class FreqPlan(_Simple):
    name = "freq-plan"
    def plan(self, ctx):
        return single_unit_plan(ctx.graph(), "cpu", (4, 5, 6, 7), "f", cpu_freq_mhz=(("nosuchcluster", -5.0),))


class HugeFreq(_Simple):
    name = "huge-freq"
    def plan(self, ctx):
        return single_unit_plan(ctx.graph(), "cpu", (4, 5, 6, 7), "f", cpu_freq_mhz=(("mid", 99999.0),))


class Fp32OnDsp(_Simple):
    name = "fp32-on-dsp"
    def plan(self, ctx):
        return Plan(steps=tuple(Step(op, "dsp") for op in ctx.graph().ops), cpu_cores=(4,), dsp_graph="reuse")


class DspNoGraph(_Simple):
    name = "dsp-no-graph"
    precision = "niti"
    def plan(self, ctx):
        import math
        ops = ctx.graph().ops
        return Plan(steps=tuple(Step(op, "dsp" if math.isfinite(ctx.profile(op, "dsp")) else "cpu") for op in ops),
                    cpu_cores=(4,))


class DictPlan(_Simple):
    name = "dict-plan"
    def plan(self, ctx):
        return {"steps": []}


class NoWeightGrads(_Simple):
    name = "no-wgrad"
    def plan(self, ctx):
        ops = tuple(op for op in ctx.graph().ops if not op.kind.endswith("_wgrad"))
        return Plan(steps=tuple(Step(op, "cpu") for op in ops), cpu_cores=(4, 5, 6, 7), label="fwd+dgrad")


def _one_bad_op(ctx, **changes):
    from dataclasses import replace
    ops = list(ctx.graph().ops)
    ops[0] = replace(ops[0], **changes)
    return Plan(steps=tuple(Step(op, "cpu") for op in ops), cpu_cores=(4, 5, 6, 7))


class NanOp(_Simple):
    name = "nan-op"
    def plan(self, ctx):
        return _one_bad_op(ctx, macs=float("nan"))


class ZeroStride(_Simple):
    name = "zero-stride"
    def plan(self, ctx):
        op = ctx.graph().ops[0]
        return _one_bad_op(ctx, params=tuple((k, 0) for k, _ in op.params))


class HugeBatch(_Simple):
    name = "huge-batch"
    def plan(self, ctx):
        op = ctx.graph().ops[0]
        return _one_bad_op(ctx, params=tuple((k, 10**30 if k == "batch" else v) for k, v in op.params))


class DayLongPrep(_Simple):
    name = "day-prep"
    def plan(self, ctx):
        from dataclasses import replace
        return replace(super().plan(ctx), cpu_graph_prep_s=1e300)


class StrFromHook(_Simple):
    name = "str-hook"
    def on_batch_end(self, ctx, batch, record):
        return "not a plan"
'''
EPS = {"npu-plan": "NpuPlan", "empty-plan": "EmptyPlan", "freq-plan": "FreqPlan", "huge-freq": "HugeFreq",
       "dict-plan": "DictPlan", "str-hook": "StrFromHook", "fp32-on-dsp": "Fp32OnDsp",
       "dsp-no-graph": "DspNoGraph", "no-wgrad": "NoWeightGrads", "nan-op": "NanOp", "zero-stride": "ZeroStride",
       "huge-batch": "HugeBatch", "day-prep": "DayLongPrep"}


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    site = tmp_path / "site"
    d = site / "socsim_planchecks-0.1.0.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text("Metadata-Version: 2.1\nName: socsim_planchecks\nVersion: 0.1.0\n")
    (d / "entry_points.txt").write_text("[socsim.schedulers]\n" + "".join(
        f"{n} = socsim_planchecks:{c}\n" for n, c in EPS.items()))
    (site / "socsim_planchecks.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield
    sys.modules.pop("socsim_planchecks", None)


@pytest.mark.parametrize("name, words", [
    ("npu-plan", ["plan()", "unit 'npu'"]),
    ("empty-plan", ["plan()", "no steps"]),
    ("freq-plan", ["plan()", "'nosuchcluster'"]),
    ("huge-freq", ["plan()", "99999", "above the highest"]),
    ("dict-plan", ["plan() returned dict, not a Plan"]),
    ("fp32-on-dsp", ["plan()", "step 0 places op", "fp32) on the dsp of sd865, which cannot run it"]),
    ("dsp-no-graph", ["plan()", "ops on the DSP but has dsp_graph 'none'"]),
    ("nan-op", ["plan()", "step 0 has op", "macs nan"]),
    ("zero-stride", ["plan()", "step 0 has op", "at least 1"]),
    ("huge-batch", ["plan()", "step 0 has op", "batch=" + str(10**30)]),
    ("day-prep", ["plan()", "cpu_graph_prep_s 1e+300", "0 to 86400"]),
])
def test_bad_plans_exit_2_under_run_and_validate(plugin, tmp_path, name, words):
    wl = write_workload(tmp_path, scheduler={"name": name})
    for args in (["run", "--soc", "sd865", str(wl), "--quiet", "--out", str(tmp_path / "out")],
                 ["validate", str(wl), "--soc", "sd865"]):
        r = invoke(*args, terminal_width=300)
        out = " ".join(r.output.split())
        assert r.exit_code == 2, (args, r.output)
        assert "field 'scheduler.name'" in out and f"value '{name}'" in out, out
        for w in words:
            assert w in out, out
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_a_bad_plan_from_a_hook_names_the_hook(plugin, tmp_path):
    wl = write_workload(tmp_path)
    r = invoke("run", "--soc", "sd865", str(wl), "--scheduler", "str-hook", "--quiet", terminal_width=300)
    out = " ".join(r.output.split())
    assert r.exit_code == 2 and "value 'str-hook'" in out and "on_batch_end() returned str, not a Plan" in out, out


def test_a_plan_that_leaves_ops_out_runs_with_a_warning(plugin, tmp_path):
    """Not refused (a scheduler may mean to train part of a model), but never silent: the
    summary's placement.work_fraction, engine.short_plan and a console warning name what is missing."""
    import json

    wl = write_workload(tmp_path, scheduler={"name": "no-wgrad"})
    r = invoke("run", "--soc", "sd865", str(wl), "--json", str(tmp_path / "s.json"), "--out", str(tmp_path / "run"),
               terminal_width=300)
    out = " ".join(r.output.split())
    assert r.exit_code == 0, r.output
    # the report page leads with it; the trace and events.csv mark it where the plan took over
    page = (tmp_path / "run" / "report.html").read_text()
    assert page.index('class="notes"') < page.index("<h2>Summary</h2>") and "runs only part of the" in page
    assert "short plan" in (tmp_path / "run" / "events.csv").read_text()
    assert ("warning: no-wgrad: the plan 'fwd+dgrad' from plan() of scheduler 'no-wgrad' runs only part of "
            "the training step: 14.1% of its weight-gradient work; ops of ctx.graph() not among its steps: "
            "conv2.wgrad, conv1.wgrad") in out, out     # the FC layers' gradient GEMMs are still there
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["placement"]["work_fraction"] == pytest.approx(0.141458, abs=1e-6)
    assert "wgrad" in s["engine"]["short_plan"]
    v = invoke("validate", str(wl), "--soc", "sd865", terminal_width=300)
    assert v.exit_code == 0 and "warning: the plan 'fwd+dgrad' from plan() of scheduler 'no-wgrad' runs only part" in " ".join(v.output.split())
    # the warning is not a console nicety: --quiet and --json - keep it (on stderr)
    for args in (["--quiet"], ["--json", "-"]):
        r = invoke("run", "--soc", "sd865", str(wl), *args, terminal_width=300)
        assert r.exit_code == 0 and "runs only part of the training step" in " ".join(r.stderr.split()), args
    r = invoke("compare", "--soc", "sd865", str(wl), "--schedulers", "no-wgrad,mnn-fp32", "--json", "-",
               terminal_width=300)
    assert r.exit_code == 0 and "runs only part of the training step" in " ".join(r.stderr.split())
    # the shipped schedulers run every op: no warning, work_fraction 1
    ok = write_workload(tmp_path, scheduler={"name": "mnn-fp32"})
    r = invoke("run", "--soc", "sd865", str(ok), "--json", str(tmp_path / "ok.json"), terminal_width=300)
    assert r.exit_code == 0 and "warning" not in r.output
    s = json.loads((tmp_path / "ok.json").read_text())
    assert s["placement"]["work_fraction"] == 1.0 and "short_plan" not in s["engine"]
