"""The dynamic programmes of the seed schedulers, each beside a brute-force reference.

* :func:`co_schedule` -- Mandheling's CPU-DSP co-scheduling over the operators of one batch
  (docs/seeds.md 1, technique 1): per-op latencies on the CPU and on the DSP (``inf`` where the DSP
  cannot run the op) and a CPU<->DSP switch cost, minimise the batch time; backtrack for the
  placement.  :func:`co_schedule_brute` enumerates every placement.
* :func:`min_energy_sequence` -- Min-Energy's DP over batches (docs/seeds.md 4): choose a CPU
  configuration per batch minimising total energy subject to total time <= theta_t, with a
  time and energy cost for switching configuration between adjacent batches; sets of
  (combination, T, E) triples, extension, pruning T > theta_t, dominance removal.
  :func:`min_energy_brute` enumerates every sequence.

Both are pure functions over plain numbers so they can be tested without a SoC.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

CPU, DSP = "cpu", "dsp"
UNITS = (CPU, DSP)

SwitchCost = float | Sequence[float] | Callable[[int], float]


def _switch_fn(switch: SwitchCost) -> Callable[[int], float]:
    """``switch(i)``: cost of changing unit right before op ``i`` (the tensor crossing is op
    ``i``'s input).  A number is the same cost at every boundary."""
    if callable(switch):
        return switch
    if isinstance(switch, (int, float)):
        s = float(switch)
        return lambda i: s
    seq = [float(x) for x in switch]
    return lambda i: seq[i]


# --------------------------------------------------------------------------- Mandheling
@dataclass(frozen=True)
class Placement:
    """Result of the co-scheduling DP: the batch time it predicts and each op's unit."""

    time_s: float
    units: tuple[str, ...]

    @property
    def switches(self) -> int:
        return sum(1 for a, b in zip(self.units, self.units[1:]) if a != b)


def co_schedule(l_cpu: Sequence[float], l_dsp: Sequence[float], switch: SwitchCost,
                start: str | None = None) -> Placement:
    """Mandheling's co-scheduling DP (docs/seeds.md 1)::

        T[i+1,CPU] = min(T[i,CPU] + Lcpu[i+1], T[i,DSP] + Lcpu[i+1] + Lswitch)
        T[i+1,DSP] = min(T[i,CPU] + Ldsp[i+1] + Lswitch, T[i,DSP] + Ldsp[i+1])

    with ``T[1,u] = L_u[1]`` and objective ``min(T[N,CPU], T[N,DSP])``.  ``switch`` may depend
    on the boundary (``switch(i)`` is the cost of switching right before op ``i``: the tensor
    that crosses is op ``i``'s input).  ``start``: the unit the batch starts on (the engine
    starts every batch on the CPU, so a first op on the DSP costs a switch); ``None`` is the
    paper's ``T[1,u] = L_u[1]``.  Ties prefer staying on the unit (fewer switches), then CPU.
    """
    n = len(l_cpu)
    if n != len(l_dsp):
        raise ValueError(f"latency lists differ in length: {n} vs {len(l_dsp)}")
    if n == 0:
        return Placement(0.0, ())
    sw = _switch_fn(switch)
    inf = math.inf
    t_cpu = float(l_cpu[0]) + (sw(0) if start == DSP else 0.0)
    t_dsp = float(l_dsp[0]) + (sw(0) if start == CPU else 0.0)
    # back[i][u] = unit of op i-1 on the best path ending with op i on u
    back: list[tuple[int, int]] = [(0, 1)]
    for i in range(1, n):
        s = sw(i)
        lc, ld = float(l_cpu[i]), float(l_dsp[i])
        stay_c, cross_c = t_cpu + lc, t_dsp + lc + s
        stay_d, cross_d = t_dsp + ld, t_cpu + ld + s
        bc = 0 if stay_c <= cross_c else 1
        bd = 1 if stay_d <= cross_d else 0
        t_cpu, t_dsp = min(stay_c, cross_c), min(stay_d, cross_d)
        if ld == inf:
            t_dsp = inf
        back.append((bc, bd))
    u = 0 if t_cpu <= t_dsp else 1
    best = min(t_cpu, t_dsp)
    units = [0] * n
    for i in range(n - 1, -1, -1):
        units[i] = u
        if i:
            u = back[i][u]
    return Placement(best, tuple(UNITS[k] for k in units))


def placement_time(units: Sequence[str], l_cpu: Sequence[float], l_dsp: Sequence[float],
                   switch: SwitchCost, start: str | None = None) -> float:
    """Batch time of a given placement under the DP's cost model."""
    sw = _switch_fn(switch)
    t = 0.0
    prev = start
    for i, u in enumerate(units):
        t += float(l_cpu[i] if u == CPU else l_dsp[i])
        if prev is not None and u != prev:
            t += sw(i)
        prev = u
    return t


def co_schedule_brute(l_cpu: Sequence[float], l_dsp: Sequence[float], switch: SwitchCost,
                      start: str | None = None) -> float:
    """Reference: the best batch time over all 2^N placements."""
    n = len(l_cpu)
    return min((placement_time(p, l_cpu, l_dsp, switch, start)
                for p in itertools.product(UNITS, repeat=n)), default=0.0)


# --------------------------------------------------------------------------- Min-Energy
@dataclass(frozen=True)
class Sequencing:
    """Result of the Min-Energy DP: the configuration of every batch, its time and energy
    (switches included), and the largest number of triples the DP kept at one step."""

    configs: tuple[int, ...]
    time_s: float
    energy_j: float
    max_states: int = 0
    approximate: bool = False


def sequence_cost(seq: Sequence[int], time_s: Sequence[Sequence[float]],
                  energy_j: Sequence[Sequence[float]], sw_time: Callable[[int, int], float],
                  sw_energy: Callable[[int, int], float]) -> tuple[float, float]:
    """(T, E) of a configuration sequence: per-batch costs plus a switch between every pair
    of adjacent batches whose configurations differ."""
    t = e = 0.0
    for i, c in enumerate(seq):
        t += time_s[i][c]
        e += energy_j[i][c]
        if i and seq[i - 1] != c:
            t += sw_time(seq[i - 1], c)
            e += sw_energy(seq[i - 1], c)
    return t, e


def _pareto(states: list[tuple[float, float, int, int]]) -> list[tuple[float, float, int, int]]:
    """Drop dominated states (another has T <= T' and E <= E'); sorted by T, E decreasing."""
    states.sort(key=lambda s: (s[0], s[1]))
    out: list[tuple[float, float, int, int]] = []
    best_e = math.inf
    for s in states:
        if s[1] < best_e:
            out.append(s)
            best_e = s[1]
    return out


def _thin(front: list, keep: int) -> list:
    """Keep ``keep`` states spread evenly along a Pareto front (both ends included)."""
    if len(front) <= keep:
        return front
    idx = sorted({round(k * (len(front) - 1) / (keep - 1)) for k in range(keep)})
    return [front[i] for i in idx]


def min_energy_sequence(time_s: Sequence[Sequence[float]], energy_j: Sequence[Sequence[float]],
                        theta_t: float, sw_time: Callable[[int, int], float] | float = 0.0,
                        sw_energy: Callable[[int, int], float] | float = 0.0,
                        max_front: int | None = None) -> Sequencing | None:
    """Min-Energy's DP over batches (docs/seeds.md 4).

    ``time_s[i][c]``/``energy_j[i][c]``: batch ``i`` in configuration ``c``.  ``sw_time(a, b)``
    and ``sw_energy(a, b)``: switching from ``a`` to ``b`` between adjacent batches.  S(i) holds
    (combination, T, E) triples; each is extended by every configuration, extensions with
    T > ``theta_t`` are dropped and dominated triples removed; the answer is the least E.

    Dominance is applied among triples that end in the same configuration: with switching
    costs, two triples ending differently are not comparable (the cheaper one may pay a switch
    the other does not), so removing across them could lose the optimum.  A triple that cannot
    meet ``theta_t`` even if every later batch ran in its fastest configuration is dropped too
    (exact: no completion of it is feasible).  ``max_front`` thins each front to that many evenly
    spread triples (approximate; for very long runs); the answer is then also checked against
    every run of one configuration, or of one and then another (:func:`_two_runs`), so an
    approximate DP never returns more energy than the best of those that meet the budget (with
    the same costs for every batch, the optimum is among them).  Returns ``None`` when no
    sequence meets ``theta_t``.
    """
    n = len(time_s)
    if n == 0:
        return Sequencing((), 0.0, 0.0)
    k = len(time_s[0])
    st = (lambda a, b: float(sw_time)) if not callable(sw_time) else sw_time
    se = (lambda a, b: float(sw_energy)) if not callable(sw_energy) else sw_energy
    st_m = [[st(a, b) if a != b else 0.0 for b in range(k)] for a in range(k)]
    se_m = [[se(a, b) if a != b else 0.0 for b in range(k)] for a in range(k)]
    # a state: (T, E, parent index in the previous level, configuration of this batch)
    levels: list[list[tuple[float, float, int, int]]] = []
    # rest[i]: the least time batches i.. can take (switches cost >= 0): a lower bound
    rest = [0.0] * (n + 1)
    for i in range(n - 1, -1, -1):
        rest[i] = rest[i + 1] + min(float(x) for x in time_s[i])
    fronts: dict[int, list] = {}
    for c in range(k):
        t, e = float(time_s[0][c]), float(energy_j[0][c])
        if t + rest[1] <= theta_t:
            fronts[c] = [(t, e, -1, c)]
    approx = False
    max_states = 0
    for i in range(1, n + 1):
        level = [s for c in sorted(fronts) for s in fronts[c]]
        levels.append(level)
        max_states = max(max_states, len(level))
        if i == n or not level:
            break
        ti, ei = time_s[i], energy_j[i]
        limit = theta_t - rest[i + 1]
        nxt: dict[int, list] = {c: [] for c in range(k)}
        for p, (t, e, _, a) in enumerate(level):
            row_t, row_e = st_m[a], se_m[a]
            for c in range(k):
                t2 = t + row_t[c] + ti[c]
                if t2 <= limit:
                    nxt[c].append((t2, e + row_e[c] + ei[c], p, c))
        fronts = {}
        for c, lst in nxt.items():
            if lst:
                front = _pareto(lst)
                if max_front is not None and len(front) > max_front:
                    front = _thin(front, max_front)
                    approx = True
                fronts[c] = front
    last = levels[-1] if levels else []
    if len(levels) < n or not last:
        return None
    j = min(range(len(last)), key=lambda q: (last[q][1], last[q][0]))
    t_best, e_best = last[j][0], last[j][1]
    seq = []
    for lvl in range(n - 1, -1, -1):
        s = levels[lvl][j]
        seq.append(s[3])
        j = s[2]
    best = Sequencing(tuple(reversed(seq)), t_best, e_best, max_states, approx)
    if approx:
        alt = _two_runs(time_s, energy_j, theta_t, st_m, se_m)
        if alt is not None and alt[2] < best.energy_j:
            best = Sequencing(alt[0], alt[1], alt[2], max_states, approx)
    return best


def _two_runs(time_s, energy_j, theta_t: float, st_m, se_m) -> tuple[tuple[int, ...], float, float] | None:
    """The least-energy sequence meeting ``theta_t`` among those that run one configuration for
    the first m batches and one (the same, or another) for the rest, 0 <= m <= n: (sequence, T, E)."""
    t = np.asarray(time_s, float)
    e = np.asarray(energy_j, float)
    n, k = t.shape
    zero = np.zeros((1, k))
    ct, ce = np.vstack([zero, np.cumsum(t, axis=0)]), np.vstack([zero, np.cumsum(e, axis=0)])
    best = None
    m = np.arange(n + 1)
    inner = (m > 0) & (m < n)
    for a in range(k):
        for b in range(k):
            # a for batches < m, b from m on; m = 0 (all b) and m = n (all a) need no switch
            sw = inner & (a != b)
            tt = ct[m, a] + ct[n, b] - ct[m, b] + np.where(sw, st_m[a][b], 0.0)
            ee = ce[m, a] + ce[n, b] - ce[m, b] + np.where(sw, se_m[a][b], 0.0)
            ok = np.flatnonzero(tt <= theta_t)
            if len(ok):
                j = ok[np.argmin(ee[ok])]
                if best is None or ee[j] < best[2]:
                    mj = int(m[j])
                    best = ((a,) * mj + (b,) * (n - mj), float(tt[j]), float(ee[j]))
    return best


def min_energy_brute(time_s: Sequence[Sequence[float]], energy_j: Sequence[Sequence[float]],
                     theta_t: float, sw_time: Callable[[int, int], float] | float = 0.0,
                     sw_energy: Callable[[int, int], float] | float = 0.0) -> float | None:
    """Reference: the least energy over all k^n sequences meeting ``theta_t`` (None if none)."""
    n = len(time_s)
    k = len(time_s[0]) if n else 0
    st = (lambda a, b: float(sw_time)) if not callable(sw_time) else sw_time
    se = (lambda a, b: float(sw_energy)) if not callable(sw_energy) else sw_energy
    best = None
    for seq in itertools.product(range(k), repeat=n):
        t, e = sequence_cost(seq, time_s, energy_j, st, se)
        if t <= theta_t and (best is None or e < best):
            best = e
    return best
