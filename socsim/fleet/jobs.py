"""A client's local training as one engine run: the job (content only: the SoC spec and the
workload as a dict, so it can run on another machine) and its small result."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from socsim.spec import SocSpec


@dataclass(frozen=True)
class Job:
    """One engine run.  ``key`` identifies its inputs: jobs with the same key give the same result."""

    key: str
    soc: SocSpec = field(compare=False, repr=False)
    workload: dict[str, Any] = field(compare=False, repr=False)


def make_job(soc: SocSpec, workload: dict[str, Any]) -> Job:
    """The job of ``workload`` on ``soc``, keyed by the SoC's name and the workload's content."""
    return Job(json.dumps([soc.name, workload], sort_keys=True), soc, workload)


def run_job(job: Job) -> dict[str, Any]:
    """Run ``job`` through the engine (``socsim.run``, deterministic, no files); the figures a
    round needs.  Raises what the run raises."""
    from socsim.api import run
    from socsim.reuse import reusing

    with reusing():   # this process's earlier clients' costs and plans (socsim.reuse)
        s = run(job.soc, job.workload, deterministic=True, reports=False).summary
    batt = s.get("battery", {})
    info = s.get("scheduler_info") or {}
    return {"sim_time_s": s["sim_time_s"], "energy_j": s["energy_j"]["total"],
            "training_j": s["energy_j"]["training"], "soc_start": batt.get("soc_start"),
            "soc_end": batt.get("soc_end"), "peak_c": s["thermal"]["peak_c"], "final_c": s["thermal"]["final_c"],
            "feasible": info.get("feasible", True)}
