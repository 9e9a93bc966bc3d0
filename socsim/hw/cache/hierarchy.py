"""Composable cache hierarchies: private chains per core feeding a shared chain, then DRAM.

* CPU: per-core L1D -> L2 (private), cluster-shared L3 -> SLC (shared by all threads).
  Threads' private miss streams are interleaved in small chunks (they run concurrently) before
  they enter the shared chain, which is where threads of one cluster compete for L3/SLC.
* DSP: HVX loads and stores bypass L1 and go to the L2 (hw:caches.cdsp_l2 note), so the DSP is
  a one-level chain; VTCM is a scratchpad: lines inside ``scratch`` ranges never enter a cache.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from socsim.hw.cache import sim_numba
from socsim.hw.cache.geometry import (FILLS, N_COUNTERS, RD_HIT, RD_MISS, WR_HIT, WR_MISS, WRITEBACKS,
                                      CacheGeom, ChainState, level_arrays)

# Threads' miss streams interleave in chunks of this many accesses (a few hundred ns of one
# core's L2 misses): fine enough that concurrent threads share the L3's LRU state.
INTERLEAVE_CHUNK = 64


class Chain:
    """A chain of cache levels with persistent contents (numba-backed)."""

    def __init__(self, geoms: tuple[CacheGeom, ...], stream_line_bytes: int) -> None:
        self.geoms = geoms
        self.stream_line_bytes = stream_line_bytes
        self.sets, self.assoc, self.shift, self.policy, self.wb, width = level_arrays(geoms, stream_line_bytes)
        self.state = ChainState.empty(len(geoms), width)
        self.counters = np.zeros((len(geoms), N_COUNTERS), dtype=np.int64)

    def feed(self, lines: np.ndarray, kinds: np.ndarray, emit: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Run a stream through the chain; returns the traffic that leaves its last level."""
        lines = np.ascontiguousarray(lines, dtype=np.int64)
        kinds = np.ascontiguousarray(kinds, dtype=np.uint8)
        cap = lines.shape[0] * (len(self.geoms) + 1) if emit else 1
        out_l = np.empty(cap, dtype=np.int64)
        out_k = np.empty(cap, dtype=np.uint8)
        s = self.state
        n = sim_numba.run_chain(lines, kinds, self.sets, self.assoc, self.shift, self.policy, self.wb,
                                s.tags, s.meta, s.dirty, s.clock, s.rng, self.counters, emit, out_l, out_k)
        if not emit:
            return np.empty(0, np.int64), np.empty(0, np.uint8)
        return out_l[:n], out_k[:n]

    def flush(self, level: int = -1) -> int:
        """Clean the dirty lines of one level (default: the last); returns how many."""
        lev = level % len(self.geoms)
        s = self.state
        dummy_l = np.empty(1, np.int64)
        dummy_k = np.empty(1, np.uint8)
        return int(sim_numba.flush_dirty(lev, self.shift, s.tags, s.dirty, self.counters, False, dummy_l, dummy_k))


