"""The simulation engine: training batches as a SimPy process on a simulated SoC.

The training loop is a process; a batch's ops run one after the other (as the seed systems run
them), each for the time its unit's cost model gives at the current operating point.
Foreground apps are processes too; the steps of a memory-budget profile reach the scheduler
where they fall, a batch in progress being cut there (``on_memory_pressure`` may then continue
it with another plan, ``RunContext.continue_batch``).  For each batch
:class:`~socsim.engine.accounting.Accounting` integrates rail energy, advances the thermal
network and the battery, lets the throttling governor cap cluster frequencies, and hands the
samples to the recorder; where the governor's caps change the frequencies mid-batch, the rest of
the batch runs at the new ones.

The timeline of a distinct (plan, operating point, interference) is walked once into a
:class:`~socsim.engine.template.BatchTemplate`; later identical batches replay it as one event.
"""
from __future__ import annotations

import contextlib
import json
import math
import numbers
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import simpy

from socsim.engine import dvfs
from socsim.engine.accounting import Accounting
from socsim.engine.batch import Continued, host_core
from socsim.engine.context import PlanContext, RunContext, budget_steps_bytes
from socsim.engine.oracle import CostOracle, unit_runs
from socsim.engine.template import BatchTemplate
from socsim.engine.cores import check_freq_setting, check_unit_mhz, resolve_cores
from socsim.errors import InputError, ScheduleError
from socsim.hw import units as hw_units
from socsim.report.events import NullRecorder, Recorder
from socsim.sched.api import BatchRecord, InterferenceEvent, Plan, Step, ThermalEvent
from socsim.spec.soc import SocSpec
from socsim.spec.workload import Workload
from socsim.workload.ops import Op



@dataclass
class RunStats:
    """Running totals of a run (flat in memory whatever the number of batches)."""

    batches: int = 0
    sim_time_s: float = 0.0
    batch_time_sum_s: float = 0.0
    batch_energy_sum_j: float = 0.0
    rail_energy_j: dict[str, float] = field(default_factory=dict)
    idle_energy_j: float = 0.0
    foreground_energy_j: float = 0.0   # the foreground apps' dynamic power, on the cores training leaves them
    peak_c: float = -math.inf
    zone_peak_c: dict[str, float] = field(default_factory=dict)
    final_c: float = 0.0
    peak_mem_bytes: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {**dict.fromkeys(hw_units.ops_keys(), 0), "switches": 0})
    throttle_events: int = 0
    time_throttled_s: float = 0.0
    continued_batches: int = 0  # batches on_memory_pressure continued with another plan (mid-batch)
    templates_built: int = 0
    config_switches: int = 0
    plan_labels: list[str] = field(default_factory=list)
    plan_batches: dict[str, int] = field(default_factory=dict)   # batches run under each plan label
    micro_batches: tuple[int, ...] = ()
    # memory in use above the budget in force (environment.memory_budget_mb): seconds, batches
    # with any, and the largest excess in bytes
    over_budget_s: float = 0.0
    over_budget_batches: int = 0
    over_budget_max_bytes: int = 0
    # the mini-batch's splits as run, batch by batch, consecutive repeats merged
    micro_batch_runs: list[tuple[int, ...]] = field(default_factory=list)
    stop_reason: str | None = None
    battery_start_soc: float = 0.0
    battery_end_soc: float = 0.0
    first_plan: Plan | None = None
    dsp_prepared_batches: int = 0
    # per foreground load (workload order): core-seconds its cores ran a training thread
    fg_contended_core_s: list[float] = field(default_factory=list)
    # seconds the batches spent on each: cpu, dsp, gpu (their ops), fastrpc (calls), prep
    time_on_s: dict[str, float] = field(default_factory=dict)
    # the least share of the training step's work a plan in force ran, phase by phase (1.0:
    # every plan ran every op), and what the first plan short of it left out (plan_coverage)
    work_fraction: float = 1.0
    # precisions of the graphs the plans in force were taken from, in the order first run
    # (PlanContext.precision_of; a plugin may plan on ctx.graph(precision=...) of its own)
    plan_precisions: list = field(default_factory=list)
    short_plan: str | None = None


@dataclass(frozen=True, slots=True)
class Part:
    """A stretch of a batch at one operating point: offsets [a_s, b_s] of ``tpl``, from
    ``t_s``.  ``training`` is False for a config switch the batch pays before its ops."""

    t_s: float
    tpl: BatchTemplate
    a_s: float
    b_s: float
    energy_j: float
    training: bool = True

    @property
    def dur_s(self) -> float:
        return self.b_s - self.a_s


