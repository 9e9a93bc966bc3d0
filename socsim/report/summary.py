"""The summary JSON of a run (docs/architecture.md, Contracts: keys are never renamed, only added)."""
from __future__ import annotations

from typing import Any

from socsim.contract.precision import run_precision
from socsim.version import __version__
from socsim.hw import units


def _r(x: float, nd: int = 9) -> float:
    """Round for stable, readable JSON (relative precision ~1e-9)."""
    if x == 0 or x != x:
        return float(x)
    from math import floor, log10
    return round(float(x), max(0, nd - 1 - int(floor(log10(abs(x))))))


def _per_batch(total: int, n: int) -> int | float:
    """A count per batch over ``n`` batches: the integer when every batch had the same (or the
    mean divides evenly), else the mean to 2 decimals (plans that change give fractions)."""
    return total // n if total % n == 0 else round(total / n, 2)


def budget_in_force_mb(budget_mb: Any, sim_time_s: float) -> float | None:
    """The smallest memory budget (MB) in force during a run of ``sim_time_s``: a number, or
    the steps of a budget profile, over the engine's intervals (socsim.engine.context
    ``budget_intervals``) that meet the run's [0, sim_time_s].  None without a budget."""
    from socsim.engine.context import budget_intervals

    held = [mb for start, end, mb in budget_intervals(budget_mb) if start < end and start <= sim_time_s and end > 0]
    return min(held) if held else None


def scheduler_options(scheduler) -> dict[str, Any]:
    """The scheduler's validated options, defaults included, as JSON values (so two runs with
    different options can be told apart from their summaries); {} for options the summary
    cannot carry as JSON."""
    import json

    opts = getattr(scheduler, "options", None)
    if opts is None or not hasattr(opts, "model_dump"):
        return {}
    try:
        data = opts.model_dump(mode="json")
        json.dumps(data, allow_nan=False)
    except Exception:   # a plugin's option type pydantic cannot serialise
        return {}
    return data if isinstance(data, dict) else {}


def unused_freq(workload, plan) -> str | None:
    """Why the workload's ``cpu.freq`` did not set the clock, when it is not the default "max"
    and no governor that reads it ran (only ``userspace`` does; socsim.contract.dvfs), else None."""
    freq = workload.cpu.freq
    if freq == "max" or "freq" not in workload.cpu.model_fields_set:
        return None
    gov = (getattr(plan, "governor", None) if plan is not None else None) or workload.cpu.governor
    if gov == "userspace" or (plan is not None and plan.cpu_freq_mhz):
        return None
    return (f"cpu.freq {freq!r} had no effect: the {gov} governor sets the clock (only cpu.governor: "
            "userspace runs at cpu.freq)")


