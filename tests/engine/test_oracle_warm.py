"""Costing CPU ops ahead of use in worker processes (CostOracle.warm_cpu, PlanContext.prefetch):
the same numbers as costing them on demand, only sooner."""
from __future__ import annotations

import pytest

import socsim.engine.oracle as oracle_mod
from socsim.engine.context import PlanContext
from socsim.engine.oracle import CostOracle, parallel_jobs
from socsim.errors import InputError
from socsim.sched.min_energy import MinEnergy
from socsim.spec import load_soc, workload_from_dict

SOC = load_soc("sd855")
WL = workload_from_dict(dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16,
                             batches=2))


def _plans(ctx):
    graph = ctx.graph("fp32")
    return [MinEnergy().config_plan(ctx, graph, f"{cs}@{lv}") for cs in ("big2", "little1") for lv in ("high", "low")]


def test_parallel_warm_up_gives_the_on_demand_costs(monkeypatch):
    monkeypatch.setattr(oracle_mod, "WARM_SERIAL_S", 0.0)   # fork for everything
    cold = PlanContext(SOC, WL, CostOracle(SOC))
    warm = PlanContext(SOC, WL, CostOracle(SOC))
    pairs = [(s.op, warm.walker.cpu_config(p, warm._estimate_freqs(p, None))) for p in _plans(warm)
             for s in p.steps]
    warm.oracle.warm_cpu(pairs, jobs=2)
    assert len(warm.oracle._memo) == len({CostOracle._key(op, "cpu", cfg) for op, cfg in pairs})
    assert "cpu" not in warm.oracle._models   # all costed by the workers, none here
    for op, cfg in pairs:
        assert warm.oracle._memo[CostOracle._key(op, "cpu", cfg)] == cold.oracle.cost(op, "cpu", cfg)
    # the estimates are the same as without the warm-up, and ask for nothing new
    n = len(warm.oracle._memo)
    for pw, pc in zip(_plans(warm), _plans(cold)):
        assert warm.estimate(pw) == cold.estimate(pc)
    assert len(warm.oracle._memo) == n


def test_prefetch_covers_what_estimate_asks_for(monkeypatch):
    monkeypatch.setattr(oracle_mod, "WARM_SERIAL_S", 10.0)   # all here, no fork
    ctx = PlanContext(SOC, WL, CostOracle(SOC))
    plans = _plans(ctx)
    ctx.prefetch(plans)
    n = len(ctx.oracle._memo)
    assert n > 0
    for p in plans:
        ctx.estimate(p)
    assert len(ctx.oracle._memo) == n


def test_jobs_follow_socsim_jobs(monkeypatch):
    monkeypatch.setenv("SOCSIM_JOBS", "1")
    assert parallel_jobs() == 1
    monkeypatch.setenv("SOCSIM_JOBS", "0")
    with pytest.raises(InputError) as e:
        parallel_jobs()
    assert e.value.field == "SOCSIM_JOBS"


def test_parallel_costing_is_opt_in(monkeypatch):
    monkeypatch.delenv("SOCSIM_JOBS", raising=False)
    assert parallel_jobs() == 1
