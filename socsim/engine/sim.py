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

This module is the run loop; plan switching and continuations are
:mod:`socsim.engine.switching`, the foreground apps, budget steps and thermal trips
:mod:`socsim.engine.environment`, the parts of a batch :mod:`socsim.engine.parts`.
"""
from __future__ import annotations

import math
import time
from typing import Callable

import simpy

from socsim.contract import BatchRecord, Plan, check_plan, run_precision
from socsim.contract import dvfs
from socsim.contract.cores import check_freq_setting, check_unit_mhz
from socsim.engine.accounting import Accounting
from socsim.engine.batch import Continued, host_core
from socsim.engine.context import PlanContext, RunContext
from socsim.engine.environment import Environment
from socsim.engine.oracle import CostOracle
from socsim.engine.parts import Part, busy_of, record_slices
from socsim.engine.recorder import NullRecorder, Recorder
from socsim.engine.stats import RunStats
from socsim.engine.switching import PlanSwitching, runs_key
from socsim.engine.template import BatchTemplate
from socsim.errors import InputError
from socsim.hw import forkjoin, gpu_dvfs
from socsim.hw import units as hw_units
from socsim.spec.soc import SocSpec, with_activation_staging
from socsim.spec.workload import Workload

#: entries a per-run memo of a pure per-batch function keeps before it starts again (bounds
#: memory on runs whose plans keep changing; a hit saves work, a miss costs nothing more)
_MEMO_MAX = 4096


class Engine(PlanSwitching, Environment):
    """One run of a workload on a SoC under a scheduler: the training loop (here), plan switching
    and continuations (:class:`~socsim.engine.switching.PlanSwitching`), and the foreground apps,
    memory-budget steps and thermal trips around it (:class:`~socsim.engine.environment.Environment`)."""

    def __init__(self, soc: SocSpec, workload: Workload, scheduler, recorder: Recorder | None = None,
                 progress: Callable[[int, int], None] | None = None, file: str | None = None) -> None:
        if workload.dsp.activation_staging is not None:   # the workload's choice over the SoC's
            try:
                soc = with_activation_staging(soc, workload.dsp.activation_staging)
            except ValueError as e:
                raise InputError(str(e), file=file, field="dsp.activation_staging",
                                 value=workload.dsp.activation_staging) from None
        self.soc = soc
        self.workload = workload
        self.scheduler = scheduler
        self.recorder = recorder or NullRecorder()
        self.progress = progress
        bg = workload.environment.background
        self.oracle = CostOracle(soc, workload.dsp.batch_padding,
                                 cpu_background=None if bg is None else forkjoin.background_of(bg.little, bg.big))
        self.pctx = PlanContext(soc, workload, self.oracle, file, precision=run_precision(scheduler, workload))
        self.walker = self.pctx.walker
        self.power = self.walker.power
        self.rails = self.walker.rails
        self.ridx = self.walker.ridx
        self.env = simpy.Environment()
        # a part whose end comes before every other event moves the clock in place of an event
        # (``_run_batch``; SimPy's own clock, ``Environment._now``, as its step sets it)
        self._clock_inline = type(self.env) is simpy.Environment and isinstance(getattr(self.env, "_now", None),
                                                                                 (int, float))
        self.rctx = RunContext(plan_ctx=self.pctx, charging=workload.environment.charging)
        self.stats = RunStats()
        self._templates: dict[tuple, tuple[Plan, Continued | None, BatchTemplate]] = {}
        # DSP graphs prepared so far, by the identity of the plan's steps (kept alive here): a
        # plan that differs from a prepared one only in its CPU operating point or label (one
        # made with dataclasses.replace, as min-energy's variants of a base plan) runs the same
        # prepared graph; a plan with steps of its own prepares its own
        self._dsp_prepared: dict[int, tuple] = {}
        self._freqs: dict[str, float] = {}
        # _capped's operating points by (request, caps, GPU clock): a pure function of them
        self._capped_memo: dict[tuple, tuple[dict[str, float], bool, tuple]] = {}
        # pure functions of their keys, asked once per batch (bounded: cleared when full)
        self._requested_memo: dict[tuple, tuple[Plan, dict[str, float]]] = {}
        self._util_memo: dict[tuple, dict[str, float]] = {}
        self._splits: dict[int, tuple[Plan, tuple[int, ...]]] = {}
        self._on_memo: dict[int, tuple[dict[str, float], list[tuple[str, str]]]] = {}
        self._counts_memo: dict[int, tuple[BatchTemplate, list[tuple[str, int]]]] = {}
        self._util: dict[str, float] = {}
        self._fg_of: dict | None = None   # the interference dict ``_fg`` was made of
        self._fg: tuple = ((), None)
        # the GPU devfreq governor's frequency (socsim.hw.gpu_dvfs): the top OPP until a batch
        # with GPU work has been sampled
        self._gpu_mhz = soc.gpu.opps[-1].freq_mhz if soc.gpu is not None else 0.0
        self._init_switching()
        try:  # a frequency no cluster it applies to can run is bad input, not a silent clamp
            check_freq_setting(soc, workload.cpu.freq, field="cpu.freq")
            if workload.dsp.freq_mhz is not None:  # the DSP's OPP range (between OPPs: floored)
                check_unit_mhz(soc, "dsp", workload.dsp.freq_mhz, "dsp.freq_mhz")
        except InputError as e:
            raise InputError(e.message, file=file, field=e.field, value=e.value) from None
        self._check_environment(file)
        self.acct = Accounting(soc, workload, self.walker, self.stats, self.recorder, self.rctx,
                               self._thermal_trip)

    @property
    def scheduler_name(self) -> str:
        """The name the scheduler was selected by (for errors about its plans)."""
        sched = getattr(self.workload, "scheduler", None)
        return getattr(sched, "name", None) or str(getattr(self.scheduler, "name", "?"))

    # ------------------------------------------------------------------ the run
    def run(self) -> RunStats:
        """Plan, then train batch after batch until the workload's batches are done or the run stops."""
        wall0 = time.perf_counter()
        plan = self.scheduler.plan(self.pctx)
        check_plan(plan, self.soc, scheduler=self.scheduler_name, hook="plan()",
                   batch_size=self.workload.batch_size,
                   input_shape=self.workload.input)
        self.rctx.plan = plan
        self.stats.first_plan = plan
        self._plan_key = runs_key(plan)
        self._keyed_plan = plan
        self._coverage(plan, "plan()")
        if plan.label:
            self.stats.plan_labels.append(plan.label)
        self.stats.battery_start_soc = self.acct.battery.soc
        self._plan = plan
        self._batch_state = self._readings()  # the initial state, until the first batch starts
        self._start_environment()
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
        """The training process: each batch's hooks, the batch at the plan in force, its books."""
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
                self._stop()
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
            if self._fg_of is not self._interference or self._fg[1] is not self._bg_dram_gbs:
                # (the foreground apps change both by assignment: the key once per change)
                self._fg_of = self._interference
                self._fg = (tuple(sorted(self._interference.items())), self._bg_dram_gbs)
            fg = self._fg
            loads = tuple(self._active_loads)  # the foreground apps this batch runs with
            ran = yield from self._run_batch(plan, prep, fg, parts)  # ``plan``, or the continuation that finished it
            if prep:
                self._dsp_prepared[id(plan.steps)] = plan.steps
                self.stats.dsp_prepared_batches += 1
            rec = self._book_batch(b, t0, plan, ran, parts, loads)
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
                self._stop()
                break

    def _stop(self) -> None:
        """End the run where the scheduler (or the battery) asked, with a ``stop`` event."""
        self.stats.stop_reason = self.rctx.stop_requested
        self.recorder.instant(self.env.now, "engine", "stop", self.stats.stop_reason or "")

    def _book_batch(self, b: int, t0: float, plan: Plan, ran: Plan, parts: list[Part], loads: tuple) -> BatchRecord:
        """Record a finished batch (its slices, memory over the budget, busy time, totals, its row
        of batches.csv) and return what ``on_batch_end`` is told of it."""
        record_slices(self.recorder, b, parts)
        if self._budget_steps:
            self._over_budget(b, parts)
        ops = [p for p in parts if p.training]
        busy, busy_dur = busy_of(ops)
        time_on = self.stats.time_on_s
        for k, name in self._on_keys(busy):
            time_on[name] = time_on.get(name, 0.0) + busy[k]
        self._util = self._utilisation(plan, busy, busy_dur)
        self._gpu_governor(busy, busy_dur)
        if self._fg_loads:
            self._foreground_contention(plan, busy, ops[0].t_s, busy_dur, loads)
        # the batch as batches.csv and the hooks see it: its ops and the config switch it paid
        dur = parts[0].dur_s if len(parts) == 1 else sum(p.dur_s for p in parts)
        energy = 0 + parts[0].energy_j if len(parts) == 1 else sum(p.energy_j for p in parts)  # (sum's start, 0)
        st = self.stats
        st.batches += 1
        st.batch_time_sum_s += dur
        st.batch_energy_sum_j += energy
        counts = st.counts
        for k, v in self._nonzero_counts(ops[-1].tpl):  # a continuation's template holds the whole batch
            counts[k] += v
        self.recorder.batch(b, t0, dur, energy, ran.label)
        if ran.label:
            st.plan_batches[ran.label] = st.plan_batches.get(ran.label, 0) + 1
        held = self._splits.get(id(ran))
        if held is None or held[0] is not ran:   # (a plan is frozen: its split once; the plan is kept)
            if len(self._splits) >= _MEMO_MAX:
                self._splits.clear()
            held = self._splits[id(ran)] = (ran, tuple(int(m) for m in ran.micro_batches)
                                            or (self.workload.batch_size,))
        split = held[1]
        if not st.micro_batch_runs or st.micro_batch_runs[-1] != split:
            st.micro_batch_runs.append(split)
        # the scheduler is told about the ops alone (what its estimates predict), from their start
        ops_energy = energy if len(ops) == len(parts) else sum(p.energy_j for p in ops)
        return BatchRecord(b, ops[0].t_s, busy_dur, ops_energy, ran.label, bool(self._interference))

    def _on_keys(self, busy: dict[str, float]) -> list[tuple[str, str]]:
        """The ``on:<unit>`` keys of a batch's busy times and their units, once per busy dict (a
        whole batch's is its template's; the dict is kept with its entry, so its id stays its own)."""
        held = self._on_memo.get(id(busy))
        if held is None or held[0] is not busy:
            if len(self._on_memo) >= _MEMO_MAX:
                self._on_memo.clear()
            held = self._on_memo[id(busy)] = (busy, [(k, k[3:]) for k in busy if k.startswith("on:")])
        return held[1]

    def _nonzero_counts(self, tpl: BatchTemplate) -> list[tuple[str, int]]:
        """A template's op and switch counts other than zero (adding a zero count changes nothing)."""
        held = self._counts_memo.get(id(tpl))
        if held is None or held[0] is not tpl:
            if len(self._counts_memo) >= _MEMO_MAX:
                self._counts_memo.clear()
            held = self._counts_memo[id(tpl)] = (tpl, [(k, v) for k, v in tpl.counts.items() if v])
        return held[1]

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
        freqs, throttled, fkey = self._capped_entry(request, self.acct.caps)
        freqs = dict(freqs)
        cont: Continued | None = None
        tpl = self._template(plan, freqs, prep, fg, fkey=fkey)
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
            end = self._budget_cut(t, tpl.duration_s - a)

            def caps_change(caps: dict[str, float], cur: dict[str, float] = freqs) -> bool:
                return self._capped(request, caps) != cur

            b, energy = self.acct.account(t, tpl, plan, freqs, a, caps_change, None if end is None else a + end)
            parts.append(Part(t, tpl, a, b, energy))
            if throttled:  # a cap holds a cluster below its request
                self.stats.time_throttled_s += b - a
            self._freqs = freqs
            env, d = self.env, b - a
            queue = env._queue
            if self._clock_inline and (not queue or queue[0][0] > env._now + d):
                # nothing else is due before this part ends: the clock moves to its end as the
                # timeout's event would move it there (SimPy's Environment.schedule, then step:
                # now + delay), without the event (the training process is the only one to run)
                env._now = env._now + d
            else:
                yield env.timeout(d)
            if b >= tpl.duration_s:
                return plan
            freqs, throttled, fkey = self._capped_entry(request, self.acct.caps)
            freqs = dict(freqs)
            nxt = self._template(plan, freqs, prep, fg, cont, fkey=fkey)
            a = tpl.map_offset(b, nxt)
            tpl = nxt

    def _template(self, plan: Plan, freqs: dict[str, float], prep: bool, fg: tuple,
                  cont: Continued | None = None, fkey: tuple | None = None) -> BatchTemplate:
        """The batch's timeline at this operating point and interference, walked once
        (``fkey``: ``freqs``' sorted items, where the caller holds them)."""
        key = (id(plan), tuple(sorted(freqs.items())) if fkey is None else fkey, prep, fg,
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
        """The CPU clusters' frequencies the DVFS governor asks for this batch (before caps):
        :meth:`_requested_at`, memoised on what it reads (the plan is kept with its entry, so
        its id stays unique)."""
        key = (id(plan), tuple(self._util.items()), tuple(self._interference.items()))
        hit = self._requested_memo.get(key)
        if hit is None:
            if len(self._requested_memo) >= _MEMO_MAX:
                self._requested_memo.clear()
            hit = self._requested_memo[key] = (plan, self._requested_at(plan))
        return dict(hit[1])

    def _requested_at(self, plan: Plan) -> dict[str, float]:
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
        return dict(self._capped_entry(request, self.acct.caps if caps is None else caps)[0])

    def _capped_entry(self, request: dict[str, float], caps: dict[str, float]) -> tuple[dict[str, float], bool, tuple]:
        """:meth:`_capped`'s operating point (not to be written to), whether a cap holds a
        cluster below its request, and the point's sorted items (the template's key): pure
        functions of (request, caps, GPU clock), memoised on them."""
        key = (tuple(request.items()), tuple(caps.items()), self._gpu_mhz)
        hit = self._capped_memo.get(key)
        if hit is None:
            freqs = self._capped_at(request, caps)
            hit = self._capped_memo[key] = (freqs, any(freqs[c] < request[c] for c in request),
                                            tuple(sorted(freqs.items())))
        return hit

    def _capped_at(self, request: dict[str, float], caps: dict[str, float]) -> dict[str, float]:
        clamp = self.acct.governor.clamp
        freqs = {name: dvfs.floor_opp(self.soc.cluster(name), clamp(caps, name, f)) for name, f in request.items()}
        if self.soc.dsp is not None:
            freqs["dsp"] = self.pctx.dsp_mhz
            if self.soc.dsp.hmx is not None:   # HMX runs on the cDSP's clock
                freqs["hmx"] = self.pctx.dsp_mhz
        if self.soc.gpu is not None:   # the devfreq governor's choice under the GPU's thermal cap
            cap = caps.get("gpu", math.inf)
            freqs["gpu"] = max((o.freq_mhz for o in self.soc.gpu.opps if o.freq_mhz <= min(self._gpu_mhz, cap)),
                               default=self.soc.gpu.opps[0].freq_mhz)
        return freqs

    def _gpu_governor(self, busy: dict[str, float], dur_s: float) -> None:
        """One devfreq decision on the batch's GPU load (socsim.hw.gpu_dvfs); a batch without
        GPU work leaves the clock where it was."""
        gpu = self.soc.gpu
        if gpu is None or dur_s <= 0.0 or busy.get("gpu", 0.0) <= 0.0:
            return
        opps = tuple(o.freq_mhz for o in gpu.opps)
        cur = self._freqs.get("gpu", self._gpu_mhz)
        self._gpu_mhz = gpu_dvfs.next_freq(gpu.governor, opps, cur, busy["gpu"] / dur_s,
                                           gpu.governor_upthreshold, gpu.governor_downdifferential)

    def _utilisation(self, plan: Plan, busy: dict[str, float], dur_s: float) -> dict[str, float]:
        """What schedutil sees of each cluster over the batch (socsim.contract.dvfs.schedutil_util)
        while the CPU side is active.  While the calling thread sleeps in a FastRPC call or waits
        for the GPU, its PELT utilisation decays; schedutil ramps the clock back within a few ms
        of the CPU ops resuming (rate limit ~ms), so those ops run at the clock their own load
        sets: the accelerator time is left out of the denominator.  The host core's own work
        (graph preparation, the FastRPC copies) counts as busy."""
        key = (plan.cpu_cores, tuple(busy.items()), dur_s)
        hit = self._util_memo.get(key)
        if hit is None:
            active = dur_s
            for u in hw_units.accelerators():
                active -= busy.get(u.name, 0.0)
            if len(self._util_memo) >= _MEMO_MAX:
                self._util_memo.clear()
            hit = self._util_memo[key] = dvfs.schedutil_util(self.soc, plan.cpu_cores, busy, active)
        return dict(hit)
