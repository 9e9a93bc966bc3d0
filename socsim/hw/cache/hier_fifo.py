"""``hier_numba.run_steps`` for streams that touch (nearly) every line once: no tag search.

An element-wise op reads its inputs and writes its outputs once, each line in one run: in a
cold write-back LRU hierarchy such a line misses at every level it reaches, whatever the sizes.
Its read is fetched through every level once (allocated clean); its full-line write is allocated
dirty in the first level without a fetch, and written back one level further down each time it
is evicted, allocated there as a writeback; so it too reaches each level at most once.  A level
whose arrivals all miss allocates its sets in turn: an empty way first (the lowest), then the
least recently used, which with no hit in the set is the least recently allocated.  Each set is
then a ring: the victim of its ``i``-th allocation is way ``i mod assoc``, and the walk of the
ways (the whole cost of ``sim_lru_wb._run_lru_wb``) is not needed.

The lines that may repeat (:func:`repeats`: the stream's runs of consecutive lines, intersected;
for an element-wise op the line two chunks share when a chunk is not whole lines) take the full
walk at every level, and a set in which one of them hits (its LRU order is no longer its
allocation order) takes the full walk from then on.  Any line can take the full walk (it finds
what the ring would), so the bitmap that flags the candidates may over-flag.

Chains run level by level: an arrival at a level sends on, in order, its victim's writeback (when
dirty) and then, when it is a fetch, itself, and a level's state depends only on its arrivals in
order, so feeding a level all of one thread's step before the next level (breadth first) gives
the events of ``_run_lru_wb``'s walk (depth first).  The threads' miss streams merge round-robin
in ``chunk``-access pieces per step, as in ``run_steps``.  Counters, snapshots and final state
(tags, stamps, dirty bits, clocks) are ``run_steps``' own (tests/hw/test_cache_fifo.py, on random
streams with and without repeats and on the zoo's element-wise steps).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from socsim.hw.cache.geometry import FILLS, RD_HIT, RD_MISS, WR_HIT, WR_MISS, WRITEBACKS
from socsim.hw.cache.hier_numba import _count_dram, _snapshot

# Bits of the candidate filter (a bitmap on the low line bits).  A method parameter, exact either
# way: a false positive only sends an access through the full walk.
FILTER_BITS = 12
# Most repeated lines and most runs of consecutive lines a stream may have to take this path;
# past them the stream has real reuse (a conv's re-read pack buffer) and the plain driver runs.
MAX_REPEATS = 4096
MAX_RUNS = 1 << 16
# Fewest accesses a stream must have to take this path: below it the ring saves under a
# millisecond, and a run whose streams are all that small (the quick-start's LeNet, whose largest
# element-wise step is ~14 k accesses) then never compiles this module (~2-5 CPU s once per
# machine; `socsim warmup` compiles it: memory.warm_ring_driver).  Exact either way.
MIN_ACCESSES = 1 << 16


def repeats(lines: np.ndarray, kinds: np.ndarray, off: np.ndarray) -> np.ndarray | None:
    """The lines that occur more than once in the steps' streams (sorted), or None when the
    stream does not qualify: a partial write (WRITE: its fetch and its writeback both reach the
    next level), more than MAX_RUNS runs of consecutive lines, or more than MAX_REPEATS repeats.
    Runs are split at group boundaries; a line repeats iff two runs overlap on it."""
    n = int(lines.shape[0])
    if n == 0:
        return np.zeros(0, np.int64)
    if np.any(kinds == 1):
        return None
    brk = np.flatnonzero(np.diff(lines) != 1) + 1
    starts = np.union1d(brk, off[(off > 0) & (off < n)])
    if starts.shape[0] + 1 > MAX_RUNS:
        return None
    starts = np.concatenate(([0], starts)).astype(np.int64)
    ends = np.concatenate((starts[1:], [n]))
    lo = lines[starts]
    hi = lines[ends - 1] + 1
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)
    parts = []
    total = 0
    for i in range(1, lo.shape[0]):
        top = min(int(hi[i]), int(reach[i - 1]))
        if top > lo[i]:
            total += top - int(lo[i])
            if total > MAX_REPEATS:
                return None
            parts.append(np.arange(int(lo[i]), top, dtype=np.int64))
    if not parts:
        return np.zeros(0, np.int64)
    return np.unique(np.concatenate(parts))


@nb.njit(cache=True, inline="always")
def _flagged(x, bits, cand):
    """Whether line ``x`` may repeat: its filter bit, then a binary search of ``cand``."""
    if bits[x & ((1 << FILTER_BITS) - 1)] == 0:
        return False
    lo = 0
    hi = cand.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if cand[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo < cand.shape[0] and cand[lo] == x


@nb.njit(cache=True, error_model="numpy", nogil=True)
def _level(in_l, in_k, n, sets, assoc, tags, meta, dirty, base, clock, lev, cnt, row, pos, ring, abase,
           bits, cand, out_l, out_k):
    """One write-back LRU level over ``n`` arrivals (kinds READ or WRITE_FULL): its state at
    ``tags[base:]`` etc., per set the ring's next way and whether the set is still a ring at
    ``pos[abase:]``, ``ring[abase:]``; counters at ``cnt[row:row + 6]``.  Writes what it sends
    on (victims' writebacks, then fetches) to ``out_*``; returns how many.

    Counters stay in registers and the ring's next way is a wrapping counter, not a modulo:
    an increment in memory per arrival, or a division, would cost more than the ring saves.
    Indices are unsigned (no negative-index wraparound code), as in sim_lru_wb."""
    m = sets - 1 if (sets & (sets - 1)) == 0 else -1
    c = clock[lev]
    no = 0
    r_hit = w_hit = r_miss = w_miss = wbacks = 0
    fmask = (1 << FILTER_BITS) - 1
    for i in range(n):
        x = in_l[i]
        k = in_k[i]
        s = np.uint64(abase + ((x & m) if m >= 0 else x % sets))
        st = np.uint64(base) + (s - np.uint64(abase)) * np.uint64(assoc)
        c += 1
        p = pos[s]
        if ring[s] != 0 and (bits[np.uint64(x & fmask)] == 0 or not _flagged(x, bits, cand)):
            j = st + np.uint64(p)
        else:
            found = False
            j = st
            v = -1
            bw = 0
            best = np.int64(0x7FFFFFFFFFFFFFFF)
            for w in range(assoc):
                y = st + np.uint64(w)
                t = tags[y]
                if t == x:
                    j = y
                    found = True
                    break
                if t == -1:
                    if v < 0:
                        v = w
                elif meta[y] < best:
                    best = meta[y]
                    bw = w
            if found:
                meta[j] = c
                ring[s] = 0
                if k != 0:
                    w_hit += 1
                    dirty[j] = 1
                else:
                    r_hit += 1
                continue
            j = st + np.uint64(bw if v < 0 else v)
        pos[s] = p + 1 if p + 1 < assoc else 0
        old = tags[j]
        if old != -1 and dirty[j] != 0:
            wbacks += 1
            out_l[no] = old
            out_k[no] = 2
            no += 1
        tags[j] = x
        meta[j] = c
        if k != 0:
            w_miss += 1
            dirty[j] = 1
        else:
            r_miss += 1
            dirty[j] = 0
            out_l[no] = x
            out_k[no] = 0
            no += 1
    clock[lev] = c
    cnt[row + RD_HIT] += r_hit
    cnt[row + WR_HIT] += w_hit
    cnt[row + RD_MISS] += r_miss
    cnt[row + WR_MISS] += w_miss
    cnt[row + WRITEBACKS] += wbacks
    cnt[row + FILLS] += r_miss
    return no


@nb.njit(cache=True)
def run_steps_fifo(lines, kinds, off, threads, steps, p_sets, p_assoc, p_tags, p_meta, p_dirty, p_width, p_clock,
                   p_cnt, s_sets, s_assoc, s_tags, s_meta, s_dirty, s_width, s_clock, s_cnt, chunk, snap_cnt,
                   snap_dram, totals, cand):
    """``hier_numba.run_steps`` (write-back LRU levels, no scratchpad, every level on the stream's
    line, caches cold) for a stream whose only repeated lines are in ``cand`` (sorted)."""
    n_priv = p_sets.shape[1]
    n_shared = s_sets.shape[0]
    n_rows = n_priv + n_shared
    bits = np.zeros(1 << FILTER_BITS, dtype=np.uint8)
    for i in range(cand.shape[0]):
        bits[cand[i] & ((1 << FILTER_BITS) - 1)] = 1
    p_nsets = 1
    for t in range(p_sets.shape[0]):
        for lev in range(n_priv):
            p_nsets = max(p_nsets, p_sets[t, lev])
    p_pos = np.zeros((max(threads, 1), max(n_priv, 1) * p_nsets), dtype=np.int64)
    p_ring = np.ones((max(threads, 1), max(n_priv, 1) * p_nsets), dtype=np.uint8)
    s_nsets = 1
    for lev in range(n_shared):
        s_nsets = max(s_nsets, s_sets[lev])
    s_pos = np.zeros(max(n_shared, 1) * s_nsets, dtype=np.int64)
    s_ring = np.ones(max(n_shared, 1) * s_nsets, dtype=np.uint8)
    longest = 1
    for g in range(steps * threads):
        longest = max(longest, off[g + 1] - off[g])
    cap = longest * (n_rows + 1)
    buf_l = np.empty((2, cap), dtype=np.int64)
    buf_k = np.empty((2, cap), dtype=np.uint8)
    priv_l = np.empty((threads, cap), dtype=np.int64)
    priv_k = np.empty((threads, cap), dtype=np.uint8)
    plen = np.zeros(threads, dtype=np.int64)
    mcap = cap * threads
    mrg_l = np.empty((2, mcap), dtype=np.int64)
    mrg_k = np.empty((2, mcap), dtype=np.uint8)
    for s in range(steps):
        for t in range(threads):
            g = s * threads + t
            a, b = off[g], off[g + 1]
            if n_priv == 0:
                for i in range(a, b):
                    priv_l[t, i - a] = lines[i]
                    priv_k[t, i - a] = kinds[i]
                plen[t] = b - a
                continue
            n = b - a
            src = 0
            for lev in range(n_priv):
                last = lev == n_priv - 1
                if lev == 0:
                    il = lines[a:b]
                    ik = kinds[a:b]
                else:
                    il = buf_l[src]
                    ik = buf_k[src]
                if last:
                    ol = priv_l[t]
                    ok = priv_k[t]
                else:
                    ol = buf_l[1 - src] if lev > 0 else buf_l[0]
                    ok = buf_k[1 - src] if lev > 0 else buf_k[0]
                n = _level(il, ik, n, p_sets[t, lev], p_assoc[t, lev], p_tags[t], p_meta[t], p_dirty[t],
                           lev * p_width, p_clock[t], lev, p_cnt[t], lev * 6, p_pos[t], p_ring[t], lev * p_nsets,
                           bits, cand, ol, ok)
                if lev > 0:
                    src = 1 - src
            plen[t] = n
        # round-robin merge in chunks (hierarchy.interleave)
        nm = 0
        pos = 0
        more = True
        while more:
            more = False
            for t in range(threads):
                e = min(plen[t], pos + chunk)
                for i in range(pos, e):
                    mrg_l[0, nm] = priv_l[t, i]
                    mrg_k[0, nm] = priv_k[t, i]
                    nm += 1
                if plen[t] > e:
                    more = True
            pos += chunk
        src = 0
        for lev in range(n_shared):
            nm = _level(mrg_l[src], mrg_k[src], nm, s_sets[lev], s_assoc[lev], s_tags, s_meta, s_dirty,
                        lev * s_width, s_clock, lev, s_cnt, lev * 6, s_pos, s_ring, lev * s_nsets, bits, cand,
                        mrg_l[1 - src], mrg_k[1 - src])
            src = 1 - src
        _count_dram(mrg_k[src], nm, totals)
        _snapshot(s, n_rows, n_priv, threads, p_cnt, s_cnt, totals, snap_cnt, snap_dram)
