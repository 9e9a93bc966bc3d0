"""The element-wise part of a batch's accounting in one compiled call (socsim.engine.accounting).

A part of a batch is cut at the sampling boundaries (and, near a trip, at the governor's polls)
into pieces; each piece's end gets the template's cumulative dynamic energy, interpolated
within the template's segment, and each piece its length and its rail energies (dynamic plus
static).  In numpy that is some thirty calls on arrays of a few elements per batch, most of the
engine's per-batch cost; here it is one.  Every value is the same IEEE operation, in the same
order, as the numpy expressions it replaces (no fast-math, no contraction into fused
multiply-adds), so the results are bit for bit numpy's: :func:`pieces_ref` is that numpy code,
and tests/engine/test_pieces_kernel.py compares the two with hypothesis.  Reductions and matrix
products (numpy's pairwise sums, BLAS) stay in numpy, in the caller.
"""
from __future__ import annotations

import numpy as np
from numba import njit


def pieces_ref(offs: np.ndarray, a: float, edges: np.ndarray, cum_dyn: np.ndarray, duration: float,
               cum0: np.ndarray, static_mw: np.ndarray) -> tuple[np.ndarray, ...]:
    """The numpy reference (``BatchTemplate.dyn_energy_until`` and ``Accounting._pieces`` as
    they were): (cum, dts, piece_j, safe) for piece ends ``offs`` (part-relative, from offset
    ``a`` of the template)."""
    x = offs + a if a > 0.0 else offs
    o = np.minimum(np.maximum(np.asarray(x, float), 0.0), duration)
    i = np.minimum(np.maximum(np.searchsorted(edges, o, side="right") - 1, 0), len(edges) - 2)
    span = edges[i + 1] - edges[i]
    w = np.where(span > 0, (o - edges[i]) / np.where(span > 0, span, 1.0), 0.0)
    cum = cum_dyn[i] + w[:, None] * (cum_dyn[i + 1] - cum_dyn[i])
    dts = np.empty_like(offs)
    dts[0] = offs[0] - 0.0
    dts[1:] = offs[1:] - offs[:-1]
    d = np.empty_like(cum)
    d[0] = cum[0] - cum0
    d[1:] = cum[1:] - cum[:-1]
    piece_j = d + np.outer(dts, static_mw * 1e-3)
    return cum, dts, piece_j, np.where(dts > 0, dts, 1.0)


@njit(cache=True, fastmath=False, inline="always")
def _max(v: float, m: float) -> float:
    """``np.maximum(v, m)``: NaN propagates; on a tie the second operand (so the sign of a zero
    is ``m``'s, as numpy's SIMD maximum gives it)."""
    return v if (v > m or v != v) else m


@njit(cache=True, fastmath=False, inline="always")
def _min(v: float, m: float) -> float:
    """``np.minimum(v, m)``, likewise."""
    return v if (v < m or v != v) else m


@njit(cache=True, fastmath=False)
def sample_offsets(t0: float, next_s: float, sample_s: float, n_grid: int, dur: float) -> tuple[np.ndarray, np.ndarray]:
    """The sampling boundaries in a part (``next_s + sample_s * k``, k < n_grid) and the part's
    piece ends (part-relative, the last at ``dur``), clipped to [0, dur]."""
    grid = np.empty(n_grid)
    offs = np.empty(n_grid + 1)
    for k in range(n_grid):
        g = next_s + sample_s * float(k)
        grid[k] = g
        offs[k] = g - t0
    offs[n_grid] = dur
    for k in range(n_grid + 1):
        offs[k] = _min(_max(offs[k], 0.0), dur)
    return grid, offs


