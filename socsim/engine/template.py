"""A batch template: what one batch of a plan at one operating point does, recorded once.

The engine walks the timeline of every distinct (plan, operating point, interference) once,
keeps it as a template, and replays later identical batches from it in one event (docs/architecture.md:
cost models and batches are memoised so 100k batches cost little more than one).  The template
keeps what the accounting needs: segment boundaries, the dynamic power of every rail per
segment (cumulative energy for fast window integration), memory in use, unit busy time
(cumulative too, for part of a batch), which walker segment each segment is (to carry a batch
on at another operating point, :meth:`BatchTemplate.map_offset`), and the slices for the trace.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from socsim.hw import units


@dataclass(frozen=True, slots=True)
class Slice:
    track: str
    name: str
    kind: str
    phase: str
    start_s: float  # offset from the batch start
    dur_s: float


@dataclass(frozen=True, eq=False)
class BatchTemplate:
    duration_s: float
    edges_s: np.ndarray        # segment boundaries, offsets from the batch start (n + 1)
    cum_dyn_j: np.ndarray      # cumulative dynamic energy per rail at each edge ((n + 1) x rails)
    mem_bytes: np.ndarray      # memory in use during each segment (n)
    busy_s: dict[str, float]   # busy core-seconds per cluster, and seconds for dsp/gpu
    dram_bytes: int
    slices: tuple[Slice, ...]
    counts: dict[str, int]     # <unit>_ops of every unit (socsim.hw.units), switches
    seg_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, int))  # walker segment of each segment (-1: gap)
    busy_keys: tuple[str, ...] = ()
    cum_busy: np.ndarray = field(default_factory=lambda: np.zeros((1, 0)))  # cumulative busy_s at each edge
    seg_steps: np.ndarray = field(default_factory=lambda: np.zeros(0, int))  # plan step of each segment (-1: none)
    fg: tuple[tuple[int, float], ...] = ()  # foreground apps the batch runs with: (core, utilisation)

    @property
    def dyn_energy_j(self) -> np.ndarray:
        return self.cum_dyn_j[-1]

    def _at(self, offsets_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Segment index and fraction of it done at each offset (clipped to the batch)."""
        # (np.minimum/np.maximum: np.clip's results, without its wrapper's cost on short arrays)
        offs = np.minimum(np.maximum(np.asarray(offsets_s, float), 0.0), self.duration_s)
        e = self.edges_s
        i = np.minimum(np.maximum(np.searchsorted(e, offs, side="right") - 1, 0), len(e) - 2)
        span = e[i + 1] - e[i]
        return i, np.where(span > 0, (offs - e[i]) / np.where(span > 0, span, 1.0), 0.0)

    def dyn_energy_until(self, offsets_s: np.ndarray) -> np.ndarray:
        """Cumulative dynamic energy per rail at the given offsets (len(offsets) x rails)."""
        if len(self.edges_s) < 2:
            return np.repeat(self.cum_dyn_j[-1:], len(np.atleast_1d(offsets_s)), axis=0)
        i, w = self._at(offsets_s)
        return self.cum_dyn_j[i] + w[:, None] * (self.cum_dyn_j[i + 1] - self.cum_dyn_j[i])

    def busy_between(self, a_s: float, b_s: float) -> dict[str, float]:
        """Busy time per unit (as :attr:`busy_s`) within offsets [a_s, b_s] of the batch."""
        if a_s <= 0.0 and b_s >= self.duration_s:
            return self.busy_s
        if len(self.edges_s) < 2 or not self.busy_keys:
            return {}
        i, w = self._at(np.array([a_s, b_s]))
        c = self.cum_busy
        at = c[i] + w[:, None] * (c[i + 1] - c[i])
        return {k: float(v) for k, v in zip(self.busy_keys, at[1] - at[0])}

    def map_offset(self, offset_s: float, other: "BatchTemplate") -> float:
        """The offset in ``other`` (the same plan at another operating point) at which as much of
        the batch is done as at ``offset_s`` here: the same walker segment, the same fraction
        of it (an op in progress keeps the share of its work done).  Templates of one plan have
        the same segments at every operating point; should they not, the batch's fraction is kept."""
        if offset_s <= 0.0:
            return 0.0
        if offset_s >= self.duration_s:
            return other.duration_s
        if len(self.seg_ids) == len(self.edges_s) - 1 and len(other.seg_ids):
            i, w = self._at(np.array([offset_s]))
            sid = self.seg_ids[i[0]]
            hit = np.flatnonzero(other.seg_ids == sid) if sid >= 0 else np.empty(0, np.intp)
            if len(hit):
                j, e = int(hit[0]), other.edges_s
                return float(e[j] + w[0] * (e[j + 1] - e[j]))
        return offset_s / self.duration_s * other.duration_s if self.duration_s > 0 else 0.0

    def step_at(self, offset_s: float) -> int:
        """The plan step in progress at ``offset_s`` (its FastRPC switch counts as the step's);
        between steps (an overhead or a gap after step k) k, the last one begun; -1 in the
        batch's preparation, before any step."""
        if not len(self.seg_steps):
            return -1
        i, _ = self._at(np.array([offset_s]))
        begun = self.seg_steps[: int(i[0]) + 1]
        return int(begun.max()) if len(begun) else -1

    def mem_at(self, offsets_s: np.ndarray) -> np.ndarray:
        if len(self.mem_bytes) == 0:
            return np.zeros(len(offsets_s))
        idx = np.searchsorted(self.edges_s, offsets_s, side="right") - 1
        return self.mem_bytes[np.clip(idx, 0, len(self.mem_bytes) - 1)]


