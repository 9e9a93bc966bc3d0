"""The element-wise part of a battery step over a batch's pieces, in one compiled call
(socsim.hw.battery.battery_step with a load profile): each piece's pack current at its own power
(``piece_currents``, clamped below by the constant-voltage limit), and the per-piece factors of
the step's terminal energy and I^2 R loss.  The same IEEE operations in the same order as the
numpy expressions they replace (no fast-math; sqrt is correctly rounded on both sides), so the
results are numpy's bit for bit (tests/hw/test_battery_kernel.py, hypothesis); the dot products
with the pieces' lengths stay in numpy (BLAS), in the caller.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


def profile_terms_ref(ocv: float, r: float, pw: np.ndarray, supply_w: float,
                      i_cv: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The numpy reference: (current, terminal power factor (ocv - I r) I, I^2) of each piece."""
    net_w = pw - supply_w
    disc = ocv * ocv - 4.0 * r * net_w
    if disc.min() > 0.0:
        cur = 2.0 * net_w / (ocv + np.sqrt(disc))
    else:
        root = np.sqrt(np.maximum(disc, 0.0))
        cur = np.where(disc > 0.0, 2.0 * net_w / (ocv + root), ocv / (2.0 * r))
    cur = np.maximum(cur, -i_cv)
    return cur, (ocv - cur * r) * cur, cur * cur


@njit(cache=True, fastmath=False)
def profile_terms(ocv: float, r: float, pw: np.ndarray, supply_w: float,
                  i_cv: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`profile_terms_ref`, compiled."""
    n = pw.shape[0]
    cur = np.empty(n)
    term = np.empty(n)
    sq = np.empty(n)
    oo = ocv * ocv
    r4 = 4.0 * r
    sat = ocv / (2.0 * r)
    neg = -i_cv
    for k in range(n):
        nw = pw[k] - supply_w
        d = oo - r4 * nw
        c = 2.0 * nw / (ocv + math.sqrt(d)) if d > 0.0 else sat
        if not (c > neg or c != c):   # np.maximum(c, -i_cv): NaN propagates, a tie gives -i_cv (its zero's sign)
            c = neg
        cur[k] = c
        term[k] = (ocv - c * r) * c
        sq[k] = c * c
    return cur, term, sq


@njit(cache=True, fastmath=False)
def step_currents(r25: float, t_lo: float, t_hi: float, activation_k: float, temp_c: float, xs: np.ndarray,
                  ys: np.ndarray, soc: float, capacity_c: float, net_w: float, dt_s: float,
                  v_charge: float) -> tuple[float, float, float, float]:
    """The scalar start of a battery step of ``dt_s`` > 0 (socsim.hw.battery.battery_step, whose
    Python form this is, operation for operation): the pack resistance at ``temp_c`` (Arrhenius,
    clamped to [t_lo, t_hi]), the OCV at the step's midpoint state of charge, the
    constant-voltage charge limit there and the pack current of ``net_w``.  Returns (r, ocv,
    i_cv, i).  (math.exp is the C library's exp, as Python's is.)  One flat function, two
    passes over the OCV table (at the state of charge, then at the midpoint): a helper per
    step would be a compile of its own on a fresh machine.  Python's ``max(a, b)`` is ``b if
    b > a else a``, ``min(a, b)`` is ``b if b < a else a``; the interpolation is _interp1's."""
    t = temp_c if not t_lo > temp_c else t_lo
    t = (t if not t_hi < t else t_hi) + 273.15
    r = r25 * math.exp(activation_k * (1.0 / t - 1.0 / 298.15))
    n = xs.shape[0]
    x = soc
    ocv = 0.0
    i = 0.0
    i_cv = 0.0
    for step in range(2):
        # ocv = _interp1(x, xs, ys)
        if n == 1:
            ocv = ys[0]
        elif x != x:
            ocv = x
        elif x < xs[0]:
            ocv = ys[0]
        elif x >= xs[n - 1]:
            ocv = ys[n - 1]
        else:
            lo, hi = 0, n
            while lo < hi:
                mid = (lo + hi) >> 1
                if x < xs[mid]:
                    hi = mid
                else:
                    lo = mid + 1
            j = lo - 1
            if xs[j] == x:
                ocv = ys[j]
            else:
                slope = (ys[j + 1] - ys[j]) / (xs[j + 1] - xs[j])
                ocv = slope * (x - xs[j]) + ys[j]
                if ocv != ocv:
                    ocv = slope * (x - xs[j + 1]) + ys[j + 1]
                    if ocv != ocv and ys[j] == ys[j + 1]:
                        ocv = ys[j]
        # i_cv = cv_limit_a: max(v_charge - ocv, 0.0) / r
        d = v_charge - ocv
        i_cv = (0.0 if 0.0 > d else d) / r
        # i = max(pack_current_a(ocv, r, net_w), -i_cv)
        disc = ocv * ocv - 4.0 * r * net_w
        c = ocv / (2.0 * r) if disc <= 0.0 else 2.0 * net_w / (ocv + math.sqrt(disc))
        i = -i_cv if -i_cv > c else c
        if step == 0:
            # the midpoint state of charge: min(max(soc - 0.5 * i0 * dt_s / capacity, 0.0), 1.0)
            m = soc - 0.5 * i * dt_s / capacity_c
            m = 0.0 if 0.0 > m else m
            x = 1.0 if 1.0 < m else m
    return r, ocv, i_cv, i