@njit(cache=True, fastmath=False)
def pieces(offs: np.ndarray, a: float, edges: np.ndarray, cum_dyn: np.ndarray, duration: float,
           cum0: np.ndarray, static_mw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`pieces_ref`, compiled (``edges`` at least two long)."""
    n = offs.shape[0]
    r = cum_dyn.shape[1]
    ne = edges.shape[0]
    cum = np.empty((n, r))
    dts = np.empty(n)
    piece_j = np.empty((n, r))
    safe = np.empty(n)
    s_j = np.empty(r)
    for j in range(r):
        s_j[j] = static_mw[j] * 1e-3
    prev = 0.0
    for k in range(n):
        x = offs[k] + a if a > 0.0 else offs[k]
        o = _min(_max(x, 0.0), duration)
        # searchsorted(edges, o, side="right") - 1, clipped to [0, ne - 2]
        lo, hi = 0, ne
        while lo < hi:
            mid = (lo + hi) >> 1
            if edges[mid] <= o:
                lo = mid + 1
            else:
                hi = mid
        i = lo - 1
        if i < 0:
            i = 0
        if i > ne - 2:
            i = ne - 2
        span = edges[i + 1] - edges[i]
        w = (o - edges[i]) / span if span > 0 else 0.0
        dt = offs[k] - prev
        prev = offs[k]
        dts[k] = dt
        safe[k] = dt if dt > 0 else 1.0
        for j in range(r):
            c = cum_dyn[i, j] + w * (cum_dyn[i + 1, j] - cum_dyn[i, j])
            cum[k, j] = c
            base = cum0[j] if k == 0 else cum[k - 1, j]
            piece_j[k, j] = (c - base) + dt * s_j[j]
    return cum, dts, piece_j, safe


def poll_grid_ref(offs: np.ndarray, p_off: np.ndarray, dur: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The numpy reference (``Accounting._poll_grid`` as it was): the sampling pieces' ends
    ``offs`` (the last at ``dur``) merged with the polls' ``p_off``: (the merged ends, which of
    them are polls, the indices of the sampling boundaries among them)."""
    s_off = offs[:-1]
    ends = np.concatenate((s_off, p_off, [dur]))
    kind = np.concatenate((np.zeros(len(s_off), np.int8), np.ones(len(p_off), np.int8), [2]))
    order = np.argsort(ends, kind="stable")
    ends, kind = np.minimum(ends[order], dur), kind[order]
    new = np.empty(len(ends), bool)
    new[0] = True
    new[1:] = (ends[1:] - ends[:-1]) > 1e-12      # a poll and a sample at one time are one end
    grp = np.cumsum(new) - 1
    fine = ends[new]
    fine[-1] = dur
    polls = np.zeros(len(fine), bool)
    polls[grp[kind == 1]] = True
    is_sample = np.zeros(len(fine), bool)
    is_sample[grp[kind == 0]] = True
    return fine, polls, np.flatnonzero(is_sample)


@njit(cache=True, fastmath=False)
def poll_grid(offs: np.ndarray, ps: float, k0: int, k1: int, t0: float,
              dur: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`poll_grid_ref` with the polls at ``ps * k - t0`` for k in k0..k1, compiled: the
    stable sort of the three runs (sampling ends and polls, each ascending, then ``dur``) is
    their merge, ties in that order; the ends are then clipped to ``dur``, and ends within 1e-12
    of the one before are one end."""
    ns = offs.shape[0] - 1
    npl = k1 - k0 + 1
    n = ns + npl + 1
    p_off = np.empty(npl)
    for k in range(npl):
        p_off[k] = ps * float(k0 + k) - t0
    ends = np.empty(n)
    kind = np.empty(n, np.int8)
    i = j = 0
    m = 0
    dur_done = False
    while m < n:
        # the smallest head; on a tie the earlier run (samples, then polls, then dur)
        take = -1
        v = 0.0
        if i < ns:
            take, v = 0, offs[i]
        if j < npl and (take < 0 or p_off[j] < v):
            take, v = 1, p_off[j]
        if not dur_done and (take < 0 or dur < v):
            take, v = 2, dur
        if take == 0:
            i += 1
        elif take == 1:
            j += 1
        else:
            dur_done = True
        ends[m] = _min(v, dur)
        kind[m] = take
        m += 1
    n_fine = 1
    for k in range(1, n):
        if (ends[k] - ends[k - 1]) > 1e-12:
            n_fine += 1
    fine = np.empty(n_fine)
    polls = np.zeros(n_fine, np.bool_)
    is_sample = np.zeros(n_fine, np.bool_)
    g = -1
    n_samples = 0
    for k in range(n):
        if k == 0 or (ends[k] - ends[k - 1]) > 1e-12:
            g += 1
            fine[g] = ends[k]
        if kind[k] == 1:
            polls[g] = True
        elif kind[k] == 0 and not is_sample[g]:
            is_sample[g] = True
            n_samples += 1
    fine[n_fine - 1] = dur
    samples = np.empty(n_samples, np.int64)
    c = 0
    for k in range(n_fine):
        if is_sample[k]:
            samples[c] = k
            c += 1
    return fine, polls, samples


@njit(cache=True, fastmath=False)
def part_peaks(temps: np.ndarray, zt: np.ndarray, peak_c: float, zone_peaks: np.ndarray) -> tuple[float, bool, bool]:
    """The peaks after a part (socsim.engine.accounting.Accounting._peaks, whose numpy form
    this is): ``max(peak_c, the largest of temps)`` as Python's max gives it (a NaN reading is
    not a peak), and each zone's peak ``zone_peaks`` raised, in place, to the largest of its
    readings ``zt`` above it.  Returns (the new peak, whether exact, whether a zone's peak
    moved).  Not exact (nothing written) where the largest of ``temps`` or of a zone's readings
    is a zero, whose sign numpy's maximum may give otherwise, or ``temps`` is empty: the
    caller then takes the numpy form."""
    n, m = temps.shape
    if n * m == 0:
        return peak_c, False, False
    top = -np.inf
    nan = False
    for k in range(n):
        for j in range(m):
            v = temps[k, j]
            if v != v:
                nan = True
            elif v > top:
                top = v
    if not nan and top == 0.0:
        return peak_c, False, False
    nz = zt.shape[1]
    cols = np.empty(nz)
    for j in range(nz):
        c = -np.inf
        cnan = False
        for k in range(zt.shape[0]):
            v = zt[k, j]
            if v != v:
                cnan = True
            elif v > c:
                c = v
        if cnan:
            c = np.nan       # (a NaN maximum raises no peak)
        elif c == 0.0 and zt.shape[0] > 0:
            return peak_c, False, False
        cols[j] = c
    moved = False
    if zt.shape[0] > 0:
        for j in range(nz):
            if cols[j] > zone_peaks[j]:
                zone_peaks[j] = cols[j]
                moved = True
    new = peak_c
    if not nan and top > peak_c:
        new = top
    return new, True, moved
