"""Where a batch's energy goes: rails, the thermal network, the throttling governor, the battery
and the sampled time series.

For each batch the engine hands :meth:`Accounting.account` the batch's template.  The batch
is cut at sampling boundaries (and, while a zone is near or past a trip, at the step-wise
governor's polls, every polling period from t = 0) into pieces of piecewise-constant power; the
battery steps with the pieces' powers and its losses heat their nodes over the same part; the
thermal network advances exactly over every piece (modal solution); static power is evaluated at
the current temperatures (leakage feedback); the governor polls at its polls.  A poll whose caps
change the running frequencies ends the accounting there, and the engine carries the batch on
at the new ones.  Samples go to the recorder as one block per batch: a row at each sampling
boundary with the state then and the means over the interval that follows (docs/modeling.md,
Sampled counters).  The live readings (temperatures, caps, battery) are mirrored into the run
context the scheduler hooks see.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from socsim.engine.batch import BatchWalker
from socsim.engine import pieces_kernel
from socsim.engine.context import RunContext
from socsim.engine.pieces_kernel import sample_offsets
from socsim.engine.template import BatchTemplate
from socsim.hw.battery import BatteryState, battery_counters, battery_step, counter_columns, step_profile
from socsim.hw.thermal import ThermalNetwork, ThrottleGovernor, ZoneReader
from socsim.engine.recorder import NullRecorder, Recorder
from socsim.contract import Plan, ThermalEvent
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
        # the GPU is a cooling device only where a zone caps it (the others keep their caps as before)
        gpu_capped = soc.gpu is not None and any("gpu" in z.caps for z in soc.thermal.zones)
        self.governor = ThrottleGovernor(soc.thermal, soc.cpu.clusters, gpu=soc.gpu if gpu_capped else None)
        self._gov_state = self.governor.initial_state()
        # the governor's state is ``_gov_state`` as the compiled poll scans left it: their arrays
        # hold the zones' newer last readings until ``gov_state`` is read (ThrottleGovernor.scanned)
        self._gov_scanned = False
        # a zone with a trip crossed or steps taken (the governor can act whatever the readings);
        # only a poll through _govern changes these
        self._gov_active = any(zs.tripped or zs.steps for zs in self._gov_state.zones)
        self._gov_tripped = any(zs.tripped for zs in self._gov_state.zones)
        self.caps = self.governor.caps_mhz(self._gov_state)
        self.temps = self.thermal.initial_temps(env_spec.initial_temp_c)
        self.battery = BatteryState.initial(soc.battery, env_spec.initial_soc)
        self.sample_s = workload.output.sample_ms * 1e-3
        self._next_sample_s = self.sample_s
        self._batt_i, self._batt_v = 0.0, soc.battery.nominal_voltage_v
        self._charging_w = 0.0
        self._idle_mw = np.array([self.power.idle_mw().get(r, 0.0) for r in self.rails])
        self._idle_sum_mw = float(self._idle_mw.sum())
        self._heat_map = self._heat_matrix()
        self._no_energy = np.zeros((1, len(self.rails)))   # the energy before a part from the batch start (never written)
        self._static_terms: dict[int, tuple] = {}
        self._columns: list[str] | None = None
        hs = soc.thermal.heat_sources
        self._rail_nodes_ok = all(hs.get(r) not in (None, soc.thermal.ambient_node) for r in self.rails)
        self._rail_nodes = np.array([self.thermal.index(hs[r]) for r in self.rails], dtype=int) \
            if self._rail_nodes_ok else np.zeros(0, dtype=int)
        # heat that is not a rail's: the pack's I^2 R and the charger's conversion loss (heat
        # sources "battery" and "charger"; a spec that names neither heats the battery's node and
        # the platform rail's node, where the charger IC sits; one sent to ambient leaves the phone)
        aux = {"battery": hs.get("battery", soc.battery.thermal_node),
               "charger": hs.get("charger", hs.get("platform", soc.battery.thermal_node))}
        self._aux_nodes = {k: self.thermal.index(n) for k, n in aux.items()
                           if n != soc.thermal.ambient_node and n in self.thermal.node_names}
        # the zones read (a zone on the ambient node is not; a virtual zone is, socsim.hw.thermal.ZoneReader)
        zones = [z for z in soc.thermal.zones if z.node != soc.thermal.ambient_node]
        self._zone_names = [z.name for z in zones]
        self._zones_read = ZoneReader(self.thermal, zones)
        self._nz = len(zones)
        bn = soc.battery.thermal_node
        self._batt_node = self.thermal.index(bn) if bn in self.thermal.node_names else None
        # which of the governor's zones (all the spec's) are read, i.e. the columns of ``zones``
        self._gov_cols = [z.node != soc.thermal.ambient_node for z in soc.thermal.zones]
        self._gov_present = np.array(self._gov_cols, dtype=np.bool_)
        self._poll_s = min((z.polling_s for z in zones), default=math.inf)
        self._last_poll_s = -math.inf
        self._throttled = False
        # below this reading a zone is far from its first trip: the governor cannot act
        self._zone_alert = np.array([(min(z.trips_c) - 5.0) if z.trips_c else math.inf for z in zones])
        self._zone_hot = self._zone_alert + 5.0   # at or above: a poll that is "hot" (the scan's)
        # each of the governor's zones' column among those read (-1: not read)
        read_col = {z.name: i for i, z in enumerate(zones)}
        self._gov_read_cols = np.array([read_col.get(z.name, -1) if present else -1
                                        for z, present in zip(soc.thermal.zones, self._gov_cols)], np.int64)
        # the zone readings of ``temps`` the last part ended on (temps, readings): the next part
        # decides from them whether a zone is near a trip, where they are clear of it
        self._last_read: tuple[np.ndarray, np.ndarray] | None = None
        # sampling state (docs/modeling.md, Outputs): the row at the last sampling boundary waits
        # for the interval after it; its state (energy so far, temperatures, charge) is known, its
        # interval means (power, current, voltage) build up in the windows; ``_row_fwd`` (the
        # frequencies, memory and batch from the boundary on) comes from the batch running then
        self._row_t = 0.0
        self._row_cum_j = np.zeros(len(self.rails))
        self._row_temps = self.temps.copy()
        self._row_charge_c = self.battery.charge_c
        self._row_fwd: tuple | None = None
        self._last_fwd: tuple | None = None
        self._last_means: tuple | None = None
        self._window_j = np.zeros(len(self.rails))
        self._window_q_c = 0.0   # charge drawn since the row (coulombs)
        self._window_vs = 0.0    # terminal volt-seconds since the row
        self.publish()
        self._zone_peaks: np.ndarray | None = None   # the zones' peaks so far, as _peaks' kernel keeps them
        # the peaks start from the initial state (a run the scheduler declines at once has them)
        self._peaks(self.temps[None, :], self._zones_read.read(self.temps[None, :]))

    @property
    def gov_state(self):
        """The throttling governor's state (socsim.hw.thermal.ThrottleState)."""
        if self._gov_scanned:
            self._gov_state = self.governor.scanned(self._gov_state)
            self._gov_scanned = False
        return self._gov_state

    @gov_state.setter
    def gov_state(self, state) -> None:
        self._gov_state = state
        self._gov_scanned = False
        self._gov_tripped = any(zs.tripped for zs in state.zones)   # (the scans change no zone's trips)

    def publish(self) -> None:
        """Mirror the live readings into the run context: the zone temperatures, the cluster
        caps, the battery's state of charge and temperature.  Called at construction, so the
        hooks of the first batch see the phone's initial state, not placeholders; after that the
        accounting keeps each reading current as it changes."""
        self.rctx.temps_c = dict(zip(self._zone_names, self._zones_read.read(self.temps[None, :])[0].tolist()))
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

    def account(self, t0: float, tpl: BatchTemplate, plan: Plan, freqs: dict[str, float],
                start_s: float = 0.0, stop_if: Callable[[dict[str, float]], bool] | None = None,
                end_s: float | None = None) -> tuple[float, float]:
        """Integrate energy over a batch from offset ``start_s`` of ``tpl`` (at time ``t0``) to
        its end (or to offset ``end_s``, where something else happens mid-batch: a memory-budget
        step), sample, advance thermal/battery, run the governor.  Returns (the offset of
        ``tpl`` reached, energy in J): the end, unless a governor poll set caps
        for which ``stop_if(caps)`` is true (the running frequencies change there; the engine
        carries on at the new ones).

        The batch is cut at sampling boundaries into pieces, and at the governor's polls while
        any zone is near or past a trip (far from every trip it cannot act, and is not asked);
        the battery steps once over the part with the pieces' powers (its state of charge moves
        by ~1e-5 per second of training), and its pack and charger losses heat their nodes over
        the same part; the thermal network advances exactly over each piece with that piece's
        mean power (exact for piecewise-constant power), all pieces at once.  The samples see
        the pieces between sampling boundaries and spread the current over them (``step_profile``).
        """
        a = start_s
        cut = end_s is not None and end_s < tpl.duration_s
        dur = (end_s if end_s is not None and cut else tpl.duration_s) - a
        t1 = t0 + dur
        static_mw, fg_mw = self._static(plan, freqs, tpl)
        n_grid = 0
        if self._next_sample_s <= t1 + 1e-12:
            n_grid = int(math.floor((t1 + 1e-12 - self._next_sample_s) / self.sample_s)) + 1
        # the sampling boundaries and the pieces' ends, clipped (a sample at the part end may round past it);
        # t0 as a float always (the first part's is an int 0): one compiled signature, not two
        grid, offs = sample_offsets(float(t0), self._next_sample_s, self.sample_s, n_grid, dur)
        if a > 0.0:
            cum0 = tpl.dyn_energy_until(np.array([a]))
        else:
            cum0 = self._no_energy
        charging_w = self.workload.environment.charger_w if self.rctx.charging else 0.0
        batt_temp = self._batt_temp()
        before = self.battery
        # the governor polls on its own clock (every polling_s from t = 0), not the sampling
        # grid's: while it can act (a zone near or past a trip) the part is cut at its polls
        # too, so its decisions do not depend on the output's sampling period
        polls: np.ndarray | None = None
        samples: np.ndarray | None = None
        if math.isfinite(self._poll_s) and (self._gov_active or self._near_now()):
            offs, polls, samples = self._poll_grid(offs, t0, t1, dur)
        pieces = self._pieces(tpl, a, cum0, offs, static_mw)
        step = self._battery(before, pieces, dur, batt_temp, charging_w)
        temps, zt = self._heat(pieces, step[3])
        if polls is None and math.isfinite(self._poll_s) and self._near(zt):
            # a zone came near a trip during the part: cut it at the polls and solve again
            offs, polls, samples = self._poll_grid(offs, t0, t1, dur)
            if polls is not None:
                pieces = self._pieces(tpl, a, cum0, offs, static_mw)
                step = self._battery(before, pieces, dur, batt_temp, charging_w)
                temps, zt = self._heat(pieces, step[3])
        stop = self._poll(zt, t0 + offs, t1, stop_if, polls) if polls is not None else None
        cum, dts, piece_j, _ = pieces
        if stop is not None:
            # caps changed at the end of piece ``stop``: this part ends there
            dur = float(offs[stop])
            t1 = t0 + dur
            offs = np.append(offs[:stop + 1], dur)
            dts = np.append(dts[:stop + 1], 0.0)
            piece_j = np.vstack([piece_j[:stop + 1], np.zeros((1, len(self.rails)))])
            temps = np.vstack([temps[:stop + 1], temps[stop:stop + 1]])
            zt = np.vstack([zt[:stop + 1], zt[stop:stop + 1]])
            batch_j = cum[stop] - cum0[0] + static_mw * 1e-3 * dur
            step = self._battery(before, (None, dts, piece_j, np.where(dts > 0, dts, 1.0)), dur, batt_temp,
                                 charging_w)
        elif cut:
            batch_j = cum[-1] - cum0[0] + static_mw * 1e-3 * dur
        elif a > 0.0:
            batch_j = tpl.dyn_energy_j - cum0[0] + static_mw * 1e-3 * dur
        else:
            batch_j = tpl.dyn_energy_j + static_mw * 1e-3 * dur
        recording = not isinstance(self.recorder, NullRecorder)
        if polls is not None and samples is not None:
            # the sampling boundaries among the pieces: the samples see pieces between them
            # (all of them, indices into ``offs``, unless the part stopped early)
            if stop is not None:
                samples = samples[samples <= stop]
            n_grid = len(samples)
            grid = grid[:n_grid]
        if not recording:
            pass
        elif polls is not None and samples is not None:
            keep = np.append(samples, len(offs) - 1)
            ecum = np.cumsum(piece_j, axis=0)[keep]
            piece_s = _diff0(ecum, 0.0)
            offs_s = offs[keep]
            dts_s = _diff0(offs_s, 0.0)
            temps_s = temps[keep]
        else:  # (no polls, so no stop: the pieces are the sampling grid's)
            offs_s, dts_s, piece_s, temps_s = offs, dts, piece_j, temps
        self._peaks(temps, zt)
        self.temps = temps[-1]
        self._last_read = (self.temps, zt[-1])
        if dur > 0:
            self.battery, self._batt_i, self._batt_v = step[:3]
            self._charging_w = charging_w
        self.rctx.battery_soc = self.battery.soc
        self.rctx.battery_temp_c = self._batt_temp()
        if recording:
            self._sample_chunk(tpl, a, freqs, grid, offs_s, dts_s, piece_s, temps_s, before, batt_temp)
        if n_grid:
            self._next_sample_s = float(grid[-1]) + self.sample_s
        st = self.stats
        rail_j = st.rail_energy_j
        for r, v in zip(self.rails, batch_j.tolist()):
            rail_j[r] = rail_j.get(r, 0.0) + v
        st.idle_energy_j += self._idle_sum_mw * 1e-3 * dur
        st.foreground_energy_j += fg_mw * 1e-3 * dur
        st.peak_mem_bytes = max(st.peak_mem_bytes, self.walker.memory(plan)[0])
        return (tpl.duration_s if stop is None and not cut else a + dur), float(_SUM(batch_j))

    def _static(self, plan: Plan, freqs: dict[str, float], tpl: BatchTemplate) -> tuple[np.ndarray, float]:
        """Power held over a part (mW per rail): static power at the current temperatures
        (leakage doubles every ``doubling_c``) plus the foreground apps' (``BatchWalker.fg_mw``),
        and the apps' share of it in total (mW)."""
        key = id(tpl)
        terms = self._static_terms.get(key)
        if terms is None:
            base, leak, doubling = self.walker.static_terms(plan, freqs, tpl)
            fg = self.walker.fg_mw(plan, freqs, tpl)
            terms = self._static_terms[key] = (tpl, base + fg, leak, doubling, float(fg.sum()))
        _, base, leak, doubling, fg_mw = terms
        t = self.temps[self._rail_nodes] if self._rail_nodes_ok else np.array([self._node_temp(r) for r in self.rails])
        return base + leak * np.exp2((t - 25.0) / doubling), fg_mw

    def _peaks(self, temps: np.ndarray, zt: np.ndarray) -> None:
        """Peak node and zone temperatures over a batch's pieces; the zone readings it ends on.
        In one compiled call (pieces_kernel.part_peaks) where it is exact, else in numpy."""
        st = self.stats
        peaks = st.zone_peak_c
        arr = self._zone_peaks
        if arr is not None:
            new, exact, moved = pieces_kernel.part_peaks(temps, zt, st.peak_c, arr)
            if exact:
                st.peak_c = new
                if moved:
                    for z, v in zip(self._zone_names, arr.tolist()):
                        if v != peaks[z]:
                            peaks[z] = v
                self.rctx.temps_c = dict(zip(self._zone_names, zt[-1].tolist()))
                return
        st.peak_c = max(st.peak_c, float(_MAX(temps, axis=None)))
        zmax = _MAX(zt, axis=0).tolist() if len(zt) else []
        for z, v in zip(self._zone_names, zmax):
            if v > peaks.get(z, -math.inf):
                peaks[z] = v
        self.rctx.temps_c = dict(zip(self._zone_names, zt[-1].tolist()))
        # the zones' peaks as the compiled call keeps them (every zone has one after a part)
        self._zone_peaks = (np.array([peaks[z] for z in self._zone_names], float)
                            if all(z in peaks for z in self._zone_names) else None)

    def _poll_grid(self, offs: np.ndarray, t0: float, t1: float,
                   dur: float) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """The part's sampling pieces (ends ``offs``, part-relative, the last at ``dur``) cut at the
        governor's polls in (t0, t1] too: (the merged ends, which of them are polls, the indices of
        the sampling boundaries among them); (offs, None, None) when no poll falls in the part.
        A poll at the part's end acts from the next part on."""
        ps = self._poll_s
        k0 = math.floor((t0 + 1e-12) / ps) + 1
        k1 = math.floor((t1 + 1e-12) / ps)
        if k1 < k0:
            return offs, None, None
        # merged in one compiled call (socsim.engine.pieces_kernel.poll_grid; its numpy form,
        # a stable sort of the three runs, is poll_grid_ref)
        return pieces_kernel.poll_grid(offs, ps, k0, k1, t0, dur)

    def _pieces(self, tpl: BatchTemplate, a: float, cum0: np.ndarray, offs: np.ndarray,
                static_mw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The part cut at ``offs`` (part-relative piece ends): the template's cumulative dynamic
        energy at each end, the pieces' lengths, their rail energies (static included) and the
        lengths to divide by for a piece's power (1 for an empty piece)."""
        if len(tpl.edges_s) >= 2:   # (the same operations, compiled: socsim.engine.pieces_kernel)
            return pieces_kernel.pieces(offs, a, tpl.edges_s, tpl.cum_dyn_j, tpl.duration_s, cum0[0], static_mw)
        cum = tpl.dyn_energy_until(offs + a) if a > 0.0 else tpl.dyn_energy_until(offs)
        dts = _diff0(offs, 0.0)
        piece_j = _diff0(cum, cum0[0]) + np.outer(dts, static_mw * 1e-3)
        return cum, dts, piece_j, np.where(dts > 0, dts, 1.0)

    def _battery(self, before: BatteryState, pieces: tuple, dur: float, batt_temp: float,
                 charging_w: float) -> tuple:
        """The pack over a part of ``dur`` seconds with the pieces' powers: (its new state, mean
        current, mean terminal voltage, the node heat (W) of the pack's I^2 R and the charger's
        loss over the part), computed before the thermal solve so the part is heated by its own
        losses (a short, charge-heavy switch no longer sets the next batch's heat)."""
        aux = np.zeros(len(self.thermal.node_names))
        if dur <= 0:
            return self.battery, self._batt_i, self._batt_v, aux
        _, dts, piece_j, safe = pieces
        total_j = float(_SUM(piece_j, axis=None))   # (piece_j.sum(), without the method wrapper)
        # the pieces' own powers: the pack's current is convex in the load (battery_step)
        profile = (_SUM(piece_j, axis=1) / safe, dts) if len(dts) > 1 else None
        state, cur, volt = battery_step(self.soc.battery, before, total_j / dur, dur, batt_temp, charging_w,
                                        profile=profile)
        for key, gained in (("battery", state.loss_j - before.loss_j),
                            ("charger", state.charger_loss_j - before.charger_loss_j)):
            if key in self._aux_nodes:
                aux[self._aux_nodes[key]] += gained / dur
        return state, cur, volt, aux

    def _heat(self, pieces: tuple, aux_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Node temperatures at the pieces' ends, and the zones' readings among them."""
        _, dts, piece_j, safe = pieces
        node_w = (piece_j / safe[:, None]) @ self._heat_map + aux_w
        temps = self.thermal.advance_many(self.temps, node_w, dts)
        zt = self._zones_read.read(temps)
        return temps, zt

    def _batt_temp(self) -> float:
        """The battery node's temperature (ambient where the pack has no node of its own)."""
        return float(self.temps[self._batt_node]) if self._batt_node is not None else self.thermal.ambient_c

    def _near(self, zt: np.ndarray) -> bool:
        """Whether the governor can act over these readings (a zone near or past a trip)."""
        if self._gov_active or not len(zt):
            return self._gov_active
        return bool((zt.max(axis=0) >= self._zone_alert).any())

    def _near_now(self) -> bool:
        """:meth:`_near` over the zones' readings of the current temperatures.  Those the last
        part ended on decide it where every reading is clear of its zone's alert level by 1e-6 C
        (a reading of the same temperatures in another block may differ in its last bits: the
        virtual zones' weighted sums), else the temperatures are read again."""
        held = self._last_read
        if held is not None and held[0] is self.temps and not self._gov_active and len(held[1]):
            row = held[1]
            if not (row >= self._zone_alert - 1e-6).any():
                return False
            if (row >= self._zone_alert + 1e-6).any():
                return True
        return self._near(self._zones_read.read(self.temps[None, :]))

    def _poll(self, zt: np.ndarray, ends: np.ndarray, t1: float,
              stop_if: Callable[[dict[str, float]], bool] | None, polls: np.ndarray | None = None) -> int | None:
        """Governor polls over a batch's pieces (zone readings ``zt`` at the piece ends ``ends``;
        ``polls``: which ends are the governor's polling times, None for none).  Returns the piece
        at whose end, before ``t1``, the caps changed so that ``stop_if(caps)`` (the polls after
        it are then the next part's), else None."""
        if polls is None or not self._near(zt):
            return None
        # the governor polls every ``polling_s``; between polls nothing can change, nor at a
        # poll with every zone idle and below its first trip (step_wise no-op)
        ends = np.ascontiguousarray(ends, float)
        names = self._zone_names
        gov = self.governor
        j = 0
        while j < len(ends):
            idle = not self._throttled and not self._gov_tripped
            # the polls that change nothing but the zones' last readings, in one compiled scan
            # (the same decisions as ThrottleGovernor.update; see its quiet_polls); the state
            # they leave is built when it is read (``gov_state``)
            j, self._last_poll_s = gov.quiet_polls_pieces(self._gov_state, ends, zt, polls, self._zone_hot,
                                                          self._gov_read_cols, j, idle, self._last_poll_s,
                                                          self._poll_s)
            self._gov_scanned = True
            if j < 0:
                break
            e = float(ends[j])
            self._last_poll_s = e
            changed = self._govern(dict(zip(names, zt[j].tolist())), e)
            if changed and stop_if is not None and e < t1 - 1e-9 and stop_if(self.caps):
                return j
            j += 1
        return None

    def _node_temp_by_node(self, node: str) -> float:
        try:
            return float(self.temps[self.thermal.index(node)])
        except KeyError:
            return self.thermal.ambient_c

    def _govern(self, zone_temps: dict[str, float], t_s: float) -> bool:
        """One governor poll at ``t_s``; whether it changed the caps."""
        dec = self.governor.update(self.gov_state, zone_temps, t_s)
        self.gov_state = dec.state
        self._gov_active = any(zs.tripped or zs.steps for zs in dec.state.zones)
        changed = dec.caps_mhz != self.caps
        if changed:
            self.caps = dec.caps_mhz
            self._throttled = any(self.caps[c.name] < c.max_mhz for c in self.soc.cpu.clusters)
            self.rctx.caps_mhz = dict(self.caps)
            self.recorder.instant(t_s, "engine", "throttle",
                                  "caps (MHz): " + " ".join(f"{k}={v:g}" for k, v in sorted(self.caps.items())))
        for ev in dec.events:
            self.stats.throttle_events += 1
            self.recorder.instant(t_s, "engine", f"trip {ev.direction}",
                                  f"{ev.zone} trip{ev.trip} {ev.trip_c:g}C at {ev.temp_c:.1f}C")
            te = ThermalEvent(t_s, ev.zone, ev.temp_c, ev.trip, ev.direction == "up",
                              tuple(sorted(self.caps.items())))
            self.on_trip(te)
        return changed

    def _sample_chunk(self, tpl: BatchTemplate, a: float, freqs: dict[str, float], grid: np.ndarray,
                      offs: np.ndarray, dts: np.ndarray, piece_j: np.ndarray, temps: np.ndarray,
                      before: BatteryState, batt_temp_c: float) -> None:
        """Rows of the sampling boundaries ``grid`` inside this part of a batch (its pieces end
        at ``offs``, chunk-relative; the last piece runs past the last boundary), each written
        once the interval after it is complete: the row waiting from before, then all but the
        last boundary, which waits in turn."""
        n = len(grid)
        fq = [freqs.get(c.name, c.min_mhz) for c in self.soc.cpu.clusters]
        batch = float(self.rctx.batch)
        dur = float(offs[-1])
        mem = tpl.mem_at(a + np.concatenate(([0.0], offs)))   # at the start, the boundaries, the end
        if self._row_fwd is None:
            self._row_fwd = (fq, float(mem[0]), batch)
        self._last_fwd = (fq, float(mem[-1]), batch)
        if dur > 0:
            power_w = piece_j.sum(axis=1) / np.where(dts > 0, dts, 1.0)
            cur_a, volt_v = step_profile(self.soc.battery, self.battery, self._batt_i, self._batt_v,
                                         batt_temp_c, power_w, dts, self._charging_w)
            q_c, vs = cur_a * dts, volt_v * dts
        else:
            q_c = vs = np.zeros(len(dts))
        if n == 0:
            self._window_j = self._window_j + piece_j[0]
            self._window_q_c += float(q_c[0])
            self._window_vs += float(vs[0])
            return
        window = piece_j[:n].copy()
        window[0] += self._window_j
        wq, wvs = q_c[:n].copy(), vs[:n].copy()
        wq[0] += self._window_q_c
        wvs[0] += self._window_vs
        t_rows = np.empty(n)
        t_rows[0] = self._row_t
        t_rows[1:] = grid[:-1]
        period = grid - t_rows
        cum = np.cumsum(window, axis=0)
        cum += self._row_cum_j
        charge = before.charge_c - np.cumsum(q_c[:n])
        if self._columns is None:
            self._columns = self._sample_columns()
        nr, nc, nz = len(self.rails), len(fq), self._nz
        block = np.empty((n, len(self._columns)))
        block[0, :nr] = self._row_cum_j * 1e6
        block[1:, :nr] = cum[:-1] * 1e6
        block[:, nr:2 * nr] = window / period[:, None] * 1e3
        c = 2 * nr
        block[0, c:c + nc] = self._row_fwd[0]
        block[1:, c:c + nc] = fq
        c += nc
        row_temps = np.vstack([self._row_temps[None, :], temps[:n - 1]])
        block[:, c:c + nz] = self._zones_read.read(row_temps)
        c += nz
        block[:, c:c + row_temps.shape[1]] = row_temps
        c += row_temps.shape[1]
        charges = np.empty(n)
        charges[0] = self._row_charge_c
        charges[1:] = charge[:-1]
        block[:, c:c + 4] = counter_columns(charges, self.battery.capacity_c, wq / period, wvs / period)
        block[0, c + 4] = self._row_fwd[1]
        block[1:, c + 4] = mem[1:n]
        block[0, c + 5] = self._row_fwd[2]
        block[1:, c + 5] = batch
        self.recorder.samples(self._columns, t_rows, block)
        self._last_means = (window[-1] / period[-1] * 1e3, float(wq[-1] / period[-1]), float(wvs[-1] / period[-1]))
        self._row_t = float(grid[-1])
        self._row_cum_j = cum[-1]
        self._row_temps = temps[n - 1]
        self._row_charge_c = float(charge[-1])
        inside = offs[n - 1] < dur - 1e-12   # else the part after the boundary tells its frequencies
        self._row_fwd = (fq, float(mem[n]), batch) if inside else None
        self._window_j = piece_j[n].copy()
        self._window_q_c, self._window_vs = float(q_c[n]), float(vs[n])

    def final_sample(self, now_s: float, freqs: dict[str, float]) -> None:
        """Close the last, partial sampling interval and write a row at the end of the run (its
        state then; its interval values repeat the last interval's: it spans no time)."""
        if isinstance(self.recorder, NullRecorder):
            return
        fq = [freqs.get(c.name, c.min_mhz) for c in self.soc.cpu.clusters]
        last = self._last_fwd or (fq, 0.0, float(self.rctx.batch))
        fwd = self._row_fwd or last
        period = now_s - self._row_t
        if 1e-12 < period < 1e-9:
            # a last window shorter than the trace's nanosecond: one row at the end (with the
            # state then), not two rows that Perfetto would put at the same timestamp
            mw, cur, volt = self._last_means or (self._window_j / period * 1e3, self._batt_i, self._batt_v)
            self._emit(np.array([now_s]), (self._row_cum_j + self._window_j)[None, :], np.asarray(mw)[None, :],
                       np.array([last[0]], float), self.temps[None, :], np.array([self.battery.charge_c]),
                       np.array([cur]), np.array([volt]), np.array([last[1]]), np.array([last[2]]))
        elif period > 1e-12:
            mw = self._window_j / period * 1e3
            cur, volt = self._window_q_c / period, self._window_vs / period
            self._emit(np.array([self._row_t, now_s]),
                       np.vstack([self._row_cum_j, self._row_cum_j + self._window_j]), np.vstack([mw, mw]),
                       np.array([fwd[0], last[0]], float), np.vstack([self._row_temps, self.temps]),
                       np.array([self._row_charge_c, self.battery.charge_c]), np.array([cur, cur]),
                       np.array([volt, volt]), np.array([fwd[1], last[1]]), np.array([fwd[2], last[2]]))
        else:
            mw, cur, volt = self._last_means or (np.zeros(len(self.rails)), self._batt_i, self._batt_v)
            self._emit(np.array([self._row_t]), self._row_cum_j[None, :], np.asarray(mw)[None, :],
                       np.array([fwd[0]], float), self._row_temps[None, :], np.array([self._row_charge_c]),
                       np.array([cur]), np.array([volt]), np.array([fwd[1]]), np.array([fwd[2]]))

    def _sample_columns(self) -> list[str]:
        cols = [f"power.{r}_uws" for r in self.rails] + [f"power.{r}_mw" for r in self.rails]
        cols += [f"cpufreq.{c.name}" for c in self.soc.cpu.clusters]
        cols += [f"{z} Temperature" for z in self._zone_names]
        cols += [f"thermal.{n}_c" for n in self.thermal.node_names]
        cols += list(battery_counters(self.battery, 0.0, 0.0))
        return cols + ["mem.used_bytes", "batch"]

    def _emit(self, t: np.ndarray, cum_j: np.ndarray, power_mw: np.ndarray, freqs_mhz: np.ndarray,
              temps: np.ndarray, charge_c: np.ndarray, current_a: np.ndarray, terminal_v: np.ndarray,
              mem: np.ndarray, batch: np.ndarray) -> None:
        """Hand the recorder a block of rows: the state at each ``t`` (energy so far,
        temperatures, charge) and the means over the interval from it to the next row (power,
        current, voltage), with the frequencies, memory and batch in effect from ``t`` on."""
        if self._columns is None:
            self._columns = self._sample_columns()
        block = np.column_stack([
            cum_j * 1e6, power_mw, freqs_mhz,
            self._zones_read.read(temps),
            temps, counter_columns(charge_c, self.battery.capacity_c, current_a, terminal_v),
            np.asarray(mem, float)[:, None], np.asarray(batch, float)[:, None],
        ])
        self.recorder.samples(self._columns, np.asarray(t, float), block)


#: ndarray.sum() and .max() are these reductions behind a Python wrapper; called directly on
#: the per-batch path (the same reduction, the same result)
_SUM, _MAX = np.add.reduce, np.maximum.reduce


def _diff0(x: np.ndarray, first) -> np.ndarray:
    """``np.diff(x, axis=0, prepend=first)`` without the concatenation (the same subtractions)."""
    out = np.empty_like(x)
    np.subtract(x[:1], first, out=out[:1])
    np.subtract(x[1:], x[:-1], out=out[1:])
    return out