class Engine:
    def __init__(self, soc: SocSpec, workload: Workload, scheduler, recorder: Recorder | None = None,
                 progress: Callable[[int, int], None] | None = None, file: str | None = None) -> None:
        self.soc = soc
        self.workload = workload
        self.scheduler = scheduler
        self.recorder = recorder or NullRecorder()
        self.progress = progress
        self.oracle = CostOracle(soc, workload.dsp.batch_padding)
        from socsim.report.summary import run_precision
        self.pctx = PlanContext(soc, workload, self.oracle, file, precision=run_precision(scheduler, workload))
        self.walker = self.pctx.walker
        self.power = self.walker.power
        self.rails = self.walker.rails
        self.ridx = self.walker.ridx
        env_spec = workload.environment
        self.env = simpy.Environment()
        self.rctx = RunContext(plan_ctx=self.pctx, charging=env_spec.charging)
        self.stats = RunStats()
        self._templates: dict[tuple, tuple[Plan, Continued | None, BatchTemplate]] = {}
        self._interference: dict[int, float] = {}  # core -> foreground utilisation (of the active loads)
        self._active_loads: list = []  # foreground loads running now, in start order
        self._bg_dram_gbs = 0.0  # DRAM bandwidth the active foreground loads take
        self._pending_plan: Plan | None = None
        self._pending_hook = "a hook"   # the method that handed the pending plan (for reports)
        self._budget_queue: list[tuple[float, float]] = []  # memory-budget steps (at_s, MiB) not yet delivered
        self._over_last = (-2, -1)  # (batch, budget) of the last memory over the budget
        self._checked: dict[int, Plan] = {}  # plans check_plan passed (kept, so their ids stay theirs)
        self._covered: dict[int, Plan] = {}  # plans plan_coverage measured (likewise)
        self._config_changed = False  # the next batch pays a core-set / frequency switch
        # DSP graphs prepared so far, by the identity of the plan's steps (kept alive here): a
        # plan that differs from a prepared one only in its CPU operating point or label (one
        # made with dataclasses.replace, as min-energy's variants of a base plan) runs the same
        # prepared graph; a plan with steps of its own prepares its own
        self._dsp_prepared: dict[int, tuple] = {}
        self._freqs: dict[str, float] = {}
        self._util: dict[str, float] = {}
        try:  # a frequency no cluster it applies to can run is bad input, not a silent clamp
            check_freq_setting(soc, workload.cpu.freq, field="cpu.freq")
            if workload.dsp.freq_mhz is not None:  # the DSP's OPP range (between OPPs: floored)
                check_unit_mhz(soc, "dsp", workload.dsp.freq_mhz, "dsp.freq_mhz")
        except InputError as e:
            raise InputError(e.message, file=file, field=e.field, value=e.value) from None
        loads = env_spec.foreground_loads
        for i, load in enumerate(loads):  # a load on a core the SoC lacks is bad input, not a no-op
            fld = "environment.foreground_load" + (f"[{i}]" if isinstance(env_spec.foreground_load, list) else "")
            try:
                resolve_cores(soc, load.cores, field=f"{fld}.cores")
            except InputError as e:
                raise InputError(e.message, file=file, field=e.field, value=e.value) from None
            if load.memory_gbs > soc.dram.bandwidth_gbs:   # more than the phone's DRAM can move
                raise InputError(f"above the DRAM bandwidth of {soc.name} ({soc.dram.bandwidth_gbs:g} GB/s)",
                                 file=file, field=f"{fld}.memory_gbs", value=load.memory_gbs)
        self.acct = Accounting(soc, workload, self.walker, self.stats, self.recorder, self.rctx,
                               self._thermal_trip)

    @property
    def scheduler_name(self) -> str:
        """The name the scheduler was selected by (for errors about its plans)."""
        sched = getattr(self.workload, "scheduler", None)
        return getattr(sched, "name", None) or str(getattr(self.scheduler, "name", "?"))

    # ------------------------------------------------------------------ the run
    def run(self) -> RunStats:
        wall0 = time.perf_counter()
        plan = self.scheduler.plan(self.pctx)
        check_plan(plan, self.soc, scheduler=self.scheduler_name, hook="plan()",
                   batch_size=self.workload.batch_size)
        self.rctx.plan = plan
        self.stats.first_plan = plan
        self._plan_key = _runs(plan)
        self._coverage(plan, "plan()")
        if plan.label:
            self.stats.plan_labels.append(plan.label)
        self.stats.battery_start_soc = self.acct.battery.soc
        self._plan = plan
        self._batch_state = self._readings()  # the initial state, until the first batch starts
        self._fg_loads = self.workload.environment.foreground_loads
        self.stats.fg_contended_core_s = [0.0] * len(self._fg_loads)
        for load in self._fg_loads:
            self.env.process(self._foreground(load))
        budget_steps = self.workload.environment.memory_budget_mb
        if isinstance(budget_steps, list):
            self._budget_queue = [(st.at_s, st.mb) for st in sorted(budget_steps, key=lambda st: st.at_s)]
        self._budget_steps = budget_steps_bytes(budget_steps)
        done = self.env.process(self._training())
        try:
            self.env.run(until=done)
        except InputError as e:
            # SimPy re-raises a failure of a process nobody waits for (a foreground load's or the
            # memory budget's hook) as a copy made from its args: the original keeps the fields.
            # A copy has its original's args; an error that wraps another (the plugin guard's,
            # naming the scheduler and hook) has its own message and stays
            cause = e.__cause__
            if type(cause) is type(e) and cause.args == e.args:
                raise cause from None
            raise
        self.acct.final_sample(self.env.now, self._freqs)
        self.stats.sim_time_s = self.env.now
        self.stats.final_c = float(self.acct.temps.max())
        self.stats.battery_end_soc = self.acct.battery.soc
        self.wall_time_s = time.perf_counter() - wall0
        self.recorder.close()
        return self.stats

    def _training(self):
        total = self.workload.total_batches
        for b in range(total):
            self.rctx.batch = b
            # what hooks that fire inside this batch read (the accounting runs a batch's parts
            # ahead of the clock: its live readings are the part's end, the hooks' future)
            self._batch_state = self._readings()
            self._budget_hooks(self.env.now)  # budget steps due by now (between batches)
            self.rctx.now_s = self.env.now
            self._apply(self.scheduler.on_batch_start(self.rctx, b), "on_batch_start()")
            if self.rctx.stop_requested:   # the scheduler declines this batch (Swan's gates)
                self.stats.stop_reason = self.rctx.stop_requested
                self.recorder.instant(self.env.now, "engine", "stop", self.stats.stop_reason)
                break
            t0 = self.env.now
            parts: list[Part] = []
            if self._pending_plan is not None:
                self._switch_plan(self._pending_plan, self._pending_hook)
                self._pending_plan = None
                yield from self._config_switch(parts)
            plan = self._plan
            self._plan_in_force(plan, self.env.now)  # again, after a batch a continuation finished
            prep = plan.dsp_graph == "per_batch" or (plan.dsp_graph == "reuse"
                                                     and id(plan.steps) not in self._dsp_prepared)
            fg = (tuple(sorted(self._interference.items())), self._bg_dram_gbs)
            loads = tuple(self._active_loads)  # the foreground apps this batch runs with
            ran = yield from self._run_batch(plan, prep, fg, parts)  # ``plan``, or the continuation that finished it
            if prep:
                self._dsp_prepared[id(plan.steps)] = plan.steps
                self.stats.dsp_prepared_batches += 1
            self._record_slices(b, parts)
            if self._budget_steps:
                self._over_budget(b, parts)
            ops = [p for p in parts if p.training]
            busy, busy_dur = self._busy(ops)
            for k, v in busy.items():
                if k.startswith("on:"):
                    self.stats.time_on_s[k[3:]] = self.stats.time_on_s.get(k[3:], 0.0) + v
            self._util = self._utilisation(plan, busy, busy_dur)
            if self._fg_loads:
                self._foreground_contention(plan, busy, ops[0].t_s, busy_dur, loads)
            # the batch as batches.csv and the hooks see it: its ops and the config switch it paid
            dur = parts[0].dur_s if len(parts) == 1 else sum(p.dur_s for p in parts)
            energy = sum(p.energy_j for p in parts)
            st = self.stats
            st.batches += 1
            st.batch_time_sum_s += dur
            st.batch_energy_sum_j += energy
            for k, v in ops[-1].tpl.counts.items():  # a continuation's template holds the whole batch
                st.counts[k] += v
            self.recorder.batch(b, t0, dur, energy, ran.label)
            if ran.label:
                st.plan_batches[ran.label] = st.plan_batches.get(ran.label, 0) + 1
            split = tuple(int(m) for m in ran.micro_batches) or (self.workload.batch_size,)
            if not st.micro_batch_runs or st.micro_batch_runs[-1] != split:
                st.micro_batch_runs.append(split)
            # the scheduler is told about the ops alone (what its estimates predict), from their start
            t_ops = ops[0].t_s
            ops_energy = energy if len(ops) == len(parts) else sum(p.energy_j for p in ops)
            rec = BatchRecord(b, t_ops, busy_dur, ops_energy, ran.label, bool(self._interference))
            self.rctx.now_s = self.env.now
            self._apply(self.scheduler.on_batch_end(self.rctx, b, rec), "on_batch_end()")
            self.rctx.plan = self._plan  # a continuation held for this batch only
            if self.progress is not None:
                self.progress(b + 1, total)
            if self.acct.battery.charge_c <= 0.0 and not self.rctx.stop_requested:
                # the pack ran dry during this batch (its draw beyond the charge left is counted):
                # Android shuts the phone down at an empty gauge, and training stops with it
                self.rctx.stop_requested = "battery empty: the phone shut down"
            if self.rctx.stop_requested:
                st.stop_reason = self.rctx.stop_requested
                self.recorder.instant(self.env.now, "engine", "stop", st.stop_reason)
                break

    def _run_batch(self, plan: Plan, prep: bool, fg: tuple, parts: list[Part]):
        """Run one batch's ops at the operating point in effect, appending its parts.

        The DVFS governor's request is made at the batch start; the thermal caps clamp it.  When
        a governor poll during the batch changes the caps so that the clamped frequencies
        change, the batch continues from there at the new ones (the op in progress keeps the
        share of its work done; Linux applies a cpufreq cap at once), so the caps' effect is
        never later than the poll that set them.  A batch the caps leave alone is one part,
        replayed from its template in one event.

        A memory-budget step that falls inside the batch cuts it there too: ``on_memory_pressure``
        runs at that moment, and a continuation it hands (``RunContext.continue_batch``) carries
        the batch on from the step in progress.  Returns the plan the batch ended with."""
        request = self._requested(plan)
        freqs = self._capped(request)
        cont: Continued | None = None
        tpl = self._template(plan, freqs, prep, fg)
        a = 0.0
        while True:
            t = self.env.now
            due = self._budget_queue and self._budget_queue[0][0] <= t + 1e-12
            taken = self._budget_hooks(t, (plan, tpl.step_at(a))) if due else []
            if taken:  # carried on by continuations from the step in progress
                inserted = cont.inserted if cont else ()
                for j, plan in taken:
                    inserted += ((j, tuple((str(n), float(x)) for n, x in plan.prep_overheads)),)
                if cont is None:
                    self.stats.continued_batches += 1
                cont = Continued(cont.head if cont else self._plan, inserted)
                nxt = self._template(plan, freqs, prep, fg, cont)
                a = tpl.map_offset(a, nxt)
                tpl = nxt
            cur = freqs
            end = self._budget_cut(t, tpl.duration_s - a)
            b, energy = self.acct.account(t, tpl, plan, freqs, a, lambda caps: self._capped(request, caps) != cur,
                                          None if end is None else a + end)
            parts.append(Part(t, tpl, a, b, energy))
            if any(freqs[c] < request[c] for c in request):  # a cap holds a cluster below its request
                self.stats.time_throttled_s += b - a
            self._freqs = freqs
            yield self.env.timeout(b - a)
            if b >= tpl.duration_s:
                return plan
            freqs = self._capped(request)
            nxt = self._template(plan, freqs, prep, fg, cont)
            a = tpl.map_offset(b, nxt)
            tpl = nxt

    def _template(self, plan: Plan, freqs: dict[str, float], prep: bool, fg: tuple,
                  cont: Continued | None = None) -> BatchTemplate:
        """The batch's timeline at this operating point and interference, walked once."""
        key = (id(plan), tuple(sorted(freqs.items())), prep, fg,
               None if cont is None else (id(cont.head), cont.inserted))
        hit = self._templates.get(key)
        if hit is not None:
            return hit[2]
        share = self._cpu_share(plan.cpu_cores, dict(fg[0]))
        tpl = self.walker.template(plan, freqs, prep, share, getattr(self.scheduler, "name", "?"), fg[1], cont,
                                   fg=fg[0])
        self._templates[key] = (plan, cont, tpl)  # the plans are kept so their ids stay unique
        self.stats.templates_built += 1
        return tpl

    def _record_slices(self, batch: int, parts: list[Part]) -> None:
        """The op slices of a batch's parts (a config switch's always; the ops' for the batches
        the recorder keeps).  An op cut where the frequencies changed is one slice."""
        keep = self.recorder.keeps_batch(batch)
        out: list[list] = []
        cut: dict[tuple[str, str], list] = {}   # slices running past the previous part's end
        for p in parts:
            if p.training and not keep:
                continue
            whole = p.a_s <= 0.0 and p.b_s >= p.tpl.duration_s
            carried, cut = cut, {}
            for s in p.tpl.slices:
                if whole:
                    out.append([s, p.t_s + s.start_s, s.dur_s])
                    continue
                s0, s1 = max(s.start_s, p.a_s), min(s.start_s + s.dur_s, p.b_s)
                if s1 - s0 <= 1e-12:
                    continue
                row = carried.pop((s.track, s.name), None) if s.start_s < p.a_s else None
                if row is None:
                    row = [s, p.t_s + (s0 - p.a_s), 0.0]
                    out.append(row)
                row[2] = p.t_s + (s1 - p.a_s) - row[1]
                if s.start_s + s.dur_s > p.b_s:
                    cut[(s.track, s.name)] = row
        for s, start, dur in out:
            self.recorder.op_slice(s.track, s.name, s.kind, batch, s.phase, start, dur)

    def _busy(self, parts: list[Part]) -> tuple[dict[str, float], float]:
        """Busy time per unit of a batch's ops and the time they took."""
        if len(parts) == 1:
            p = parts[0]
            return p.tpl.busy_between(p.a_s, p.b_s), p.dur_s
        busy: dict[str, float] = {}
        for p in parts:
            for k, v in p.tpl.busy_between(p.a_s, p.b_s).items():
                busy[k] = busy.get(k, 0.0) + v
        return busy, sum(p.dur_s for p in parts)

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
                           batch_size=self.workload.batch_size)
                self._checked[id(new_plan)] = new_plan
            self._pending_plan = new_plan
            self._pending_hook = hook

    def _thermal_trip(self, te: ThermalEvent) -> None:
        """``on_thermal_trip`` at the governor's poll that crossed the trip: the context reads
        the poll's time, the zone readings the governor just took (the tripping zone's is the
        event's ``temp_c``; a zone not polled then keeps its last reading) and the new caps."""
        self.rctx.now_s = te.t_s
        temps = dict(self.rctx.temps_c)
        for z, zs in zip(self.soc.thermal.zones, self.acct.gov_state.zones):
            if z.name in temps and zs.last_temp_c is not None and abs(zs.last_poll_s - te.t_s) < 1e-9:
                temps[z.name] = float(zs.last_temp_c)
        self.rctx.temps_c = temps  # caps_mhz: the accounting has published the new caps
        self._apply(self.scheduler.on_thermal_trip(self.rctx, te), "on_thermal_trip()")

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
        key = _runs(plan)
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

    def _config_switch(self, parts: list[Part]):
        """Changing core set / frequency before a batch costs time (pub:cpu_config_switch_ms),
        paid by that batch (its first part).  Its power is one core of the first cluster at
        RPC_CPU_ACTIVITY (the kernel's hotplug/cpufreq work runs on one core) plus the idle rails;
        the entry's "energy about 1% of a batch" is a ratio to the paper's batches, whose energy
        it does not give, so it is not a part figure and is not used."""
        if self._config_changed:
            self._config_changed = False
            t0 = self.env.now
            tpl = self.walker.switch_template(self._freqs)
            dur = tpl.duration_s
            _, energy = self.acct.account(t0, tpl, self._plan, self._freqs)
            parts.append(Part(t0, tpl, 0.0, dur, energy, training=False))
            self.stats.config_switches += 1
            yield self.env.timeout(dur)

    # ------------------------------------------------------------------ operating points
    def _requested(self, plan: Plan) -> dict[str, float]:
        """The CPU clusters' frequencies the DVFS governor asks for this batch (before caps)."""
        gov = plan.governor or self.workload.cpu.governor
        # a plan without CPU cores (all on the GPU or DSP) still has its host core: it prepares
        # and hands over, so its cluster is in use
        cores = plan.cpu_cores or (host_core(self.soc, plan),)
        used = {c.name for c in self.soc.cpu.clusters if any(i in c.core_ids for i in cores)}
        apps: dict[str, float] = {}
        for core, u in self._interference.items():   # foreground apps load their clusters too
            name = self.soc.cpu.cluster_of(core).name
            apps[name] = max(apps.get(name, 0.0), u)
        freqs = dvfs.cluster_frequencies(self.soc, gov, self.workload.cpu.freq, plan.cpu_freq_mhz,
                                         used, self._util, self._freqs, apps)
        return {name: dvfs.floor_opp(self.soc.cluster(name), f) for name, f in freqs.items()}

    def _capped(self, request: dict[str, float], caps: dict[str, float] | None = None) -> dict[str, float]:
        """The operating point of ``request`` under the thermal caps (default: those in force)."""
        caps = self.acct.caps if caps is None else caps
        clamp = self.acct.governor.clamp
        freqs = {name: dvfs.floor_opp(self.soc.cluster(name), clamp(caps, name, f)) for name, f in request.items()}
        if self.soc.dsp is not None:
            freqs["dsp"] = self.pctx.dsp_mhz
        if self.soc.gpu is not None:
            freqs["gpu"] = self.soc.gpu.opps[-1].freq_mhz
        return freqs

    # ------------------------------------------------------------------ batch statistics
    def _utilisation(self, plan: Plan, busy: dict[str, float], dur_s: float) -> dict[str, float]:
        """What schedutil sees of each cluster over the batch (socsim.engine.dvfs.schedutil_util)
        while the CPU side is active.  While the calling thread sleeps in a FastRPC call or waits
        for the GPU, its PELT utilisation decays; schedutil ramps the clock back within a few ms
        of the CPU ops resuming (rate limit ~ms), so those ops run at the clock their own load
        sets: the accelerator time is left out of the denominator.  The host core's own work
        (graph preparation, the FastRPC copies) counts as busy."""
        active = dur_s
        for u in hw_units.accelerators():
            active -= busy.get(u.name, 0.0)
        return dvfs.schedutil_util(self.soc, plan.cpu_cores, busy, active)

    @staticmethod
    def _cpu_share(cores: tuple[int, ...], interference: dict[int, float]) -> float:
        """Fraction of each training thread's core left by foreground apps (CFS fair share:
        a core shared with a thread using it a fraction u of the time gives 1 - u/2)."""
        if not interference:
            return 1.0
        return min(1.0 - 0.5 * interference.get(c, 0.0) for c in cores)

    def _foreground_contention(self, plan: Plan, busy: dict[str, float], t0: float, dur: float,
                               loads: tuple) -> None:
        """Charge each foreground load the batch ran with (``loads``, those running at its start)
        the time training threads ran on its cores inside its window (the batch's busy
        core-seconds spread evenly over the batch and over the plan's cores of a cluster);
        summarised as the app's throughput loss (socsim.report.summary).  An app that starts
        during a batch slows training from the next batch on, and is charged from then on too."""
        if dur <= 0:
            return
        for i, load in enumerate(self._fg_loads):
            if not any(load is l for l in loads):
                continue
            overlap = min(load.start_s + load.duration_s, t0 + dur) - max(load.start_s, t0)
            if overlap <= 0:
                continue
            for c in load.cores:
                if c not in plan.cpu_cores:
                    continue
                cl = self.soc.cpu.cluster_of(c)
                n = sum(1 for k in plan.cpu_cores if k in cl.core_ids)
                self.stats.fg_contended_core_s[i] += busy.get(cl.name, 0.0) / n * overlap / dur

    # ------------------------------------------------------------------ environment processes
    def _foreground(self, load):
        env = self.env
        if load.start_s > 0:
            # an app there from the start is running when the first batch begins (a timeout of
            # 0 would fire after the training process had started that batch without it)
            yield env.timeout(load.start_s)
        self._active_loads.append(load)
        self._update_interference()
        self.rctx.now_s = env.now
        self.recorder.instant(env.now, "engine", "foreground start", f"{load.name} cores={load.cores}")
        ev = InterferenceEvent(env.now, tuple(load.cores), load.utilization, True, load.name)
        with self._as_of_last_batch():
            new_plan = self.scheduler.on_interference(self.rctx, ev)
        self._apply(new_plan, "on_interference()")
        yield env.timeout(load.duration_s)
        self._active_loads.remove(load)
        self._update_interference()
        self.rctx.now_s = env.now
        self.recorder.instant(env.now, "engine", "foreground end", load.name)
        ev = InterferenceEvent(env.now, tuple(load.cores), load.utilization, False, load.name)
        with self._as_of_last_batch():
            new_plan = self.scheduler.on_interference(self.rctx, ev)
        self._apply(new_plan, "on_interference()")

    def _readings(self) -> tuple[dict[str, float], float, float]:
        r = self.rctx
        return dict(r.temps_c), r.battery_soc, r.battery_temp_c

    @contextlib.contextmanager
    def _as_of_last_batch(self):
        """The context's temperatures and battery as at the end of the last finished batch
        (docs/plugins.md, section 3) while a hook that fires inside a batch runs; the live
        readings (the accounting's, ahead of the clock) are put back after it."""
        live = self._readings()
        r = self.rctx
        r.temps_c, r.battery_soc, r.battery_temp_c = self._batch_state
        r.temps_c = dict(r.temps_c)  # the hook may write to it
        try:
            yield
        finally:
            r.temps_c, r.battery_soc, r.battery_temp_c = live

    def _update_interference(self) -> None:
        """Per core, the highest utilisation of the foreground loads running on it now (recomputed
        from every active load, so a load ending leaves the cores another load still uses)."""
        inter: dict[int, float] = {}
        for load in self._active_loads:
            for c in load.cores:
                inter[c] = max(inter.get(c, 0.0), load.utilization)
        self._interference = inter
        self._bg_dram_gbs = sum(load.memory_gbs for load in self._active_loads)
        self.rctx.interference_cores = tuple(sorted(inter))

    def _over_budget(self, b: int, parts: list[Part]) -> None:
        """Account the time memory in use stayed above the budget in force during batch ``b``
        (a scheduler that does not plan for the budget ignores it; one that does goes over where
        it cannot follow a drop).  An ``over memory budget`` event marks where each overrun
        starts: where memory first exceeds a budget, in a batch after one that kept to it or
        once another budget is in force (not at each of its excursions within that)."""
        los, his, exc, caps = [], [], [], []  # the stretches over the budget, in time order
        for p in parts:
            e = np.clip(p.tpl.edges_s, p.a_s, p.b_s)
            start = p.t_s + (e[:-1] - p.a_s)
            end = start + np.diff(e)
            mem = p.tpl.mem_bytes
            for at_s, until_s, cap in self._budget_steps:
                lo = np.maximum(start, at_s)
                hi = np.minimum(end, until_s)
                over = (hi - lo > 1e-12) & (mem > cap)  # (not a rounding sliver at a cut)
                if over.any():
                    los.append(lo[over])
                    his.append(hi[over])
                    exc.append(mem[over] - cap)
                    caps.append(np.full(int(over.sum()), cap))
        if not los:
            return
        lo, hi, ex, cap = (np.concatenate(x) for x in (los, his, exc, caps))
        st = self.stats
        # a new overrun: against another budget, or after a batch that kept the budget
        last_batch, last_cap = self._over_last
        prev_cap = np.concatenate([[last_cap if last_batch >= b - 1 else -1], cap[:-1]])
        for i in np.flatnonzero(cap != prev_cap):
            self.recorder.instant(float(lo[i]), "engine", "over memory budget",
                                  f"batch {b}: {ex[i] / (1 << 20):.1f} MiB over the {cap[i] / (1 << 20):g} MiB budget")
        self._over_last = (b, int(cap[-1]))
        st.over_budget_s += float((hi - lo).sum())
        st.over_budget_batches += 1
        st.over_budget_max_bytes = max(st.over_budget_max_bytes, int(ex.max()))

    def _budget_cut(self, t: float, left_s: float) -> float | None:
        """Seconds from ``t`` to the next memory-budget step, if it falls within ``left_s``."""
        if self._budget_queue:
            dt = self._budget_queue[0][0] - t
            if 1e-12 < dt < left_s - 1e-12:
                return dt
        return None

    def _budget_hooks(self, t: float, running: tuple[Plan, int] | None = None) -> list[tuple[int, Plan]]:
        """``on_memory_pressure`` for each budget step due by ``t``.  ``running``: the plan of the
        batch in progress and its step in progress (None between batches).  Returns (that step,
        the continuation) for each time the scheduler continued the batch, in order."""
        taken: list[tuple[int, Plan]] = []
        while self._budget_queue and self._budget_queue[0][0] <= t + 1e-12:
            at_s, mb = self._budget_queue.pop(0)
            budget = int(mb * (1 << 20))
            self.rctx.now_s = at_s  # (a step inside a batch's configuration switch is delivered after it)
            self.recorder.instant(at_s, "engine", "memory budget", f"{mb:g} MiB")
            step = running[1] if running is not None else None
            self.rctx.step_in_progress = step
            try:
                with self._as_of_last_batch():
                    new_plan = self.scheduler.on_memory_pressure(self.rctx, budget)
            finally:
                self.rctx.step_in_progress = None
            c, self.rctx._continuation = self.rctx._continuation, None
            if c is not None:
                hook = "on_memory_pressure()"
                if running is None or step is None:
                    raise self._continuation_error(hook, "no batch is in progress (ctx.step_in_progress is None)")
                cur = taken[-1][1] if taken else running[0]
                self._check_continuation(c, cur, step, hook)
                taken.append((step, c))
                self.rctx.plan = c
                self._plan_in_force(c, t, f"ctx.continue_batch() in {hook}")
                self.recorder.instant(t, "engine", "continue batch", f"from step {step}: {c.label}")
            self._apply(new_plan, "on_memory_pressure()")
        return taken

    def _continuation_error(self, hook: str, msg: str) -> ScheduleError:
        name = self.scheduler_name
        return ScheduleError(f"ctx.continue_batch() from {hook} of scheduler {name!r}: {msg}",
                             field="scheduler.name", value=name)

    def _check_continuation(self, c: Plan, running: Plan, step: int, hook: str) -> None:
        """A continuation is a plan the engine can run whose steps up to the one in progress are
        the running plan's, on the same cores at the same operating point."""
        check_plan(c, self.soc, scheduler=self.scheduler_name, hook=f"ctx.continue_batch() in {hook}",
                   batch_size=self.workload.batch_size)
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


