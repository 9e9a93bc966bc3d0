"""Sage (MobiSys '22): memory-efficient DNN training on mobile GPUs (docs/seeds.md section 2).

Sage optimises the unified forward+backward training graph (operator fusion and subgraph
reduction, :mod:`socsim.sched.fusion`) and manages memory at run time under a budget that may
change while training (:mod:`socsim.sched.memory`):

none                 run the whole mini-batch; fails if it does not fit
static-checkpoint    keep one stored activation in every sqrt(n), recompute the rest
static-accumulation  two micro-batches of half the mini-batch
dgc                  dynamic gradient checkpointing: evict the stored tensor with the lowest
                     recompute latency / size until the peak fits the budget
dga                  dynamic gradient accumulation: micro-batches as large as fit (32 -> 20+12)
hybrid (default)     shrink the micro-batch while it stays >= MTP (the size below which the GPU
                     is under-utilised, pub:gpu_micro_batch_tipping_point = 6 for ResNet-50);
                     below that, checkpoint at the MTP (and smaller only if that cannot fit)

JIT compilation: the first batch run with a plan whose kernels were not compiled before pays
``JIT_S_PER_KERNEL`` per new kernel (a ``jit-compile`` overhead on the host core); the plan
carrying that overhead runs exactly one batch and ``on_batch_end`` then hands the steady plan
(the engine switches at the next batch start).  Kernels count as compiled once a batch runs them,
so a plan superseded before it ran charges nothing (``splits[].first_batch`` is then None).

The budget is ``options.budget_mb``, else the workload's ``environment.memory_budget_mb`` (a
number, or a profile of ``{at_s, mb}`` steps delivered through ``on_memory_pressure``).  Every
budget of the profile is planned up front, so a budget below the minimum feasible fails before
the run with a :class:`~socsim.errors.ScheduleError` naming the field and value.

Mid-iteration re-split (docs/seeds.md 2: "the split adapts mid-iteration as the budget drops"): when
the budget drops during a batch below what the rest of the batch needs, Sage continues the batch
(``RunContext.continue_batch``).  The micro-batch in progress evicts at once and goes on under
DGC at the new budget (its schedule so far unchanged, :func:`~socsim.sched.memory.simulate`'s
``budget_changes``); the samples not yet started are re-split by the strategy at the new
budget; the new kernels are compiled once the kernel in progress is done.  The plan for the new
budget takes over from the next batch.  (Only where the micro-batch in progress cannot fit the
new budget even by evicting all it may is the batch left to finish over it, which the summary's
``memory.over_budget`` then shows.)

Batch-norm caveat: with micro-batching, BN statistics here are per micro-batch (as gradient
accumulation computes them); matching mini-batch BN exactly needs the statistics computed
separately over the mini-batch (Sage 3.4.2), which this model does not charge for.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from socsim.errors import ScheduleError
from socsim.contract import BaseScheduler, Plan, Step
from socsim.sched.fusion import fuse, reduce_subgraphs
from socsim.sched.memory import (MAX_RECOMPUTE_FACTOR, Infeasible, Schedule, greedy_split, simulate,
                                 static_checkpoints)
from socsim.workload.costs import is_persistent
from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op, with_gpu_kernels

MB = 1 << 20

# JIT compilation of the fused OpenCL kernels when a new shape is first run: 260 ms for ResNet-50
# on the Galaxy Note 20 (pub:gpu_micro_batch_tipping_point.jit_compile_ms_resnet50_note20), which
# is 136 distinct fused kernels at batch 32 in this model (fusion + subgraph reduction): about
# 1.9 ms per distinct kernel.
JIT_S_PER_KERNEL = 0.260 / 136

STRATEGIES = ("none", "static-checkpoint", "static-accumulation", "dgc", "dga", "hybrid")


class SageOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    strategy: Literal["none", "static-checkpoint", "static-accumulation", "dgc", "dga", "hybrid"] = Field(
        "hybrid", description="memory management under the budget")
    mtp: int = Field(6, ge=1, description="micro-batch tipping point (pub:gpu_micro_batch_tipping_point)")
    unit: Literal["gpu", "cpu"] = Field("gpu", description="processor that trains")
    cores: str | list[int] | None = Field(None, description="CPU cores when unit=cpu (default big4)")
    budget_mb: float | None = Field(None, gt=0, description="overrides environment.memory_budget_mb")
    budget_mode: Literal["adaptive", "fixed"] = Field(
        "adaptive", description="adaptive: follow a budget profile; fixed: plan once for its lowest step")
    fusion: bool = True
    subgraph_reduction: bool = True
    kw: int = Field(5, ge=1, description="subgraph reduction: variadic (distinct) inputs < kw")
    kh: int = Field(5, ge=1, description="subgraph reduction: chained (monadic) nodes < kh")
    jit_compile: bool = Field(True, description="charge JIT compilation of new kernel shapes")

    @field_validator("cores")
    @classmethod
    def _cores(cls, v: str | list[int] | None) -> str | list[int] | None:
        from socsim.contract.cores import core_set_error
        problem = core_set_error(v) if v is not None else None  # the SoC's cores: at plan time
        if problem:
            raise ValueError(problem)
        return v


@dataclass(frozen=True)
class Decision:
    """A micro-batch split and the schedule of each distinct micro-batch size (in split order)."""

    split: tuple[int, ...]
    parts: tuple[Schedule, ...]

    @property
    def peak(self) -> int:
        return max(p.peak for p in self.parts)

    @property
    def recomputes(self) -> int:
        return sum(p.recomputes for p in self.parts)

    @property
    def evictions(self) -> int:
        return sum(p.evictions for p in self.parts)


class Sage(BaseScheduler):
    name = "sage"
    precision = "fp32"
    description = "Sage: graph optimisation + DGC/DGA/hybrid memory management under a budget (GPU)"
    memory_budget_plan = "it re-splits a batch in progress when the budget drops"
    Options = SageOptions

    def __init__(self, options: SageOptions | None = None) -> None:
        super().__init__(options)
        self._kernels: dict[int, tuple] = {}
        self._schedules: dict[tuple, Schedule | None] = {}
        self._decisions: dict[int | None, Decision] = {}
        self._plans: dict[tuple, Plan] = {}
        self._compiled: set[tuple] = set()    # kernel signatures a batch has run (JIT-compiled)
        self._steady: Plan | None = None       # the plan of the latest decision, without JIT
        self._handed: Plan | None = None       # the plan last handed to the engine
        self._handed_event: dict[str, Any] | None = None
        # id(plan carrying a jit-compile overhead) -> (its steady plan, new kernels, seconds)
        self._jit_plans: dict[int, tuple[Plan, frozenset, float]] = {}
        self._compiling: tuple[Plan, Plan] | None = None  # (plan compiling now, its steady plan)
        self._ran: list[tuple[int, ...]] = []  # micro-batch splits as run, consecutive distinct
        # plans built here: per step (micro-batch, kernel of its schedule; -1: the update steps)
        # and each micro-batch's schedule, so a batch in progress can be re-split
        # (and the plan itself, so that its id stays its own)
        self._layouts: dict[int, tuple[tuple[tuple[int, int], ...], tuple[Schedule, ...], int, Plan]] = {}
        self._sched_keys: dict[int, tuple] = {}  # id(schedule) -> how it was simulated
        self._resplits: list[dict[str, Any]] = []
        self._events: list[dict[str, Any]] = []
        self._stats: dict[str, Any] = {}
        self._peak = 0
        self._jit_s = 0.0

    # ------------------------------------------------------------------ planning
    def plan(self, ctx) -> Plan:
        self.ctx = ctx
        o = self.options
        wl = ctx.workload
        self.batch = wl.batch_size
        self.cores = ctx.cores(o.cores, default="big4", field="scheduler.options.cores") if o.unit == "cpu" else ()
        self._field = "scheduler.options.budget_mb" if o.budget_mb is not None else "environment.memory_budget_mb"
        budgets = self._budget_steps(ctx)
        self._pending_steps = list(budgets)
        static = o.strategy in ("none", "static-checkpoint", "static-accumulation")
        self.adaptive = o.budget_mode == "adaptive" and not static and len(budgets) > 1
        first = budgets[0][1] if self.adaptive else _min_budget(budgets)
        for _, b in budgets if self.adaptive else [(0.0, first)]:
            self.decide(b)  # fail before the run if any step of the profile is infeasible
        self._describe(ctx)
        return self._switch_to(self.decide(first), first, 0.0, 0)

    def _budget_steps(self, ctx) -> list[tuple[float, int | None]]:
        if self.options.budget_mb is not None:
            return [(0.0, int(self.options.budget_mb * MB))]
        raw = ctx.workload.environment.memory_budget_mb
        if isinstance(raw, list):
            steps = sorted(raw, key=lambda s: s.at_s)
            return [(s.at_s, int(s.mb * MB)) for s in steps]
        return [(0.0, ctx.memory_budget_bytes(0.0))]

    # -- the memory model of one micro-batch size -----------------------------------------
    def kernels(self, m: int) -> tuple[tuple[Op, ...], Any]:
        """Micro-batch ``m``'s training graph after subgraph reduction and fusion."""
        hit = self._kernels.get(m)
        if hit is None:
            o = self.options
            ops = self.ctx.graph(self.precision, m).ops
            sr = fs = None
            if o.subgraph_reduction:
                ops, sr = reduce_subgraphs(ops, o.kw, o.kh)
            outs = None
            if o.fusion:
                ops, outs, fs = fuse(ops)
            # Sage's own JIT-compiled OpenCL kernels run them (their ramp: socsim.hw.gpu)
            ops = tuple(with_gpu_kernels(op, "sage-jit") for op in ops)
            hit = self._kernels[m] = (ops, outs)
            if m == self.batch:
                if sr is not None:
                    self._stats["subgraph_reduction"] = {"tensors": sr.reduced,
                                                         "bytes_not_stored": sr.bytes_not_stored}
                if fs is not None:
                    self._stats["fusion"] = {"ops": fs.ops_before, "kernels": fs.kernels_after,
                                             "traffic_saved_bytes": fs.bytes_saved,
                                             "tensors_elided": fs.tensors_elided}
        return hit

    def schedule(self, m: int, budget: int | None = None, static: bool = False,
                 changes: tuple[tuple[int, int], ...] = ()) -> Schedule | None:
        """Micro-batch ``m`` run with no budget, under ``budget`` (DGC), or with static
        sqrt(n) checkpointing; ``changes``: the budget changing as it runs (a re-split
        mid-iteration); None if it cannot fit."""
        key = (m, budget, static, changes)
        if key in self._schedules:
            return self._schedules[key]
        try:
            s = self._simulate(key)
        except Infeasible:
            s = None
        self._schedules[key] = s
        if s is not None:
            self._sched_keys[id(s)] = key
        return s

    def _simulate(self, key: tuple, **kw) -> Schedule:
        m, budget, static, changes = key
        kernels, outs = self.kernels(m)
        g = self.ctx.graph(self.precision, m)
        base = g.persistent_bytes + g.input_bytes // m * (self.batch - m)  # rest of the mini-batch stays loaded
        forced, keep = static_checkpoints(kernels, outs) if static else (frozenset(), frozenset())
        return simulate(kernels, g.input_bytes, base, outputs=outs, budget_bytes=budget,
                        evict_after_forward=forced, keep=keep, latency_s=self._latency, budget_changes=changes, **kw)

    def plain(self, m: int) -> Schedule:
        s = self.schedule(m)
        assert s is not None
        return s

    def _latency(self, op: Op) -> float:
        return self.ctx.profile(op, self.options.unit, self.cores or None)

    # -- the strategies -------------------------------------------------------------------
    def decide(self, budget: int | None) -> Decision:
        d = self._decisions.get(budget)
        if d is None:
            d = self._decisions[budget] = self._decide(budget)
        return d

    def _decide(self, budget: int | None) -> Decision:
        o, b = self.options, self.batch
        s = o.strategy
        if s == "static-checkpoint":
            p = self.schedule(b, static=True)
            if p is None:  # its recomputation thrashes (socsim.sched.memory.simulate)
                raise ScheduleError(
                    f"static checkpointing of {self.ctx.workload.model} batch {b} recomputes more than "
                    f"{MAX_RECOMPUTE_FACTOR}x the batch's kernels: its sqrt(n) checkpoints leave segments too long to re-run",
                    field="scheduler.options.strategy", value=s)
            return self._check(Decision((b,), (p,)), budget, "static checkpointing, one in sqrt(n) kept")
        if s == "static-accumulation":
            split = greedy_split(b, -(-b // 2))
            return self._check(Decision(split, tuple(self.plain(m) for m in _sizes(split))), budget,
                               "static accumulation, two half-batch micro-batches")
        if s == "none" or budget is None:
            return self._check(Decision((b,), (self.plain(b),)), budget, "no memory management")
        if s == "dgc":
            p = self.schedule(b, budget)
            if p is None:
                self._infeasible(budget, f"DGC at the full batch of {b}", lambda x: self.schedule(b, x))
            return Decision((b,), (p,))  # type: ignore[arg-type]
        d = self._fit(b, budget)
        if d is not None:
            return d
        if s == "dga":
            self._infeasible(budget, "DGA down to micro-batch 1", lambda x: self.plain(1) if self.plain(1).peak <= x else None)
        self._infeasible(budget, "hybrid down to micro-batch 1 with checkpointing", lambda x: self.schedule(1, x))
        raise AssertionError  # pragma: no cover

    def _fit(self, n: int, budget: int) -> Decision | None:
        """DGA or the hybrid: ``n`` samples of the mini-batch as micro-batches under ``budget``
        (the whole mini-batch, or the samples a re-split mid-iteration has left); None if even
        micro-batch 1 cannot fit."""
        o = self.options
        m_fit = self._largest_fitting(budget)
        # DGA; the hybrid while the micro-batch stays at or above the MTP
        if o.strategy == "dga" or m_fit >= min(o.mtp, self.batch):
            if m_fit == 0:
                return None
            split = greedy_split(n, m_fit)
            return Decision(split, tuple(self.plain(m) for m in _sizes(split)))
        # the hybrid below the MTP: checkpoint at the MTP, smaller only if that cannot fit
        for m in range(min(o.mtp, self.batch), 0, -1):
            split = greedy_split(n, m)
            parts = [self.schedule(x, budget) for x in _sizes(split)]
            if all(p is not None for p in parts):
                return Decision(split, tuple(parts))  # type: ignore[arg-type]
        return None

    def _largest_fitting(self, budget: int) -> int:
        lo, hi = 0, self.batch  # the plain peak grows with m: binary search the largest that fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.plain(mid).peak <= budget:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _check(self, d: Decision, budget: int | None, what: str) -> Decision:
        if budget is not None and d.peak > budget:
            self._infeasible(budget, what, None, d.peak)
        return d

    def _infeasible(self, budget: int, what: str, fits, need: int | None = None) -> None:
        """Raise the ScheduleError, with the smallest feasible budget found by bisection."""
        if need is None:
            lo, hi = budget, max(budget, 1) * 2
            while fits(hi) is None:
                lo, hi = hi, hi * 2
            while hi - lo > MB:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if fits(mid) is not None else (mid, hi)
            need = hi
        wl = self.ctx.workload
        raise ScheduleError(
            f"memory budget {budget / MB:.0f} MiB is below the minimum feasible {need / MB:.0f} MiB for "
            f"{wl.model} batch {self.batch} with sage strategy '{self.options.strategy}' ({what})",
            field=self._field, value=round(budget / MB, 3))

    # -- plans ----------------------------------------------------------------------------
    def build_plan(self, d: Decision, jit_s: float = 0.0) -> Plan:
        key = (d.split, tuple(id(p) for p in d.parts), jit_s)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        by_size = dict(zip(_sizes(d.split), d.parts))
        scheds = tuple(by_size[m] for m in d.split)
        split_txt = "+".join(map(str, d.split))
        ck = f", {d.recomputes} recomputes" if d.recomputes else ""
        plan = self._assemble(scheds, d.split, f"sage {self.options.strategy} {split_txt}{ck}",
                              (("jit-compile", jit_s),) if jit_s > 0 else ())
        self._plans[key] = plan
        return plan

    def _assemble(self, scheds: tuple[Schedule, ...], split: tuple[int, ...], label: str,
                  overheads: tuple[tuple[str, float], ...], prefix: tuple = ((), (), ()),
                  before: tuple[Schedule, ...] = (), label_offset: int = 0) -> Plan:
        """The plan running micro-batch ``i`` as ``scheds[i]`` (forward and backward, the weight
        gradients accumulated), then the update from the last one.  A re-split keeps the part
        of the batch already planned: ``prefix`` (steps, memory, layout) runs first, and
        ``before`` are the schedules of the micro-batches it holds, so that ``scheds`` are
        micro-batches ``len(before)``... of ``split``.  ``label_offset``: added to a micro-batch's
        index in its trace labels (an abandoned micro-batch keeps its label)."""
        unit = self.options.unit
        steps: list[Step] = list(prefix[0])
        mem: list[int] = list(prefix[1])
        layout: list[tuple[int, int]] = list(prefix[2])
        first = len(before)
        for n, p in enumerate(scheds):
            i = first + n
            for kk, (k, live) in enumerate(zip(p.kernels, p.memory)):
                if k.phase == "update":
                    continue
                if i > 0 and _writes_weight_grad(k):
                    k = replace(k, bytes_read=k.bytes_read + k.weight_bytes)  # accumulate
                label_k = f"mb{i + label_offset}:{k.name}" if len(split) > 1 or label_offset else ""
                steps.append(Step(k, unit, label_k))
                mem.append(live)
                layout.append((i, kk))
        for kk, (k, live) in enumerate(zip(scheds[-1].kernels, scheds[-1].memory)):
            if k.phase == "update":
                steps.append(Step(k, unit))
                mem.append(live)
                layout.append((-1, kk))
        plan = Plan(steps=tuple(steps), cpu_cores=tuple(self.cores), micro_batches=tuple(split),
                    peak_memory_bytes=max(mem), step_memory=tuple(mem), prep_overheads=overheads, label=label)
        self._layouts[id(plan)] = (tuple(layout), tuple(before) + tuple(scheds), label_offset, plan)
        return plan

    def _continuation(self, running: Plan, j: int, budget: int, t_s: float, batch: int) -> Plan | None:
        """The rest of the batch in progress, re-split at step ``j`` (-1: in the batch's
        preparation) for a budget that has just dropped to ``budget``; None if the rest fits as
        planned, or cannot be made to fit.

        Two ways on: *continue* the micro-batch in progress under DGC at the new budget
        (evicting at once) and re-split the samples not yet started; or, in its forward pass,
        *abandon* it once the kernel in progress is done (its activations are dropped, no
        gradient has been accumulated from it yet) and re-split its samples with the others.
        DGC can only continue, DGA can only abandon; the hybrid takes the one that keeps the
        budget and finishes the batch sooner (``ctx.estimate``).  In the batch's preparation,
        or while an abandoned micro-batch's last kernel finishes, nothing has started: the
        samples left are re-split."""
        info = self._layouts.get(id(running))
        mem = running.step_memory
        if info is None or mem is None or max(mem[max(j, 0):]) <= budget:
            return None
        layout, scheds, _, _ = info
        split = tuple(running.micro_batches)
        strategy = self.options.strategy
        i, kk = layout[j] if j >= 0 else (-2, 0)
        event: dict[str, Any] = {"t_s": round(t_s, 6), "batch": batch, "step": j, "budget_mb": round(budget / MB, 3)}
        candidates: list[tuple[Plan, dict[str, Any]]] = []
        if i == -1:
            return None  # the update: the micro-batches are done
        if i == -2:  # nothing of the samples left has started
            event["micro_batch"] = kk
            c = self._resplit_rest(running, j, kk, mem[j] if j >= 0 else None, budget, "re-split before starting")
            if c is not None:
                candidates.append(c)
        else:
            event["micro_batch"] = i
            key = self._sched_keys.get(id(scheds[i]))
            if key is not None and strategy in ("dgc", "hybrid"):
                c = self._continue_micro_batch(running, scheds, split, i, kk, key, budget)
                if c is not None:
                    candidates.append(c)
            if key is not None and strategy in ("dga", "hybrid") and running.steps[j].op.phase == "forward":
                # while the kernel in progress finishes, the run holds what it reads and writes
                # and what cannot be evicted (which may still be over the budget, until then)
                held = self._simulate(key[:3] + (key[3] + ((kk, 0),),), stop_after=kk, best_effort=True).memory[kk]
                c = self._resplit_rest(running, j, i, held, budget, f"abandoned micro-batch {i} after {kk + 1} kernels")
                if c is not None:
                    candidates.append(c)
        if not candidates:
            self._resplits.append({**event, "micro_batches": None,
                                   "note": "the micro-batch in progress cannot fit the new budget"})
            return None
        if len(candidates) > 1:  # one that keeps the budget, then the sooner done
            candidates.sort(key=lambda c: (max(c[0].step_memory[max(j, 0):]) > budget, self.ctx.estimate(c[0])[0]))
        plan, how = candidates[0]
        for other, _ in candidates[1:]:
            self._layouts.pop(id(other), None)  # not run: not kept
        new = frozenset(k.signature for p in how.pop("scheds") for k in p.kernels) - self._compiled
        jit = JIT_S_PER_KERNEL * len(new) if self.options.jit_compile and new and self.options.unit == "gpu" else 0.0
        self._compiled |= new
        self._jit_s += jit
        if jit > 0:
            lay, sch, off, _ = self._layouts.pop(id(plan))
            plan = replace(plan, prep_overheads=(("jit-compile", jit),))
            self._layouts[id(plan)] = (lay, sch, off, plan)
        self._resplits.append({**event, **how, "micro_batches": list(plan.micro_batches),
                               "peak_after_mb": round(max(plan.step_memory[max(j, 0):]) / MB, 3),
                               "peak_after_kernel_mb": round(max(plan.step_memory[j + 1:], default=0) / MB, 3),
                               "jit_s": round(jit, 6)})
        return plan

    def _continue_micro_batch(self, running: Plan, scheds, split, i: int, kk: int, key: tuple, budget: int):
        """Micro-batch ``i`` goes on under DGC at ``budget`` from its kernel ``kk``; the samples
        after it are re-split."""
        layout, _, offset, _ = self._layouts[id(running)]
        m, b0, static, changes = key
        now = self.schedule(m, b0, static, changes + ((kk, budget),))
        left = sum(split[i + 1:])
        rest = self._fit(left, budget) if left else Decision((), ())
        if now is None or rest is None:
            return None
        by_size = dict(zip(_sizes(rest.split), rest.parts))
        new_split = split[: i + 1] + rest.split
        start = next(k for k, (x, _) in enumerate(layout) if x == i)  # micro-batch i's first step
        prefix = (running.steps[:start], running.step_memory[:start], layout[:start])
        new_scheds = (now,) + tuple(by_size[x] for x in rest.split)
        plan = self._assemble(new_scheds, new_split, self._resplit_label(new_split, budget), (), prefix,
                              before=tuple(scheds[:i]), label_offset=offset)
        return plan, {"how": "continued", "evictions": now.evictions,
                      "recompute_kernels": now.recomputes + sum(p.recomputes for p in rest.parts),
                      "scheds": new_scheds}

    def _resplit_rest(self, running: Plan, j: int, i: int, held: int | None, budget: int, how: str):
        """Steps up to ``j`` run as planned (the last one holding ``held`` bytes until done);
        the samples of micro-batches ``i``... of ``running`` (none started) are re-split."""
        layout, scheds, offset, _ = self._layouts[id(running)]
        split = tuple(running.micro_batches)
        left = sum(split[i:])
        if j < 0 and left == self.batch:
            d = self.decide(budget)  # nothing has run: the plan for the budget, whatever the strategy
            rest = Decision(d.split, d.parts)
        else:
            rest = self._fit(left, budget)
        if rest is None:
            return None
        by_size = dict(zip(_sizes(rest.split), rest.parts))
        new_scheds = tuple(by_size[x] for x in rest.split)
        new_split = split[:i] + rest.split
        if j >= 0:
            lay = tuple(x if x[0] == -2 or 0 <= x[0] < i else (-2, i) for x in layout[: j + 1])
            prefix = (running.steps[: j + 1], tuple(running.step_memory[:j]) + (held,), lay)
            offset += any(x[0] == i for x in layout[: j + 1])  # the abandoned micro-batch keeps its label
        else:
            prefix = ((), (), ())
        plan = self._assemble(new_scheds, new_split, self._resplit_label(new_split, budget), (), prefix,
                              before=tuple(scheds[:i]), label_offset=offset)
        return plan, {"how": how, "evictions": 0, "recompute_kernels": sum(p.recomputes for p in rest.parts),
                      "scheds": new_scheds}

    def _resplit_label(self, split: tuple[int, ...], budget: int) -> str:
        return f"sage {self.options.strategy} {'+'.join(map(str, split))} (re-split at {budget / MB:g} MiB)"

    def _switch_to(self, d: Decision, budget: int | None, t_s: float, batch: int) -> Plan:
        """Hand the engine decision ``d``: the plan that compiles its new kernels (JIT) in its
        first batch when there are any, else the steady plan."""
        steady = self.build_plan(d)
        self._peak = max(self._peak, steady.peak_memory_bytes)
        event = {
            "t_s": round(t_s, 6), "batch": batch, "first_batch": None,
            "budget_mb": None if budget is None else round(budget / MB, 3),
            "micro_batches": list(d.split), "evictions": d.evictions, "recompute_kernels": d.recomputes,
            "peak_mb": round(steady.peak_memory_bytes / MB, 3), "jit_s": 0.0}
        self._events.append(event)
        self._steady = steady
        plan = steady
        new = frozenset(k.signature for p in d.parts for k in p.kernels) - self._compiled
        if self.options.jit_compile and new and self.options.unit == "gpu":
            jit = JIT_S_PER_KERNEL * len(new)
            plan = self.build_plan(d, jit)
            self._jit_plans[id(plan)] = (steady, new, jit)
            event["jit_s"] = round(jit, 6)
        self._handed, self._handed_event = plan, event
        return plan

    # ------------------------------------------------------------------ runtime hooks
    # The engine runs each batch with the plan a hook handed it last (switching at the batch
    # start), so the plan about to run is ``self._handed``.
    def on_batch_start(self, ctx, batch: int) -> Plan | None:
        plan = self._handed
        if self._handed_event is not None:  # the decision's first batch
            self._handed_event["first_batch"] = batch
            self._handed_event = None
        jit = self._jit_plans.pop(id(plan), None) if plan is not None else None
        if jit is not None:  # this batch compiles the plan's new kernels
            steady, new, seconds = jit
            self._compiled |= new
            self._jit_s += seconds
            self._compiling = (plan, steady)
        return None

    def on_batch_end(self, ctx, batch: int, record) -> Plan | None:
        plan = ctx.plan
        if plan is not None and plan.micro_batches and (not self._ran or self._ran[-1] != plan.micro_batches):
            self._ran.append(plan.micro_batches)
        if self._compiling is None or self._compiling[0] is not plan:
            return None
        steady = self._compiling[1]
        self._compiling = None
        if self._handed is plan:  # compiled: the steady plan from the next batch on
            self._handed = steady
            return steady
        return None  # a newer plan was handed during the batch

    def on_memory_pressure(self, ctx, budget_bytes: int) -> Plan | None:
        if not self.adaptive:
            return None
        # the profile step that fired (RunContext.now_s is only updated at batch boundaries)
        t_s = ctx.now_s
        for i, (at_s, b) in enumerate(self._pending_steps):
            if b == budget_bytes:
                t_s = at_s
                del self._pending_steps[: i + 1]
                break
        if ctx.step_in_progress is not None and ctx.plan is not None:
            cont = self._continuation(ctx.plan, ctx.step_in_progress, budget_bytes, t_s, ctx.batch)
            if cont is not None:
                ctx.continue_batch(cont)
                self._compiling = None  # this batch no longer runs the plan it was compiling
        d = self.decide(budget_bytes)
        if self._steady is not None and self.build_plan(d) is self._steady:
            return None
        # (back to the running plan while another is pending: returning it cancels the switch)
        return self._switch_to(d, budget_bytes, t_s, ctx.batch)

    # ------------------------------------------------------------------ reporting
    def _describe(self, ctx) -> None:
        self._stats["unoptimised_peak_bytes"] = int(ctx.graph(self.precision, self.batch).peak_memory_bytes)
        self._stats["optimised_peak_bytes"] = self.plain(self.batch).peak

    def summary_extra(self) -> dict[str, Any]:
        bn = self.batch in self._kernels and any(lookup(m).batch_stats for k in self._kernels[self.batch][0]
                                                 for m in _members(k))
        out = {"strategy": self.options.strategy, "unit": self.options.unit, "mtp": self.options.mtp,
               "peak_memory_bytes": self._peak, "splits": self._events,
               "split_sequence": ["+".join(map(str, e["micro_batches"])) for e in self._events],
               "micro_batch_sequence": [list(m) for m in self._ran], "resplits": self._resplits,
               "jit_compile_s": round(self._jit_s, 6), **self._stats}
        if bn:
            out["batchnorm_note"] = ("micro-batched BN uses per-micro-batch statistics; mini-batch "
                                     "statistics would need a separate pass (not charged)")
        return out


def _sizes(split: tuple[int, ...]) -> tuple[int, ...]:
    """Distinct micro-batch sizes in order of first appearance."""
    return tuple(dict.fromkeys(split))


def _members(k: Op) -> list[str]:
    """The kinds of a (possibly fused) kernel's member ops."""
    return (k.attr("fused") or k.kind).split("+")


def _writes_weight_grad(k: Op) -> bool:
    return (k.phase == "weight_grad" or any(lookup(m).backward == "wgrad" for m in _members(k))
            or (is_persistent(k) and k.phase != "update"))


def _min_budget(budgets: list[tuple[float, int | None]]) -> int | None:
    vals = [b for _, b in budgets if b is not None]
    return min(vals) if vals else None