def build_summary(soc, workload, scheduler, engine, stats, deterministic: bool = False) -> dict[str, Any]:
    n = max(stats.batches, 1)
    total_j = sum(stats.rail_energy_j.values())
    plan = stats.first_plan
    summary: dict[str, Any] = {
        "soc": soc.name,
        "workload": workload.name,
        "scheduler": getattr(scheduler, "name", type(scheduler).__name__),
        "scheduler_options": scheduler_options(scheduler),
        "model": workload.model,
        "precision": run_precision(scheduler, workload),
        "batch_size": workload.batch_size,
        "batches": stats.batches,
        "batches_planned": workload.total_batches,
        # a forward pass alone (mode: inference); a training run's summary has no "mode"
        **({"mode": "inference"} if getattr(workload, "mode", "train") == "inference" else {}),
        "sim_time_s": _r(stats.sim_time_s),
        "per_batch": {
            "time_s": _r(stats.batch_time_sum_s / n),
            "energy_j": _r(stats.batch_energy_sum_j / n),
        },
        "energy_j": {
            "total": _r(total_j),
            "training": _r(max(0.0, total_j - stats.idle_energy_j - stats.foreground_energy_j)),
            "idle_baseline": _r(stats.idle_energy_j),
            # the foreground apps' own draw on the cores training leaves them (with apps only)
            **({"foreground_apps": _r(stats.foreground_energy_j)} if workload.environment.foreground_loads else {}),
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
            # ops per batch on each unit (socsim.hw.units: cpu_ops, dsp_ops, gpu_ops, ...)
            **{k: _per_batch(stats.counts.get(k, 0), n) for k in units.ops_keys()},
            "switches": _per_batch(stats.counts["switches"], n),
            # seconds per batch with ops on each unit, in hand-overs between units (FastRPC calls,
            # GPU queue drains and copies), in the batch's preparation (graph building, compiling)
            "time_s": {k: _r(stats.time_on_s.get(k, 0.0) / n if n else 0.0)
                       for k in (*units.names(), "switch", "prep")},
            "cpu_cores": list(plan.cpu_cores) if plan else [],
            "plans": stats.plan_labels,
            "plan_batches": dict(stats.plan_batches),
            "config_switches": stats.config_switches,
            # the least share of the training step's work a plan in force ran, phase by phase
            # (below 1: a plan left ops out; socsim.contract.plan_coverage)
            "work_fraction": _r(min(stats.work_fraction, 1.0), 6),
        },
        "memory": {
            "peak_bytes": int(stats.peak_mem_bytes),
            "micro_batches": list(plan.micro_batches) if plan and plan.micro_batches else [workload.batch_size],
            "budget_mb": budget_in_force_mb(workload.environment.memory_budget_mb, stats.sim_time_s),
        },
        "battery": {
            "soc_start": _r(stats.battery_start_soc, 6),
            "soc_end": _r(stats.battery_end_soc, 6),
            # heat of the pack's own I^2 R and of the charger's conversion (socsim.hw.battery)
            "pack_loss_j": _r(engine.acct.battery.loss_j, 6),
            "charger_loss_j": _r(engine.acct.battery.charger_loss_j, 6),
        },
        "engine": {
            "templates_built": stats.templates_built,
            "dsp_graph_preparations": stats.dsp_prepared_batches,
            "stop_reason": stats.stop_reason,
        },
        "wall_time_s": 0.0 if deterministic else round(engine.wall_time_s, 3),
        "socsim_version": __version__,
    }
    own_graph = not any(p != summary["precision"] for p in stats.plan_precisions)
    if not own_graph:
        # the scheduler planned on a graph of another precision (ctx.graph(precision=...)):
        # report the one its plans trained in, and every one when they differed
        summary["precision"] = stats.plan_precisions[0]
        if len(stats.plan_precisions) > 1:
            summary["precisions"] = list(stats.plan_precisions)
    if (("precision" in workload.model_fields_set or not own_graph)
            and workload.precision != summary["precision"]):
        # the workload asked for a precision the scheduler does not train in (its own is fixed)
        summary["precision_requested"] = workload.precision
    if stats.short_plan:
        summary["engine"]["short_plan"] = stats.short_plan
    unused = unused_freq(workload, plan)
    if unused:
        summary["engine"]["unused_settings"] = [unused]
    loads = workload.environment.foreground_loads
    if loads:
        summary["foreground"] = foreground_summary(loads, stats.fg_contended_core_s, stats.sim_time_s)
    if summary["memory"]["budget_mb"] is not None:
        # memory in use above the budget in force at the time (socsim.engine.environment _over_budget)
        summary["memory"]["over_budget"] = {"seconds": _r(stats.over_budget_s), "batches": stats.over_budget_batches,
                                            "max_excess_bytes": int(stats.over_budget_max_bytes)}
        # batches a budget step cut and the scheduler finished with another plan (ctx.continue_batch)
        summary["memory"]["continued_batches"] = stats.continued_batches
    extra = scheduler.summary_extra() if hasattr(scheduler, "summary_extra") else {}
    summary["memory"].update(_micro_batch_history(summary["memory"]["micro_batches"], engine, extra))
    if plan is not None and plan.notes:
        extra = {**plan.notes, **extra}
    if extra:
        summary["scheduler_info"] = extra
    return summary


def placement_units(placement: dict[str, Any]) -> list[str]:
    """The units a summary's ``placement`` counts ops on (its ``<unit>_ops`` keys): the registered
    ones first, in the registry's order, then any others it has (a unit registered by a plugin
    when the run was made)."""
    have = [k.removesuffix("_ops") for k in placement if k.endswith("_ops")]
    known = [u for u in units.names() if u in have]
    return known + [u for u in have if u not in known]


def stopped_early(s: dict[str, Any]) -> bool:
    """Whether the run ended before its planned batches (a scheduler's ``ctx.stop``)."""
    stop = (s.get("engine") or {}).get("stop_reason")
    planned = s.get("batches_planned")
    return bool(stop) or (planned is not None and s["batches"] < planned)


def run_label(s: dict[str, Any]) -> str:
    """A run's scheduler as people name it: ``base+scheduler`` for a composed run (as ``socsim
    compare --schedulers`` names it, and as a file's ``base`` option composes it)."""
    base = (s.get("scheduler_info") or {}).get("base")
    return f"{base}+{s['scheduler']}" if isinstance(base, str) else s["scheduler"]


