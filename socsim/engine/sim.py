"""The simulation engine: training batches as SimPy processes on a simulated SoC.

Processing units are SimPy resources (one per CPU core, the DSP, the GPU).  The training loop is
a process; each batch's ops hold their unit for the time the unit's cost model gives at the
current operating point.  Foreground apps are processes that occupy cores for a while.  After
each batch the engine integrates rail energy in sampling windows, advances the thermal network
exactly over each window, steps the battery, lets the throttling governor cap cluster
frequencies, and hands the samples to the recorder.

The first batch of a distinct (plan, operating point, interference) runs op by op; later
identical batches replay its :class:`~socsim.engine.template.BatchTemplate` as one event.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import simpy

from socsim.engine import dvfs
from socsim.engine.context import PlanContext, RunContext
from socsim.engine.oracle import CostOracle
from socsim.engine.batch import RPC_CPU_ACTIVITY
from socsim.engine.template import BatchTemplate, TemplateBuilder
from socsim.errors import ScheduleError
from socsim.hw.battery import BatteryState, battery_counters, battery_step
from socsim.hw.thermal import ThermalNetwork, ThrottleGovernor
from socsim.report.events import NullRecorder, Recorder
from socsim.sched.api import BatchRecord, InterferenceEvent, Plan, ThermalEvent
from socsim.spec.soc import SocSpec
from socsim.spec.workload import Workload



@dataclass
class RunStats:
    """Running totals of a run (flat in memory whatever the number of batches)."""

    batches: int = 0
    sim_time_s: float = 0.0
    batch_time_sum_s: float = 0.0
    batch_energy_sum_j: float = 0.0
    rail_energy_j: dict[str, float] = field(default_factory=dict)
    idle_energy_j: float = 0.0
    peak_c: float = -math.inf
    zone_peak_c: dict[str, float] = field(default_factory=dict)
    final_c: float = 0.0
    peak_mem_bytes: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {"cpu_ops": 0, "dsp_ops": 0, "gpu_ops": 0, "switches": 0})
    throttle_events: int = 0
    time_throttled_s: float = 0.0
    templates_built: int = 0
    config_switches: int = 0
    plan_labels: list[str] = field(default_factory=list)
    micro_batches: tuple[int, ...] = ()
    stop_reason: str | None = None
    battery_start_soc: float = 0.0
    battery_end_soc: float = 0.0
    first_plan: Plan | None = None
    dsp_prepared_batches: int = 0


class Engine:
    def __init__(self, soc: SocSpec, workload: Workload, scheduler, recorder: Recorder | None = None,
                 progress: Callable[[int, int], None] | None = None, file: str | None = None) -> None:
        self.soc = soc
        self.workload = workload
        self.scheduler = scheduler
        self.recorder = recorder or NullRecorder()
        self.progress = progress
        self.oracle = CostOracle(soc, workload.dsp.batch_padding)
        self.pctx = PlanContext(soc, workload, self.oracle, file)
        self.walker = self.pctx.walker
        self.power = self.walker.power
        self.rails = self.walker.rails
        self.ridx = self.walker.ridx
        env_spec = workload.environment
        self.thermal = ThermalNetwork(soc.thermal, env_spec.ambient_c)
        self.governor = ThrottleGovernor(soc.thermal, soc.cpu.clusters)
        self.gov_state = self.governor.initial_state()
        self.caps = self.governor.caps_mhz(self.gov_state)
        self.temps = self.thermal.initial_temps()
        self.battery = BatteryState.initial(soc.battery, env_spec.initial_soc)
        self.sample_s = workload.output.sample_ms * 1e-3
        self.env = simpy.Environment()
        self.cores = {i: simpy.Resource(self.env, 1) for c in soc.cpu.clusters for i in c.core_ids}
        self.dsp = simpy.Resource(self.env, 1)
        self.gpu = simpy.Resource(self.env, 1)
        self.rctx = RunContext(plan_ctx=self.pctx, charging=env_spec.charging)
        self.stats = RunStats()
        self._templates: dict[tuple, tuple[Plan, BatchTemplate]] = {}
        self._interference: dict[int, float] = {}  # core -> foreground utilisation
        self._pending_plan: Plan | None = None
        self._config_changed = False  # the next batch pays a core-set / frequency switch
        self._dsp_prepared: set[int] = set()  # plans whose DSP subgraphs are prepared (kept alive in _templates)
        self._freqs: dict[str, float] = {}
        self._util: dict[str, float] = {}
        # sampling state: energy since the last sample boundary, cumulative rail energy
        self._next_sample_s = self.sample_s
        self._window_j = np.zeros(len(self.rails))
        self._batt_i, self._batt_v = 0.0, self.soc.battery.nominal_voltage_v
        self._cum_j = np.zeros(len(self.rails))
        self._idle_mw = np.array([self.power.idle_mw().get(r, 0.0) for r in self.rails])
        self._heat_map = self._heat_matrix()
        self._static_terms: dict[int, tuple] = {}
        self._columns: list[str] | None = None
        hs = soc.thermal.heat_sources
        self._rail_nodes_ok = all(hs.get(r) not in (None, soc.thermal.ambient_node) for r in self.rails)
        self._rail_nodes = np.array([self.thermal.index(hs[r]) for r in self.rails], dtype=int) \
            if self._rail_nodes_ok else np.zeros(0, dtype=int)
        zones = [z for z in soc.thermal.zones if z.node != soc.thermal.ambient_node]
        self._zone_names = [z.name for z in zones]
        self._zone_nodes = np.array([self.thermal.index(z.node) for z in zones], dtype=int)
        # below this reading a zone is far from its first trip: the governor cannot act
        self._poll_s = min((z.polling_s for z in zones), default=math.inf)
        self._last_poll_s = -math.inf
        self._throttled = False
        self._zone_alert = np.array([(min(z.trips_c) - 5.0) if z.trips_c else math.inf for z in zones])

    # ------------------------------------------------------------------ set-up helpers
    def _heat_matrix(self) -> np.ndarray:
        """rails x nodes matrix turning rail power (W) into node heat (W)."""
        m = np.zeros((len(self.rails), len(self.thermal.node_names)))
        for i, r in enumerate(self.rails):
            onehot = self.thermal.node_power({r: 1.0})
            m[i] = onehot
        return m

    def _node_temp(self, rail: str) -> float:
        node = self.soc.thermal.heat_sources.get(rail)
        if node is None or node == self.soc.thermal.ambient_node:
            return self.thermal.ambient_c
        return float(self.temps[self.thermal.index(node)])

    # ------------------------------------------------------------------ the run
    def run(self) -> RunStats:
        wall0 = time.perf_counter()
        plan = self.scheduler.plan(self.pctx)
        _check_plan(plan, self.soc)
        self.rctx.plan = plan
        self.stats.first_plan = plan
        if plan.label:
            self.stats.plan_labels.append(plan.label)
        self.stats.battery_start_soc = self.battery.soc
        self._plan = plan
        for load in self.workload.environment.foreground_loads:
            self.env.process(self._foreground(load))
        budget_steps = self.workload.environment.memory_budget_mb
        if isinstance(budget_steps, list):
            self.env.process(self._budget_profile(budget_steps))
        done = self.env.process(self._training())
        self.env.run(until=done)
        self._final_sample()
        self.stats.sim_time_s = self.env.now
        self.stats.final_c = float(self.temps.max())
        self.stats.battery_end_soc = self.battery.soc
        self.wall_time_s = time.perf_counter() - wall0
        self.recorder.close()
        return self.stats

    def _training(self):
        total = self.workload.total_batches
        for b in range(total):
            self.rctx.batch = b
            self.rctx.now_s = self.env.now
            self._apply(self.scheduler.on_batch_start(self.rctx, b))
            if self._pending_plan is not None:
                self._switch_plan(self._pending_plan)
                self._pending_plan = None
                yield from self._config_switch()
            plan = self._plan
            freqs = self._frequencies(plan)
            prep = plan.dsp_graph == "per_batch" or (plan.dsp_graph == "reuse" and id(plan) not in self._dsp_prepared)
            fg = tuple(sorted(self._interference.items()))
            key = (id(plan), tuple(sorted(freqs.items())), prep, fg)
            t0 = self.env.now
            hit = self._templates.get(key)
            if hit is None:
                tpl = yield from self._execute(plan, freqs, prep)
                self._templates[key] = (plan, tpl)  # the plan is kept so its id stays unique
                self.stats.templates_built += 1
            else:
                tpl = hit[1]
                yield self.env.timeout(tpl.duration_s)
            if prep:
                self._dsp_prepared.add(id(plan))
                self.stats.dsp_prepared_batches += 1
            if self.recorder.keeps_batch(b):
                for s in tpl.slices:
                    self.recorder.op_slice(s.track, s.name, s.kind, b, s.phase, t0 + s.start_s, s.dur_s)
            energy = self._account(t0, tpl, plan, freqs)
            self._util = self._utilisation(plan, tpl)
            st = self.stats
            st.batches += 1
            st.batch_time_sum_s += tpl.duration_s
            st.batch_energy_sum_j += energy
            for k, v in tpl.counts.items():
                st.counts[k] += v
            self.recorder.batch(b, t0, tpl.duration_s, energy, plan.label)
            rec = BatchRecord(b, t0, tpl.duration_s, energy, plan.label, bool(self._interference))
            self.rctx.now_s = self.env.now
            self._apply(self.scheduler.on_batch_end(self.rctx, b, rec))
            if self.progress is not None:
                self.progress(b + 1, total)
            if self.rctx.stop_requested:
                st.stop_reason = self.rctx.stop_requested
                self.recorder.instant(self.env.now, "engine", "stop", st.stop_reason)
                break

    def _apply(self, new_plan: Plan | None) -> None:
        if new_plan is not None and new_plan is not self._plan:
            _check_plan(new_plan, self.soc)
            self._pending_plan = new_plan

    def _switch_plan(self, plan: Plan) -> None:
        old = self._plan
        self._plan = plan
        self.rctx.plan = plan
        if plan.label and plan.label not in self.stats.plan_labels[-1:]:
            self.stats.plan_labels.append(plan.label)
        self.recorder.instant(self.env.now, "engine", "plan", plan.label)
        self._config_changed = (old.cpu_cores != plan.cpu_cores or old.cpu_freq_mhz != plan.cpu_freq_mhz)

    def _config_switch(self):
        """Changing core set / frequency between batches costs time (pub:cpu_config_switch_ms)."""
        if self._config_changed:
            self._config_changed = False
            dur = self.soc.cpu.config_switch_ms * 1e-3
            t0 = self.env.now
            yield self.env.timeout(dur)
            b = TemplateBuilder(len(self.rails))
            dyn = self.walker.cpu_dyn({self.soc.cpu.clusters[0].name: 1}, RPC_CPU_ACTIVITY, self._freqs)
            b.segment(0.0, dur, dyn, 0, ("engine",), "config-switch", "switch", "switch", {}, 0)
            tpl = b.build(dur)
            self.recorder.op_slice("engine", "config-switch", "switch", self.rctx.batch, "switch", t0, dur)
            self._account(t0, tpl, self._plan, self._freqs)
            self.stats.config_switches += 1

    # ------------------------------------------------------------------ operating points
    def _frequencies(self, plan: Plan) -> dict[str, float]:
        gov = plan.governor or self.workload.cpu.governor
        used = {c.name for c in self.soc.cpu.clusters if any(i in c.core_ids for i in plan.cpu_cores)}
        freqs = dvfs.cluster_frequencies(self.soc, gov, self.workload.cpu.freq, plan.cpu_freq_mhz,
                                         used, self._util, self._freqs)
        freqs = {name: self.governor.clamp(self.caps, name, f) for name, f in freqs.items()}
        freqs = {name: dvfs.floor_opp(self.soc.cluster(name), f) for name, f in freqs.items()}
        if self.soc.dsp is not None:
            freqs["dsp"] = self.pctx.dsp_mhz
        if self.soc.gpu is not None:
            freqs["gpu"] = self.soc.gpu.opps[-1].freq_mhz
        self._freqs = freqs
        return freqs

    # ------------------------------------------------------------------ detailed execution
    def _execute(self, plan: Plan, freqs: dict[str, float], prep: bool):
        """Run one batch segment by segment on SimPy resources, recording it as a template."""
        env = self.env
        t0 = env.now
        b = TemplateBuilder(len(self.rails))
        share = self._cpu_share(plan.cpu_cores)
        name = getattr(self.scheduler, "name", "?")
        for seg in self.walker.segments(plan, freqs, prep, share, name):
            if seg.dur > 0:
                res = [self._resource(r) for r in seg.resources]
                reqs = [r.request() for r in res]
                for q in reqs:
                    yield q
                start = env.now - t0
                yield env.timeout(seg.dur)
                for r, q in zip(res, reqs):
                    r.release(q)
            else:
                start = env.now - t0
            b.add(start, seg)
        return b.build(env.now - t0)

    def _resource(self, name: str) -> simpy.Resource:
        if name == "dsp":
            return self.dsp
        if name == "gpu":
            return self.gpu
        return self.cores[int(name[3:])]

    def _utilisation(self, plan: Plan, tpl: BatchTemplate) -> dict[str, float]:
        """Busy fraction of the plan's cores in each cluster while the CPU side is active (for
        schedutil).  While the calling thread sleeps in a FastRPC call or waits for the GPU, its
        PELT utilisation decays; schedutil ramps the clock back within a few ms of the CPU ops
        resuming (rate limit ~ms), so those ops run at the clock their own load sets: the
        accelerator time is left out of the denominator."""
        out = {}
        active = tpl.duration_s - tpl.busy_s.get("dsp", 0.0) - tpl.busy_s.get("gpu", 0.0)
        for c in self.soc.cpu.clusters:
            n = sum(1 for i in plan.cpu_cores if i in c.core_ids)
            if n and active > 0:
                out[c.name] = tpl.busy_s.get(c.name, 0.0) / active / n
        return out

    def _cpu_share(self, cores: tuple[int, ...]) -> float:
        """Fraction of each training thread's core left by foreground apps (CFS fair share:
        a core shared with a thread using it a fraction u of the time gives 1 - u/2)."""
        if not self._interference:
            return 1.0
        return min(1.0 - 0.5 * self._interference.get(c, 0.0) for c in cores)

    # ------------------------------------------------------------------ accounting
    def _account(self, t0: float, tpl: BatchTemplate, plan: Plan, freqs: dict[str, float]) -> float:
        """Integrate energy over the batch, sample, advance thermal/battery, run the governor.

        The batch is cut at sampling boundaries into pieces; the thermal network advances
        exactly over each piece with that piece's mean power (exact for piecewise-constant
        power), all pieces at once.  The governor polls at each boundary while any zone is near
        or past a trip; far from every trip it cannot act, and is not asked.  The battery steps
        once per batch with the batch's mean power (its state of charge moves by ~1e-5 per
        second of training).
        """
        dur = tpl.duration_s
        t1 = t0 + dur
        static_mw = self._static(plan, freqs, tpl)
        batch_j = tpl.dyn_energy_j + static_mw * 1e-3 * dur
        n_grid = 0
        if self._next_sample_s <= t1 + 1e-12:
            n_grid = int(math.floor((t1 + 1e-12 - self._next_sample_s) / self.sample_s)) + 1
        grid = self._next_sample_s + self.sample_s * np.arange(n_grid)
        offs = np.append(grid - t0, dur)
        cum = tpl.dyn_energy_until(offs)
        dts = np.diff(offs, prepend=0.0)
        piece_j = np.diff(cum, axis=0, prepend=np.zeros((1, cum.shape[1]))) + np.outer(dts, static_mw * 1e-3)
        safe = np.where(dts > 0, dts, 1.0)
        node_w = (piece_j / safe[:, None]) @ self._heat_map
        temps = self.thermal.advance_many(self.temps, node_w, dts)
        self._thermal_bookkeeping(temps, t0 + offs, dts)
        self.temps = temps[-1]
        charging_w = self.workload.environment.charger_w if self.rctx.charging else 0.0
        batt_temp = self._node_temp_by_node(self.soc.battery.thermal_node)
        if dur > 0:
            self.battery, self._batt_i, self._batt_v = battery_step(
                self.soc.battery, self.battery, float(batch_j.sum()) / dur, dur, batt_temp, charging_w)
        self.rctx.battery_soc = self.battery.soc
        self.rctx.battery_temp_c = batt_temp
        if n_grid and not isinstance(self.recorder, NullRecorder):
            window = piece_j[:n_grid].copy()
            window[0] += self._window_j
            cum = self._cum_j + np.cumsum(window, axis=0)
            self._cum_j = cum[-1].copy()
            self._window_j = piece_j[n_grid].copy()
            self._samples(grid, window, cum, tpl.mem_at(offs[:n_grid]), freqs, temps[:n_grid])
        elif n_grid:
            self._cum_j += self._window_j + piece_j[:n_grid].sum(axis=0)
            self._window_j = piece_j[n_grid].copy()
        else:
            self._window_j = self._window_j + piece_j[0]
        if n_grid:
            self._next_sample_s = float(grid[-1]) + self.sample_s
        st = self.stats
        for i, r in enumerate(self.rails):
            st.rail_energy_j[r] = st.rail_energy_j.get(r, 0.0) + float(batch_j[i])
        st.idle_energy_j += float(self._idle_mw.sum()) * 1e-3 * dur
        st.peak_mem_bytes = max(st.peak_mem_bytes, int(plan.peak_memory_bytes))
        return float(batch_j.sum())

    def _static(self, plan: Plan, freqs: dict[str, float], tpl: BatchTemplate) -> np.ndarray:
        """Static rail power at the current temperatures (leakage doubles every ``doubling_c``)."""
        key = id(tpl)
        terms = self._static_terms.get(key)
        if terms is None:
            terms = self._static_terms[key] = (tpl, *self.walker.static_terms(plan, freqs, tpl))
        _, base, leak, doubling = terms
        t = self.temps[self._rail_nodes] if self._rail_nodes_ok else np.array([self._node_temp(r) for r in self.rails])
        return base + leak * np.exp2((t - 25.0) / doubling)

    def _thermal_bookkeeping(self, temps: np.ndarray, ends: np.ndarray, dts: np.ndarray) -> None:
        """Peaks, zone readings and governor polls over a batch's pieces."""
        st = self.stats
        st.peak_c = max(st.peak_c, float(temps.max()))
        zt = temps[:, self._zone_nodes] if len(self._zone_nodes) else np.zeros((len(temps), 0))
        zmax = zt.max(axis=0) if len(zt) else np.zeros(0)
        for j, z in enumerate(self._zone_names):
            if zmax[j] > st.zone_peak_c.get(z, -math.inf):
                st.zone_peak_c[z] = float(zmax[j])
        near = bool(np.any(zmax >= self._zone_alert)) or any(zs.tripped or zs.steps for zs in self.gov_state.zones)
        if near:
            # the governor polls every ``polling_s``; between polls nothing can change, nor at a
            # poll with every zone idle and below its first trip (step_wise no-op)
            hot = (zt >= self._zone_alert + 5.0).any(axis=1).tolist()
            ends_l, dts_l, zt_l = ends.tolist(), dts.tolist(), zt.tolist()
            idle = not self._throttled and not any(zs.tripped for zs in self.gov_state.zones)
            for k in range(len(ends_l)):
                if idle and not hot[k]:
                    continue
                if ends_l[k] - self._last_poll_s >= self._poll_s - 1e-12:
                    self._last_poll_s = ends_l[k]
                    self._govern(dict(zip(self._zone_names, zt_l[k])), ends_l[k])
                    idle = not self._throttled and not any(zs.tripped for zs in self.gov_state.zones)
                if self._throttled:
                    st.time_throttled_s += dts_l[k]
        self.rctx.temps_c = dict(zip(self._zone_names, map(float, zt[-1])))

    def _node_temp_by_node(self, node: str) -> float:
        try:
            return float(self.temps[self.thermal.index(node)])
        except KeyError:
            return self.thermal.ambient_c

    def _govern(self, zone_temps: dict[str, float], t_s: float) -> None:
        dec = self.governor.update(self.gov_state, zone_temps, t_s)
        self.gov_state = dec.state
        if dec.caps_mhz != self.caps:
            self.caps = dec.caps_mhz
            self._throttled = any(self.caps[c.name] < c.max_mhz for c in self.soc.cpu.clusters)
            self.rctx.caps_mhz = dict(self.caps)
            self.recorder.instant(t_s, "engine", "throttle",
                                  " ".join(f"{k}={v:g}" for k, v in sorted(self.caps.items())))
        for ev in dec.events:
            self.stats.throttle_events += 1
            self.recorder.instant(t_s, "engine", f"trip {ev.direction}",
                                  f"{ev.zone} trip{ev.trip} {ev.trip_c:g}C at {ev.temp_c:.1f}C")
            te = ThermalEvent(t_s, ev.zone, ev.temp_c, ev.trip, ev.direction == "up",
                              tuple(sorted(self.caps.items())))
            self._apply(self.scheduler.on_thermal_trip(self.rctx, te))

    def _final_sample(self) -> None:
        """Close the last, partial sampling window so every run has samples up to its end."""
        last = self._next_sample_s - self.sample_s
        if self.env.now - last > 1e-12 and not isinstance(self.recorder, NullRecorder):
            self._cum_j = self._cum_j + self._window_j
            self._samples(np.array([self.env.now]), self._window_j[None, :], self._cum_j[None, :],
                          np.array([float(self.stats.peak_mem_bytes)]), self._freqs, self.temps[None, :],
                          window_s=self.env.now - last)
            self._window_j = np.zeros(len(self.rails))

    def _sample_columns(self) -> list[str]:
        cols = [f"power.{r}_uws" for r in self.rails] + [f"power.{r}_mw" for r in self.rails]
        cols += [f"cpufreq.{c.name}" for c in self.soc.cpu.clusters]
        cols += [f"{z} Temperature" for z in self._zone_names]
        cols += [f"thermal.{n}_c" for n in self.thermal.node_names]
        cols += list(battery_counters(self.battery, 0.0, 0.0))
        return cols + ["mem.used_bytes", "batch"]

    def _samples(self, t: np.ndarray, window_j: np.ndarray, cum_j: np.ndarray, mem: np.ndarray,
                 freqs: dict[str, float], temps: np.ndarray, window_s: float | None = None) -> None:
        """Hand the recorder a block of samples (one row per sampling boundary)."""
        if self._columns is None:
            self._columns = self._sample_columns()
        k = len(t)
        period = window_s or self.sample_s
        batt = np.array(list(battery_counters(self.battery, self._batt_i, self._batt_v).values()))
        block = np.column_stack([
            cum_j * 1e6, window_j / period * 1e3,
            np.tile([freqs.get(c.name, c.min_mhz) for c in self.soc.cpu.clusters], (k, 1)),
            temps[:, self._zone_nodes] if len(self._zone_nodes) else np.zeros((k, 0)),
            temps, np.tile(batt, (k, 1)), np.asarray(mem, float)[:, None],
            np.full((k, 1), float(self.rctx.batch)),
        ])
        self.recorder.samples(self._columns, np.asarray(t, float), block)

    # ------------------------------------------------------------------ environment processes
    def _foreground(self, load):
        env = self.env
        yield env.timeout(load.start_s)
        for c in load.cores:
            self._interference[c] = max(self._interference.get(c, 0.0), load.utilization)
        self.rctx.interference_cores = tuple(sorted(self._interference))
        self.rctx.now_s = env.now
        self.recorder.instant(env.now, "engine", "foreground start", f"{load.name} cores={load.cores}")
        ev = InterferenceEvent(env.now, tuple(load.cores), load.utilization, True, load.name)
        self._apply(self.scheduler.on_interference(self.rctx, ev))
        yield env.timeout(load.duration_s)
        for c in load.cores:
            self._interference.pop(c, None)
        self.rctx.interference_cores = tuple(sorted(self._interference))
        self.rctx.now_s = env.now
        self.recorder.instant(env.now, "engine", "foreground end", load.name)
        ev = InterferenceEvent(env.now, tuple(load.cores), load.utilization, False, load.name)
        self._apply(self.scheduler.on_interference(self.rctx, ev))

    def _budget_profile(self, steps):
        env = self.env
        for step in sorted(steps, key=lambda s: s.at_s):
            if step.at_s > env.now:
                yield env.timeout(step.at_s - env.now)
            budget = int(step.mb * (1 << 20))
            self.rctx.now_s = env.now
            self.recorder.instant(env.now, "engine", "memory budget", f"{step.mb:g} MB")
            self._apply(self.scheduler.on_memory_pressure(self.rctx, budget))


def _check_plan(plan: Plan, soc: SocSpec) -> None:
    if not isinstance(plan, Plan):
        raise ScheduleError(f"scheduler returned {type(plan).__name__}, not a Plan", field="scheduler.name")
    if any(s.unit == "cpu" for s in plan.steps) and not plan.cpu_cores:
        raise ScheduleError("plan runs ops on the CPU but names no CPU cores", field="cpu.cores")
    all_ids = {i for c in soc.cpu.clusters for i in c.core_ids}
    bad = [c for c in plan.cpu_cores if c not in all_ids]
    if bad:
        raise ScheduleError(f"plan uses cores {bad} that {soc.name} does not have", field="cpu.cores",
                            value=list(plan.cpu_cores))
    if any(s.unit == "dsp" for s in plan.steps) and soc.dsp is None:
        raise ScheduleError(f"plan places ops on a DSP but {soc.name} has none", field="scheduler.name")
    if any(s.unit == "gpu" for s in plan.steps) and soc.gpu is None:
        raise ScheduleError(f"plan places ops on a GPU but {soc.name} has none", field="scheduler.name")
