"""The summary JSON of a run (DESIGN.md, Contracts: keys are never renamed, only added)."""
from __future__ import annotations

from typing import Any

from socsim import __version__


def _r(x: float, nd: int = 9) -> float:
    """Round for stable, readable JSON (relative precision ~1e-9)."""
    if x == 0 or x != x:
        return float(x)
    from math import floor, log10
    return round(float(x), max(0, nd - 1 - int(floor(log10(abs(x))))))


def build_summary(soc, workload, scheduler, engine, stats, deterministic: bool = False) -> dict[str, Any]:
    n = max(stats.batches, 1)
    total_j = sum(stats.rail_energy_j.values())
    plan = stats.first_plan
    summary: dict[str, Any] = {
        "soc": soc.name,
        "workload": workload.name,
        "scheduler": getattr(scheduler, "name", type(scheduler).__name__),
        "model": workload.model,
        "precision": getattr(scheduler, "precision", None) or workload.precision,
        "batch_size": workload.batch_size,
        "batches": stats.batches,
        "sim_time_s": _r(stats.sim_time_s),
        "per_batch": {
            "time_s": _r(stats.batch_time_sum_s / n),
            "energy_j": _r(stats.batch_energy_sum_j / n),
        },
        "energy_j": {
            "total": _r(total_j),
            "training": _r(max(0.0, total_j - stats.idle_energy_j)),
            "idle_baseline": _r(stats.idle_energy_j),
            "rails": {k: _r(v) for k, v in sorted(stats.rail_energy_j.items())},
        },
        "thermal": {
            "peak_c": _r(stats.peak_c, 6),
            "final_c": _r(stats.final_c, 6),
            "ambient_c": workload.environment.ambient_c,
            "zones_peak_c": {k: _r(v, 6) for k, v in sorted(stats.zone_peak_c.items())},
            "trip_events": stats.throttle_events,
            "time_throttled_s": _r(stats.time_throttled_s),
        },
        "placement": {
            "cpu_ops": stats.counts["cpu_ops"] // n,
            "dsp_ops": stats.counts["dsp_ops"] // n,
            "gpu_ops": stats.counts["gpu_ops"] // n,
            "switches": stats.counts["switches"] // n,
            "cpu_cores": list(plan.cpu_cores) if plan else [],
            "plans": stats.plan_labels,
            "config_switches": stats.config_switches,
        },
        "memory": {
            "peak_bytes": int(stats.peak_mem_bytes),
            "micro_batches": list(plan.micro_batches) if plan and plan.micro_batches else [workload.batch_size],
        },
        "battery": {
            "soc_start": _r(stats.battery_start_soc, 6),
            "soc_end": _r(stats.battery_end_soc, 6),
        },
        "engine": {
            "templates_built": stats.templates_built,
            "dsp_graph_preparations": stats.dsp_prepared_batches,
            "stop_reason": stats.stop_reason,
        },
        "wall_time_s": 0.0 if deterministic else round(engine.wall_time_s, 3),
        "socsim_version": __version__,
    }
    loads = workload.environment.foreground_loads
    if loads:
        summary["foreground"] = foreground_summary(loads, stats.fg_contended_core_s, stats.sim_time_s)
    extra = scheduler.summary_extra() if hasattr(scheduler, "summary_extra") else {}
    if plan is not None and plan.notes:
        extra = {**plan.notes, **extra}
    if extra:
        summary["scheduler_info"] = extra
    return summary


def foreground_summary(loads, contended_core_s, sim_time_s: float) -> list[dict[str, Any]]:
    """What training cost each foreground app (Swan's "foreground benchmark score loss").

    While a training thread runs on one of the app's cores, CFS gives the two threads equal
    shares, so the app gets half of the CPU time it asks for (the same fair-share model that
    slows the training thread, socsim.engine.sim ``_cpu_share``).  Its throughput loss over the
    part of its window that the run covers is therefore
    contended core-seconds / (2 x cores x window); 0 when training keeps off its cores,
    0.5 when training holds all of them throughout.
    """
    out = []
    for load, contended in zip(loads, contended_core_s):
        window = max(0.0, min(load.start_s + load.duration_s, sim_time_s) - load.start_s)
        loss = contended / (2.0 * len(load.cores) * window) if window > 0 else 0.0
        out.append({
            "name": load.name,
            "cores": list(load.cores),
            "start_s": load.start_s,
            "duration_s": load.duration_s,
            "utilization": load.utilization,
            "window_simulated_s": _r(window),
            "contended_core_s": _r(contended),
            "throughput_loss": _r(min(loss, 0.5), 6),
        })
    return out
