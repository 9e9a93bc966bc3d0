"""Thermal RC network of a phone, solved exactly, and the step-wise throttling governor.

Network (docs/modeling.md, Thermal): every node i has a heat capacity C_i (J/K) and exchanges
heat with its neighbours through conductances g_ij (W/K); the ambient node is a boundary at a
fixed temperature (a workload setting).  With theta = T - T_amb:

    C dtheta/dt = -G theta + P,     G_ii = sum_j g_ij (ambient included), G_ij = -g_ij

For power held constant over a step the solution is exact at any step size.  C^-1/2 G C^-1/2 is
symmetric positive semi-definite, so it has an orthonormal eigendecomposition Q diag(lambda) Q^T,
computed once; in modal coordinates z = Q^T C^1/2 theta every mode decays independently:

    z(t + dt) = exp(-lambda dt) z(t) + (1 - exp(-lambda dt)) / lambda * Q^T C^-1/2 P

(``dt`` for a mode with lambda = 0: a node group with no path to ambient heats linearly).
This is the matrix exponential exp(-C^-1 G dt) evaluated through its eigenbasis, so one 100 s
step equals a thousand 0.1 s steps to rounding, and the solution is stable for any dt.

Governor: Linux's ``step_wise`` thermal governor as Android kernels run it (see
:class:`ThrottleGovernor`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, Mapping, NamedTuple

import numpy as np

from socsim.hw.thermal_scan import modal_steps, neg_rate_steps, quiet_polls, quiet_polls_pieces
from socsim.spec.soc import Cluster, Thermal

DEFAULT_POLLING_S = 0.25  # sm8250.dtsi cpu*-thermal polling-delay-passive = <250> ms


class ThermalNetwork:
    """The RC network of a :class:`Thermal` spec with its ambient node held at ``ambient_c``.

    Immutable after construction (the per-step factor cache is a memo, not state).  Temperature
    vectors are in degrees C and ordered as :attr:`node_names` (the spec's nodes, ambient left out).
    """

    def __init__(self, spec: Thermal, ambient_c: float) -> None:
        self.spec = spec
        self.ambient_c = float(ambient_c)
        names = [n.name for n in spec.nodes if n.name != spec.ambient_node]
        if len(set(names)) != len(names):
            raise ValueError(f"thermal node names repeat: {names}")
        self.node_names: tuple[str, ...] = tuple(names)
        self._index = {n: i for i, n in enumerate(names)}
        n = len(names)
        cap = {nd.name: nd.capacitance_j_per_k for nd in spec.nodes}
        c = np.array([cap[nm] for nm in names], float)
        g = np.zeros((n, n))
        g_amb = np.zeros(n)
        for link in spec.links:
            a, b, k = link.a, link.b, link.conductance_w_per_k
            if a == b:
                raise ValueError(f"thermal link joins {a!r} to itself")
            if a == spec.ambient_node or b == spec.ambient_node:
                other = b if a == spec.ambient_node else a
                if other == spec.ambient_node:
                    continue
                g_amb[self._index[other]] += k
            else:
                i, j = self._index[a], self._index[b]
                g[i, j] -= k
                g[j, i] -= k
        g[np.diag_indices(n)] = -g.sum(axis=1) + g_amb
        self.capacitance_j_per_k = _frozen(c)
        self.conductance_w_per_k = _frozen(g)        # G (ambient links on the diagonal)
        self.ambient_conductance_w_per_k = _frozen(g_amb)
        # Symmetric form S = C^-1/2 G C^-1/2 = Q diag(lam) Q^T.
        d = 1.0 / np.sqrt(c)
        lam, q = np.linalg.eigh(d[:, None] * g * d[None, :])
        scale = max(float(np.max(np.abs(lam))), 1e-300)
        lam = np.where(lam < 1e-12 * scale, 0.0, lam)  # PSD: clip rounding below zero
        self.rates_per_s = _frozen(lam)               # modal decay rates; time constants 1/lam
        self._zero_modes = lam <= 0                   # (advance_many's gain is dt there)
        self._any_zero_mode = bool(self._zero_modes.any())
        self._safe_rates = _frozen(np.where(lam > 0, lam, 1.0))
        self._to_node = _frozen(d[:, None] * q)       # V = C^-1/2 Q: modal -> theta
        self._to_modal = _frozen(q.T * np.sqrt(c)[None, :])  # W = Q^T C^1/2: theta -> modal
        self._power_to_modal = _frozen(self._to_node.T)      # V^T = Q^T C^-1/2: power -> modal rate
        # the transposes advance_many multiplies by (views: the same memory and strides as ``.T``)
        self._power_to_modal_t = self._power_to_modal.T
        self._to_node_t = self._to_node.T
        self._factors = lru_cache(maxsize=256)(self._modal_factors)
        self._heat_nodes = {rail: (None if node == spec.ambient_node else self._index[node])
                            for rail, node in spec.heat_sources.items()}

    # -- structure -------------------------------------------------------------------------
    def index(self, node: str) -> int:
        """Position of ``node`` in temperature and power vectors."""
        try:
            return self._index[node]
        except KeyError:
            raise KeyError(f"no thermal node {node!r}; nodes: {list(self.node_names)}") from None

    def initial_temps(self, start_c: float | None = None) -> np.ndarray:
        """Every node at ambient (a phone that has rested), or at ``start_c`` (one still warm)."""
        return np.full(len(self.node_names), self.ambient_c if start_c is None else float(start_c))

    @property
    def time_constants_s(self) -> np.ndarray:
        """Modal time constants 1/lambda (inf for a mode with no path to ambient), fastest first."""
        with np.errstate(divide="ignore"):
            return np.sort(np.where(self.rates_per_s > 0, 1.0 / np.maximum(self.rates_per_s, 1e-300),
                                    np.inf))

    def node_power(self, rail_power_w: Mapping[str, float]) -> np.ndarray:
        """Node heat input (W) from rail powers, through the spec's ``heat_sources`` (rail -> node).

        Any heat source name works (e.g. ``battery`` for the pack's I^2 R loss); heat sent to the
        ambient node leaves the phone.  A rail with no heat source is an error, not silently lost.
        """
        p = np.zeros(len(self.node_names))
        for rail, w in rail_power_w.items():
            try:
                i = self._heat_nodes[rail]
            except KeyError:
                raise KeyError(f"rail {rail!r} has no thermal heat source; "
                               f"heat_sources: {sorted(self._heat_nodes)}") from None
            if i is not None:
                p[i] += w
        return p

    def zone_temps(self, temps: np.ndarray) -> dict[str, float]:
        """Temperature each thermal zone's sensor reads: the temperature of its node, or a virtual
        zone's combination of its sensors' nodes (:class:`ZoneReader`)."""
        zones = list(self.spec.zones)
        vals = ZoneReader(self, zones).read(np.asarray(temps, float)[None, :])[0]
        return {z.name: float(v) for z, v in zip(zones, vals)}

    def node_temp(self, temps: np.ndarray, node: str) -> np.ndarray:
        """Column of ``node``'s temperature in ``temps`` (steps x nodes); the ambient node's is fixed."""
        if node == self.spec.ambient_node:
            return np.full(len(temps), self.ambient_c)
        return temps[:, self.index(node)]

    # -- solution --------------------------------------------------------------------------
    def _modal_factors(self, dt_s: float) -> tuple[np.ndarray, np.ndarray]:
        lt = self.rates_per_s * dt_s
        decay = np.exp(-lt)
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(self.rates_per_s > 0, -np.expm1(-lt) / self.rates_per_s, dt_s)
        return _frozen(decay), _frozen(gain)

    def advance(self, temps: np.ndarray, node_power_w: np.ndarray, dt_s: float) -> np.ndarray:
        """Temperatures after ``dt_s`` with ``node_power_w`` held constant: exact for any dt >= 0."""
        if dt_s < 0 or not math.isfinite(dt_s):
            raise ValueError(f"dt_s must be finite and >= 0, got {dt_s}")
        if dt_s == 0:
            return np.array(temps, float)
        decay, gain = self._factors(float(dt_s))
        z = self._to_modal @ (np.asarray(temps, float) - self.ambient_c)
        z = decay * z + gain * (self._power_to_modal @ np.asarray(node_power_w, float))
        return self.ambient_c + self._to_node @ z

    def advance_many(self, temps: np.ndarray, node_power_w: np.ndarray, dts_s: np.ndarray) -> np.ndarray:
        """Temperatures after each of consecutive steps (rows of ``node_power_w``, lengths
        ``dts_s``), each with constant power: the same exact solution as :meth:`advance`, for a
        whole batch at once.  Returns a (steps x nodes) array."""
        dts = np.ascontiguousarray(dts_s, float)
        # -(dts[:, None] * rates[None, :]) compiled, with the checks (NaN is not >= 0; a sum of
        # steps past ~1e300 is checked as numpy sums it)
        neg_lt, ok, total = neg_rate_steps(dts, self.rates_per_s)
        if not ok or not total < 1e300:
            if not (_MIN(dts, initial=0.0) >= 0.0 and math.isfinite(_SUM(dts))):
                raise ValueError("step lengths must be finite and >= 0")
        decay = np.exp(neg_lt)   # (numpy's exp and expm1, as before)
        em1 = np.expm1(neg_lt)
        # the modes' drive, gain * (power @ V), with gain -expm1(-lambda dt) / lambda, and dt for a
        # mode with lambda = 0, built in the compiled scan (modal_steps: the same operations as
        # ``-em1 / safe_rates``, then ``gain * modal_w``, then modal_scan)
        modal_w = np.asarray(node_power_w, float) @ self._power_to_modal_t
        z = self._to_modal @ (np.asarray(temps, float) - self.ambient_c)
        out = modal_steps(z, decay, em1, self._safe_rates, self._zero_modes, dts, modal_w)
        return self.ambient_c + out @ self._to_node_t

    def steady_state(self, node_power_w: np.ndarray) -> np.ndarray:
        """Temperatures that constant ``node_power_w`` settles to: T_amb + G^-1 P."""
        if np.any(self.rates_per_s == 0):
            raise ValueError("a thermal node group has no path to ambient: no steady state")
        return self.ambient_c + np.linalg.solve(self.conductance_w_per_k, np.asarray(node_power_w, float))


_MIN, _SUM = np.minimum.reduce, np.add.reduce


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, float)
    a.flags.writeable = False
    return a


class ZoneReader:
    """What the zones' sensors read, for a block of node temperatures (steps x nodes).

    A zone on one node reads that node (a column taken as is: the readings of specs without
    virtual zones are the node temperatures bit for bit).  A virtual zone combines its sensors'
    nodes as Qualcomm's thermal-engine ``algo_type virtual`` does (readme: ``weights``, ``math`` 0
    weighted / 1 minimum / 2 maximum; Xiaomi's configs add ``compensation``, here ``offset_c``) and
    the msm kernel's qti_virtual_sensor (VIRT_WEIGHTED_AVG: sum of coefficient x temperature /
    denominator + avg_offset; VIRT_MAXIMUM; VIRT_MINIMUM): ``sum_i w_i T_i + offset_c``, max or min.
    """

    def __init__(self, net: ThermalNetwork, zones: list) -> None:
        self.names = [z.name for z in zones]
        amb = net.spec.ambient_node
        self._plain = all(z.sensors is None and z.node != amb for z in zones)
        if self._plain:
            self._cols = np.array([net.index(z.node) for z in zones], dtype=int)
        self._zones = []
        for z in zones:
            if z.sensors is None:
                self._zones.append(("node", z.node, None, 0.0))
            else:
                nodes = list(z.sensors)
                w = np.array([z.sensors[n] for n in nodes], float)
                self._zones.append((z.math, nodes, w, float(z.offset_c)))
        self._net, self._amb = net, amb
        # without the ambient node among them, the node columns are read in one gather, and each
        # virtual zone's sensor columns without the per-node lookups (the same arrays as before)
        self._gather = not self._plain and all(
            (nodes != amb if kind == "node" else amb not in nodes) for kind, nodes, _, _ in self._zones)
        if self._gather:
            # each zone's node column (a virtual zone's place holds column 0 until it is written)
            self._fill_cols = np.array([net.index(z[1]) if z[0] == "node" else 0 for z in self._zones], dtype=np.intp)
            self._virtual = [(k, kind, np.array([net.index(n) for n in nodes], dtype=np.intp), w, off)
                             for k, (kind, nodes, w, off) in enumerate(self._zones) if kind != "node"]

    def read(self, temps: np.ndarray) -> np.ndarray:
        """Readings, steps x zones."""
        if self._plain:
            return temps[:, self._cols] if len(self._cols) else np.zeros((len(temps), 0))
        if self._gather:
            out = temps.take(self._fill_cols, axis=1)
            for k, kind, idx, w, off in self._virtual:
                # the sensors' columns as a new C-ordered block, as column_stack builds it (a
                # fancy-indexed ``temps[:, idx]`` has another memory order, for which BLAS may
                # take another path and round the weighted sum otherwise in the last bit)
                out[:, k] = _combine(kind, temps.take(idx, axis=1), w, off)
            return out
        out = np.empty((len(temps), len(self._zones)))
        for k, (kind, nodes, w, off) in enumerate(self._zones):
            if kind == "node":
                out[:, k] = self._net.node_temp(temps, nodes)
                continue
            out[:, k] = _combine(kind, np.column_stack([self._net.node_temp(temps, n) for n in nodes]), w, off)
        return out


def _combine(kind: str, cols: np.ndarray, w, off: float) -> np.ndarray:
    """A virtual zone's reading from its nodes' columns (steps x nodes)."""
    if kind == "weighted":
        return cols @ w + off
    if kind == "max":
        return cols.max(axis=1)
    return cols.min(axis=1)


# -- throttling --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TripEvent:
    """A zone crossed a trip point: ``up`` at T >= trip, ``down`` at T < trip - hysteresis."""

    zone: str
    trip: int
    trip_c: float
    temp_c: float
    direction: Literal["up", "down"]


class ZoneState(NamedTuple):
    """Per zone: trips currently crossed, OPP steps removed from its clusters, last reading/poll.
    (A named tuple: immutable like the rest of the governor's state, and cheap to make at each
    of a long run's polls.)"""

    tripped: int = 0
    steps: int = 0
    last_temp_c: float | None = None
    last_poll_s: float = -math.inf


@dataclass(frozen=True, slots=True)
class _Device:
    """A cooling device that is not a CPU cluster (the GPU): its name and OPPs."""

    name: str
    opps: tuple


@dataclass(frozen=True, slots=True)
class ThrottleState:
    """The governor's whole state, owned by the engine; ``zones`` in spec order."""

    zones: tuple[ZoneState, ...]


@dataclass(frozen=True, slots=True)
class ThrottleDecision:
    """What one governor update returns: next state, per-cluster caps, trip crossings."""

    state: ThrottleState
    caps_mhz: dict[str, float]
    events: tuple[TripEvent, ...] = field(default_factory=tuple)


class ThrottleGovernor:
    """Android/Linux ``step_wise`` governor over the spec's thermal zones.

    At each poll of a zone (``polling_s``, default the sm8250 passive polling of 250 ms):
    - a trip is *crossed* when T >= trip and stays crossed until T < trip - hysteresis
      (Linux thermal core trip hysteresis);
    - while a trip is crossed and the temperature is not falling, the zone removes one more
      OPP step from every cluster it caps (step_wise: THERMAL_TREND_RAISING -> cur_state + 1);
      while crossed and falling it holds;
    - with no trip crossed (or fewer than before, see below) it releases one step per poll
      (step_wise releases on a dropping trend; releasing also at a steady temperature below the
      trip avoids a cap stuck forever);
    - the zone removes at least as many steps as trips it has crossed, and at most
      ceil(max_steps * crossed / n_trips): each trip's cooling-map ``upper`` limit covers its share
      of the OPP range (sm8250.dtsi binds every trip to THERMAL_NO_LIMIT, the whole range; with the
      six skin trips of a Pixel that would drop the CPU to its lowest OPP at the first trip).
    A cluster's cap is its OPP ``steps`` below the top (the minimum OPP at most), taking the most
    severe zone.  The engine clamps every frequency request to the cap (:meth:`clamp`).
    """

    def __init__(self, spec: Thermal, clusters: list[Cluster], *,
                 polling_s: float | Mapping[str, float] = DEFAULT_POLLING_S, gpu: Any = None) -> None:
        self.spec = spec
        # cooling devices: the CPU clusters and, when given, the GPU (named "gpu" in a zone's caps;
        # sm8250.dtsi / sm8350.dtsi bind the gpu-top/bottom zones' trip to &gpu, THERMAL_NO_LIMIT)
        clusters = list(clusters) + ([_Device("gpu", tuple(gpu.opps))] if gpu is not None else [])
        self.clusters = {c.name: c for c in clusters}
        self._opps = {c.name: tuple(o.freq_mhz for o in c.opps) for c in clusters}
        for z in spec.zones:
            if list(z.trips_c) != sorted(z.trips_c):
                raise ValueError(f"zone {z.name!r}: trips must increase, got {z.trips_c}")
            for name in z.caps:
                if name not in self.clusters and name != "gpu":   # "gpu" without ``gpu``: not modelled
                    raise ValueError(f"zone {z.name!r} caps unknown cluster {name!r}; "
                                     f"clusters: {sorted(self.clusters)}")
        self._zone_caps = tuple(tuple(c for c in z.caps if c in self.clusters) for z in spec.zones)
        self._max_steps = tuple(max((len(self._opps[c]) - 1 for c in caps), default=0)
                                for caps in self._zone_caps)
        self._polling = tuple(_zone_polling(z, polling_s) for z in spec.zones)
        # plain tuples for the hot path (update runs at every poll of a long run): name, trips,
        # and each trip's clearing reading (trip - hysteresis, or the zone's clear_c)
        self._zones = tuple((z.name, tuple(z.trips_c), _clears(z)) for z in spec.zones)
        # table zones (targets_mhz): the level is the number of trips crossed, and each level caps
        # each cluster at its target (steps below the top: the highest OPP at or below the target)
        self._table = tuple(bool(getattr(z, "targets_mhz", None)) for z in spec.zones)
        self._level_steps = tuple(
            () if not tab else
            ({c: 0 for c in caps},) + tuple({c: self._steps_below(c, z.targets_mhz[c][i]) for c in caps}
                                             for i in range(len(z.trips_c)))
            for z, caps, tab in zip(spec.zones, self._zone_caps, self._table))
        self._caps_memo: dict[tuple[int, ...], dict[str, float]] = {}
        # the state quiet_polls returned last and its arrays (reused when it is handed back)
        self._quiet_arrays: tuple | None = None
        # each zone's cooling-map limit for 0..n trips crossed (_upper), looked up at every poll;
        # a table zone's level follows its trips (upper = trips crossed)
        self._uppers = tuple(tuple(t if self._table[k] else self._upper(k, t) for t in range(len(z[1]) + 1))
                             for k, z in enumerate(self._zones))
        # the same tables as arrays, for the polls that change nothing (:meth:`quiet_polls`)
        nz, width = len(self._zones), max((len(z[1]) for z in self._zones), default=0)
        self._a_polling = np.array(self._polling, float)
        self._a_ntrips = np.array([len(z[1]) for z in self._zones], np.int64)
        self._a_trips = np.zeros((nz, max(width, 1)))
        self._a_clears = np.zeros((nz, max(width, 1)))
        self._a_uppers = np.zeros((nz, width + 1), np.int64)
        for k, z in enumerate(self._zones):
            self._a_trips[k, :len(z[1])] = z[1]
            self._a_clears[k, :len(z[2])] = z[2]
            self._a_uppers[k, :len(self._uppers[k])] = self._uppers[k]

    def _steps_below(self, cluster: str, target_mhz: float) -> int:
        """OPP steps below the top to the highest OPP at or below ``target_mhz`` (the lowest OPP
        if none is): cpufreq applies a scaling_max_freq limit so (CPUFREQ_RELATION_H)."""
        opps = self._opps[cluster]
        ok = [i for i, f in enumerate(opps) if f <= target_mhz + 1e-9]
        return len(opps) - 1 - (ok[-1] if ok else 0)

    def _upper(self, zone: int, tripped: int) -> int:
        # Cooling-map limit: with `tripped` of n trips crossed a zone may remove at most
        # ceil(max_steps * tripped / n) OPP steps (a DT cooling-map's per-trip `upper` state).
        n = len(self._zones[zone][1])
        return 0 if n == 0 else -(-self._max_steps[zone] * tripped // n)

    def initial_state(self) -> ThrottleState:
        return ThrottleState(zones=tuple(ZoneState() for _ in self.spec.zones))

    def uncapped(self) -> dict[str, float]:
        return {name: opps[-1] for name, opps in self._opps.items()}

    def caps_mhz(self, state: ThrottleState) -> dict[str, float]:
        """Highest frequency each cluster may run at in ``state``."""
        key = tuple(zs.steps for zs in state.zones)
        hit = self._caps_memo.get(key)
        if hit is None:
            hit = self._caps_memo[key] = self._caps(state)
        return dict(hit)

    def _caps(self, state: ThrottleState) -> dict[str, float]:
        steps = {name: 0 for name in self._opps}
        for caps, zs, tab, levels in zip(self._zone_caps, state.zones, self._table, self._level_steps):
            if tab:
                for name in caps:
                    steps[name] = max(steps[name], levels[zs.steps][name])
                continue
            for name in caps:
                steps[name] = max(steps[name], zs.steps)
        return {name: self._opps[name][max(0, len(self._opps[name]) - 1 - s)]
                for name, s in steps.items()}

    def clamp(self, caps_mhz: Mapping[str, float], cluster: str, freq_mhz: float) -> float:
        """The frequency a cluster actually runs at when ``freq_mhz`` is requested under ``caps_mhz``."""
        return min(freq_mhz, caps_mhz.get(cluster, math.inf))

    def quiet_polls(self, state: ThrottleState, times: np.ndarray, temps: np.ndarray, present: np.ndarray,
                    hot: np.ndarray, start: int, idle: bool, last_poll_s: float,
                    poll_s: float) -> tuple[ThrottleState, int, float]:
        """Polls ``start..`` at ``times`` (zone readings ``temps``, one column per spec zone;
        ``present``: the zones read) while they change nothing but the zones' last reading and
        poll time, as :meth:`update` would at each (and, as the engine polls, skipping a poll
        before ``poll_s`` has passed since ``last_poll_s``, or one with ``idle`` and not ``hot``).
        Returns the state after them, the index of the first poll that would cross a trip or
        move a zone's steps (-1: none; it is not applied: :meth:`update` makes it, with its
        events), and the last poll time."""
        tripped, steps, last_temp, last_poll = self._scan_arrays(state)
        j, last = quiet_polls(times, temps, hot, start, idle, last_poll_s, poll_s, present, self._a_polling,
                              self._a_trips, self._a_ntrips, self._a_clears, self._a_uppers,
                              tripped, steps, last_temp, last_poll)
        return self.scanned(state), int(j), float(last)

    def quiet_polls_pieces(self, state: ThrottleState, ends: np.ndarray, zt: np.ndarray, polls: np.ndarray,
                           alert_hot: np.ndarray, cols: np.ndarray, start: int, idle: bool, last_poll_s: float,
                           poll_s: float) -> tuple[int, float]:
        """:meth:`quiet_polls` over a part's pieces as the engine's accounting holds them (the
        pieces' ends ``ends``, the zone readings ``zt`` at them, ``polls`` which ends are polls;
        ``cols``: each of the spec's zones' column in ``zt``, -1 where it is not read; a poll is
        hot where a reading is at or above its zone's ``alert_hot``), with no gathering of the
        polls' rows: socsim.hw.thermal_scan.quiet_polls_pieces.  Returns the index of the piece
        the scan stops at (-1: none) and the last poll time.  The scan writes the zones' last
        readings into the arrays held for ``state``; the state they stand for is
        :meth:`scanned` (``state``), built when asked: until then ``state`` is handed again to
        scan on (its trips and steps are the scan's: it changes neither)."""
        tripped, steps, last_temp, last_poll = self._scan_arrays(state)
        j, last = quiet_polls_pieces(ends, zt, polls, alert_hot, cols, start, idle, last_poll_s, poll_s,
                                     self._a_polling, self._a_trips, self._a_ntrips, self._a_clears,
                                     self._a_uppers, tripped, steps, last_temp, last_poll)
        return int(j), float(last)

    def _scan_arrays(self, state: ThrottleState) -> tuple[np.ndarray, ...]:
        """The arrays the compiled scans read and write for ``state``: those held for it (the
        state a scan returned or scanned last: they are what the scan left), else built."""
        held = self._quiet_arrays
        if held is not None and held[0] is state:
            return held[1:]
        zs = state.zones
        arrays = (np.array([z.tripped for z in zs], np.int64), np.array([z.steps for z in zs], np.int64),
                  np.array([math.nan if z.last_temp_c is None else z.last_temp_c for z in zs], float),
                  np.array([z.last_poll_s for z in zs], float))
        self._quiet_arrays = (state,) + arrays
        return arrays

    def scanned(self, state: ThrottleState) -> ThrottleState:
        """The state after the scans of ``state``'s arrays (:meth:`quiet_polls_pieces`): the
        zones whose last reading or poll time the scans moved are new; the arrays are then held
        for the new state.  ``state`` itself where no scan has run on it."""
        held = self._quiet_arrays
        if held is None or held[0] is not state:
            return state
        _, tripped, steps, last_temp, last_poll = held
        zs = state.zones
        lt, lp = last_temp.tolist(), last_poll.tolist()
        new = ThrottleState(zones=tuple(
            z if (lp[k] == z.last_poll_s and (lt[k] == z.last_temp_c or (z.last_temp_c is None and lt[k] != lt[k])))
            else ZoneState(z.tripped, z.steps, None if lt[k] != lt[k] else lt[k], lp[k])
            for k, z in enumerate(zs)))
        self._quiet_arrays = (new, tripped, steps, last_temp, last_poll)
        return new

    def update(self, state: ThrottleState, zone_temps: Mapping[str, float],
               time_s: float | None = None) -> ThrottleDecision:
        """One governor poll.  ``time_s`` enables per-zone polling periods (zones whose period has
        not elapsed keep their state); without it every zone is polled."""
        zones: list[ZoneState] = []
        events: list[TripEvent] = []
        polling = self._polling
        uppers = self._uppers
        table = self._table
        for k, ((name, trips, clears), zs) in enumerate(zip(self._zones, state.zones)):
            t = zone_temps.get(name)
            if t is None or (time_s is not None and time_s - zs.last_poll_s < polling[k] - 1e-12):
                zones.append(zs)
                continue
            t = float(t)
            poll_s = zs.last_poll_s if time_s is None else time_s
            if not trips:                           # a sensor only: nothing to cross or cap
                zones.append(ZoneState(0, 0, t, poll_s))
                continue
            tripped = zs.tripped
            while tripped < len(trips) and t >= trips[tripped]:
                events.append(TripEvent(name, tripped, trips[tripped], t, "up"))
                tripped += 1
            while tripped > 0 and t < clears[tripped - 1]:
                tripped -= 1
                events.append(TripEvent(name, tripped, trips[tripped], t, "down"))
            if table[k]:                            # a table zone: the level is the trips crossed
                zones.append(ZoneState(tripped, tripped, t, poll_s))
                continue
            falling = zs.last_temp_c is not None and t < zs.last_temp_c
            upper = uppers[k][tripped]
            steps = zs.steps
            if steps > upper:                       # a trip cleared: release one step per poll
                steps -= 1
            elif tripped > 0 and not falling:       # hot and not cooling: one more step
                steps = min(steps + 1, upper)
            steps = max(steps, min(tripped, upper), 0)
            zones.append(ZoneState(tripped, steps, t, poll_s))
        new = ThrottleState(zones=tuple(zones))
        return ThrottleDecision(state=new, caps_mhz=self.caps_mhz(new), events=tuple(events))


def _clears(zone) -> tuple[float, ...]:
    """Per trip, the reading below which it clears: the zone's ``clear_c``, else trip - hysteresis
    (Linux thermal core trip hysteresis; thermal-engine's thresholds_clr)."""
    clear = getattr(zone, "clear_c", None)
    if clear is not None:
        return tuple(float(c) for c in clear)
    return tuple(t - zone.hysteresis_c for t in zone.trips_c)


def _zone_polling(zone, polling_s: float | Mapping[str, float]) -> float:
    own = getattr(zone, "polling_s", None)  # a per-zone spec field, if the spec grows one
    if isinstance(polling_s, Mapping):
        return float(polling_s.get(zone.name, own if own is not None else DEFAULT_POLLING_S))
    return float(own if own is not None else polling_s)
