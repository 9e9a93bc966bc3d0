"""The error figures of a fidelity table: MAPE, Kendall's tau-b of two orderings, worst rows."""
from __future__ import annotations

import math
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


def worst(ids: Sequence[str], errors: Sequence[float], k: int) -> list[str]:
    """The ``k`` ids of largest |error| (ties: in the given order)."""
    order = sorted(range(len(ids)), key=lambda i: (-abs(errors[i]), i))
    return [ids[i] for i in order[:k]]
