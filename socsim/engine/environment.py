"""The run's environment: foreground apps (processes that load cores and DRAM, and what training
takes from them), the memory budget's steps (delivered where they fall, cutting a batch in
progress) and thermal trips, each reaching the scheduler's hook with the context it documents.
A part of :class:`~socsim.engine.sim.Engine`."""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np
import simpy

from socsim.contract import InterferenceEvent, Plan, ThermalEvent
from socsim.contract.cores import resolve_cores
from socsim.engine.context import budget_steps_bytes
from socsim.engine.parts import Part
from socsim.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from socsim.engine.accounting import Accounting
    from socsim.engine.context import RunContext
    from socsim.engine.recorder import Recorder
    from socsim.engine.stats import RunStats
    from socsim.spec.soc import SocSpec
    from socsim.spec.workload import Workload


class Environment:
    """What happens around training.  Reads the engine's ``soc``, ``workload``, ``env``,
    ``rctx``, ``stats``, ``recorder``, ``acct`` and ``scheduler``; owns the foreground loads in
    force and the budget steps not yet delivered."""

    soc: SocSpec
    workload: Workload
    env: simpy.Environment
    rctx: RunContext
    stats: RunStats
    recorder: Recorder
    acct: Accounting
    scheduler: Any
    # the temperatures, battery state of charge and battery temperature at the last batch's end
    _batch_state: tuple[dict[str, float], float, float]
    # provided by PlanSwitching, the engine's other part
    _apply: Callable[[Plan | None, str], None]
    _take_continuation: Callable[..., Any]

    def _check_environment(self, file: str | None) -> None:
        """The foreground loads against the SoC: a load on a core the SoC lacks, or moving more
        than its DRAM can, is bad input, not a no-op."""
        soc, env_spec = self.soc, self.workload.environment
        for i, load in enumerate(env_spec.foreground_loads):
            fld = "environment.foreground_load" + (f"[{i}]" if isinstance(env_spec.foreground_load, list) else "")
            try:
                resolve_cores(soc, load.cores, field=f"{fld}.cores")
            except InputError as e:
                raise InputError(e.message, file=file, field=e.field, value=e.value) from None
            if load.memory_gbs > soc.dram.bandwidth_gbs:   # more than the phone's DRAM can move
                raise InputError(f"above the DRAM bandwidth of {soc.name} ({soc.dram.bandwidth_gbs:g} GB/s)",
                                 file=file, field=f"{fld}.memory_gbs", value=load.memory_gbs)
        self._interference: dict[int, float] = {}  # core -> foreground utilisation (of the active loads)
        self._active_loads: list = []  # foreground loads running now, in start order
        self._bg_dram_gbs = 0.0  # DRAM bandwidth the active foreground loads take
        self._budget_queue: list[tuple[float, float]] = []  # memory-budget steps (at_s, MiB) not yet delivered
        self._over_last = (-2, -1)  # (batch, budget) of the last memory over the budget

    def _start_environment(self) -> None:
        """Start the foreground apps' processes and queue the memory budget's steps."""
        self._fg_loads = self.workload.environment.foreground_loads
        self.stats.fg_contended_core_s = [0.0] * len(self._fg_loads)
        for load in self._fg_loads:
            self.env.process(self._foreground(load))
        budget_steps = self.workload.environment.memory_budget_mb
        if isinstance(budget_steps, list):
            self._budget_queue = [(st.at_s, st.mb) for st in sorted(budget_steps, key=lambda st: st.at_s)]
        self._budget_steps = budget_steps_bytes(budget_steps)

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

    def _readings(self) -> tuple[dict[str, float], float, float]:
        r = self.rctx
        return dict(r.temps_c), r.battery_soc, r.battery_temp_c

    @contextlib.contextmanager
    def _as_of_last_batch(self) -> Iterator[None]:
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
            self._take_continuation(t, running, step, taken)
            self._apply(new_plan, "on_memory_pressure()")
        return taken

    def _budget_cut(self, t: float, left_s: float) -> float | None:
        """Seconds from ``t`` to the next memory-budget step, if it falls within ``left_s``."""
        if self._budget_queue:
            dt = self._budget_queue[0][0] - t
            if 1e-12 < dt < left_s - 1e-12:
                return dt
        return None

    def _over_budget(self, b: int, parts: list[Part]) -> None:
        """Account the time memory in use stayed above the budget in force during batch ``b``
        (a scheduler that does not plan for the budget ignores it; one that does goes over where
        it cannot follow a drop).  An ``over memory budget`` event marks where each overrun
        starts: where memory first exceeds a budget, in a batch after one that kept to it or
        once another budget is in force (not at each of its excursions within that)."""
        los: list[np.ndarray] = []  # the stretches over the budget, in time order
        his: list[np.ndarray] = []
        exc: list[np.ndarray] = []
        caps: list[np.ndarray] = []
        for p in parts:
            e = np.clip(p.tpl.edges_s, p.a_s, p.b_s)
            start = p.t_s + (e[:-1] - p.a_s)
            end = start + np.diff(e)
            mem = p.tpl.mem_bytes
            for at_s, until_s, budget in self._budget_steps:
                lo = np.maximum(start, at_s)
                hi = np.minimum(end, until_s)
                over = (hi - lo > 1e-12) & (mem > budget)  # (not a rounding sliver at a cut)
                if over.any():
                    los.append(lo[over])
                    his.append(hi[over])
                    exc.append(mem[over] - budget)
                    caps.append(np.full(int(over.sum()), budget))
        if not los:
            return
        lo, hi, ex, cap = np.concatenate(los), np.concatenate(his), np.concatenate(exc), np.concatenate(caps)
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
