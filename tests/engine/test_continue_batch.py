"""A memory-budget step inside a batch cuts it there, and ``on_memory_pressure`` may continue the
batch with another plan (``RunContext.continue_batch``): what Sage needs to re-split
mid-iteration (docs/seeds.md 2).  socsim/engine/sim.py ``_run_batch``, ``_budget_hooks``."""
from __future__ import annotations

from dataclasses import replace

import pytest

from socsim.errors import ScheduleError
from socsim.contract import BaseScheduler, Plan

from engine_runs import lenet, run

MIB = 1 << 20


class Continuer(BaseScheduler):
    """Runs the graph on the big cores at 100 MiB; a budget step inside a batch continues it
    with the same steps at 10 MiB from the step in progress on, paying a 50 ms re-plan."""

    name = "continuer"

    def __init__(self, mode: str = "ok") -> None:
        super().__init__()
        self.mode = mode
        self.seen: list[tuple[str, int | None]] = []

    def plan(self, ctx) -> Plan:
        from socsim.contract import Step
        ops = ctx.graph().ops
        self.base = Plan(steps=tuple(Step(o, "cpu") for o in ops), cpu_cores=(4, 5, 6, 7),
                         peak_memory_bytes=100 * MIB, step_memory=(100 * MIB,) * len(ops), label="base")
        return self.base

    def on_batch_end(self, ctx, batch, record):
        self.seen.append(("end", ctx.step_in_progress))
        if self.mode == "from_batch_end":
            ctx.continue_batch(self.base)
        return None

    def on_memory_pressure(self, ctx, budget_bytes):
        j = ctx.step_in_progress
        self.seen.append(("memory", j))
        if j is None:
            return None
        run = ctx.plan
        steps = run.steps
        if self.mode == "wrong_prefix":
            steps = steps[::-1]
        if self.mode == "adds_dsp":
            # int8 copies of the rest on the DSP, which runs them; but this batch prepared no
            # DSP graph (the running plan's dsp_graph is "none", and a continuation keeps it)
            steps = steps[: j + 1] + tuple(replace(st, op=replace(st.op, dtype="int8"), unit="dsp")
                                           for st in steps[j + 1:])
        if self.mode == "too_short":   # only the steps after the one in progress
            steps = steps[j + 1:] or steps[:1]
        if self.mode == "not_a_plan":
            ctx.continue_batch("cont")
            return None
        mem = run.step_memory[:j] + (10 * MIB,) * (len(steps) - j)
        mem = mem[:len(steps)]
        cont = replace(run, steps=steps, step_memory=mem, peak_memory_bytes=max(mem), label="cont",
                       prep_overheads=(("re-plan", 0.05),),
                       cpu_cores=(4, 5) if self.mode == "other_cores" else run.cpu_cores,
                       dsp_graph="per_batch" if self.mode == "adds_dsp_graph" else run.dsp_graph)
        if self.mode == "adds_dsp_graph":
            cont = replace(cont, steps=steps[: j + 1] + tuple(replace(st, op=replace(st.op, dtype="int8"), unit="dsp")
                                                              for st in steps[j + 1:]))
        ctx.continue_batch(cont)
        return None


def _workload(step_at_s: float) -> dict:
    return lenet(batches=3, environment={"memory_budget_mb": [{"at_s": 0, "mb": 1000},
                                                             {"at_s": step_at_s, "mb": 50}]})


@pytest.fixture(scope="module")
def base_time(tmp_path_factory):
    r = run(tmp_path_factory.mktemp("base"), lenet(batches=1), scheduler=Continuer())
    return r.batches()[0]["time_s"]


def test_a_continuation_takes_over_at_the_budget_step(tmp_path, base_time):
    t_step = 1.4 * base_time  # inside batch 1
    sched = Continuer()
    r = run(tmp_path, _workload(t_step), scheduler=sched)
    rows = r.batches()
    assert [b["plan"] for b in rows] == ["base", "cont", "base"]
    assert rows[0]["time_s"] == pytest.approx(base_time, rel=1e-9)
    assert rows[1]["time_s"] == pytest.approx(base_time + 0.05, rel=1e-9)  # the re-plan, once
    assert rows[2]["time_s"] == pytest.approx(base_time, rel=1e-9)         # the old plan again
    # the hook ran at the step's time, with the step then in progress
    ops1 = [o for o in r.ops() if o["batch"] == 1 and o["track"] == "cpu4"]
    running = [k for k, o in enumerate(ops1) if o["start_s"] <= t_step < o["start_s"] + o["dur_s"]]
    assert sched.seen[:2] == [("memory", None), ("end", None)]  # the first step: before batch 0
    assert sched.seen[2] == ("memory", running[0])
    assert all(j is None for what, j in sched.seen if what == "end")
    ev = [e for e in r.events() if e["name"] == "continue batch"]
    assert len(ev) == 1 and ev[0]["t_s"] == pytest.approx(t_step, abs=1e-12)
    # the re-plan runs once the op in progress is done
    replan = [o for o in r.ops() if o["name"] == "re-plan"]
    op = ops1[running[0]]
    assert len(replan) == 1 and replan[0]["start_s"] == pytest.approx(op["start_s"] + op["dur_s"], abs=1e-9)
    # 100 MiB before the step, 10 MiB after it: within the 1000 -> 50 MiB budget; batch 2 is
    # the old plan again (the hook handed no plan for later batches), 100 MiB throughout
    mem = r.summary["memory"]
    assert mem["over_budget"]["batches"] == 1 and mem["continued_batches"] == 1
    assert mem["over_budget"]["seconds"] == pytest.approx(base_time, rel=1e-6)
    assert r.summary["sim_time_s"] == pytest.approx(sum(b["time_s"] for b in rows), abs=1e-8)
    # the plans as they took over: the continuation, then the old plan again
    assert r.summary["placement"]["plans"] == ["base", "cont", "base"]
    plans = [e for e in r.events() if e["name"] == "plan"]
    assert [e["detail"] for e in plans] == ["cont", "base"]
    assert plans[0]["t_s"] == pytest.approx(t_step) and plans[1]["t_s"] == pytest.approx(rows[2]["start_s"])


