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
def _count_dram(kinds, n, totals):
    """What reaches DRAM: fills (READ) and writebacks (the rest)."""
    for i in range(n):
        if kinds[i] == 0:
            totals[0] += 1
        else:
            totals[1] += 1


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
    max_len = 0
    for g in range(steps * threads):
        max_len = max(max_len, off[g + 1] - off[g])
    tmp_l = np.empty(max_len + 1, dtype=np.int64)
    tmp_k = np.empty(max_len + 1, dtype=np.uint8)
    pcap = (max_len + 1) * (n_priv + 1)
    priv_l = np.empty((threads, pcap), dtype=np.int64)
    priv_k = np.empty((threads, pcap), dtype=np.uint8)
    plen = np.zeros(threads, dtype=np.int64)
    mcap = pcap * threads
    merged_l = np.empty(mcap, dtype=np.int64)
    merged_k = np.empty(mcap, dtype=np.uint8)
    out_l = np.empty(mcap * (n_shared + 1) if n_shared > 0 else 1, dtype=np.int64)
    out_k = np.empty(mcap * (n_shared + 1) if n_shared > 0 else 1, dtype=np.uint8)
    n_scr = scr_lo.shape[0]
    s_mask = _masks(s_sets)
    for s in range(steps):
        for t in range(threads):
            g = s * threads + t
            a = off[g]
            b = off[g + 1]
            # scratchpad lines never reach a cache
            m = 0
            for i in range(a, b):
                x = lines[i]
                inside = False
                for r in range(n_scr):
                    if scr_lo[r] <= x < scr_hi[r]:
                        inside = True
                        break
                if inside:
                    totals[2] += 1
                else:
                    tmp_l[m] = x
                    tmp_k[m] = kinds[i]
                    m += 1
            if n_priv == 0:
                # element by element: a slice assignment compiles numba's shape-mismatch error
                # path, half of this kernel's compile time
                for i in range(m):
                    priv_l[t, i] = tmp_l[i]
                    priv_k[t, i] = tmp_k[i]
                plen[t] = m
            elif general is None:
                plen[t] = _run_lru_wb(tmp_l[:m], tmp_k[:m], p_sets[t], p_assoc[t], p_shift[t], _masks(p_sets[t]),
                                      p_tags[t], p_meta[t], p_dirty[t], p_width, p_clock[t], p_cnt[t], True,
                                      priv_l[t], priv_k[t])
            else:
                plen[t] = _run_flat(tmp_l[:m], tmp_k[:m], p_sets[t], p_assoc[t], p_shift[t], p_policy[t], p_wb[t],
                                    p_tags[t], p_meta[t], p_dirty[t], p_width, p_clock[t], p_rng[t], p_cnt[t],
                                    True, priv_l[t], priv_k[t])
        # round-robin merge in chunks (hierarchy.interleave)
        nm = 0
        pos = 0
        more = True
        while more:
            more = False
            for t in range(threads):
                if pos < plen[t]:
                    e = min(plen[t], pos + chunk)
                    for i in range(pos, e):
                        merged_l[nm] = priv_l[t, i]
                        merged_k[nm] = priv_k[t, i]
                        nm += 1
                    if e < plen[t]:
                        more = True
            pos += chunk
        if n_shared == 0:
            _count_dram(merged_k, nm, totals)
        elif general is None:
            no = _run_lru_wb(merged_l[:nm], merged_k[:nm], s_sets, s_assoc, s_shift, s_mask, s_tags, s_meta, s_dirty,
                             s_width, s_clock, s_cnt, True, out_l, out_k)
            _count_dram(out_k, no, totals)
        else:
            no = _run_flat(merged_l[:nm], merged_k[:nm], s_sets, s_assoc, s_shift, s_policy, s_wb, s_tags, s_meta,
                           s_dirty, s_width, s_clock, s_rng, s_cnt, True, out_l, out_k)
            _count_dram(out_k, no, totals)
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
