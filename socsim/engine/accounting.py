"""Where a batch's energy goes: rails, the thermal network, the throttling governor, the battery
and the sampled time series.

After each batch the engine hands :meth:`Accounting.account` the batch's template.  The batch
is cut at sampling boundaries into pieces of piecewise-constant power; the thermal network
advances exactly over every piece (modal solution), static power is evaluated at the current
temperatures (leakage feedback), the battery steps with the batch's mean power, and the
step-wise governor polls at its period while a zone is near or past a trip.  Samples go to the
recorder as one block per batch.  The live readings (temperatures, caps, battery) are mirrored
into the run context the scheduler hooks see.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from socsim.engine.batch import BatchWalker
from socsim.engine.context import RunContext
from socsim.engine.template import BatchTemplate
from socsim.hw.battery import BatteryState, battery_counters, battery_step
from socsim.hw.thermal import ThermalNetwork, ThrottleGovernor
from socsim.report.events import NullRecorder, Recorder
from socsim.sched.api import Plan, ThermalEvent
from socsim.spec.soc import SocSpec
from socsim.spec.workload import Workload


class Accounting:
    """Energy, heat, throttling and battery of one run (engine state, not a model)."""

    def __init__(self, soc: SocSpec, workload: Workload, walker: BatchWalker, stats, recorder: Recorder,
                 rctx: RunContext, on_trip: Callable[[ThermalEvent], None]) -> None:
        self.soc = soc
        self.workload = workload
        self.walker = walker
        self.stats = stats
        self.recorder = recorder
        self.rctx = rctx
        self.on_trip = on_trip
        self.rails = walker.rails
        self.power = walker.power
        env_spec = workload.environment
        self.thermal = ThermalNetwork(soc.thermal, env_spec.ambient_c)
        self.governor = ThrottleGovernor(soc.thermal, soc.cpu.clusters)
        self.gov_state = self.governor.initial_state()
        self.caps = self.governor.caps_mhz(self.gov_state)
        self.temps = self.thermal.initial_temps()
        self.battery = BatteryState.initial(soc.battery, env_spec.initial_soc)
        self.sample_s = workload.output.sample_ms * 1e-3
        # sampling state: energy since the last sample boundary, cumulative rail energy
        self._next_sample_s = self.sample_s
        self._window_j = np.zeros(len(self.rails))
        self._batt_i, self._batt_v = 0.0, soc.battery.nominal_voltage_v
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
        self._poll_s = min((z.polling_s for z in zones), default=math.inf)
        self._last_poll_s = -math.inf
        self._throttled = False
        # below this reading a zone is far from its first trip: the governor cannot act
        self._zone_alert = np.array([(min(z.trips_c) - 5.0) if z.trips_c else math.inf for z in zones])
        self.publish()

    def publish(self) -> None:
        """Mirror the live readings into the run context: the zone temperatures, the cluster
        caps, the battery's state of charge and temperature.  Called at construction, so the
        hooks of the first batch see the phone's initial state, not placeholders; after that the
        accounting keeps each reading current as it changes."""
        self.rctx.temps_c = {z: float(self.temps[n]) for z, n in zip(self._zone_names, self._zone_nodes)}
        self.rctx.caps_mhz = dict(self.caps)
        self.rctx.battery_soc = self.battery.soc
        self.rctx.battery_temp_c = self._node_temp_by_node(self.soc.battery.thermal_node)

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

    def account(self, t0: float, tpl: BatchTemplate, plan: Plan, freqs: dict[str, float]) -> float:
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
            self.on_trip(te)

    def final_sample(self, now_s: float, peak_mem_bytes: int, freqs: dict[str, float]) -> None:
        """Close the last, partial sampling window so every run has samples up to its end."""
        last = self._next_sample_s - self.sample_s
        if now_s - last > 1e-12 and not isinstance(self.recorder, NullRecorder):
            self._cum_j = self._cum_j + self._window_j
            self._samples(np.array([now_s]), self._window_j[None, :], self._cum_j[None, :],
                          np.array([float(peak_mem_bytes)]), freqs, self.temps[None, :],
                          window_s=now_s - last)
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

