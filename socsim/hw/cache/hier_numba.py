"""Compiled driver of a :class:`hierarchy.Hierarchy` over many outer-loop steps at once.

``run_steps`` does, for every step, what ``Hierarchy.run`` (its plain-Python twin) does for one:
strip the scratchpad's lines from each thread's stream, push each through that thread's private
chain, merge the private miss streams round-robin in ``chunk``-access pieces (concurrent threads),
push the merge through the shared chain and count what reaches DRAM (fills vs writebacks).  After
every step it snapshots the counters, which is what the sampler extrapolates from.  One call per
op replaces thousands of Python-level calls (tests/hw/test_cache_sim.py checks the two agree).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from socsim.hw.cache.sim_lru_wb import _run_lru_wb
from socsim.hw.cache.sim_numba import _run_flat


@nb.njit(cache=True, inline="always")
def _masks(sets):
    """Per level: sets - 1 for a power-of-two set count (index by mask), else -1 (modulo)."""
    mask = np.empty_like(sets)
    for i in range(sets.shape[0]):
        mask[i] = sets[i] - 1 if (sets[i] & (sets[i] - 1)) == 0 else -1
    return mask


@nb.njit(cache=True, inline="always")
def _row_masks(sets):
    """:func:`_masks` of every row (thread) of a 2-D ``sets``, element by element: assigning a
    row at once (``mask[t] = _masks(sets[t])``) compiled numba's shape-mismatch error path, with
    its string formatting, into ``run_steps`` (2.4 of the first run's CPU seconds,
    docs/performance.md, First run)."""
    mask = np.empty_like(sets)
    for t in range(sets.shape[0]):
        for i in range(sets.shape[1]):
            mask[t, i] = sets[t, i] - 1 if (sets[t, i] & (sets[t, i] - 1)) == 0 else -1
    return mask


@nb.njit(cache=True, inline="always")
def _count_dram(kinds, n, totals):
    """What reaches DRAM: fills (READ) and writebacks (the rest)."""
    for i in range(n):
        if kinds[i] == 0:
            totals[0] += 1
        else:
            totals[1] += 1


@nb.njit(cache=True, inline="always")
def _merge_chunk(priv_l, priv_k, t, pr, plen, merged_l, merged_k, nm, chunk):
    """Thread ``t``'s next chunk of private misses joins the merge (hierarchy.interleave): copies
    them after ``nm`` merged accesses, advances ``pr[t]``; returns the new count and the chunk's
    end."""
    e = min(plen[t], pr[t] + chunk)
    for i in range(pr[t], e):
        merged_l[nm] = priv_l[t, i]
        merged_k[nm] = priv_k[t, i]
        nm += 1
    pr[t] = e
    return nm, e


@nb.njit(cache=True, inline="always")
def _snapshot(s, n_rows, n_priv, threads, p_cnt, s_cnt, totals, snap_cnt, snap_dram):
    """Step ``s``'s snapshot: each level's counters (private levels summed over the threads) and
    the cumulative DRAM fills and writebacks."""
    for lev in range(n_rows):
        for c in range(6):
            v = 0
            if lev < n_priv:
                for t in range(threads):
                    v += p_cnt[t, lev * 6 + c]
            else:
                v = s_cnt[(lev - n_priv) * 6 + c]
            snap_cnt[s, lev, c] = v
    snap_dram[s, 0] = totals[0]
    snap_dram[s, 1] = totals[1]


@nb.njit(cache=True)
def run_steps(lines, kinds, off, threads, steps, scr_lo, scr_hi,
              p_sets, p_assoc, p_shift, p_policy, p_wb, p_tags, p_meta, p_dirty, p_width, p_clock, p_rng, p_cnt,
              s_sets, s_assoc, s_shift, s_policy, s_wb, s_tags, s_meta, s_dirty, s_width, s_clock, s_rng, s_cnt,
              chunk, snap_cnt, snap_dram, totals, general):
    """Run ``steps`` steps of ``threads`` groups each (``off`` as from streams_numba.generate).
    ``totals`` = [dram fills, dram writebacks, scratch accesses], updated in place.

    ``general`` is None when every level of both chains is write-back LRU (every cache in the
    specs): the chains then run ``_run_lru_wb`` directly, which is what ``_run_flat`` hands them
    to, and numba prunes the other branch for the None signature, so a run never compiles the
    general policies' path (a third of this kernel's compile time).  Any other value takes
    ``_run_flat`` (every policy)."""
    n_priv = p_sets.shape[1]
    n_shared = s_sets.shape[0]
    n_rows = n_priv + n_shared
    n_scr = scr_lo.shape[0]
    s_mask = _masks(s_sets)
    # Streamed in pieces: each thread's private chain is fed ``piece`` accesses at a time, only
    # as far as the round-robin merge needs its misses, and each merged round goes through the
    # shared chain at once.  The chains keep their state between calls, so the events are
    # those of feeding whole steps (tests/hw/test_cache_sim.py checks against the per-step
    # twin), and every buffer stays a few KB instead of the step's whole miss streams (an FC
    # layer's step is ~12 M accesses: gigabytes of buffers, page faults and memory traffic).
    piece = 16 * chunk                  # accesses fed per call: few calls, buffers still ~30 KB
    per_in = n_priv + 1                 # most a private chain emits per access
    pcap = piece * per_in + chunk
    tmp_l = np.empty(piece, dtype=np.int64)
    tmp_k = np.empty(piece, dtype=np.uint8)
    priv_l = np.empty((threads, pcap), dtype=np.int64)
    priv_k = np.empty((threads, pcap), dtype=np.uint8)
    plen = np.zeros(threads, dtype=np.int64)      # private misses per thread: pending ones are pr:plen
    pr = np.zeros(threads, dtype=np.int64)
    p_mask = _row_masks(p_sets)
    nxt = np.zeros(threads, dtype=np.int64)       # next input access per thread
    end = np.zeros(threads, dtype=np.int64)
    mcap = chunk * threads
    merged_l = np.empty(mcap, dtype=np.int64)
    merged_k = np.empty(mcap, dtype=np.uint8)
    ocap = mcap * (n_shared + 1) if n_shared > 0 else 1
    out_l = np.empty(ocap, dtype=np.int64)
    out_k = np.empty(ocap, dtype=np.uint8)
    for s in range(steps):
        for t in range(threads):
            g = s * threads + t
            nxt[t] = off[g]
            end[t] = off[g + 1]
            plen[t] = 0
            pr[t] = 0
        more = True
        while more:
            more = False
            nm = 0
            for t in range(threads):
                # feed thread t until it has a chunk of misses pending or its stream is done
                while plen[t] - pr[t] < chunk and nxt[t] < end[t]:
                    if pr[t] > 0:                # the pending misses move to the front first
                        for i in range(pr[t], plen[t]):
                            priv_l[t, i - pr[t]] = priv_l[t, i]
                            priv_k[t, i - pr[t]] = priv_k[t, i]
                        plen[t] -= pr[t]
                        pr[t] = 0
                    b = min(end[t], nxt[t] + piece)
                    m = 0
                    for i in range(nxt[t], b):
                        x = lines[i]
                        inside = False
                        for r in range(n_scr):       # scratchpad lines never reach a cache
                            if scr_lo[r] <= x < scr_hi[r]:
                                inside = True
                                break
                        if inside:
                            totals[2] += 1
                        else:
                            tmp_l[m] = x
                            tmp_k[m] = kinds[i]
                            m += 1
                    nxt[t] = b
                    q = plen[t]
                    if n_priv == 0:
                        for i in range(m):
                            priv_l[t, q + i] = tmp_l[i]
                            priv_k[t, q + i] = tmp_k[i]
                        plen[t] = q + m
                    elif general is None:
                        plen[t] = q + _run_lru_wb(tmp_l[:m], tmp_k[:m], p_sets[t], p_assoc[t], p_shift[t],
                                                  p_mask[t], p_tags[t], p_meta[t], p_dirty[t], p_width,
                                                  p_clock[t], p_cnt[t], True, priv_l[t, q:], priv_k[t, q:])
                    else:
                        plen[t] = q + _run_flat(tmp_l[:m], tmp_k[:m], p_sets[t], p_assoc[t], p_shift[t], p_policy[t],
                                                p_wb[t], p_tags[t], p_meta[t], p_dirty[t], p_width, p_clock[t],
                                                p_rng[t], p_cnt[t], True, priv_l[t, q:], priv_k[t, q:])
                # its next chunk of misses joins the merge (hierarchy.interleave)
                nm, e = _merge_chunk(priv_l, priv_k, t, pr, plen, merged_l, merged_k, nm, chunk)
                if plen[t] > e or nxt[t] < end[t]:
                    more = True
            if n_shared == 0:
                _count_dram(merged_k, nm, totals)
            elif general is None:
                no = _run_lru_wb(merged_l[:nm], merged_k[:nm], s_sets, s_assoc, s_shift, s_mask, s_tags, s_meta,
                                 s_dirty, s_width, s_clock, s_cnt, True, out_l, out_k)
                _count_dram(out_k, no, totals)
            else:
                no = _run_flat(merged_l[:nm], merged_k[:nm], s_sets, s_assoc, s_shift, s_policy, s_wb, s_tags,
                               s_meta, s_dirty, s_width, s_clock, s_rng, s_cnt, True, out_l, out_k)
                _count_dram(out_k, no, totals)
        _snapshot(s, n_rows, n_priv, threads, p_cnt, s_cnt, totals, snap_cnt, snap_dram)
