"""Composable cache hierarchies: private chains per core feeding a shared chain, then DRAM.

* CPU: per-core L1D -> L2 (private), cluster-shared L3 -> SLC (shared by all threads).
  Threads' private miss streams are interleaved in small chunks (they run concurrently) before
  they enter the shared chain, which is where threads of one cluster compete for L3/SLC.
* DSP: HVX loads and stores bypass L1 and go to the L2 (hw:caches.cdsp_l2 note), so the DSP is
  a one-level chain; VTCM is a scratchpad: lines inside ``scratch`` ranges never enter a cache.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from socsim.hw.cache import hier_fifo, hier_numba, hier_period, sim_numba
from socsim.hw.cache.geometry import (FILLS, N_COUNTERS, RD_HIT, RD_MISS, WR_HIT, WR_MISS, WRITEBACKS,
                                      CacheGeom, ChainState, RNG_SEED, level_arrays)

# Threads' miss streams interleave in chunks of this many accesses (a few hundred ns of one
# core's L2 misses): fine enough that concurrent threads share the L3's LRU state.  A
# numerical method parameter (an approximation of truly concurrent streams), not a measured
# one: assumption, plausible 16-256; its effect on shared-cache hit rates is the thread
# contention of docs/memory.md ("How the cost models use it"), whose sampling errors are in
# docs/memory.md, "Sampling".
INTERLEAVE_CHUNK = 64


class Chain:
    """A chain of cache levels with persistent contents (numba-backed).

    ``width``/``state``/``counters`` let a :class:`Hierarchy` keep several threads' chains in
    stacked arrays (views), so the compiled driver and ``feed`` work on the same contents."""

    def __init__(self, geoms: tuple[CacheGeom, ...], stream_line_bytes: int, width: int | None = None,
                 state: ChainState | None = None, counters: np.ndarray | None = None) -> None:
        self.geoms = geoms
        self.stream_line_bytes = stream_line_bytes
        self.sets, self.assoc, self.shift, self.policy, self.wb, own = level_arrays(geoms, stream_line_bytes)
        self.width = width or own
        self.state = state if state is not None else ChainState.empty(len(geoms), self.width)
        self.counters = counters if counters is not None else np.zeros((len(geoms), N_COUNTERS), dtype=np.int64)

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
    skipped: int = field(default=0, init=False)     # accesses the periodic driver skipped
    fifo: int = field(default=0, init=False)        # run_steps calls that took the ring path (hier_fifo)

    per_thread_private: tuple[tuple[CacheGeom, ...], ...] = ()

    def __post_init__(self) -> None:
        line = self.stream_line_bytes
        per = self.per_thread_private or ((self.private,) * self.threads if self.private else ())
        self._p = _stack_chains(per, line)
        self._priv = [Chain(g, line, self._p["width"], ChainState(self._p["tags"][t].reshape(len(g), -1),
                                                                  self._p["meta"][t].reshape(len(g), -1),
                                                                  self._p["dirty"][t].reshape(len(g), -1),
                                                                  self._p["clock"][t], self._p["rng"][t]),
                            self._p["cnt"][t].reshape(len(g), N_COUNTERS))
                      for t, g in enumerate(per)]
        if self.shared:
            self._shared = Chain(self.shared, line)

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

    def run_steps(self, lines: np.ndarray, kinds: np.ndarray, off: np.ndarray, steps: int,
                  period: tuple[int, int, int, int] | None = None,
                  once: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Feed ``steps`` steps at once (groups ``off[s * threads + t]:off[s * threads + t + 1]``,
        as :meth:`streams.StreamPlan.generate` lays them out); compiled twin of calling
        :meth:`run` once per step.  Returns per-step snapshots: counters (steps, levels, 6) as
        :meth:`counters` gives them, and cumulative (dram fills, dram writebacks) (steps, 2).

        ``period`` = (lo, hi, delta, per_iter) says the steps' streams repeat every ``per_iter``
        accesses with the lines in [lo, hi) moved by ``delta`` (streams.period_hint): the
        driver then skips the stretches where the caches repeat too, exactly (hier_period;
        the results are the same with or without it).  ``self.skipped`` counts what it skipped.

        ``once`` says the stream touches its lines once, bar a few (streams.touches_once): on cold
        write-back LRU caches at the stream's line size, the driver then takes the ring path
        (hier_fifo, exact: the results are the same with or without it) when the stream is long
        enough to gain (hier_fifo.MIN_ACCESSES) and its repeated lines are few; ``self.fifo``
        counts the calls that took it."""
        if (once and lines.shape[0] >= hier_fifo.MIN_ACCESSES and not self.scratch and self._lru_wb()
                and self._cold() and self._one_line()):
            cand = hier_fifo.repeats(lines, kinds, off)
            if cand is not None:
                return self._run_fifo(lines, kinds, off, steps, cand)
        if period is not None and not self.scratch and self._lru_wb():
            p0 = self._period_p0(period)
            if p0:
                return self._run_periodic(lines, kinds, off, steps, period, p0)
        threads = (off.shape[0] - 1) // max(steps, 1)
        if self._priv and threads > len(self._priv):
            raise ValueError(f"{threads} thread streams for {len(self._priv)} private chains")
        rows = len(self.level_names())
        snap_cnt = np.zeros((steps, rows, N_COUNTERS), dtype=np.int64)
        snap_dram = np.zeros((steps, 2), dtype=np.int64)
        totals = np.array([self.dram_fills, self.dram_writebacks, self.scratch_accesses], dtype=np.int64)
        scr = np.array(self.scratch, dtype=np.int64).reshape(-1, 2)
        p = self._p
        sh = self._shared
        if sh is None:
            sh = _EMPTY_SHARED
        hier_numba.run_steps(np.ascontiguousarray(lines, dtype=np.int64), np.ascontiguousarray(kinds, dtype=np.uint8),
                             off, threads, steps, scr[:, 0].copy(), scr[:, 1].copy(),
                             p["sets"], p["assoc"], p["shift"], p["policy"], p["wb"], p["tags"], p["meta"],
                             p["dirty"], p["width"], p["clock"], p["rng"], p["cnt"],
                             sh.sets, sh.assoc, sh.shift, sh.policy, sh.wb, sh.state.tags.reshape(-1),
                             sh.state.meta.reshape(-1), sh.state.dirty.reshape(-1), sh.width, sh.state.clock,
                             sh.state.rng, sh.counters.reshape(-1), INTERLEAVE_CHUNK, snap_cnt, snap_dram, totals,
                             None if self._lru_wb() else True)
        self.dram_fills, self.dram_writebacks, self.scratch_accesses = (int(x) for x in totals)
        return snap_cnt, snap_dram

    def _period_p0(self, period: tuple[int, int, int, int]) -> int:
        """The fewest body iterations whose shift keeps every line in its set at every level
        (and is whole lines of every level), 0 when the region is not aligned to every level's
        lines."""
        lo, hi, delta, per_iter = period
        geoms = [g for per in (self.per_thread_private or (self.private,)) for g in per] + list(self.shared)
        mod = 1
        for g in geoms:
            ratio = g.line_bytes // self.stream_line_bytes
            if lo % ratio or hi % ratio:
                return 0
            mod = math.lcm(mod, g.sets * ratio)
        if delta <= 0 or per_iter <= 0:
            return 0
        return mod // math.gcd(mod, delta)

    def _run_periodic(self, lines, kinds, off, steps, period, p0) -> tuple[np.ndarray, np.ndarray]:
        threads = (off.shape[0] - 1) // max(steps, 1)
        if self._priv and threads > len(self._priv):
            raise ValueError(f"{threads} thread streams for {len(self._priv)} private chains")
        snap_cnt = np.zeros((steps, len(self.level_names()), N_COUNTERS), dtype=np.int64)
        snap_dram = np.zeros((steps, 2), dtype=np.int64)
        totals = np.array([self.dram_fills, self.dram_writebacks, self.scratch_accesses], dtype=np.int64)
        p = self._p
        sh = self._shared if self._shared is not None else _EMPTY_SHARED
        lo, hi, delta, per_iter = (int(x) for x in period)
        self.skipped += int(hier_period.run_steps_periodic(
            np.ascontiguousarray(lines, dtype=np.int64), np.ascontiguousarray(kinds, dtype=np.uint8), off, threads,
            steps, p["sets"], p["assoc"], p["shift"], p["tags"], p["meta"], p["dirty"], p["width"], p["clock"],
            p["cnt"], sh.sets, sh.assoc, sh.shift, sh.state.tags.reshape(-1), sh.state.meta.reshape(-1),
            sh.state.dirty.reshape(-1), sh.width, sh.state.clock, sh.counters.reshape(-1), INTERLEAVE_CHUNK,
            snap_cnt, snap_dram, totals, lo, hi, delta, per_iter, p0))
        self.dram_fills, self.dram_writebacks, self.scratch_accesses = (int(x) for x in totals)
        return snap_cnt, snap_dram

    def _run_fifo(self, lines, kinds, off, steps, cand) -> tuple[np.ndarray, np.ndarray]:
        threads = (off.shape[0] - 1) // max(steps, 1)
        if self._priv and threads > len(self._priv):
            raise ValueError(f"{threads} thread streams for {len(self._priv)} private chains")
        snap_cnt = np.zeros((steps, len(self.level_names()), N_COUNTERS), dtype=np.int64)
        snap_dram = np.zeros((steps, 2), dtype=np.int64)
        totals = np.array([self.dram_fills, self.dram_writebacks, self.scratch_accesses], dtype=np.int64)
        p = self._p
        sh = self._shared if self._shared is not None else _EMPTY_SHARED
        hier_fifo.run_steps_fifo(
            np.ascontiguousarray(lines, dtype=np.int64), np.ascontiguousarray(kinds, dtype=np.uint8), off, threads,
            steps, p["sets"], p["assoc"], p["tags"], p["meta"], p["dirty"], p["width"], p["clock"], p["cnt"],
            sh.sets, sh.assoc, sh.state.tags.reshape(-1), sh.state.meta.reshape(-1), sh.state.dirty.reshape(-1),
            sh.width, sh.state.clock, sh.counters.reshape(-1), INTERLEAVE_CHUNK, snap_cnt, snap_dram, totals, cand)
        self.dram_fills, self.dram_writebacks, self.scratch_accesses = (int(x) for x in totals)
        self.fifo += 1
        return snap_cnt, snap_dram

    def _cold(self) -> bool:
        """No access has reached any cache yet (every level's clock is 0)."""
        sh = self._shared
        return not self._p["clock"].any() and (sh is None or not sh.state.clock.any())

    def _one_line(self) -> bool:
        """Every level's line is the stream's (no two stream lines share a cache line)."""
        geoms = [g for per in (self.per_thread_private or (self.private,)) for g in per] + list(self.shared)
        return all(g.line_bytes == self.stream_line_bytes for g in geoms)

    def _lru_wb(self) -> bool:
        """Every level write-back LRU (the compiled driver's fast path, hier_numba.run_steps)."""
        geoms = [g for per in (self.per_thread_private or (self.private,)) for g in per] + list(self.shared)
        return all(g.policy == "lru" and g.write_back for g in geoms)

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
            rows.append(self._p["cnt"].reshape(len(self._priv), -1, N_COUNTERS).sum(axis=0))
        if self._shared is not None:
            rows.append(self._shared.counters)
        return np.concatenate(rows, axis=0) if rows else np.zeros((0, N_COUNTERS), np.int64)

    def level_names(self) -> list[str]:
        return [g.name for g in self.private] + [g.name for g in self.shared]

    def line_bytes(self) -> list[int]:
        return [g.line_bytes for g in self.private] + [g.line_bytes for g in self.shared]


