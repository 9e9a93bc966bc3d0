"""A batch template: what one batch of a plan at one operating point does, recorded once.

The engine runs the first batch of every distinct (plan, operating point, interference) in
detail on SimPy, records it as a template, and replays later identical batches from it in one
event (DESIGN.md: cost models and batches are memoised so 100k batches cost little more than
one).  The template keeps what the accounting needs: segment boundaries, the dynamic power of
every rail per segment (cumulative energy for fast window integration), memory in use, unit
busy time, and the slices for the trace.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
    counts: dict[str, int]     # cpu_ops, dsp_ops, gpu_ops, switches

    @property
    def dyn_energy_j(self) -> np.ndarray:
        return self.cum_dyn_j[-1]

    def dyn_energy_until(self, offsets_s: np.ndarray) -> np.ndarray:
        """Cumulative dynamic energy per rail at the given offsets (len(offsets) x rails)."""
        offs = np.clip(np.asarray(offsets_s, float), 0.0, self.duration_s)
        e = self.edges_s
        if len(e) < 2:
            return np.repeat(self.cum_dyn_j[-1:], len(offs), axis=0)
        i = np.clip(np.searchsorted(e, offs, side="right") - 1, 0, len(e) - 2)
        span = e[i + 1] - e[i]
        w = np.where(span > 0, (offs - e[i]) / np.where(span > 0, span, 1.0), 0.0)
        return self.cum_dyn_j[i] + w[:, None] * (self.cum_dyn_j[i + 1] - self.cum_dyn_j[i])

    def mem_at(self, offsets_s: np.ndarray) -> np.ndarray:
        if len(self.mem_bytes) == 0:
            return np.zeros(len(offsets_s))
        idx = np.searchsorted(self.edges_s, offsets_s, side="right") - 1
        return self.mem_bytes[np.clip(idx, 0, len(self.mem_bytes) - 1)]


class TemplateBuilder:
    """Collects the segments of a batch executed in detail."""

    def __init__(self, n_rails: int) -> None:
        self.n_rails = n_rails
        self.edges: list[float] = [0.0]
        self.dyn_mw: list[np.ndarray] = []
        self.mem: list[int] = []
        self.slices: list[Slice] = []
        self.busy: dict[str, float] = {}
        self.dram_bytes = 0
        self.counts = {"cpu_ops": 0, "dsp_ops": 0, "gpu_ops": 0, "switches": 0}

    def segment(self, start_s: float, dur_s: float, dyn_mw: np.ndarray, mem_bytes: int,
                tracks: tuple[str, ...], name: str, kind: str, phase: str,
                busy: dict[str, float], dram_bytes: int) -> None:
        if dur_s <= 0:
            return
        if abs(start_s - self.edges[-1]) > 1e-12:
            # an idle gap (nothing ran): zero dynamic power
            self.dyn_mw.append(np.zeros(self.n_rails))
            self.mem.append(self.mem[-1] if self.mem else mem_bytes)
            self.edges.append(start_s)
        self.dyn_mw.append(dyn_mw)
        self.mem.append(mem_bytes)
        self.edges.append(start_s + dur_s)
        for t in tracks:
            self.slices.append(Slice(t, name, kind, phase, start_s, dur_s))
        for k, v in busy.items():
            self.busy[k] = self.busy.get(k, 0.0) + v * dur_s
        self.dram_bytes += dram_bytes

    def add(self, start_s: float, seg) -> None:
        """Record a walker segment (socsim.engine.batch.Seg) that ran from ``start_s``."""
        if seg.count:
            self.counts[seg.count] += 1
        self.segment(start_s, seg.dur, seg.dyn_mw, seg.mem, seg.tracks, seg.name, seg.kind, seg.phase,
                     seg.busy, seg.dram_bytes)

    def build(self, duration_s: float) -> BatchTemplate:
        edges = np.asarray(self.edges, float)
        if not self.dyn_mw:
            dyn = np.zeros((0, self.n_rails))
        else:
            dyn = np.vstack(self.dyn_mw)
        seg_j = dyn * 1e-3 * np.diff(edges)[:, None]
        cum = np.vstack([np.zeros((1, self.n_rails)), np.cumsum(seg_j, axis=0)])
        if duration_s > edges[-1] + 1e-15:
            edges = np.append(edges, duration_s)
            cum = np.vstack([cum, cum[-1:]])
            mem = np.asarray(self.mem + [self.mem[-1] if self.mem else 0], float)
        else:
            mem = np.asarray(self.mem, float)
        for a in (edges, cum, mem):
            a.flags.writeable = False
        return BatchTemplate(duration_s=duration_s, edges_s=edges, cum_dyn_j=cum, mem_bytes=mem,
                             busy_s=dict(self.busy), dram_bytes=self.dram_bytes,
                             slices=tuple(self.slices), counts=dict(self.counts))