def compare_rows(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What ``socsim compare`` shows for each run, as numbers: per-batch time and energy (means
    over the batches run) and their ratios to the first run (the reference; None where its
    figure is 0), peak memory and temperature, ops per unit, switches, the mean foreground
    throughput loss (None without a foreground app running during the run) and the batches run
    of those planned, with the reason of an early stop.  The console table and ``compare --json``
    both come from here."""
    t0 = runs[0]["per_batch"]["time_s"] if runs else 0.0
    e0 = runs[0]["per_batch"]["energy_j"] if runs else 0.0
    rows = []
    for s in runs:
        pb, p = s["per_batch"], s["placement"]
        on = placement_units(p)
        # apps that ran while the run did (one that starts after the last batch harms nothing)
        loads = [f for f in s.get("foreground") or [] if f.get("window_simulated_s", 1.0) > 0]
        rows.append({
            "scheduler": run_label(s),
            "batches": s["batches"],
            "batches_planned": s.get("batches_planned", s["batches"]),
            "stopped_early": stopped_early(s),
            "stop_reason": (s.get("engine") or {}).get("stop_reason"),
            "time_per_batch_s": pb["time_s"],
            "time_x_first": _r(pb["time_s"] / t0) if t0 else None,
            "energy_per_batch_j": pb["energy_j"],
            "energy_x_first": _r(pb["energy_j"] / e0) if e0 else None,
            "peak_memory_bytes": s["memory"]["peak_bytes"],
            "peak_c": s["thermal"]["peak_c"],
            **{f"{u}_ops": p[f"{u}_ops"] for u in on},
            "switches": p["switches"],
            # share of the batch time with ops on each unit (the rest: hand-overs, preparation)
            "time_share": {u: (_r(p["time_s"].get(u, 0.0) / pb["time_s"], 4) if pb["time_s"] else 0.0)
                           for u in on},
            "fg_loss": _r(sum(f["throughput_loss"] for f in loads) / len(loads), 6) if loads else None,
        })
    return rows


def compare_report(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON of ``socsim compare``: the reference scheduler (the first), the table's rows
    (:func:`compare_rows`) and the runs' full summaries, in the order given."""
    return {"reference": runs[0]["scheduler"] if runs else None, "rows": compare_rows(runs), "runs": runs}


def _micro_batch_history(first: list[int], engine, extra: dict[str, Any]) -> dict[str, Any]:
    """How the mini-batch was split over the run (``memory.micro_batches`` keeps the first plan's
    split): ``micro_batch_sequence``, the splits of the batches as run, consecutive repeats merged,
    and ``micro_batches_final``, the split of the last batch.

    The sequence is the engine's record of the plans its batches ran (whoever made them: the
    scheduler's ``plan()`` or a hook).  Without one (no batch ran) it comes from the scheduler's
    ``summary_extra``: ``micro_batch_sequence`` (lists of ints) if it reports one, else
    ``split_sequence`` ("24+8" strings, as decided); else it is the first plan's split.  The final
    split is the plan the engine ran last."""
    runs = getattr(getattr(engine, "stats", None), "micro_batch_runs", None)
    if runs:
        return {"micro_batches_final": list(runs[-1]), "micro_batch_sequence": [list(m) for m in runs]}
    last = getattr(getattr(engine, "rctx", None), "plan", None)
    final = list(last.micro_batches) if last is not None and last.micro_batches else None
    seq = extra.get("micro_batch_sequence")
    if not seq and extra.get("split_sequence"):
        try:
            seq = [[int(x) for x in str(t).split("+")] for t in extra["split_sequence"]]
        except ValueError:
            seq = None
    seq = [list(m) for m in seq] if seq else [list(first)]
    if final is None:
        final = list(seq[-1])
    elif seq[-1] != final:
        seq.append(final)
    merged = [m for i, m in enumerate(seq) if i == 0 or m != seq[i - 1]]
    return {"micro_batches_final": final, "micro_batch_sequence": merged}


def foreground_summary(loads, contended_core_s, sim_time_s: float) -> list[dict[str, Any]]:
    """What training cost each foreground app (Swan's "foreground benchmark score loss").

    While a training thread runs on one of the app's cores, CFS gives the two threads equal
    shares, so the app gets half of the CPU time it asks for (the same fair-share model that
    slows the training thread, socsim.engine.environment ``_cpu_share``).  Its throughput loss over the
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