def interleave(streams: list[tuple[np.ndarray, np.ndarray]], chunk: int = INTERLEAVE_CHUNK) -> tuple[np.ndarray, np.ndarray]:
    """Round-robin merge of several streams in chunks (concurrent threads' traffic)."""
    streams = [s for s in streams if s[0].shape[0]]
    if not streams:
        return np.empty(0, np.int64), np.empty(0, np.uint8)
    if len(streams) == 1:
        return streams[0]
    keys = []
    for t, (l, _) in enumerate(streams):
        idx = np.arange(l.shape[0], dtype=np.int64)
        keys.append((idx // chunk) * len(streams) + t)
    order = np.argsort(np.concatenate(keys), kind="stable")
    lines = np.concatenate([s[0] for s in streams])[order]
    kinds = np.concatenate([s[1] for s in streams])[order]
    return lines, kinds


@dataclass
class LevelStats:
    """Counts of one cache level (summed over its instances)."""

    name: str
    read_hits: int = 0
    read_misses: int = 0
    write_hits: int = 0
    write_misses: int = 0
    writebacks: int = 0
    fills: int = 0
    line_bytes: int = 64

    @property
    def accesses(self) -> int:
        return self.read_hits + self.read_misses + self.write_hits + self.write_misses

    @property
    def hits(self) -> int:
        return self.read_hits + self.write_hits

    @property
    def hit_rate(self) -> float:
        return self.hits / self.accesses if self.accesses else 1.0

    def add_row(self, row: np.ndarray, scale: float = 1.0) -> None:
        self.read_hits += int(round(row[RD_HIT] * scale))
        self.read_misses += int(round(row[RD_MISS] * scale))
        self.write_hits += int(round(row[WR_HIT] * scale))
        self.write_misses += int(round(row[WR_MISS] * scale))
        self.writebacks += int(round(row[WRITEBACKS] * scale))
        self.fills += int(round(row[FILLS] * scale))


@dataclass
class Hierarchy:
    """Private chains (one per thread) feeding one shared chain; DRAM below.

    ``private`` may be empty (the DSP: its L2 is the shared chain) and ``shared`` may be empty
    (everything private).  ``scratch`` lists [lo, hi) line ranges served by a scratchpad (VTCM).
    """

    private: tuple[CacheGeom, ...]
    shared: tuple[CacheGeom, ...]
    threads: int = 1
    stream_line_bytes: int = 64
    scratch: tuple[tuple[int, int], ...] = ()
    _priv: list[Chain] = field(default_factory=list, init=False, repr=False)
    _shared: Chain | None = field(default=None, init=False, repr=False)
    scratch_accesses: int = field(default=0, init=False)
    dram_fills: int = field(default=0, init=False)
    dram_writebacks: int = field(default=0, init=False)

    per_thread_private: tuple[tuple[CacheGeom, ...], ...] = ()

    def __post_init__(self) -> None:
        if self.per_thread_private:
            self._priv = [Chain(g, self.stream_line_bytes) for g in self.per_thread_private]
        elif self.private:
            self._priv = [Chain(self.private, self.stream_line_bytes) for _ in range(self.threads)]
        if self.shared:
            self._shared = Chain(self.shared, self.stream_line_bytes)

    def _strip_scratch(self, lines, kinds):
        if not self.scratch:
            return lines, kinds
        keep = np.ones(lines.shape[0], dtype=bool)
        for lo, hi in self.scratch:
            keep &= ~((lines >= lo) & (lines < hi))
        self.scratch_accesses += int(lines.shape[0] - keep.sum())
        return lines[keep], kinds[keep]

    def run(self, per_thread: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """Feed one step of every thread's stream (the threads run concurrently)."""
        per_thread = [self._strip_scratch(l, k) for l, k in per_thread]
        if self._priv:
            if len(per_thread) > len(self._priv):
                raise ValueError(f"{len(per_thread)} thread streams for {len(self._priv)} private chains")
            missed = [self._priv[t].feed(l, k) for t, (l, k) in enumerate(per_thread)]
        else:
            missed = per_thread
        merged = interleave(missed)
        if self._shared is not None:
            out_l, out_k = self._shared.feed(merged[0], merged[1])
        else:
            out_l, out_k = merged
        self.dram_fills += int(np.count_nonzero(out_k == 0))
        self.dram_writebacks += int(np.count_nonzero(out_k != 0))

    def flush_last(self) -> None:
        """Clean the last level's dirty lines to DRAM (the op's output leaves the unit)."""
        if self._shared is not None:
            self.dram_writebacks += self._shared.flush()
        elif self._priv:
            for c in self._priv:
                self.dram_writebacks += c.flush()

    def counters(self) -> np.ndarray:
        """Counter rows per level: private levels summed over threads, then shared levels."""
        rows = []
        if self._priv:
            rows.append(sum(c.counters for c in self._priv))
        if self._shared is not None:
            rows.append(self._shared.counters)
        return np.concatenate(rows, axis=0) if rows else np.zeros((0, N_COUNTERS), np.int64)

    def level_names(self) -> list[str]:
        return [g.name for g in self.private] + [g.name for g in self.shared]

    def line_bytes(self) -> list[int]:
        return [g.line_bytes for g in self.private] + [g.line_bytes for g in self.shared]
