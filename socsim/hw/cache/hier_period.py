"""``hier_numba.run_steps`` with exact skipping of periodic stretches (write-back LRU chains).

A GEMM step of an FC layer re-reads the same pack buffer for each of hundreds of weight blocks:
its stream is ``prefix, body(0), body(1), ..., suffix`` where ``body(j + 1)`` is ``body(j)`` with
the weight lines shifted by ``delta`` lines.  Once the caches settle, the whole machine (private
chains, pending private misses, round-robin merge, shared chain) repeats itself up to that shift.

The driver runs every step exactly as ``run_steps`` does, and at the end of each merge round
compares the machine with a snapshot taken ``p`` body periods earlier (A: the snapshot, B: now):

* every busy thread has consumed exactly ``p * per_iter`` more accesses and has as many private
  misses pending, those pending lines being A's shifted;
* at every level of every chain, each slot holds A's line shifted (a line inside the shifted
  region ``[wlo, whi)`` moves by ``p * delta`` lines, any other line stays), the same dirty bit,
  and its LRU stamp moved by exactly that level's clock advance ``D`` since A (empty slots empty);
* ``p * delta`` is a multiple of every level's sets (x line ratio): a shifted line falls in the
  same set, and it stays inside the region (the shift is one-to-one).

Then the machine at B is a translate ``T`` of the machine at A: every tag relabelled, every stamp
and clock moved by a constant per level (LRU compares stamps only within a set, so a constant
moves nothing).  The transition of the machine commutes with ``T`` when the input is relabelled
alike, so if the input after B is A's input relabelled for ``M`` more periods (checked access by
access, a cheap compare against the cache walk it replaces), the machine after those periods is
``T^M`` of the machine at B, and every counter has grown by ``M`` times its growth from A to B.
The driver applies exactly that and goes on simulating the rest of the step: the counters,
snapshots and final state equal those of ``run_steps`` (tests/hw/test_cache_period.py checks it
on random strided streams and on the zoo's FC steps).  When any condition fails nothing is
skipped: the result is ``run_steps``' own.

Only for chains whose levels are all write-back LRU (every CPU cache in the specs) and no
scratchpad (the CPU); :meth:`hierarchy.Hierarchy.run_steps` picks it when given a period hint.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from socsim.hw.cache.hier_numba import _count_dram, _masks, _merge_chunk, _row_masks, _snapshot
from socsim.hw.cache.sim_lru_wb import _run_lru_wb


@nb.njit(cache=True, inline="always")
def _rel(x, lo, hi, d):
    """A line relabelled by the period's shift: inside [lo, hi) it moves by ``d``, else stays;
    -2 when it would leave the region (the shift would not be one-to-one)."""
    if lo <= x < hi:
        y = x + d
        return y if y < hi else -2
    return x


@nb.njit(cache=True)
def _match_chain(tags, meta, dirty, clock, a_tags, a_meta, a_dirty, a_clock, sets, assoc, shift, width,
                 wlo, whi, d, sig):
    """Whether a chain's state is its snapshot's translate up to the order of ways within each
    set (module docstring); ``sig[i]`` then is the snapshot's slot whose translate slot ``i``
    holds (-1: empty, in both)."""
    for lev in range(sets.shape[0]):
        sh = shift[lev]
        lo, hi, dl = wlo >> sh, whi >> sh, d >> sh
        dc = clock[lev] - a_clock[lev]
        a = assoc[lev]
        for st in range(lev * width, lev * width + sets[lev] * a, a):
            for i in range(st, st + a):
                x = tags[i]
                sig[i] = -1
                if x == -1:
                    if a_tags[i] != -1:
                        return False          # empty ways must stay where they are
                    continue
                if a_tags[i] == -1:
                    return False
                for j in range(st, st + a):
                    if a_tags[j] != -1 and _rel(a_tags[j], lo, hi, dl) == x:
                        sig[i] = j
                        break
                j = sig[i]
                if j < 0 or dirty[i] != a_dirty[j] or meta[i] - a_meta[j] != dc:
                    return False
    return True


@nb.njit(cache=True)
def _shift_chain(tags, meta, dirty, clock, a_clock, sets, assoc, shift, width, wlo, whi, d, m, sig):
    """Apply ``(sigma T)^m`` to a chain: slot ``i`` takes the translate ``T^m`` of the line that
    ``sigma^m`` leads it to (tags in the region moved by ``m * d``, stamps and clocks by ``m``
    times the clock advance since the snapshot)."""
    for lev in range(sets.shape[0]):
        sh = shift[lev]
        lo, hi, dl = wlo >> sh, whi >> sh, d >> sh
        dc = clock[lev] - a_clock[lev]
        a = assoc[lev]
        t0 = np.empty(a, dtype=np.int64)
        m0 = np.empty(a, dtype=np.int64)
        d0 = np.empty(a, dtype=np.uint8)
        for st in range(lev * width, lev * width + sets[lev] * a, a):
            for w in range(a):
                t0[w] = tags[st + w]
                m0[w] = meta[st + w]
                d0[w] = dirty[st + w]
            for w in range(a):
                i = st + w
                if t0[w] == -1:
                    continue
                c = 1                                   # the length of slot i's cycle under sigma
                j = sig[i]
                while j != i:
                    j = sig[j]
                    c += 1
                j = i
                for _ in range(m % c):
                    j = sig[j]
                x = t0[j - st]
                tags[i] = x + m * dl if lo <= x < hi else x
                meta[i] = m0[j - st] + m * dc
                dirty[i] = d0[j - st]
        clock[lev] += m * dc


@nb.njit(cache=True)
def _room(tags, sets, assoc, shift, width, wlo, whi, d):
    """How many more shifts by ``d`` the region's lines in a chain can take inside the region."""
    best = np.int64(1) << 62
    for lev in range(sets.shape[0]):
        sh = shift[lev]
        lo, hi, dl = wlo >> sh, whi >> sh, d >> sh
        base = lev * width
        for i in range(base, base + sets[lev] * assoc[lev]):
            x = tags[i]
            if lo <= x < hi:
                best = min(best, (hi - 1 - x) // dl)
    return best


@nb.njit(cache=True)
def run_steps_periodic(lines, kinds, off, threads, steps,
                       p_sets, p_assoc, p_shift, p_tags, p_meta, p_dirty, p_width, p_clock, p_cnt,
                       s_sets, s_assoc, s_shift, s_tags, s_meta, s_dirty, s_width, s_clock, s_cnt,
                       chunk, snap_cnt, snap_dram, totals, wlo, whi, delta, per_iter, p0):
    """``hier_numba.run_steps`` for write-back LRU chains without a scratchpad, skipping whole
    periods when the machine repeats (module docstring).  ``delta``: lines the region
    ``[wlo, whi)`` moves per body iteration of ``per_iter`` accesses; ``p0``: the fewest
    iterations whose shift is a multiple of every level's sets.  Returns the accesses skipped."""
    n_priv = p_sets.shape[1]
    n_shared = s_sets.shape[0]
    n_rows = n_priv + n_shared
    s_mask = _masks(s_sets)
    piece = 16 * chunk
    per_in = n_priv + 1
    pcap = piece * per_in + chunk
    priv_l = np.empty((threads, pcap), dtype=np.int64)
    priv_k = np.empty((threads, pcap), dtype=np.uint8)
    plen = np.zeros(threads, dtype=np.int64)
    pr = np.zeros(threads, dtype=np.int64)
    p_mask = _row_masks(p_sets)
    nxt = np.zeros(threads, dtype=np.int64)
    end = np.zeros(threads, dtype=np.int64)
    start = np.zeros(threads, dtype=np.int64)
    mcap = chunk * threads
    merged_l = np.empty(mcap, dtype=np.int64)
    merged_k = np.empty(mcap, dtype=np.uint8)
    ocap = mcap * (n_shared + 1) if n_shared > 0 else 1
    out_l = np.empty(ocap, dtype=np.int64)
    out_k = np.empty(ocap, dtype=np.uint8)
    # the snapshot A
    a_p_tags = p_tags.copy()
    a_p_meta = p_meta.copy()
    a_p_dirty = p_dirty.copy()
    a_p_clock = p_clock.copy()
    a_p_cnt = p_cnt.copy()
    a_s_tags = s_tags.copy()
    a_s_meta = s_meta.copy()
    a_s_dirty = s_dirty.copy()
    a_s_clock = s_clock.copy()
    a_s_cnt = s_cnt.copy()
    a_tot = totals.copy()
    a_nxt = np.zeros(threads, dtype=np.int64)
    p_sig = np.empty_like(p_tags)
    s_sig = np.empty_like(s_tags)
    a_pend = np.zeros(threads, dtype=np.int64)
    a_pl = np.empty((threads, pcap), dtype=np.int64)
    a_pk = np.empty((threads, pcap), dtype=np.uint8)
    period = p0 * per_iter
    skipped = 0
    for s in range(steps):
        for t in range(threads):
            g = s * threads + t
            nxt[t] = off[g]
            start[t] = off[g]
            end[t] = off[g + 1]
            plen[t] = 0
            pr[t] = 0
        # periods are looked for only in steps that have room for a few
        longest = 0
        for t in range(threads):
            longest = max(longest, end[t] - start[t])
        armed = delta > 0 and period > 0 and longest > 4 * period
        have_a = False
        wait = 4
        more = True
        while more:
            more = False
            nm = 0
            for t in range(threads):
                while plen[t] - pr[t] < chunk and nxt[t] < end[t]:
                    if pr[t] > 0:
                        for i in range(pr[t], plen[t]):
                            priv_l[t, i - pr[t]] = priv_l[t, i]
                            priv_k[t, i - pr[t]] = priv_k[t, i]
                        plen[t] -= pr[t]
                        pr[t] = 0
                    a0 = nxt[t]
                    b = min(end[t], a0 + piece)
                    if armed:
                        # no feed crosses a multiple of the period: the feed (which changes no
                        # event, only how far ahead a private chain runs) then repeats with the
                        # stream, and the rounds at which the machine can repeat come round
                        b = min(b, start[t] + ((a0 - start[t]) // period + 1) * period)
                    nxt[t] = b
                    q = plen[t]
                    if n_priv == 0:
                        for i in range(a0, b):
                            priv_l[t, q + i - a0] = lines[i]
                            priv_k[t, q + i - a0] = kinds[i]
                        plen[t] = q + b - a0
                    else:
                        plen[t] = q + _run_lru_wb(lines[a0:b], kinds[a0:b], p_sets[t], p_assoc[t], p_shift[t],
                                                  p_mask[t], p_tags[t], p_meta[t], p_dirty[t], p_width,
                                                  p_clock[t], p_cnt[t], True, priv_l[t, q:], priv_k[t, q:])
                nm, e = _merge_chunk(priv_l, priv_k, t, pr, plen, merged_l, merged_k, nm, chunk)
                if plen[t] > e or nxt[t] < end[t]:
                    more = True
            if n_shared == 0:
                _count_dram(merged_k, nm, totals)
            else:
                no = _run_lru_wb(merged_l[:nm], merged_k[:nm], s_sets, s_assoc, s_shift, s_mask, s_tags, s_meta,
                                 s_dirty, s_width, s_clock, s_cnt, True, out_l, out_k)
                _count_dram(out_k, no, totals)
            if not armed or not more:
                continue
            # ---- the end of a round: is the machine a translate of snapshot A?
            p = np.int64(0)
            if have_a:
                p = -1
                for t in range(threads):
                    if end[t] == start[t]:
                        continue                      # an idle thread: untouched, not compared
                    dn = nxt[t] - a_nxt[t]
                    if dn <= 0 or dn % period != 0 or plen[t] - pr[t] != a_pend[t]:
                        p = 0
                        break
                    if p == -1:
                        p = dn // per_iter
                    elif p != dn // per_iter:
                        p = 0
                        break
                if p > 0:
                    d = p * delta
                    same = True
                    for t in range(threads):
                        if end[t] == start[t]:
                            continue
                        for i in range(a_pend[t]):
                            if (priv_l[t, pr[t] + i] != _rel(a_pl[t, i], wlo, whi, d)
                                    or priv_k[t, pr[t] + i] != a_pk[t, i]):
                                same = False
                                break
                        if not same or not _match_chain(p_tags[t], p_meta[t], p_dirty[t], p_clock[t], a_p_tags[t],
                                                        a_p_meta[t], a_p_dirty[t], a_p_clock[t], p_sets[t],
                                                        p_assoc[t], p_shift[t], p_width, wlo, whi, d, p_sig[t]):
                            same = False
                            break
                    if same and n_shared > 0:
                        same = _match_chain(s_tags, s_meta, s_dirty, s_clock, a_s_tags, a_s_meta, a_s_dirty,
                                            a_s_clock, s_sets, s_assoc, s_shift, s_width, wlo, whi, d, s_sig)
                    if same:
                        # how many more periods the input repeats (checked), leaving the feed unclipped
                        span = p * per_iter
                        mm = np.int64(1) << 62
                        for t in range(threads):
                            if end[t] == start[t]:
                                continue
                            mm = min(mm, (end[t] - piece - nxt[t]) // span)
                        for t in range(threads):
                            if end[t] == start[t] or mm <= 0:
                                continue
                            lim = a_nxt[t] + mm * span
                            x = a_nxt[t]
                            while x < lim:
                                if lines[x + span] != _rel(lines[x], wlo, whi, d) or kinds[x + span] != kinds[x]:
                                    break
                                x += 1
                            mm = min(mm, (x - a_nxt[t]) // span)
                        # the region's lines must stay inside it (the shift stays one-to-one)
                        for t in range(threads):
                            if end[t] == start[t] or mm <= 0:
                                continue
                            mm = min(mm, _room(p_tags[t], p_sets[t], p_assoc[t], p_shift[t], p_width, wlo, whi, d))
                            for i in range(pr[t], plen[t]):
                                if wlo <= priv_l[t, i] < whi:
                                    mm = min(mm, (whi - 1 - priv_l[t, i]) // d)
                        if n_shared > 0 and mm > 0:
                            mm = min(mm, _room(s_tags, s_sets, s_assoc, s_shift, s_width, wlo, whi, d))
                        if mm > 0:
                            for t in range(threads):
                                if end[t] == start[t]:
                                    continue
                                _shift_chain(p_tags[t], p_meta[t], p_dirty[t], p_clock[t], a_p_clock[t], p_sets[t],
                                             p_assoc[t], p_shift[t], p_width, wlo, whi, d, mm, p_sig[t])
                                for c in range(p_cnt.shape[1]):
                                    p_cnt[t, c] += mm * (p_cnt[t, c] - a_p_cnt[t, c])
                                for i in range(pr[t], plen[t]):
                                    if wlo <= priv_l[t, i] < whi:
                                        priv_l[t, i] += mm * d
                                nxt[t] += mm * span
                            if n_shared > 0:
                                _shift_chain(s_tags, s_meta, s_dirty, s_clock, a_s_clock, s_sets, s_assoc, s_shift,
                                             s_width, wlo, whi, d, mm, s_sig)
                                for c in range(s_cnt.shape[0]):
                                    s_cnt[c] += mm * (s_cnt[c] - a_s_cnt[c])
                            totals[0] += mm * (totals[0] - a_tot[0])
                            totals[1] += mm * (totals[1] - a_tot[1])
                            for t in range(threads):
                                if end[t] != start[t]:
                                    skipped += mm * span
                        armed = False                 # one skip per step: the rest is simulated
                        continue
                    # not a translate (yet): B becomes the new snapshot
                elif nxt_gap(nxt, a_nxt, start, end, threads) <= wait * period:
                    # not a comparable round: keep A.  The pending misses come round with the
                    # stream after at most ``chunk`` periods (when a period's misses are a
                    # multiple of the chunk, after one); an A taken before the stream settled
                    # may never come round, so A is dropped after ``wait`` periods, and each
                    # drop waits twice as long, up to ``chunk`` periods
                    continue
                else:
                    wait = min(2 * wait, chunk)
            # take the snapshot A here
            have_a = True
            a_p_tags[:] = p_tags
            a_p_meta[:] = p_meta
            a_p_dirty[:] = p_dirty
            a_p_clock[:] = p_clock
            a_p_cnt[:] = p_cnt
            a_s_tags[:] = s_tags
            a_s_meta[:] = s_meta
            a_s_dirty[:] = s_dirty
            a_s_clock[:] = s_clock
            a_s_cnt[:] = s_cnt
            a_tot[:] = totals
            for t in range(threads):
                a_nxt[t] = nxt[t]
                a_pend[t] = plen[t] - pr[t]
                for i in range(plen[t] - pr[t]):
                    a_pl[t, i] = priv_l[t, pr[t] + i]
                    a_pk[t, i] = priv_k[t, pr[t] + i]
        _snapshot(s, n_rows, n_priv, threads, p_cnt, s_cnt, totals, snap_cnt, snap_dram)
    return skipped


@nb.njit(cache=True, inline="always")
def nxt_gap(nxt, a_nxt, start, end, threads):
    """Accesses the first busy thread has consumed since the snapshot."""
    for t in range(threads):
        if end[t] != start[t]:
            return nxt[t] - a_nxt[t]
    return 0
