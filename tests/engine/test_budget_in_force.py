"""The summary's ``memory.budget_mb``: the smallest budget in force during the run, read from
the same intervals the engine uses (socsim.engine.context ``budget_steps_bytes``)."""
from __future__ import annotations

import math

import pytest

from socsim.engine.context import budget_steps_bytes
from socsim.report.summary import budget_in_force_mb
from socsim.spec.workload import BudgetStep


def _steps(*pairs):
    return [BudgetStep(at_s=a, mb=m) for a, m in pairs]


@pytest.mark.parametrize("steps, run_s, want", [
    (_steps((0, 500), (10, 200)), 5.0, 500),        # the step at 10 s never comes
    (_steps((0, 500), (10, 200)), 20.0, 200),
    (_steps((3, 500)), 1.0, None),                  # no budget before the first step
    (_steps((3, 500)), 5.0, 500),
    (_steps((0, 100), (0, 800)), 5.0, 800),         # two at one time: the later one holds
    (_steps((5, 100), (0, 300), (5, 900)), 9.0, 300),   # 100 MB lasts no time at 5 s
    (_steps((5, 100), (0, 300), (5, 900)), 2.0, 300),
])
def test_budget_in_force(steps, run_s, want):
    assert budget_in_force_mb(steps, run_s) == want


@pytest.mark.parametrize("steps", [_steps((0, 100), (0, 800)), _steps((5, 100), (0, 300), (5, 900)),
                                   _steps((1, 50), (2, 60), (2, 70), (4, 40))])
def test_agrees_with_the_engines_intervals(steps):
    for run_s in (0.5, 1.5, 2.0, 3.0, 10.0):
        held = [b / 2**20 for s, e, b in budget_steps_bytes(steps) if s < e and s <= run_s and e > 0]
        assert budget_in_force_mb(steps, run_s) == (pytest.approx(min(held)) if held else None)


def test_a_number_or_none():
    assert budget_in_force_mb(256, 1.0) == 256.0
    assert budget_in_force_mb(None, 1.0) is None
    assert math.isinf(budget_steps_bytes(_steps((0, 1)))[0][1])
