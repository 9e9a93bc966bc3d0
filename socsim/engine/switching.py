"""Plan switching: the plans hooks hand (checked once each, in force at the next batch start),
the record of each plan that takes over, and continuations of a batch in progress
(``RunContext.continue_batch``).  A part of :class:`~socsim.engine.sim.Engine`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from socsim.contract import Plan, check_plan, plan_coverage, short_plan_note
from socsim.errors import ScheduleError

if TYPE_CHECKING:  # pragma: no cover
    import simpy

    from socsim.engine.context import PlanContext, RunContext
    from socsim.spec.soc import SocSpec
    from socsim.spec.workload import Workload
    from socsim.engine.recorder import Recorder
    from socsim.engine.stats import RunStats


class PlanSwitching:
    """The engine's plan bookkeeping.  Reads the engine's ``rctx``, ``pctx``, ``stats``,
    ``recorder``, ``soc``, ``workload``, ``env`` and ``scheduler_name``; owns the pending plan."""

    rctx: RunContext
    pctx: PlanContext
    stats: RunStats
    recorder: Recorder
    _plan: Plan
    _plan_key: tuple
    _keyed_plan: Plan | None = None   # the plan ``_plan_key`` was last computed of
    soc: SocSpec
    workload: Workload
    env: simpy.Environment
    if TYPE_CHECKING:  # the engine's property
        @property
        def scheduler_name(self) -> str: ...

    def _init_switching(self) -> None:
        self._pending_plan: Plan | None = None
        self._pending_hook = "a hook"   # the method that handed the pending plan (for reports)
        self._checked: dict[int, Plan] = {}  # plans check_plan passed (kept, so their ids stay theirs)
        self._covered: dict[int, Plan] = {}  # plans plan_coverage measured (likewise)
        self._runs_keys: dict[int, tuple[Plan, tuple]] = {}  # runs_key of each plan (kept, likewise)
        self._config_changed = False  # the next batch pays a core-set / frequency switch

    def _apply(self, new_plan: Plan | None, hook: str) -> None:
        if self.rctx._continuation is not None:
            self.rctx._continuation = None
            raise self._continuation_error(hook, "only on_memory_pressure() can continue the batch in progress "
                                                 "(ctx.step_in_progress is set only there)")
        if new_plan is not None and new_plan is self._plan:
            self._pending_plan = None  # back to the plan running: a switch handed earlier is off
        elif new_plan is not None:
            if self._checked.get(id(new_plan)) is not new_plan:  # plans are reused: check each once
                check_plan(new_plan, self.soc, scheduler=self.scheduler_name, hook=hook,
                           batch_size=self.workload.batch_size,
                           input_shape=self.workload.input)
                self._checked[id(new_plan)] = new_plan
            self._pending_plan = new_plan
            self._pending_hook = hook

    def _switch_plan(self, plan: Plan, hook: str) -> None:
        old = self._plan
        self._plan = plan
        self.rctx.plan = plan
        self._plan_in_force(plan, self.env.now, hook)
        self._config_changed = (old.cpu_cores != plan.cpu_cores or old.cpu_freq_mhz != plan.cpu_freq_mhz)

    def _plan_in_force(self, plan: Plan, t: float, hook: str = "a hook") -> None:
        """Record a plan taking over (the summary's ``placement.plans``, a ``plan`` event) when it
        changes what runs (label, steps and units, cores, operating point, DSP graph): a plan
        handed again, or its copy without the compilation it paid in its first batch, is not a
        new one; one with the label of the last but other cores is."""
        if plan is self._keyed_plan:   # (a Plan is frozen: the same object, the same key)
            return
        held = self._runs_keys.get(id(plan))   # a plan is frozen: its key once (schedulers alternate plans)
        if held is None or held[0] is not plan:
            held = self._runs_keys[id(plan)] = (plan, runs_key(plan))
        key = held[1]
        self._keyed_plan = plan
        if key != self._plan_key:
            self._plan_key = key
            self._coverage(plan, hook)
            if plan.label:
                self.stats.plan_labels.append(plan.label)
                self.recorder.instant(t, "engine", "plan", plan.label)

    def _coverage(self, plan: Plan, hook: str) -> None:
        """Note a plan that runs less than the whole training step (plan_coverage), once per
        plan object (schedulers hand the same plans back and forth)."""
        if self._covered.get(id(plan)) is plan:
            return
        self._covered[id(plan)] = plan
        prec = self.pctx.precision_of(plan)
        if prec is not None and prec not in self.stats.plan_precisions:
            self.stats.plan_precisions.append(prec)
        frac, missing = plan_coverage(plan, self.pctx.graph())
        if frac < self.stats.work_fraction:
            self.stats.work_fraction = frac
        if missing is not None and self.stats.short_plan is None:
            self.stats.short_plan = short_plan_note(plan, hook, self.scheduler_name, missing)
            self.recorder.instant(self.env.now, "engine", "short plan", self.stats.short_plan)

    def _take_continuation(self, t: float, running: tuple[Plan, int] | None, step: int | None,
                           taken: list[tuple[int, Plan]]) -> None:
        """A continuation ``on_memory_pressure`` handed (``ctx.continue_batch``), checked against
        the plan running (the last continuation taken, else the batch's) and put in force from
        ``step``; appended to ``taken``."""
        c, self.rctx._continuation = self.rctx._continuation, None
        if c is None:
            return
        hook = "on_memory_pressure()"
        if running is None or step is None:
            raise self._continuation_error(hook, "no batch is in progress (ctx.step_in_progress is None)")
        cur = taken[-1][1] if taken else running[0]
        self._check_continuation(c, cur, step, hook)
        taken.append((step, c))
        self.rctx.plan = c
        self._plan_in_force(c, t, f"ctx.continue_batch() in {hook}")
        self.recorder.instant(t, "engine", "continue batch", f"from step {step}: {c.label}")

    def _continuation_error(self, hook: str, msg: str) -> ScheduleError:
        name = self.scheduler_name
        return ScheduleError(f"ctx.continue_batch() from {hook} of scheduler {name!r}: {msg}",
                             field="scheduler.name", value=name)

    def _check_continuation(self, c: Plan, running: Plan, step: int, hook: str) -> None:
        """A continuation is a plan the engine can run whose steps up to the one in progress are
        the running plan's, on the same cores at the same operating point."""
        check_plan(c, self.soc, scheduler=self.scheduler_name, hook=f"ctx.continue_batch() in {hook}",
                   batch_size=self.workload.batch_size,
                   input_shape=self.workload.input)
        if c.count("dsp") and not running.count("dsp"):
            raise self._continuation_error(hook, "it runs ops on the DSP, whose graph this batch did not prepare "
                                                 "(the running plan has no DSP steps)")
        for f in ("cpu_cores", "cpu_freq_mhz", "governor", "dsp_graph", "shared_buffers"):
            if getattr(c, f) != getattr(running, f):
                raise self._continuation_error(
                    hook, f"its {f} {getattr(c, f)!r} differs from the running plan's {getattr(running, f)!r}; "
                          "a batch keeps its cores, operating point and DSP graph")
        if len(c.steps) <= step:
            raise self._continuation_error(
                hook, f"it has {len(c.steps)} steps, but step {step} of the running plan is in progress; a "
                      f"continuation keeps the running plan's steps 0-{step} and replaces only those after them")
        for k in range(step + 1):
            x, y = c.steps[k], running.steps[k]
            if x is not y and (x.unit != y.unit or (x.op is not y.op and x.op != y.op)):
                raise self._continuation_error(
                    hook, f"its step {k} ({x.op.name} on {x.unit}) is not the running plan's ({y.op.name} on "
                          f"{y.unit}); the steps up to the one in progress ({step}) must be the running plan's")


def runs_key(plan: Plan) -> tuple:
    """What a plan runs, as far as the reports are concerned (not its one-off overheads)."""
    return (plan.label, plan.cpu_cores, plan.cpu_freq_mhz, plan.governor, plan.dsp_graph, plan.shared_buffers,
            tuple((st.op, st.unit, st.label) for st in plan.steps))
