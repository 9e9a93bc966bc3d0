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


def test_auto_jobs_follow_the_free_cpus(monkeypatch):
    """Unset or ``auto``: this process's CPU and those the load leaves free, capped at the usable
    ones (1 on a 1-core box or a busy machine)."""
    import socsim.hostcpus as hostcpus

    monkeypatch.setattr(oracle_mod.os, "sched_getaffinity", lambda pid: {0, 1})
    for env in (None, "auto", " AUTO "):
        if env is None:
            monkeypatch.delenv("SOCSIM_JOBS", raising=False)
        else:
            monkeypatch.setenv("SOCSIM_JOBS", env)
        monkeypatch.setattr(hostcpus, "free_cpus", lambda: 0)
        assert parallel_jobs() == 1
        monkeypatch.setattr(hostcpus, "free_cpus", lambda: 1)
        assert parallel_jobs() == 2
        monkeypatch.setattr(hostcpus, "free_cpus", lambda: 7)
        assert parallel_jobs() == 2                       # capped at the usable CPUs
    monkeypatch.setattr(oracle_mod.os, "sched_getaffinity", lambda pid: {0})
    assert parallel_jobs() == 1                           # a 1-core box never forks
    monkeypatch.setenv("SOCSIM_JOBS", "3")
    monkeypatch.setattr(oracle_mod.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert parallel_jobs() == 3


def test_auto_jobs_never_fork_beside_another_thread(monkeypatch):
    """A thread (a progress display) could hold a lock when the process forks: auto stays serial."""
    import threading

    import socsim.hostcpus as hostcpus

    monkeypatch.delenv("SOCSIM_JOBS", raising=False)
    monkeypatch.setattr(oracle_mod.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(hostcpus, "free_cpus", lambda: 1)
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert parallel_jobs() == 1
    finally:
        stop.set()
        t.join()


def test_one_job_costs_everything_with_one_plan_back_to_back(monkeypatch):
    """With one job, warm_cpu costs every pair here (nothing left for on demand), the groups of
    one plan (the same op on core sets of one size) one after the other: the second takes the
    first's streams (socsim.hw.cache.reuse), and the costs are the on-demand ones."""
    from socsim.hw import memory, profile_store
    from socsim.hw.cache import reuse

    monkeypatch.setenv("SOCSIM_CACHE", "off")      # computed here, not read from the store
    profile_store.reset()
    memory._cpu_memory.cache_clear()
    ctx = PlanContext(SOC, WL, CostOracle(SOC))
    graph = ctx.graph("fp32")
    plans = [MinEnergy().config_plan(ctx, graph, f"{cs}@high") for cs in ("big2", "little2")]
    pairs = [(s.op, ctx.walker.cpu_config(p, ctx._estimate_freqs(p, None))) for p in plans for s in p.steps]
    order = []
    real = oracle_mod.CostOracle.cost
    monkeypatch.setattr(oracle_mod.CostOracle, "cost", lambda self, op, unit, cfg: order.append(
        oracle_mod._stream_group(op, cfg)) or real(self, op, unit, cfg))
    reuse.clear()
    ctx.oracle.warm_cpu(pairs, jobs=1)
    assert len(ctx.oracle._memo) == len({CostOracle._key(op, "cpu", cfg) for op, cfg in pairs})
    # the groups of one plan (stream key and bytes, core count) form one block of the order
    runs = [g[:3] + (len(g[3]),) for g in order]
    blocks = [r for i, r in enumerate(runs) if i == 0 or runs[i - 1] != r]
    assert len(blocks) == len(set(blocks))
    assert any(len({g[3] for g in order if g[:3] + (len(g[3]),) == r}) == 2 for r in blocks)
    assert reuse.stats()["stream_hits"] > 0
    cold = CostOracle(SOC)
    memory._cpu_memory.cache_clear()
    for op, cfg in pairs:
        assert ctx.oracle._memo[CostOracle._key(op, "cpu", cfg)] == cold.cost(op, "cpu", cfg)
    monkeypatch.delenv("SOCSIM_CACHE")
    profile_store.reset()
