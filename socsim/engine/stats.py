"""A run's running totals, flat in memory whatever the number of batches (what the summary reads)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from socsim.contract import Plan
from socsim.hw import units


@dataclass
class RunStats:
    """Running totals of a run (flat in memory whatever the number of batches)."""

    batches: int = 0
    sim_time_s: float = 0.0
    batch_time_sum_s: float = 0.0
    batch_energy_sum_j: float = 0.0
    rail_energy_j: dict[str, float] = field(default_factory=dict)
    idle_energy_j: float = 0.0
    foreground_energy_j: float = 0.0   # the foreground apps' dynamic power, on the cores training leaves them
    peak_c: float = -math.inf
    zone_peak_c: dict[str, float] = field(default_factory=dict)
    final_c: float = 0.0
    peak_mem_bytes: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {**dict.fromkeys(units.ops_keys(), 0), "switches": 0})
    throttle_events: int = 0
    time_throttled_s: float = 0.0
    continued_batches: int = 0  # batches on_memory_pressure continued with another plan (mid-batch)
    templates_built: int = 0
    config_switches: int = 0
    plan_labels: list[str] = field(default_factory=list)
    plan_batches: dict[str, int] = field(default_factory=dict)   # batches run under each plan label
    micro_batches: tuple[int, ...] = ()
    # memory in use above the budget in force (environment.memory_budget_mb): seconds, batches
    # with any, and the largest excess in bytes
    over_budget_s: float = 0.0
    over_budget_batches: int = 0
    over_budget_max_bytes: int = 0
    # the mini-batch's splits as run, batch by batch, consecutive repeats merged
    micro_batch_runs: list[tuple[int, ...]] = field(default_factory=list)
    stop_reason: str | None = None
    battery_start_soc: float = 0.0
    battery_end_soc: float = 0.0
    first_plan: Plan | None = None
    dsp_prepared_batches: int = 0
    # per foreground load (workload order): core-seconds its cores ran a training thread
    fg_contended_core_s: list[float] = field(default_factory=list)
    # seconds the batches spent on each: cpu, dsp, gpu (their ops), fastrpc (calls), prep
    time_on_s: dict[str, float] = field(default_factory=dict)
    # the least share of the training step's work a plan in force ran, phase by phase (1.0:
    # every plan ran every op), and what the first plan short of it left out (plan_coverage)
    work_fraction: float = 1.0
    # precisions of the graphs the plans in force were taken from, in the order first run
    # (PlanContext.precision_of; a plugin may plan on ctx.graph(precision=...) of its own)
    plan_precisions: list = field(default_factory=list)
    short_plan: str | None = None