def _runs(plan: Plan) -> tuple:
    """What a plan runs, as far as the reports are concerned (not its one-off overheads)."""
    return (plan.label, plan.cpu_cores, plan.cpu_freq_mhz, plan.governor, plan.dsp_graph, plan.shared_buffers,
            tuple((st.op, st.unit, st.label) for st in plan.steps))


# Relative shortfall of a plan's multiply-accumulates below the graph's that counts as leaving
# work out (rounding of rescaled ops is far below it; a dropped op is far above it).
COVERAGE_TOL = 1e-6


def _phase_work(ops) -> dict[str, float]:
    """Work per phase: multiply-accumulates, arithmetic for the (element-wise) weight updates;
    an op rescaled for a slower framework kernel counts with the work it stands for."""
    out: dict[str, float] = {}
    for op in ops:
        w = op.flops if op.phase == "update" else op.macs
        if w:
            eff = dict(op.attrs).get("kernel_efficiency") if op.attrs else None
            out[op.phase] = out.get(op.phase, 0.0) + w * (float(eff) if eff is not None else 1.0)
    return out


def short_plan_note(plan: Plan, hook: str, scheduler: str, missing: str) -> str:
    """What the reports say of a plan that runs only part of the training step."""
    label = f" {plan.label!r}" if plan.label else ""
    return f"the plan{label} from {hook} of scheduler {scheduler!r} runs only part of the training step: {missing}"


