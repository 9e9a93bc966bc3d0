"""The write-back LRU fast path of :mod:`socsim.hw.cache.sim_numba` (numba).

Every CPU and DSP cache in the specs is write-back LRU, so ``sim_numba._run_flat`` hands a chain
whose levels all are to :func:`_run_lru_wb`, a specialisation with the same semantics and the same
order of events as the general work list.  Its plain-Python reference is ``sim_ref.run_chain``
(the twin of the general kernel); tests check the fast path against it on its own
(tests/hw/test_cache_sim.py, ``test_lru_write_back_fast_path_equals_reference``).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from socsim.hw.cache.geometry import FILLS, RD_HIT, RD_MISS, WR_HIT, WR_MISS, WRITEBACKS


@nb.njit(cache=True, error_model="numpy", nogil=True)
def _run_lru_wb(lines, kinds, sets, assoc, shift, mask, tf, mf, df, width, clock, cf, emit, out_lines, out_kinds):
    """``_run_flat`` specialised to a chain of write-back LRU levels (every CPU and DSP cache
    in the specs).  Same order of events as the general work list: a miss's dirty victim is
    written back down the chain (a linear chain of WRITE_FULL accesses) before the line is
    fetched from the next level; the fetch then walks on down until it hits.

    State is indexed with unsigned integers: numba then emits no negative-index wraparound
    code, which in this register-starved loop was a quarter of the time."""
    n_lev = sets.shape[0]
    n_out = 0
    a0 = assoc[0]
    sh0 = shift[0]
    m0 = mask[0]
    s0 = sets[0]
    c0 = clock[0]
    # L1 counters live in registers until the end
    r_hit = w_hit = r_miss = w_miss = wbacks = fills = 0
    for i in range(lines.shape[0]):
        addr = lines[i]
        kind = kinds[i]
        la = addr >> sh0
        base = np.uint64(((la & m0) if m0 >= 0 else la % s0) * a0)
        found = False
        j = base
        v = -1
        bw = 0
        best = np.int64(0x7FFFFFFFFFFFFFFF)
        for w in range(a0):
            x = base + np.uint64(w)
            t = tf[x]
            st = mf[x]
            if t == la:
                j = x
                found = True
                break
            if t == -1:
                if v < 0:
                    v = w
            elif st < best:
                best = st
                bw = w
        c0 += 1
        if found:
            mf[j] = c0
            w_hit += kind != 0
            r_hit += kind == 0
            if kind != 0:
                df[j] = 1
            continue
        w_miss += kind != 0
        r_miss += kind == 0
        j = base + np.uint64(bw if v < 0 else v)
        old = tf[j]
        dirty = old != -1 and df[j] != 0
        tf[j] = la
        df[j] = 1 if kind != 0 else 0
        mf[j] = c0
        fills += kind != 2
        # below L1: a dirty victim's writeback walks down first (a chain of WRITE_FULL accesses
        # that never fetches), then the fetch of ``addr`` walks down until it hits
        fill_lev = 1 if kind != 2 else -1
        if dirty:
            wbacks += 1
            cur = old << sh0
            ck = 2
        elif fill_lev > 0:
            cur = addr
            ck = 0
            fill_lev = -1
        else:
            continue
        lev = 1
        while True:
            done = False
            if lev == n_lev:
                if emit:
                    out_lines[n_out] = cur
                    out_kinds[n_out] = ck
                n_out += 1
                done = True
            else:
                ul = np.uint64(lev)
                a = assoc[ul]
                sh = shift[ul]
                la = cur >> sh
                m = mask[ul]
                off = np.uint64(lev * width + ((la & m) if m >= 0 else la % sets[ul]) * a)
                row = np.uint64(lev * 6)
                found = False
                j = off
                v = -1
                bw = 0
                best = np.int64(0x7FFFFFFFFFFFFFFF)
                for w in range(a):
                    x = off + np.uint64(w)
                    t = tf[x]
                    st = mf[x]
                    if t == la:
                        j = x
                        found = True
                        break
                    if t == -1:
                        if v < 0:
                            v = w
                    elif st < best:
                        best = st
                        bw = w
                c = clock[ul] + 1
                clock[ul] = c
                if found:
                    mf[j] = c
                    if ck != 0:
                        cf[row + np.uint64(WR_HIT)] += 1
                        df[j] = 1
                    else:
                        cf[row + np.uint64(RD_HIT)] += 1
                    done = True
                else:
                    j = off + np.uint64(bw if v < 0 else v)
                    old = tf[j]
                    dirty = old != -1 and df[j] != 0
                    tf[j] = la
                    mf[j] = c
                    if ck != 0:
                        cf[row + np.uint64(WR_MISS)] += 1
                        df[j] = 1
                    else:
                        cf[row + np.uint64(RD_MISS)] += 1
                        cf[row + np.uint64(FILLS)] += 1
                        df[j] = 0
                    lev += 1
                    if dirty:
                        cf[row + np.uint64(WRITEBACKS)] += 1
                        if ck == 0:
                            fill_lev = lev
                        cur = old << sh
                        ck = 2
                    elif ck == 2:
                        done = True
            if done:
                if fill_lev < 0:
                    break
                lev = fill_lev
                cur = addr
                ck = 0
                fill_lev = -1
    clock[0] = c0
    cf[RD_HIT] += r_hit
    cf[WR_HIT] += w_hit
    cf[RD_MISS] += r_miss
    cf[WR_MISS] += w_miss
    cf[WRITEBACKS] += wbacks
    cf[FILLS] += fills
    return n_out