def time_on(count: str | None) -> str:
    """What a segment's time counts as, by its count key (socsim.engine.batch.Seg.count): the
    unit its op ran on (``<unit>_ops`` -> ``on:<unit>``), hand-overs, or the batch's preparation."""
    if count is None:
        return "on:prep"
    return "on:switch" if count == "switches" else "on:" + count.removesuffix("_ops")


class TemplateBuilder:
    """Collects the segments of a batch as the walker yields them (or as the engine adds them)."""

    def __init__(self, n_rails: int) -> None:
        self.n_rails = n_rails
        self.edges: list[float] = [0.0]
        self.dyn_mw: list[np.ndarray] = []
        self.mem: list[int] = []
        self.slices: list[Slice] = []
        self.busy: dict[str, float] = {}
        self.seg_busy: list[dict[str, float]] = []   # busy seconds per unit of each segment
        self.seg_ids: list[int] = []
        self.seg_steps: list[int] = []
        self._added = 0                              # walker segments added (zero-length ones too)
        self.dram_bytes = 0
        self.counts = {**dict.fromkeys(units.ops_keys(), 0), "switches": 0}

    def segment(self, start_s: float, dur_s: float, dyn_mw: np.ndarray, mem_bytes: int,
                tracks: tuple[str, ...], name: str, kind: str, phase: str,
                busy: dict[str, float], dram_bytes: int, seg_id: int = -1, step: int = -1) -> None:
        if dur_s <= 0:
            return
        if abs(start_s - self.edges[-1]) > 1e-12:
            # an idle gap (nothing ran): zero dynamic power
            self.dyn_mw.append(np.zeros(self.n_rails))
            self.mem.append(self.mem[-1] if self.mem else mem_bytes)
            self.edges.append(start_s)
            self.seg_busy.append({})
            self.seg_ids.append(-1)
            self.seg_steps.append(-1)
        self.dyn_mw.append(dyn_mw)
        self.mem.append(mem_bytes)
        self.edges.append(start_s + dur_s)
        self.seg_ids.append(seg_id)
        self.seg_steps.append(step)
        for t in tracks:
            self.slices.append(Slice(t, name, kind, phase, start_s, dur_s))
        sb = {}
        for k, v in busy.items():
            sb[k] = v * dur_s
            self.busy[k] = self.busy.get(k, 0.0) + v * dur_s
        self.seg_busy.append(sb)
        self.dram_bytes += dram_bytes

    def add(self, start_s: float, seg) -> None:
        """Record a walker segment (socsim.engine.batch.Seg) that ran from ``start_s``; its time
        also goes to the busy key ``on:<what>`` (:func:`time_on`: the unit its op ran on, hand-overs
        between units (FastRPC calls, GPU queue drains and copies), or the batch's preparation), the summary's per-unit time split."""
        if seg.count:
            self.counts[seg.count] += 1
        self.segment(start_s, seg.dur, seg.dyn_mw, seg.mem, seg.tracks, seg.name, seg.kind, seg.phase,
                     {**seg.busy, "on:switch" if seg.phase == "rpc" else time_on(seg.count): 1.0},
                     seg.dram_bytes, self._added, seg.step)
        self._added += 1

    def build(self, duration_s: float) -> BatchTemplate:
        edges = np.asarray(self.edges, float)
        if not self.dyn_mw:
            dyn = np.zeros((0, self.n_rails))
        else:
            dyn = np.vstack(self.dyn_mw)
        seg_j = dyn * 1e-3 * np.diff(edges)[:, None]
        cum = np.vstack([np.zeros((1, self.n_rails)), np.cumsum(seg_j, axis=0)])
        keys = tuple(sorted(self.busy))
        busy = np.array([[sb.get(k, 0.0) for k in keys] for sb in self.seg_busy]).reshape(len(self.seg_busy), len(keys))
        cum_busy = np.vstack([np.zeros((1, len(keys))), np.cumsum(busy, axis=0)])
        ids = np.asarray(self.seg_ids, int)
        steps = np.asarray(self.seg_steps, int)
        if duration_s > edges[-1] + 1e-15:
            edges = np.append(edges, duration_s)
            cum = np.vstack([cum, cum[-1:]])
            cum_busy = np.vstack([cum_busy, cum_busy[-1:]])
            ids = np.append(ids, -1)
            steps = np.append(steps, -1)
            mem = np.asarray(self.mem + [self.mem[-1] if self.mem else 0], float)
        else:
            mem = np.asarray(self.mem, float)
        for a in (edges, cum, mem, ids, cum_busy, steps):
            a.flags.writeable = False
        return BatchTemplate(duration_s=duration_s, edges_s=edges, cum_dyn_j=cum, mem_bytes=mem,
                             busy_s=dict(self.busy), dram_bytes=self.dram_bytes,
                             slices=tuple(self.slices), counts=dict(self.counts),
                             seg_ids=ids, busy_keys=keys, cum_busy=cum_busy, seg_steps=steps)