def plan_coverage(plan: Plan, graph) -> tuple[float, str | None]:
    """How much of ``graph``'s training step the plan's steps run: the least share, over the
    forward pass, the error gradients and the weight gradients, of the graph's multiply-accumulates
    in that phase, and of its weight updates' arithmetic (their work is element-wise).  Fused,
    rewritten and micro-batch ops count with their own work; recomputation can take a share above
    1; an op a framework runs with slower kernels (``kernel_efficiency``, socsim.sched.baselines)
    counts with the work it stands for, not its inflated cost.  When a share falls short, also
    says which ops of the graph carrying that work no step is named after.  The engine does not
    refuse such a plan (a scheduler may mean to train part of a model, or use a kernel with fewer
    multiplications); it reports it (summary ``placement.work_fraction``, a warning)."""
    need, ran = _phase_work(graph.ops), _phase_work(st.op for st in plan.steps)
    fracs = [(ran.get(phase, 0.0) / w, phase) for phase, w in need.items() if w > 0]
    if not fracs:
        return 1.0, None
    frac, phase = min(fracs)
    if frac >= 1.0 - COVERAGE_TOL:
        return frac, None
    key = "flops" if phase == "update" else "macs"
    names = {st.op.name for st in plan.steps}
    missing = [op.name for op in graph.ops if op.phase == phase and getattr(op, key) and op.name not in names]
    shown = ", ".join(missing[:6]) + (f" (+{len(missing) - 6} more)" if len(missing) > 6 else "")
    what = {"forward": "forward", "error_grad": "error-gradient", "weight_grad": "weight-gradient",
            "update": "weight-update"}[phase]
    return frac, (f"{frac:.1%} of its {what} work; ops of ctx.graph() not among its steps: {shown}" if missing
                  else f"{frac:.1%} of its {what} work (its ops carry less work than the graph's)")


