"""Min-Energy composed on another scheduler (``base``): the base gets every runtime hook as if it
ran alone, min-energy keeps its frequency levels on the plans the base switches to, and the
summary's ``base_info`` is the base's report at the end of the run.  The base here is a small
scheduler defined in this file, registered for the test only."""
from __future__ import annotations

import pytest

import socsim
from socsim.sched import registry
from socsim.sched.api import BaseScheduler
from socsim.sched.common import single_unit_plan

HOOKS = ("on_batch_start", "on_batch_end", "on_thermal_trip", "on_memory_pressure", "on_interference")


class HookSpy(BaseScheduler):
    """Logs every hook with the plan the engine says is running; switches to two cores when the
    memory budget drops, and stops the run when asked to."""

    name = "hook-spy"
    instances: list["HookSpy"] = []

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.calls: list[tuple[str, str | None]] = []
        self.labels: list[str] = []
        HookSpy.instances.append(self)

    def plan(self, ctx):
        g = ctx.graph()
        self.big4 = single_unit_plan(g, "cpu", ctx.cores("big4"), "spy-big4")
        self.big2 = single_unit_plan(g, "cpu", ctx.cores("big2"), "spy-big2")
        return self.big4

    def _log(self, hook, ctx):
        self.calls.append((hook, getattr(ctx.plan, "label", None)))

    def on_batch_start(self, ctx, batch):
        self._log("on_batch_start", ctx)

    def on_batch_end(self, ctx, batch, record):
        self._log("on_batch_end", ctx)
        self.labels.append(record.plan_label)

    def on_thermal_trip(self, ctx, event):
        self._log("on_thermal_trip", ctx)

    def on_memory_pressure(self, ctx, budget_bytes):
        self._log("on_memory_pressure", ctx)
        return self.big2 if budget_bytes < 800 * (1 << 20) else None

    def on_interference(self, ctx, event):
        self._log("on_interference", ctx)

    def summary_extra(self):
        return {"hooks": {h: sum(1 for c, _ in self.calls if c == h) for h in HOOKS}}


@pytest.fixture
def spy(monkeypatch):
    real = registry.discover

    def discover():
        return {**real(), "hook-spy": registry.Entry("hook-spy", f"{__name__}:HookSpy", HookSpy, None)}

    monkeypatch.setattr(registry, "discover", discover)
    HookSpy.instances.clear()
    yield HookSpy.instances
    HookSpy.instances.clear()


BATCHES = 60
# ambient 50 C is above the first skin trip points (39, 43, 45, 47 C): trips at the governor's
# first poll, 0.25 s in (60 batches of 64 run ~0.37 s)
WL = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=64, batches=BATCHES,
          precision="fp32",
          environment={"ambient_c": 50,
                       "memory_budget_mb": [{"at_s": 0, "mb": 900}, {"at_s": 0.02, "mb": 600}],
                       "foreground_load": {"name": "game", "cores": [6, 7], "start_s": 0.01,
                                           "duration_s": 0.02, "utilization": 0.8}})
COMPOSED = {"name": "min-energy", "options": {"base": {"name": "hook-spy"}, "slack": 1.5}}


def _counts(calls):
    return {h: sum(1 for c, _ in calls if c == h) for h in HOOKS}


def test_the_base_gets_every_hook_and_keeps_min_energys_levels(spy):
    alone = socsim.run("sd865", {**WL, "scheduler": {"name": "hook-spy"}}).summary
    alone_counts = _counts(spy[-1].calls)
    comp = socsim.run("sd865", {**WL, "scheduler": COMPOSED}).summary
    base = spy[-1]
    counts = _counts(base.calls)
    assert alone["batches"] == comp["batches"] == BATCHES
    # every hook reaches the base: the events of the environment as often as when it runs alone
    assert counts["on_memory_pressure"] == alone_counts["on_memory_pressure"] == 2
    assert counts["on_interference"] == alone_counts["on_interference"] == 2
    assert counts["on_thermal_trip"] >= 1 and alone_counts["on_thermal_trip"] >= 1
    assert counts["on_batch_start"] == counts["on_batch_end"] == BATCHES
    # the base sees its own plans (not min-energy's variants) in ctx.plan and in the records
    assert {label for _, label in base.calls} <= {"spy-big4", "spy-big2"}
    assert set(base.labels) == {"spy-big4", "spy-big2"}
    # the plan the base switched to on memory pressure ran, at a min-energy frequency level
    plans = comp["placement"]["plans"]
    assert any(p.startswith("spy-big2 @") for p in plans), plans
    assert all(p.split(" @")[1] in ("high", "medium", "low") for p in plans)
    assert comp["placement"]["cpu_cores"] == [4, 5, 6, 7]


def test_a_stop_asked_by_the_base_ends_the_run(spy, monkeypatch):
    def stop_at_3(self, ctx, batch, record):
        if batch == 3:
            ctx.stop("spy: enough")
    monkeypatch.setattr(HookSpy, "on_batch_end", stop_at_3)
    s = socsim.run("sd865", {**WL, "scheduler": COMPOSED}).summary
    assert s["batches"] == 4 and s["engine"]["stop_reason"] == "spy: enough"


def test_base_info_is_the_bases_report_at_the_end_of_the_run(spy):
    s = socsim.run("sd865", {**WL, "scheduler": COMPOSED}).summary
    hooks = s["scheduler_info"]["base_info"]["hooks"]
    assert hooks["on_batch_start"] == hooks["on_batch_end"] == BATCHES
    assert hooks["on_memory_pressure"] == 2


def test_mandheling_levels_share_one_prepared_dsp_graph_and_the_budget_counts_its_preparation():
    """The variants of a base plan at different CPU levels run the DSP graph the base prepared
    (only the CPU operating point differs); the budget includes the first batch's preparation,
    and the summary says whether the run kept to it."""
    s = socsim.run("sd865", "workloads/compose_mandheling_min_energy.yaml",
                   overrides={"batches": 5, "scheduler.options.slack": 1.1}).summary
    info = s["scheduler_info"]
    assert len(info["sequence"]) > 1                      # the levels change during the run
    labels = {p.split(" @")[0] for p in s["placement"]["plans"]}  # the base's plans, without levels
    assert s["engine"]["dsp_graph_preparations"] == len(labels) == 2
    fastest_s = min(v["time_s"] for v in info["levels"].values())
    assert info["first_batch_prep_s"] > 0
    assert info["theta_t_s"] == pytest.approx(1.1 * (5 * fastest_s + info["first_batch_prep_s"]), rel=1e-5)
    assert info["run_time_s"] == pytest.approx(s["sim_time_s"], abs=1e-5)
    assert info["within_budget"] == (s["sim_time_s"] <= info["theta_t_s"])
