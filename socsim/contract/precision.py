"""Which precision a run trains in (what ``ctx.graph()`` translates to and the summary reports)."""
from __future__ import annotations

from typing import Any


def run_precision(scheduler: Any, workload: Any) -> str:
    """The precision the run trains in: the scheduler's own (a composed scheduler's base's),
    else the workload's ``precision``."""
    base = getattr(scheduler, "base", None)
    return (getattr(scheduler, "precision", None) or getattr(base, "precision", None)
            or workload.precision)
