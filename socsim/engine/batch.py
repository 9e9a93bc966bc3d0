"""Walking a plan's batch: the segments it consists of, their time, power and traffic.

One walker serves both the engine (which holds SimPy resources for each segment) and
schedulers' estimates (:meth:`PlanContext.estimate`), so a scheduler's profile and the run
agree by construction.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator, Mapping

import numpy as np

from socsim.contract.dvfs import HOST_BUSY
from socsim.engine.template import BatchTemplate, TemplateBuilder
from socsim.errors import ScheduleError
from socsim.hw import fastrpc, units
from socsim.hw.host import host_speed
from socsim.hw.power import RAIL_DRAM, RAIL_PLATFORM, SocPower, cpu_rail, rail_names, uncore_power_mw
from socsim.contract import Plan
from socsim.spec.soc import SocSpec
from socsim.workload.memory import live_bytes

# Power the CPU core that drives a FastRPC call or prepares a graph draws, as a fraction of a
# fully busy core.  Assumption, 0.5 (plausible 0.3-0.8): copying, cache maintenance and the
# driver's waits are memory- or latency-bound, and a memory-bound core draws well under its
# dynamic power at full IPC (the EAS coefficients, docs/modeling.md, are for busy cores).  No
# published per-call CPU power exists; the FastRPC figures (hw:fastrpc) give time only.  Also
# used for the CPU configuration switch (socsim.engine.sim ``_config_switch``).
RPC_CPU_ACTIVITY = 0.5

# Switching activity of a foreground app's threads while they run (socsim.hw.power scales the
# EAS C V^2 f of a busy core by it).  Assumption, 0.6 (plausible 0.4-0.8): an interactive app's
# threads (game logic, UI, render submission) are integer, branchy code with cache misses,
# drawing less than the dense NEON kernels of training (activity ~1); no published per-core
# power of the foreground apps Swan ran exists.
FG_APP_ACTIVITY = 0.6


def host_core(soc: SocSpec, plan: Plan) -> int:
    """The core that drives a batch (prepares graphs, makes the FastRPC calls, hands work to the
    GPU): the plan's first core, or for a plan with none (all on the GPU or DSP) the first core
    of the first cluster."""
    return plan.cpu_cores[0] if plan.cpu_cores else soc.cpu.clusters[0].core_ids[0]


@dataclass(slots=True)
class Seg:
    dur: float
    resources: tuple[str, ...]   # "cpu<N>" (the host's cores), or another unit's name
    tracks: tuple[str, ...]
    name: str
    kind: str
    phase: str
    dyn_mw: np.ndarray
    busy: dict[str, float]
    dram_bytes: int
    mem: int
    count: str | None            # "<unit>_ops" | "switches" | None
    step: int = -1               # the plan step it belongs to (its FastRPC switch included); -1: none


@dataclass(frozen=True, slots=True)
class Continued:
    """A batch carried on by continuation plans (``RunContext.continue_batch``): the plan it
    began with, and where each continuation took over (the step then in progress) with the
    overheads it pays there."""

    head: Plan
    inserted: tuple[tuple[int, tuple[tuple[str, float], ...]], ...] = ()


class BatchWalker:
    def __init__(self, soc: SocSpec, oracle) -> None:
        self.soc = soc
        self.oracle = oracle
        self.power = SocPower.from_spec(soc)
        self.rails = rail_names(soc)
        self.ridx = {r: i for i, r in enumerate(self.rails)}
        self._derived_mem: dict[int, tuple[Plan, int, tuple[int, ...]]] = {}

    def memory(self, plan: Plan) -> tuple[int, tuple[int, ...] | None]:
        """(peak bytes, bytes in use per step or None) of ``plan``: what it states, or, where it
        states neither (``peak_memory_bytes`` 0 and no ``step_memory``), the liveness of its own
        steps' ops (:func:`socsim.workload.memory.live_bytes`: parameters, gradients and every
        tensor from its producer to its last reader; the model input left out)."""
        if plan.peak_memory_bytes or plan.step_memory is not None:
            return int(plan.peak_memory_bytes), plan.step_memory
        m = self._derived_mem.get(id(plan))
        if m is None or m[0] is not plan:
            live = live_bytes(tuple(st.op for st in plan.steps), 0)
            m = self._derived_mem[id(plan)] = (plan, int(live.max(initial=0)), tuple(int(x) for x in live))
        return m[1], m[2]

    # -- power of a segment -------------------------------------------------------------
    def cpu_dyn(self, busy_by_cluster: Mapping[str, float], activity: float, freqs: dict[str, float]) -> np.ndarray:
        dyn = np.zeros(len(self.rails))
        for name, n in busy_by_cluster.items():
            rail = cpu_rail(name)
            d, _ = self.power.units[rail].power_mw(freqs.get(name, self.soc.cluster(name).min_mhz), n, activity, 25.0)
            dyn[self.ridx[rail]] += d
        return dyn

    def unit_mhz(self, unit: units.ComputeUnit, freqs: dict[str, float]) -> float:
        """The clock ``unit`` runs at under ``freqs``: the one the engine set, else its own."""
        if unit.name in freqs:
            return freqs[unit.name]
        assert unit.clock_mhz is not None, f"unit {unit.name} has no clock"
        return unit.clock_mhz(self.soc)

    def op_dyn(self, cost, unit: str, freqs: dict[str, float]) -> tuple[np.ndarray, dict[str, float]]:
        """Dynamic power (mW per rail) of an op's ``cost`` on ``unit``, and what it keeps busy."""
        busy = dict(cost.busy)
        u = units.unit(unit)
        if u.host:
            return self.cpu_dyn(busy, cost.activity, freqs), busy
        dyn = np.zeros(len(self.rails))
        rail = u.rail
        assert rail is not None, f"unit {unit} draws on no rail"
        d, _ = self.power.units[rail].power_mw(self.unit_mhz(u, freqs), 1.0, cost.activity, 25.0)
        dyn[self.ridx[rail]] += d
        return dyn, {unit: 1.0}

    def uncore_mw(self, cost) -> float:
        """The memory subsystem's power at the DDR clock a CPU op's clusters vote
        (socsim.hw.power.uncore_power_mw; the vote is in the op's cost detail)."""
        unc = self.soc.cpu.uncore
        if unc is None or not unc.power_top_mw:
            return 0.0
        return uncore_power_mw(unc, dict(cost.detail).get("ddr_mhz"))

    def dram_mw(self, nbytes: int, dur_s: float) -> float:
        return 0.0 if dur_s <= 0 else nbytes / dur_s * self.power.dram_pj_per_byte * 1e-9

    def static_terms(self, plan: Plan, freqs: dict[str, float], tpl: BatchTemplate) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Static power as ``base + leak * 2**((T_rail - 25) / doubling)`` per rail: the
        temperature-independent parts of :meth:`static_mw`, computed once per template."""
        at25 = self.static_mw(plan, freqs, tpl, lambda rail: 25.0)
        collapsed = self.static_mw(plan, freqs, tpl, lambda rail: -1e9)  # leakage -> 0
        doubling = np.array([self.power.units[r].doubling_c if r in self.power.units else 1.0 for r in self.rails])
        return collapsed, at25 - collapsed, doubling

    def fg_mw(self, plan: Plan, freqs: dict[str, float], tpl: BatchTemplate) -> np.ndarray:
        """Dynamic power (mW per rail) of the foreground apps the batch runs with (``tpl.fg``),
        at :data:`FG_APP_ACTIVITY`, on the core time training leaves them: a core outside the
        plan is busy its utilisation of the time; a core of the plan is the app's for that
        share of the time training does not occupy it (while training runs there the core is
        busy throughout, and its power is charged to training's ops)."""
        out = np.zeros(len(self.rails))
        if not tpl.fg or tpl.duration_s <= 0:
            return out
        for c in self.soc.cpu.clusters:
            mine = [(i, u) for i, u in tpl.fg if i in c.core_ids]
            if not mine:
                continue
            n_plan = sum(1 for i in plan.cpu_cores if i in c.core_ids)
            occ = min(1.0, tpl.busy_s.get(c.name, 0.0) / n_plan / tpl.duration_s) if n_plan else 0.0
            busy = sum(u * ((1.0 - occ) if i in plan.cpu_cores else 1.0) for i, u in mine)
            if busy > 0:
                rail = cpu_rail(c.name)
                d, _ = self.power.units[rail].power_mw(freqs.get(c.name, c.min_mhz), busy, FG_APP_ACTIVITY, 25.0)
                out[self.ridx[rail]] += d
        return out

    def static_mw(self, plan: Plan, freqs: dict[str, float], tpl: BatchTemplate, temp_of_rail) -> np.ndarray:
        """Static power of every rail during a batch, at the temperatures ``temp_of_rail(rail)``:
        leakage of the powered cores (the plan's and the foreground apps'), the other units' for
        their busy share, DRAM background and the platform.  The apps' dynamic power
        (:meth:`fg_mw`) is not in it."""
        out = np.zeros(len(self.rails))
        extra = {i for i, _ in tpl.fg}   # the foreground apps' cores
        extra.add(host_core(self.soc, plan))   # a GPU/DSP-only plan's host core works too
        for c in self.soc.cpu.clusters:
            rail = cpu_rail(c.name)
            powered = sum(1 for i in c.core_ids if i in plan.cpu_cores or i in extra)
            _, s = self.power.units[rail].power_mw(freqs.get(c.name, c.min_mhz), 0.0, 0.0, temp_of_rail(rail), powered)
            out[self.ridx[rail]] = s
        for u in units.accelerators():
            if u.rail in self.ridx and u.present(self.soc):
                frac = tpl.busy_s.get(u.name, 0.0) / tpl.duration_s if tpl.duration_s else 0.0
                _, s = self.power.units[u.rail].power_mw(self.unit_mhz(u, freqs), 0.0, 0.0, temp_of_rail(u.rail), frac)
                out[self.ridx[u.rail]] += s
        out[self.ridx[RAIL_DRAM]] = self.power.dram_background_mw
        out[self.ridx[RAIL_PLATFORM]] = self.power.platform_mw()[1]
        return out

    # -- the segments of one batch ------------------------------------------------------
    def cpu_config(self, plan: Plan, freqs: dict[str, float], bg_dram_gbs: float = 0.0):
        """The configuration the plan's CPU ops run at under ``freqs`` (what the oracle is asked)."""
        others = {u.name for u in units.accelerators()}
        cpu_freqs = tuple(sorted((k, v) for k, v in freqs.items() if k not in others))
        return self.oracle.config(units.host().name, cores=plan.cpu_cores, freqs=cpu_freqs, bg_dram_gbs=bg_dram_gbs)

    def segments(self, plan: Plan, freqs: dict[str, float], prep: bool, share: float = 1.0,
                 scheduler_name: str = "?", bg_dram_gbs: float = 0.0,
                 cont: "Continued | None" = None) -> Iterator[Seg]:
        """The batch's segments; ``share``: each training thread's CPU share left by foreground
        apps; ``bg_dram_gbs``: the DRAM bandwidth they take.  ``cont``: ``plan`` continues a
        batch begun with ``cont.head`` (``RunContext.continue_batch``): the head's preparation
        opens the batch, and each continuation's ``prep_overheads`` run after the step that was
        in progress when it took over."""
        soc = self.soc
        bg = bg_dram_gbs
        host_unit = units.host().name
        cfgs = {host_unit: self.cpu_config(plan, freqs, bg)}
        cfgs.update((u.name, self.oracle.config(u.name, mhz=freqs.get(u.name), bg_dram_gbs=bg))
                    for u in units.accelerators() if u.present(soc))
        head = plan if cont is None else cont.head
        mem_base, step_mem = self.memory(plan)
        # preparing the batch (graph preparation, compilation) happens before its first step
        # allocates anything: the memory in use then is the first step's (or, without
        # step_memory, the plan's peak, as throughout)
        mem_prep = int(step_mem[0]) if step_mem else mem_base
        inserted: dict[int, list[tuple[str, float]]] = {}
        for j, overheads in (cont.inserted if cont is not None else ()):
            inserted.setdefault(j, []).extend(overheads)
        host_id = host_core(soc, plan)
        host = soc.cpu.cluster_of(host_id)
        host_track = (f"{host_unit}{host_id}",)
        speed = host_speed(soc, host_id)   # the hand-overs' host code runs on the host core
        one = {host.name: 1}
        # the host core works alone (the other training threads wait): its cluster's core-seconds
        # and the host-only seconds schedutil needs (socsim.contract.dvfs.schedutil_util)
        host_busy = {host.name: 1.0, HOST_BUSY: 1.0}
        if prep and soc.fastrpc is not None:
            dur = fastrpc.graph_prep_s(soc.fastrpc, head.count("dsp") + head.count("hmx"), head.dsp_graph_bytes)
            yield Seg(dur, host_track, ("engine",), "dsp-graph-prepare", "graph_prep", "prep",
                      self.cpu_dyn(one, RPC_CPU_ACTIVITY, freqs), host_busy, 0, mem_prep, None)
        # re-preparing evicted subgraphs: not in a batch that prepares the whole graph anyway
        for name, dur in (() if prep else head.prep_overheads):
            yield Seg(dur, host_track, ("engine",), name, "graph_prep", "prep",
                      self.cpu_dyn(one, RPC_CPU_ACTIVITY, freqs), host_busy, 0, mem_prep, None)
        if head.cpu_graph_prep_s > 0:
            yield Seg(head.cpu_graph_prep_s, host_track, ("engine",), "graph-prepare", "graph_prep", "prep",
                      self.cpu_dyn(one, 1.0, freqs), host_busy, 0, mem_prep, None)
        for name, dur in inserted.get(-1, ()):  # a continuation handed before any step began
            yield Seg(dur, host_track, ("engine",), name, "graph_prep", "prep",
                      self.cpu_dyn(one, RPC_CPU_ACTIVITY, freqs), host_busy, 0, mem_prep, None)
        cur = host_unit
        crossings = (fastrpc.expected_crossings([s.op for s in plan.steps])
                     if any(s.unit != host_unit for s in plan.steps) else ())
        for k, step in enumerate(plan.steps):
            op, unit = step.op, step.unit
            mem = mem_base if step_mem is None else int(step_mem[k])
            if unit != cur and units.same_domain(unit, cur):
                cur = unit      # HVX <-> HMX inside the cDSP: no hand-over, no switch
            if unit != cur:
                # a hand-over through the host, of each unit on either side that has one (units'
                # ``handover``: FastRPC for the DSP, a queue drain and a layout copy for the GPU)
                count: str | None = "switches"
                for via in units.accelerators():
                    if via.handover is None or via.name not in (unit, cur):
                        continue
                    crossing = crossings[k]
                    h = via.handover
                    dur = (h.time_s(soc, crossing, plan.shared_buffers, host_speed=speed) if h.host_scaled
                           else h.time_s(soc, crossing, plan.shared_buffers))
                    dyn = self.cpu_dyn(one, RPC_CPU_ACTIVITY, freqs)
                    dyn[self.ridx[RAIL_DRAM]] += self.dram_mw(2 * crossing, dur)
                    yield Seg(dur, host_track, (h.track,), h.name.format(src=cur, dst=unit), h.kind, "rpc", dyn,
                              host_busy, 2 * crossing, mem, count, k)
                    count = None
                cur = unit
            cfg = cfgs.get(unit)
            cost = self.oracle.cost(op, unit, cfg) if cfg is not None else None
            res = tuple(f"{unit}{i}" for i in plan.cpu_cores) if unit == host_unit else (unit,)
            if cost is None:
                raise ScheduleError(f"op {op.name} ({op.kind}, {op.dtype}) cannot run on the {unit} of {soc.name}",
                                    field="scheduler.name", value=scheduler_name)
            dur = cost.time_s / (share if unit == host_unit else 1.0)
            dyn, busy = self.op_dyn(cost, unit, freqs)
            dyn[self.ridx[RAIL_DRAM]] += self.dram_mw(cost.dram_bytes, dur)
            if unit == host_unit:
                dyn[self.ridx[RAIL_DRAM]] += self.uncore_mw(cost)
            yield Seg(dur, res, res, step.label or op.name, op.kind, op.phase, dyn, busy, cost.dram_bytes, mem,
                      f"{unit}_ops", k)
            for name, dur in inserted.get(k, ()):
                # a continuation's own overheads (e.g. compiling its new kernels), once the step
                # in progress when it took over is done
                yield Seg(dur, host_track, ("engine",), name, "graph_prep", "prep",
                          self.cpu_dyn(one, RPC_CPU_ACTIVITY, freqs), host_busy, 0, mem, None)

    def switch_template(self, freqs: dict[str, float]) -> BatchTemplate:
        """The CPU configuration switch before a batch (pub:cpu_config_switch_ms): the kernel's
        hotplug/cpufreq work on one core of the first cluster at RPC_CPU_ACTIVITY, at ``freqs``
        (the engine's ``_config_switch``, and Min-Energy's DP through ``PlanContext``)."""
        dur = self.soc.cpu.config_switch_ms * 1e-3
        b = TemplateBuilder(len(self.rails))
        dyn = self.cpu_dyn({self.soc.cpu.clusters[0].name: 1}, RPC_CPU_ACTIVITY, freqs)
        b.segment(0.0, dur, dyn, 0, ("engine",), "config-switch", "switch", "switch", {}, 0)
        return b.build(dur)

    def template(self, plan: Plan, freqs: dict[str, float], prep: bool, share: float = 1.0,
                 scheduler_name: str = "?", bg_dram_gbs: float = 0.0,
                 cont: "Continued | None" = None, fg: tuple[tuple[int, float], ...] = ()) -> BatchTemplate:
        """The batch's template: its segments one after the other, as the seed systems run a
        batch's ops (what the engine replays, and what an estimate needs).  ``fg``: the
        foreground apps running, (core, utilisation) pairs (their power, :meth:`fg_mw`)."""
        b = TemplateBuilder(len(self.rails))
        t = 0.0
        for s in self.segments(plan, freqs, prep, share, scheduler_name, bg_dram_gbs, cont):
            b.add(t, s)
            t += s.dur
        tpl = b.build(t)
        return replace(tpl, fg=tuple(fg)) if fg else tpl
