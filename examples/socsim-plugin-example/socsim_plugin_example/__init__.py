"""big-only-greedy: a worked example of a socsim scheduler plugin.

Train on the big cores only: profile the first 1..max_cores big cores through the cost model
(``ctx.estimate``, as a phone-side profiler would measure a batch) and keep the best set for the
whole run.  The options model is validated by socsim (``--set scheduler.options.max_cores=2``).
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from socsim.engine.cores import big_cores
from socsim.sched.api import BaseScheduler, Plan
from socsim.sched.common import single_unit_plan

__all__ = ["BigOnlyGreedy", "BigOnlyGreedyOptions"]


class BigOnlyGreedyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")  # unknown options are errors, not ignored
    max_cores: int = Field(4, ge=1, le=8, description="largest big-core set to try")
    freq: Literal["max", "mid", "min"] = Field("max", description="big-cluster frequency")
    objective: Literal["time", "energy"] = Field("time", description="what 'best' means")


class BigOnlyGreedy(BaseScheduler):
    name = "big-only-greedy"
    description = "example plugin: the fastest (or most frugal) set of big cores, fixed frequency"
    Options = BigOnlyGreedyOptions

    def plan(self, ctx) -> Plan:
        graph = ctx.graph()                      # the workload's model, precision and batch
        pool = big_cores(ctx.soc)[: self.options.max_cores]
        best, best_score = None, float("inf")
        self.profile: dict[str, tuple[float, float]] = {}
        for k in range(1, len(pool) + 1):
            cores = tuple(pool[:k])
            plan = single_unit_plan(graph, "cpu", cores, f"big-only-greedy big{k}@{self.options.freq}",
                                    cpu_freq_mhz=ctx.freqs(cores, self.options.freq))
            time_s, energy_j = ctx.estimate(plan)
            self.profile[plan.label] = (time_s, energy_j)
            score = time_s if self.options.objective == "time" else energy_j
            if score < best_score:
                best, best_score = plan, score
        assert best is not None
        return best

    def summary_extra(self) -> dict:
        return {"profiled": {k: {"time_s": t, "energy_j": e} for k, (t, e) in self.profile.items()}}
