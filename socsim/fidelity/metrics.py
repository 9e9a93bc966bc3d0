"""The error figures of a fidelity table: MAPE, Kendall's tau-b of two orderings, worst rows."""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Sequence


def rel_error_pct(measured: float, simulated: float) -> float:
    """Signed error of ``simulated`` against ``measured``, in percent of ``measured``."""
    return (simulated - measured) / measured * 100.0


def mape(measured: Sequence[float], simulated: Sequence[float]) -> float | None:
    """Mean absolute percentage error (percent); None for no pairs."""
    if len(measured) != len(simulated):
        raise ValueError("measured and simulated differ in length")
    if not measured:
        return None
    return sum(abs(rel_error_pct(m, s)) for m, s in zip(measured, simulated)) / len(measured)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b of the orderings of ``x`` and ``y`` (ties counted as scipy does); None
    when either has no two different values (the ordering says nothing)."""
    if len(x) != len(y):
        raise ValueError("x and y differ in length")
    conc = disc = tx = ty = 0
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif (dx > 0) == (dy > 0):
                conc += 1
            else:
                disc += 1
    denom = math.sqrt((conc + disc + tx) * (conc + disc + ty))
    if denom == 0:
        return None
    return (conc - disc) / denom


def resolution(values: Sequence[float]) -> float | None:
    """The unit of the last digit a column of measured values is given to: 10**-d for the most
    decimals d among them (each value read back at 12 significant digits, so that a unit
    conversion's float noise does not count as a digit).  A file's 10.6, 7.0 and 25.0 J give 0.1 J
    (YAML keeps no trailing zeros: the finest value sets it).  None for no values."""
    exps = [int(Decimal(f"{v:.12g}").normalize().as_tuple().exponent) for v in values if v != 0]
    if not exps:
        return None
    return float(Decimal(1).scaleb(min(exps)))


def kendall_tau_b_resolved(x: Sequence[float], y: Sequence[float], res: float) -> float | None:
    """Kendall's tau-b of ``y``'s ordering against ``x``'s over the pairs that ``x`` resolves:
    pairs whose measured values lie at most ``res`` apart (one unit of their last digit: which is
    the larger is within the measurement's reading) are left out, neither concordant, discordant
    nor tied.  A model that orders every resolved pair as measured scores 1; with ``res`` 0 it is
    :func:`kendall_tau_b` less the pairs tied in ``x``.  None when no pair is resolved."""
    if len(x) != len(y):
        raise ValueError("x and y differ in length")
    if res < 0:
        raise ValueError("res must be >= 0")
    lim = res * (1 + 1e-9)   # a difference of exactly one unit, read back from floats
    conc = disc = ty = 0
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 or abs(dx) <= lim:
                continue
            if dy == 0:
                ty += 1
            elif (dx > 0) == (dy > 0):
                conc += 1
            else:
                disc += 1
    denom = math.sqrt((conc + disc) * (conc + disc + ty))
    if denom == 0:
        return None
    return (conc - disc) / denom


def worst(ids: Sequence[str], errors: Sequence[float], k: int) -> list[str]:
    """The ``k`` ids of largest |error| (ties: in the given order)."""
    order = sorted(range(len(ids)), key=lambda i: (-abs(errors[i]), i))
    return [ids[i] for i in order[:k]]
