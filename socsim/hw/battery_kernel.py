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