def check_plan(plan: Plan, soc: SocSpec, *, scheduler: str | None = None, hook: str | None = None,
               batch_size: int | None = None) -> None:
    """A plan the engine can run on ``soc``, or a ScheduleError (the engine and ``socsim validate
    --soc``).  ``scheduler`` (the name it was selected by) and ``hook`` (the method that returned
    the plan, ``"plan()"``, ``"on_batch_end()"``, ...) go into the error: the scheduler as its
    value, the hook into the message."""
    src = hook or "the scheduler"  # the error's value names the scheduler

    def fail(msg: str, field: str = "scheduler.name", value: object = None):
        return ScheduleError(msg, field=field, value=scheduler if value is None else value)

    if not isinstance(plan, Plan):
        verb = "was given" if src.startswith("ctx.continue_batch()") else "returned"
        raise fail(f"{src} {verb} {type(plan).__name__}, not a Plan")
    try:
        steps = tuple(plan.steps)
    except TypeError:
        raise fail(f"the plan from {src} has steps of type {type(plan.steps).__name__}, not a tuple of Step") from None
    if not steps:
        raise fail(f"the plan from {src} has no steps (a batch must run the training graph's ops)")
    for k, st in enumerate(steps):
        if not isinstance(st, Step):
            raise fail(f"the plan from {src}: step {k} is {type(st).__name__}, not a Step")
        if not isinstance(st.op, Op):
            raise fail(f"the plan from {src}: step {k} has op {st.op!r} ({type(st.op).__name__}), not an Op "
                       "of the training graph (ctx.graph().ops)")
        problem = _op_problem(st.op)
        if problem:
            raise fail(f"the plan from {src}: step {k} has op {getattr(st.op, 'name', '?')!r} with {problem} "
                       "(plan the training graph's ops, ctx.graph().ops, or copies of them)")
        if not isinstance(st.label, str):
            raise fail(f"the plan from {src}: step {k} ({st.op.name}) has label {st.label!r}; expected a string")
        if st.unit not in hw_units.names():
            raise fail(f"the plan from {src}: step {k} ({getattr(st.op, 'name', '?')}) is on unit {st.unit!r}; "
                       f"units are {', '.join(hw_units.names())}")
    units = {st.unit for st in steps}
    if "dsp" in units and soc.dsp is None:
        raise fail(f"the plan from {src} places ops on a DSP but {soc.name} has none")
    if "gpu" in units and soc.gpu is None:
        raise fail(f"the plan from {src} places ops on a GPU but {soc.name} has none")
    for k, st in enumerate(steps):
        if not unit_runs(soc, st.op, st.unit):
            raise fail(f"the plan from {src}: step {k} places op {st.op.name} ({st.op.kind}, {st.op.dtype}) on the "
                       f"{st.unit} of {soc.name}, which cannot run it"
                       + (" (the DSP has no float unit: train in int8, e.g. precision: niti)"
                          if st.unit == "dsp" and st.op.dtype not in ("int8", "int32") else ""))
    if "dsp" in units and plan.dsp_graph not in ("per_batch", "reuse"):
        raise fail(f"the plan from {src} places {plan.count('dsp')} ops on the DSP but has dsp_graph "
                   f"{plan.dsp_graph!r}; the DSP runs a prepared graph: 'per_batch' (prepared every batch) "
                   "or 'reuse' (prepared once, kept)")
    # the core set is the scheduler's choice (a workload's cpu.cores is checked when resolved)
    if "cpu" in units and not plan.cpu_cores:
        raise fail(f"the plan from {src} runs ops on the CPU but names no CPU cores")
    all_ids = {i for c in soc.cpu.clusters for i in c.core_ids}
    try:
        cores = list(plan.cpu_cores)
    except TypeError:
        raise fail(f"the plan from {src} has cpu_cores {plan.cpu_cores!r}, not a tuple of core ids") from None
    if any(isinstance(c, bool) or not isinstance(c, numbers.Integral) for c in cores):
        raise fail(f"the plan from {src} has cpu_cores {cores!r}; expected integer core ids")
    bad = [c for c in cores if c not in all_ids]
    if bad:
        raise fail(f"the plan from {src} has cpu_cores {cores}: {soc.name} has no core {', '.join(map(str, bad))} "
                   f"(its cores are {sorted(all_ids)})")
    if len(set(cores)) != len(cores):
        twice = sorted({c for c in cores if cores.count(c) > 1})
        raise fail(f"the plan from {src} names cores {twice} more than once; core ids must be distinct "
                   "(a core runs one training thread)")
    _check_plan_freqs(plan, soc, src, fail)
    _check_plan_memory(plan, soc, src, len(steps), fail)
    _check_plan_fields(plan, src, fail, batch_size)


