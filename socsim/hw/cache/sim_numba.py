"""Set-associative cache chain simulator, compiled with numba (the hot loop of cache modelling).

``run_chain`` pushes a line-granularity access stream through a chain of levels (L1 -> L2 -> ...)
and counts, per level, read/write hits and misses, writebacks and fills.  What leaves the last
level (fills and writebacks, i.e. traffic to the next shared level or DRAM) is appended to
``out_lines``/``out_kinds`` when ``emit`` is set, so private chains (per-core L1/L2) can feed a
shared chain (L3, SLC).  ``sim_ref.run_chain`` is the plain-Python twin; tests check they agree.
A chain whose levels are all write-back LRU (every cache in the specs) runs ``_run_lru_wb``
(:mod:`socsim.hw.cache.sim_lru_wb`), a specialisation with the same semantics; tests check it
against the twin on its own.

Semantics (identical in both):
* lookup by full line address in set ``line % sets``; a hit updates the replacement state;
* a miss picks the first invalid way, else a victim by policy (LRU: oldest use stamp; FIFO:
  oldest fill stamp; random: xorshift64 % assoc; tree-PLRU); a dirty victim is written back to
  the next level (as WRITE_FULL) before the line is fetched (READ) from it;
* WRITE_FULL misses allocate without fetching; write-through levels forward every store and do
  not allocate on a store miss.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from socsim.hw.cache.geometry import FILLS, RD_HIT, RD_MISS, WR_HIT, WR_MISS, WRITEBACKS
from socsim.hw.cache.sim_lru_wb import _run_lru_wb

_STACK = 64  # depth-first work list: each level pushes at most two accesses to the next


@nb.njit(cache=True, inline="always")
def _xorshift(rng):
    x = rng[0]
    x ^= (x << np.uint64(13)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    x ^= x >> np.uint64(7)
    x ^= (x << np.uint64(17)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    rng[0] = x
    return x


@nb.njit(cache=True, inline="always")
def _plru_touch(meta, base, assoc, way):
    bits = meta[base]
    node = 1
    half = assoc >> 1
    lo = 0
    while half >= 1:
        right = 1 if way >= lo + half else 0
        # point the node away from the way just used
        if right:
            bits &= ~(np.int64(1) << node)
            lo += half
        else:
            bits |= np.int64(1) << node
        node = 2 * node + right
        half >>= 1
    meta[base] = bits


@nb.njit(cache=True, inline="always")
def _plru_victim(meta, base, assoc):
    bits = meta[base]
    node = 1
    half = assoc >> 1
    way = 0
    while half >= 1:
        right = (bits >> node) & 1
        if right:
            way += half
        node = 2 * node + right
        half >>= 1
    return way


@nb.njit(cache=True, error_model="numpy", nogil=True)
def _run_flat(lines, kinds, sets, assoc, shift, policy, wb, tf, mf, df, width, clock, rng,
              cf, emit, out_lines, out_kinds):
    n_lev = sets.shape[0]
    st_lev = np.empty(_STACK, dtype=np.int64)
    st_line = np.empty(_STACK, dtype=np.int64)
    st_kind = np.empty(_STACK, dtype=np.int64)
    n_out = 0
    # power-of-two set counts index with a mask (the common case; modulo otherwise)
    mask = np.empty(n_lev, dtype=np.int64)
    for lev in range(n_lev):
        mask[lev] = sets[lev] - 1 if (sets[lev] & (sets[lev] - 1)) == 0 else -1
    # the common case gets the specialised kernel (same events, same order)
    lru_wb = True
    for lev in range(n_lev):
        if policy[lev] != 0 or wb[lev] == 0:
            lru_wb = False
    if lru_wb:
        return _run_lru_wb(lines, kinds, sets, assoc, shift, mask, tf, mf, df, width, clock, cf, emit,
                           out_lines, out_kinds)
    a0 = assoc[0]
    sh0 = shift[0]
    m0 = mask[0]
    p0 = policy[0]
    tags0 = tf
    meta0 = mf
    dirty0 = df
    wb0 = wb[0]
    for i in range(lines.shape[0]):
        # fast path: a hit in the first level touches nothing else
        addr = lines[i]
        kind = kinds[i]
        la = addr >> sh0
        s = (la & m0) if m0 >= 0 else la % sets[0]
        base = s * a0
        hit_way = -1
        inv = -1
        oldest = 0
        best = np.int64(0x7FFFFFFFFFFFFFFF)
        for w in range(a0):
            t = tags0[base + w]
            if t == la:
                hit_way = w
                break
            if t == -1:
                if inv < 0:
                    inv = w
            elif meta0[base + w] < best:
                best = meta0[base + w]
                oldest = w
        if hit_way >= 0 and (kind == 0 or wb0):
            if kind == 0:
                cf[RD_HIT] += 1
            else:
                cf[WR_HIT] += 1
                dirty0[base + hit_way] = 1
            if p0 == 0:
                clock[0] += 1
                meta0[base + hit_way] = clock[0]
            elif p0 == 3:
                _plru_touch(meta0, base, a0, hit_way)
            continue
        sp = 0
        if hit_way < 0 and (kind == 0 or wb0):
            # first-level miss handled here (victim, writeback, fill) without a second lookup
            is_write = kind != 0
            cf[WR_MISS if is_write else RD_MISS] += 1
            victim = inv
            if victim < 0:
                if p0 == 0 or p0 == 1:
                    victim = oldest
                elif p0 == 2:
                    victim = np.int64(_xorshift(rng) % np.uint64(a0))
                else:
                    victim = _plru_victim(meta0, base, a0)
            if kind != 2:
                cf[FILLS] += 1
                st_lev[sp] = 1
                st_line[sp] = addr
                st_kind[sp] = 0
                sp += 1
            old = tags0[base + victim]
            if old != -1 and dirty0[base + victim]:
                cf[WRITEBACKS] += 1
                st_lev[sp] = 1
                st_line[sp] = old << sh0
                st_kind[sp] = 2
                sp += 1
            tags0[base + victim] = la
            dirty0[base + victim] = 1 if is_write else 0
            if p0 == 0 or p0 == 1:
                clock[0] += 1
                meta0[base + victim] = clock[0]
            elif p0 == 3:
                _plru_touch(meta0, base, a0, victim)
        else:
            st_lev[0] = 0
            st_line[0] = addr
            st_kind[0] = kind
            sp = 1
        while sp > 0:
            sp -= 1
            lev = st_lev[sp]
            addr = st_line[sp]
            kind = st_kind[sp]
            if lev == n_lev:
                if emit:
                    out_lines[n_out] = addr
                    out_kinds[n_out] = kind
                n_out += 1
                continue
            la = addr >> shift[lev]
            a = assoc[lev]
            s = (la & mask[lev]) if mask[lev] >= 0 else la % sets[lev]
            base = s * a
            pol = policy[lev]
            hit_way = -1
            # one pass over the set: hit way, first invalid way, oldest stamp
            inv = -1
            oldest = 0
            best = np.int64(0x7FFFFFFFFFFFFFFF)
            for w in range(a):
                t = tf[lev * width + base + w]
                if t == la:
                    hit_way = w
                    break
                if t == -1:
                    if inv < 0:
                        inv = w
                elif mf[lev * width + base + w] < best:
                    best = mf[lev * width + base + w]
                    oldest = w
            is_write = kind != 0
            if hit_way >= 0:
                cf[lev * 6 + (WR_HIT if is_write else RD_HIT)] += 1
                if pol == 0:
                    clock[lev] += 1
                    mf[lev * width + base + hit_way] = clock[lev]
                elif pol == 3:
                    _plru_touch(mf, lev * width + base, a, hit_way)
                if is_write:
                    if wb[lev]:
                        df[lev * width + base + hit_way] = 1
                    else:
                        st_lev[sp] = lev + 1
                        st_line[sp] = addr
                        st_kind[sp] = kind
                        sp += 1
                continue
            cf[lev * 6 + (WR_MISS if is_write else RD_MISS)] += 1
            if is_write and not wb[lev]:
                # write-through, no-write-allocate: pass the store on
                st_lev[sp] = lev + 1
                st_line[sp] = addr
                st_kind[sp] = kind
                sp += 1
                continue
            victim = inv
            if victim < 0:
                if pol == 0 or pol == 1:
                    victim = oldest
                elif pol == 2:
                    victim = np.int64(_xorshift(rng) % np.uint64(a))
                else:
                    victim = _plru_victim(mf, lev * width + base, a)
            # the fill (pushed first, processed second) ...
            if kind != 2:
                cf[lev * 6 + (FILLS)] += 1
                st_lev[sp] = lev + 1
                st_line[sp] = addr
                st_kind[sp] = 0
                sp += 1
            # ... after the writeback of a dirty victim
            old = tf[lev * width + base + victim]
            if old != -1 and df[lev * width + base + victim]:
                cf[lev * 6 + (WRITEBACKS)] += 1
                st_lev[sp] = lev + 1
                st_line[sp] = old << shift[lev]
                st_kind[sp] = 2
                sp += 1
            tf[lev * width + base + victim] = la
            df[lev * width + base + victim] = 1 if (is_write and wb[lev]) else 0
            if pol == 0 or pol == 1:
                clock[lev] += 1
                mf[lev * width + base + victim] = clock[lev]
            elif pol == 3:
                _plru_touch(mf, lev * width + base, a, victim)
    return n_out


def run_chain(lines, kinds, sets, assoc, shift, policy, wb, tags, meta, dirty, clock, rng,
              counters, emit, out_lines, out_kinds):
    """Simulate ``lines``/``kinds`` through the chain; returns the number of emitted accesses.
    State arrays are (levels, width); the kernel works on their flat views."""
    width = tags.shape[1]
    return _run_flat(lines, kinds, sets, assoc, shift, policy, wb, tags.reshape(-1), meta.reshape(-1),
                     dirty.reshape(-1), width, clock, rng, counters.reshape(-1), emit, out_lines, out_kinds)


@nb.njit(cache=True)
def flush_dirty(lev, shift, tags, dirty, counters, emit, out_lines, out_kinds):
    """Write back every dirty line of level ``lev`` (a cache clean by address at the end of an
    op whose output leaves the unit: FastRPC cache maintenance, Hexagon ``dccleana``)."""
    n_out = 0
    for j in range(tags.shape[1]):
        if tags[lev, j] != -1 and dirty[lev, j]:
            counters[lev, WRITEBACKS] += 1
            dirty[lev, j] = 0
            if emit:
                out_lines[n_out] = tags[lev, j] << shift[lev]
                out_kinds[n_out] = 2
            n_out += 1
    return n_out
