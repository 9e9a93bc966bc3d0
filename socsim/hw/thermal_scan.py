"""The modal recursion of the thermal network over consecutive steps, in numba, beside its
plain-numpy reference (tests check one against the other).

z[k] = decay[k] * z[k-1] + drive[k], element-wise per mode, z[-1] = z0.
"""
from __future__ import annotations

import numpy as np
from numba import njit


def modal_scan_ref(z0: np.ndarray, decay: np.ndarray, drive: np.ndarray) -> np.ndarray:
    out = np.empty_like(drive)
    z = z0.astype(float).copy()
    for k in range(drive.shape[0]):
        z = decay[k] * z + drive[k]
        out[k] = z
    return out


@njit(cache=True, fastmath=False)
def modal_scan(z0: np.ndarray, decay: np.ndarray, drive: np.ndarray) -> np.ndarray:
    n, m = drive.shape
    out = np.empty((n, m))
    z = z0.copy()
    for k in range(n):
        for j in range(m):
            z[j] = decay[k, j] * z[j] + drive[k, j]
            out[k, j] = z[j]
    return out


@njit(cache=True, fastmath=False)
def neg_rate_steps(dts: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, bool, float]:
    """``-(dts[:, None] * rates[None, :])`` (the modes' exponents over each step), whether every
    step is >= 0 (NaN is not), and the steps' sum (in order: for the finiteness check)."""
    n, m = dts.shape[0], rates.shape[0]
    out = np.empty((n, m))
    ok = True
    total = 0.0
    for k in range(n):
        d = dts[k]
        if not d >= 0.0:
            ok = False
        total += d
        for j in range(m):
            out[k, j] = -(d * rates[j])
    return out, ok, total


@njit(cache=True, fastmath=False)
def modal_steps(z0: np.ndarray, decay: np.ndarray, em1: np.ndarray, safe_rates: np.ndarray,
                zero_modes: np.ndarray, dts: np.ndarray, modal_w: np.ndarray) -> np.ndarray:
    """:func:`modal_scan` with its drive built in the loop: ``gain * modal_w`` per step and mode,
    ``gain = -em1 / safe_rates`` (``em1 = expm1(-lambda dt)``), or the step's length for a mode
    with lambda = 0 (``zero_modes``): socsim.hw.thermal.ThermalNetwork.advance_many's numpy
    expressions, the same operations in the same order."""
    n, m = decay.shape
    out = np.empty((n, m))
    z = z0.copy()
    for k in range(n):
        for j in range(m):
            g = dts[k] if zero_modes[j] else -em1[k, j] / safe_rates[j]
            z[j] = decay[k, j] * z[j] + g * modal_w[k, j]
            out[k, j] = z[j]
    return out


@njit(cache=True, inline="always")
def _poll_changes(k: int, t: float, trips: np.ndarray, n_trips: np.ndarray, clears: np.ndarray,
                  uppers: np.ndarray, tripped: np.ndarray, steps: np.ndarray,
                  last_temp: np.ndarray) -> bool:
    """Whether zone ``k``'s poll at reading ``t`` crosses a trip or moves its steps (the Python
    governor's comparisons, in its order and float arithmetic); False for a zone without trips."""
    nt = n_trips[k]
    if nt == 0:
        return False
    tr = tripped[k]
    if tr < nt and t >= trips[k, tr]:
        return True
    if tr > 0 and t < clears[k, tr - 1]:
        return True
    falling = t < last_temp[k]      # False for NaN (no reading yet)
    upper = uppers[k, tr]
    st = steps[k]
    if st > upper:
        st -= 1
    elif tr > 0 and not falling:
        st = min(st + 1, upper)
    st = max(st, min(tr, upper), 0)
    return st != steps[k]


@njit(cache=True, fastmath=False)
def quiet_polls(times: np.ndarray, temps: np.ndarray, hot: np.ndarray, start: int, idle: bool,
                last_poll_s: float, poll_s: float, present: np.ndarray, polling: np.ndarray,
                trips: np.ndarray, n_trips: np.ndarray, clears: np.ndarray, uppers: np.ndarray,
                tripped: np.ndarray, steps: np.ndarray, last_temp: np.ndarray,
                last_poll: np.ndarray) -> tuple[int, float]:
    """The step-wise governor's polls ``start..`` of a part (``socsim.hw.thermal.ThrottleGovernor.update``
    and the accounting's poll loop, ``socsim.engine.accounting.Accounting._poll``) as long as they
    change nothing but the zones' last reading and poll time: those are applied in place
    (``last_temp``, NaN for none, and ``last_poll``).  Stops before the first poll that would
    cross a trip or move a zone's steps, and returns its index (or -1 at the end) and the
    engine's last poll time.  The same comparisons as the Python governor, in the same order
    and float arithmetic, so the decisions are identical (tests compare them poll by poll)."""
    nz = temps.shape[1]
    for j in range(start, times.shape[0]):
        if idle and not hot[j]:
            continue
        te = times[j]
        if not te - last_poll_s >= poll_s - 1e-9:
            continue
        for k in range(nz):
            if not present[k] or te - last_poll[k] < polling[k] - 1e-12:
                continue
            if _poll_changes(k, temps[j, k], trips, n_trips, clears, uppers, tripped, steps, last_temp):
                return j, last_poll_s
        last_poll_s = te
        for k in range(nz):
            if not present[k] or te - last_poll[k] < polling[k] - 1e-12:
                continue
            last_temp[k] = temps[j, k]
            last_poll[k] = te
    return -1, last_poll_s


@njit(cache=True, fastmath=False)
def quiet_polls_pieces(ends: np.ndarray, zt: np.ndarray, polls: np.ndarray, alert_hot: np.ndarray,
                       cols: np.ndarray, start: int, idle: bool, last_poll_s: float, poll_s: float,
                       polling: np.ndarray, trips: np.ndarray, n_trips: np.ndarray, clears: np.ndarray,
                       uppers: np.ndarray, tripped: np.ndarray, steps: np.ndarray, last_temp: np.ndarray,
                       last_poll: np.ndarray) -> tuple[int, float]:
    """:func:`quiet_polls` over a part's pieces as the accounting holds them: ``ends`` the pieces'
    end times, ``zt`` the zone readings at them (one column per zone read), ``polls`` which ends
    are the governor's polls, ``cols[k]`` the column of the governor's zone ``k`` in ``zt`` (-1:
    not read).  A poll is hot where a reading is at or above ``alert_hot`` (its zone's).  The
    same decisions as :func:`quiet_polls` given the polls' rows (``zt[polls]``, gathered by
    ``cols``) and their hot flags; returns the index of the piece it stops at (-1: none)."""
    nz = cols.shape[0]
    nr = zt.shape[1]
    for j in range(start, ends.shape[0]):
        if not polls[j]:
            continue
        if idle:
            hot = False
            for c in range(nr):
                if zt[j, c] >= alert_hot[c]:
                    hot = True
                    break
            if not hot:
                continue
        te = ends[j]
        if not te - last_poll_s >= poll_s - 1e-9:
            continue
        for k in range(nz):
            c = cols[k]
            if c < 0 or te - last_poll[k] < polling[k] - 1e-12:
                continue
            if _poll_changes(k, zt[j, c], trips, n_trips, clears, uppers, tripped, steps, last_temp):
                return j, last_poll_s
        last_poll_s = te
        for k in range(nz):
            c = cols[k]
            if c < 0 or te - last_poll[k] < polling[k] - 1e-12:
                continue
            last_temp[k] = zt[j, c]
            last_poll[k] = te
    return -1, last_poll_s