def test_without_a_continuation_the_batch_finishes_over_the_budget(tmp_path, base_time):
    class Ignores(Continuer):
        def on_memory_pressure(self, ctx, budget_bytes):
            return None

    t_step = 1.4 * base_time
    r = run(tmp_path, _workload(t_step), scheduler=Ignores())
    over = r.summary["memory"]["over_budget"]
    assert over["batches"] == 2 and over["seconds"] == pytest.approx(3 * base_time - t_step, rel=1e-6)
    assert r.summary["memory"]["continued_batches"] == 0
    # one overrun, from the step on through the next batch: one event, where it starts
    ev = r.events()
    (o,) = [e for e in ev if e["name"] == "over memory budget"]
    assert o["t_s"] == pytest.approx(t_step) and o["detail"] == "batch 1: 50.0 MiB over the 50 MiB budget"
    assert [e["t_s"] for e in ev] == sorted(e["t_s"] for e in ev)


def test_two_steps_at_one_time_pay_both_continuations(tmp_path, base_time):
    t_step = 1.4 * base_time
    wl = lenet(batches=3, environment={"memory_budget_mb": [{"at_s": 0, "mb": 1000}, {"at_s": t_step, "mb": 60},
                                                            {"at_s": t_step, "mb": 50}]})
    r = run(tmp_path, wl, scheduler=Continuer())
    assert r.batches()[1]["time_s"] == pytest.approx(base_time + 0.1, rel=1e-9)
    assert len([o for o in r.ops() if o["name"] == "re-plan"]) == 2
    assert r.summary["memory"]["continued_batches"] == 1  # one batch, continued twice


def test_a_step_in_the_preparation_may_replace_every_step(tmp_path, base_time):
    """In the batch's preparation no step has begun (step_in_progress -1): a continuation may
    replace them all, and its overheads run once the preparation is done."""
    class Prepares(Continuer):
        def plan(self, ctx):
            return replace(super().plan(ctx), prep_overheads=[["prepare", 0.2]])  # lists are fine too

        def on_memory_pressure(self, ctx, budget_bytes):
            self.seen.append(("memory", ctx.step_in_progress))
            if ctx.step_in_progress is not None:
                run = ctx.plan
                ctx.continue_batch(replace(run, steps=run.steps[::-1], label="reversed",
                                           prep_overheads=[["re-plan", 0.05]]))
            return None

    t_step = base_time + 0.2 + 0.1  # inside batch 1's preparation (0.2 s)
    sched = Prepares()
    r = run(tmp_path, _workload(t_step), scheduler=sched)
    assert ("memory", -1) in sched.seen
    rows = r.batches()
    assert rows[1]["plan"] == "reversed" and rows[1]["time_s"] == pytest.approx(base_time + 0.25, rel=1e-6)


@pytest.mark.parametrize("mode, words", [
    ("from_batch_end", "only on_memory_pressure() can continue"),
    ("wrong_prefix", "is not the running plan's"),
    ("other_cores", "cpu_cores (4, 5) differs from the running plan's"),
    ("adds_dsp", "ops on the DSP but has dsp_graph 'none'"),
    # with a DSP graph of its own: the reason is the graph this batch did not prepare
    ("adds_dsp_graph", "whose graph this batch did not prepare"),
    ("too_short", "a continuation keeps the running plan's steps 0-"),
    ("not_a_plan", "ctx.continue_batch() in on_memory_pressure() was given str, not a Plan"),
])
def test_a_bad_continuation_is_the_schedulers_error(tmp_path, base_time, mode, words):
    with pytest.raises(ScheduleError) as e:
        run(tmp_path, _workload(1.4 * base_time), scheduler=Continuer(mode))
    assert words in e.value.message and "ctx.continue_batch()" in e.value.message
    assert e.value.field == "scheduler.name"


def test_a_profile_that_starts_late_leaves_the_time_before_unbounded(tmp_path, base_time):
    """Before a profile's first step there is no budget: the plan sees none, nothing is over it,
    and the hook hears of the first step when it comes (docs/guide.md, memory_budget_mb)."""
    class Ignores(Continuer):
        def plan(self, ctx):
            self.at_start = ctx.memory_budget_bytes(0.0)
            return super().plan(ctx)

        def on_memory_pressure(self, ctx, budget_bytes):
            self.seen.append(("memory", ctx.now_s))
            return None

    t_step = 1.4 * base_time
    sched = Ignores()
    r = run(tmp_path, lenet(batches=3, environment={"memory_budget_mb": [{"at_s": t_step, "mb": 50}]}),
            scheduler=sched)
    assert sched.at_start is None and ("memory", t_step) in sched.seen
    over = r.summary["memory"]["over_budget"]
    assert over["seconds"] == pytest.approx(3 * base_time - t_step, rel=1e-6)