def _stack_chains(per_thread: tuple[tuple[CacheGeom, ...], ...], line: int) -> dict:
    """Geometry and fresh state of one private chain per thread, stacked (thread-major)."""
    if not per_thread:
        z = np.zeros((0, 0), dtype=np.int64)
        return dict(sets=z, assoc=z, shift=z, policy=z, wb=z, width=1, tags=z, meta=z,
                    dirty=np.zeros((0, 0), np.uint8), clock=z, rng=np.zeros((0, 1), np.uint64), cnt=z)
    arrs = [level_arrays(g, line) for g in per_thread]
    if len({len(g) for g in per_thread}) != 1:
        raise ValueError("private chains of one hierarchy must have the same number of levels")
    n, lev = len(per_thread), len(per_thread[0])
    width = max(a[5] for a in arrs)
    return dict(sets=np.stack([a[0] for a in arrs]), assoc=np.stack([a[1] for a in arrs]),
                shift=np.stack([a[2] for a in arrs]), policy=np.stack([a[3] for a in arrs]),
                wb=np.stack([a[4] for a in arrs]), width=width,
                tags=np.full((n, lev * width), -1, dtype=np.int64), meta=np.zeros((n, lev * width), np.int64),
                dirty=np.zeros((n, lev * width), np.uint8), clock=np.zeros((n, lev), np.int64),
                rng=np.full((n, 1), RNG_SEED, dtype=np.uint64), cnt=np.zeros((n, lev * N_COUNTERS), np.int64))


class _NoChain:
    """Stand-in arrays for an absent shared chain (the compiled driver skips it)."""

    def __init__(self) -> None:
        z = np.zeros(0, dtype=np.int64)
        self.sets = self.assoc = self.shift = self.policy = self.wb = z
        self.width = 1
        self.state = ChainState(np.zeros((0, 1), np.int64), np.zeros((0, 1), np.int64), np.zeros((0, 1), np.uint8),
                                z, np.array([RNG_SEED], np.uint64))
        self.counters = np.zeros((0, N_COUNTERS), np.int64)


_EMPTY_SHARED = _NoChain()