DSP_GRAPH_MODES = ("per_batch", "reuse", "none")

# an op's counts and shape parameters as the cost models can take them: 64-bit, not negative
_OP_COUNTS = ("macs", "flops", "bytes_read", "bytes_written", "weight_bytes", "out_bytes", "saved_bytes")
_MAX_COUNT, _MAX_PARAM = 1 << 62, 1 << 40
_AT_LEAST_ONE = ("batch", "stride", "kh", "kw", "k", "cin", "cout", "c", "h", "w")


def _op_problem(op: Op) -> str | None:
    """What makes a plugin-built op uncostable (a NaN count, a zero stride), or None."""
    for name in _OP_COUNTS:
        v = getattr(op, name, None)
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or not 0 <= v < _MAX_COUNT:
            return f"{name} {v!r} (a count, 0 to 2^62)"
    try:
        params = dict(op.params)
    except (TypeError, ValueError):
        return f"params {op.params!r} (expected (name, int) pairs)"
    for name, v in params.items():
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v < _MAX_PARAM:
            return f"params {name}={v!r} (an integer, 0 to 2^40)"
        if name in _AT_LEAST_ONE and v < 1:
            return f"params {name}={v!r} (at least 1)"
    return None


def _check_plan_fields(plan: Plan, src: str, fail, batch_size: int | None) -> None:
    """The plan's other fields: names the engine knows, non-negative finite overheads, a
    micro-batch split of the mini-batch, and a label and notes the summary can carry."""
    from socsim.api import json_default
    from socsim.spec.workload import GOVERNORS

    if plan.governor is not None and plan.governor not in GOVERNORS:
        raise fail(f"the plan from {src} has governor {plan.governor!r}; governors are {', '.join(GOVERNORS)} "
                   "(or None: the workload's cpu.governor)")
    if plan.dsp_graph not in DSP_GRAPH_MODES:
        raise fail(f"the plan from {src} has dsp_graph {plan.dsp_graph!r}; expected one of "
                   f"{', '.join(DSP_GRAPH_MODES)}")
    if not isinstance(plan.shared_buffers, bool):
        raise fail(f"the plan from {src} has shared_buffers {plan.shared_buffers!r}; expected True or False")

    def count(v) -> bool:
        return not isinstance(v, bool) and isinstance(v, numbers.Real) and math.isfinite(v) and v >= 0

    def seconds(v) -> bool:   # an overhead longer than a day is a unit slip, not a phone
        return count(v) and v <= 86400

    if not count(plan.dsp_graph_bytes):
        raise fail(f"the plan from {src} has dsp_graph_bytes {plan.dsp_graph_bytes!r}; expected a byte count")
    if not seconds(plan.cpu_graph_prep_s):
        raise fail(f"the plan from {src} has cpu_graph_prep_s {plan.cpu_graph_prep_s!r}; expected seconds "
                   "(finite, 0 to 86400)")
    try:
        overheads = [tuple(p) for p in plan.prep_overheads]
    except TypeError:
        overheads = None
    if overheads is None or any(len(p) != 2 for p in overheads):
        raise fail(f"the plan from {src} has prep_overheads {plan.prep_overheads!r}; expected (name, seconds) pairs")
    for name, sec in overheads:
        if not isinstance(name, str) or not seconds(sec):
            raise fail(f"the plan from {src} has prep_overheads entry ({name!r}, {sec!r}); expected a name and "
                       "seconds (finite, 0 to 86400)")
    try:
        mbs = list(plan.micro_batches)
    except TypeError:
        mbs = None
    if mbs is None or any(isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1 for m in mbs):
        raise fail(f"the plan from {src} has micro_batches {plan.micro_batches!r}; expected positive sample counts")
    if mbs and batch_size is not None and sum(mbs) != batch_size:
        raise fail(f"the plan from {src} has micro_batches {mbs} ({sum(mbs)} samples); they must add up to the "
                   f"mini-batch, batch_size {batch_size}")
    if not isinstance(plan.label, str):
        raise fail(f"the plan from {src} has label {plan.label!r}; expected a string")
    if not isinstance(plan.notes, dict):
        raise fail(f"the plan from {src} has notes of type {type(plan.notes).__name__}; expected a dict")
    try:
        json.dumps(plan.notes, default=json_default, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise fail(f"the plan from {src} has notes the summary cannot carry as JSON: {e}") from None


GIB = 1 << 30


def _check_plan_memory(plan: Plan, soc: SocSpec, src: str, n_steps: int, fail) -> None:
    """``peak_memory_bytes`` and ``step_memory`` (one entry per step) are byte counts, and the
    plan fits in the phone's DRAM (``dram.capacity_gb``, GiB as phone RAM is sold): a training
    batch whose memory the phone does not have is an impossible schedule, not a slow one."""
    peak = plan.peak_memory_bytes
    if isinstance(peak, bool) or not isinstance(peak, numbers.Real) or not math.isfinite(peak) or peak < 0:
        raise fail(f"the plan from {src} has peak_memory_bytes {peak!r}; expected a byte count")
    need, where = peak, "its peak"
    if plan.step_memory is not None:
        try:
            mem = list(plan.step_memory)
        except TypeError:
            mem = None
        if mem is None or len(mem) != n_steps:
            got = f"{len(mem)} entries" if mem is not None else type(plan.step_memory).__name__
            raise fail(f"the plan from {src} has step_memory of {got}; expected one byte count per step ({n_steps})")
        for k, m in enumerate(mem):
            if isinstance(m, bool) or not isinstance(m, numbers.Real) or not math.isfinite(m) or m < 0:
                raise fail(f"the plan from {src} has step_memory[{k}] {m!r}; expected a byte count")
        top = max(mem, default=0)
        if top > need:
            k = mem.index(top)
            name = getattr(plan.steps[k].op, "name", "?")
            need, where = top, f"step {k} ({name})"
    cap_gb = soc.dram.capacity_gb
    if need > cap_gb * GIB:
        raise fail(f"the plan from {src} needs {need / GIB:.1f} GiB of memory at {where}, more than the "
                   f"{cap_gb:g} GiB DRAM of {soc.name}; use a smaller batch_size, or the sage scheduler "
                   "with a memory budget (environment.memory_budget_mb) to split the mini-batch")


def _check_plan_freqs(plan: Plan, soc: SocSpec, src: str, fail) -> None:
    """``cpu_freq_mhz``: None, or (cluster, MHz) pairs naming the SoC's clusters once each, every
    MHz a number the cluster can run (between OPPs it is floored to one, as ``cpu.freq`` is)."""
    fixed = plan.cpu_freq_mhz
    if fixed is None:
        return
    names = [c.name for c in soc.cpu.clusters]
    try:
        pairs = [tuple(p) for p in fixed]
    except TypeError:
        pairs = None
    if pairs is None or any(len(p) != 2 for p in pairs):
        raise fail(f"the plan from {src} has cpu_freq_mhz {fixed!r}; expected (cluster, MHz) pairs")
    seen = set()
    for name, mhz in pairs:
        if name not in names:
            raise fail(f"the plan from {src} has cpu_freq_mhz for cluster {name!r}; "
                       f"{soc.name} has CPU clusters {', '.join(names)}")
        if name in seen:
            raise fail(f"the plan from {src} has cpu_freq_mhz for cluster {name!r} twice")
        seen.add(name)
        if isinstance(mhz, bool) or not isinstance(mhz, numbers.Real) or not math.isfinite(mhz):
            raise fail(f"the plan from {src} has cpu_freq_mhz {mhz!r} for cluster {name!r}; expected MHz")
        try:
            check_freq_setting(soc, {name: mhz}, field="cpu_freq_mhz")
        except InputError as e:
            raise fail(f"the plan from {src} has cpu_freq_mhz {mhz:g} for cluster {name!r}: {e.message}") from None
