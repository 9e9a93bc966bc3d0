"""Console tables (rich) for summaries, comparisons, single ops and listings."""
from __future__ import annotations

from math import floor, log10
from typing import Any

from rich.markup import escape
from rich.table import Table

from socsim.hw import units
from socsim.report.summary import placement_units, run_label


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return str(n)


def _sig(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits, no exponent (12.3, 1.23, 0.0123; 1234 stays 1234)."""
    if x == 0 or x != x:
        return f"{x:g}"
    decimals = max(0, digits - 1 - int(floor(log10(abs(x)))))
    return f"{x:.{decimals}f}"


def fmt_energy(j: float) -> str:
    """Joules with adaptive precision: 3 significant digits, in mJ below 0.1 J."""
    if abs(j) < 0.1 and j != 0:
        return f"{_sig(j * 1e3)} mJ"
    return f"{_sig(j)} J"


def fmt_time(s: float) -> str:
    """Seconds as ms with adaptive precision (3 significant digits below 100 ms)."""
    ms = s * 1e3
    return f"{ms:.1f} ms" if abs(ms) >= 100 else f"{_sig(ms)} ms"


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def precision_note(s: dict[str, Any]) -> str | None:
    """A one-line note when the workload's ``precision`` is not the one the scheduler trains in
    (the summary's ``precision_requested``), else None."""
    asked = s.get("precision_requested")
    if not asked or asked == s.get("precision"):
        return None
    return (f"note: {s['scheduler']} trains {s.get('precision')}; the workload's precision {asked} "
            "is not used")


def memory_budget_note(s: dict[str, Any]) -> str | None:
    """A one-line note when memory in use went over the budget in force at the time (the
    summary's ``memory.over_budget``), with the reason: a scheduler that does not plan for the
    budget ignores it (the note names those that do, :func:`budget_planners`); one that does
    re-plans a batch in progress when the budget drops, and goes over only where the part in
    progress cannot fit the new budget (its ``scheduler_info.resplits``); else None."""
    over = s["memory"].get("over_budget")
    if not over or not over.get("batches"):
        return None
    n, planned = over["batches"], s["batches"]
    planners = budget_planners()
    if s["scheduler"] not in planners:
        others = "; ".join(f"{name} does; {how}" for name, how in planners.items())
        why = f"{s['scheduler']} does not plan for the budget" + (f" ({others})" if others else "")
    else:
        failed = [r for r in (s.get("scheduler_info") or {}).get("resplits", []) if r.get("micro_batches") is None]
        why = (f"in {len(failed)} batch(es) the budget dropped while the micro-batch in progress needed more "
               "than the new budget even with everything it may evict evicted (scheduler_info.resplits); "
               "the plan for the new budget ran from the next batch")
        if not failed:
            why = "the budget in force was below what the plan for it needs"
    return (f"note: memory in use exceeded the budget in force (environment.memory_budget_mb) for "
            f"{_fmt_sim_time(over['seconds'])} in {n} of {planned} batches, by up to "
            f"{_fmt_bytes(over['max_excess_bytes'])}: {why}")


def budget_planners() -> dict[str, str]:
    """The registered schedulers that plan for a memory budget, each with how it keeps to one (its
    class's ``memory_budget_plan``), in the registry's order."""
    from socsim.sched.registry import discover

    out = {}
    for name, e in discover().items():
        how = getattr(e.cls, "memory_budget_plan", None) if e.cls is not None else None
        if isinstance(how, str) and how:
            out[name] = how
    return out


def notes(s: dict[str, Any]) -> list[str]:
    """The console notes on a finished run: a workload precision the scheduler does not train
    in, a memory budget it did not keep to, a time budget it did not keep to, a plan that left
    part of the training step out."""
    unused = [f"note: {u}" for u in (s.get("engine") or {}).get("unused_settings", [])]
    return [n for n in (precision_note(s), memory_budget_note(s), time_budget_note(s), coverage_note(s)) if n] + unused


def notes_to_print(s: dict[str, Any], quiet: bool) -> list[str]:
    """The notes a command prints on a run: all of them, or under --quiet only the warning on a
    plan that left part of the training step out."""
    if not quiet:
        return notes(s)
    short = coverage_note(s)
    return [short] if short else []


def time_budget_note(s: dict[str, Any]) -> str | None:
    """A one-line note when a scheduler planned the run under a time budget (``theta_t_s``)
    and the run took longer (``scheduler_info.within_budget`` false), else None."""
    info = s.get("scheduler_info") or {}
    if info.get("within_budget") is not False:
        return None
    return (f"note: {s['scheduler']} planned for a time budget of {_fmt_sim_time(info['theta_t_s'])} "
            f"(scheduler_info.theta_t_s) and the run took {_fmt_sim_time(info['run_time_s'])}: its plan "
            "rests on profiled batch times, which this run did not keep to")


def coverage_note(s: dict[str, Any]) -> str | None:
    """A plan ran less than the whole training step: its figures are not a training step's."""
    short = (s.get("engine") or {}).get("short_plan")
    if not short:
        return None
    return f"warning: {s['scheduler']}: {short} (its time and energy are not a whole training step's)"


def _fmt_sim_time(t_s: float) -> str:
    """Simulated seconds: ms with 3 significant digits below 1 s (a 0.4 ms run is not 0.000 s)."""
    return f"{t_s:.3f} s" if abs(t_s) >= 1 else fmt_time(t_s)


def _plan_sequence(labels: list[str], keep: int = 6) -> str:
    """The plans a run went through, in order; a long sequence keeps its ends."""
    shown = labels if len(labels) <= keep else labels[:keep - 2] + ["..."] + labels[-2:]
    return " -> ".join(shown) + ("" if len(labels) <= keep else f" ({len(labels)} in all)")


def summary_table(s: dict[str, Any], deterministic: bool | None = None) -> Table:
    """The run's summary.  ``deterministic``: the run reported no wall time (None: infer from a
    ``wall_time_s`` of 0)."""
    t = Table(title=escape(f"socsim: {s['workload']} on {s['soc']} ({run_label(s)})"), show_header=False)
    t.add_column("metric", style="bold")
    t.add_column("value")
    pb = s["per_batch"]
    e = s["energy_j"]
    mode = ", inference" if s.get("mode") == "inference" else ""
    t.add_row("batches", f"{s['batches']}  (batch size {s.get('batch_size', '?')}, {s.get('precision', '')}{mode})")
    stop = (s.get("engine") or {}).get("stop_reason")
    if stop:
        t.add_row("stopped early", escape(f"after {_plural(s['batches'], 'batch', 'batches')}: "
                                          f"{stop}"), style="yellow")
    t.add_row("simulated time", _fmt_sim_time(s["sim_time_s"]))
    t.add_row("per batch", f"{fmt_time(pb['time_s'])}, {fmt_energy(pb['energy_j'])}" if s["batches"]
              else "- (no batch trained)")
    t.add_row("energy (phone)", f"{fmt_energy(e['total'])}  (training {fmt_energy(e['training'])})")
    scale, unit = (1e3, "mJ") if abs(e["total"]) < 0.1 else (1.0, "J")
    t.add_row("energy by rail", ", ".join(f"{k} {_sig(v * scale)}" for k, v in e["rails"].items()) + f" ({unit})"
              if e["rails"] else "-")
    th = s["thermal"]
    t.add_row("temperature", f"peak {th['peak_c']:.1f} C, final {th['final_c']:.1f} C"
              + (f", throttled {th['time_throttled_s']:.1f} s" if th.get("time_throttled_s") else ""))
    p = s["placement"]
    plans, config = p.get("plans") or [], p.get("config_switches") or 0
    changed = len(plans) > 1 or config > 0
    ops = " / ".join(f"{u} {p[f'{u}_ops']}" for u in placement_units(p))
    t.add_row("placement", f"{ops} ops per batch, "
              f"{_plural(p['switches'], 'switch', 'switches')}; cores {p.get('cpu_cores')}"
              + (" (first plan)" if changed else ""))
    if changed:
        # the scheduler changed plans during the run (Swan moving off cores the foreground app uses)
        per = p.get("plan_batches") or {}
        counts = "; batches " + ", ".join(f"{k} {v}" for k, v in per.items()) if len(per) > 1 else ""
        t.add_row("plans", escape(f"{_plan_sequence(plans) if plans else 'unlabelled'}{counts}; "
                                  f"{_plural(config, 'config switch', 'config switches')} (cores or frequency)"))
    t.add_row("peak memory", _fmt_bytes(s["memory"]["peak_bytes"]))
    for fg in s.get("foreground", []):
        if fg["window_simulated_s"] > 0:
            said = f"throughput loss {100 * fg['throughput_loss']:.1f}% over {fg['window_simulated_s']:.1f} s"
        else:   # the run ended before the app started
            said = f"not reached (it starts at {fg['start_s']:g} s)"
        t.add_row(escape(f"foreground {fg['name']}"), f"cores {fg['cores']}: {said}")
    if deterministic is None:
        deterministic = s.get("wall_time_s") == 0
    t.add_row("wall time", "not measured (--deterministic)" if deterministic else f"{s['wall_time_s']:.2f} s")
    return t


def compare_table(runs: list[dict[str, Any]]) -> Table:
    """Side by side, ratios to the first run.  When a run stopped before its planned batches, a
    ``batches`` column shows how many ran (its per-batch figures are means over those) and the
    caption says why each one stopped."""
    from socsim.report.summary import compare_rows

    rows = compare_rows(runs)
    on = list(dict.fromkeys(u for s in runs for u in placement_units(s["placement"])))
    t = Table(title=escape(f"socsim compare: {runs[0]['workload']} on {runs[0]['soc']}"))
    fg = any(r["fg_loss"] is not None for r in rows)
    early = [r for r in rows if r["stopped_early"]]
    for col in (("scheduler",) + (("batches",) if early else ()) + ("time/batch", "x first", "energy/batch",
                "x first", "peak mem", "peak C", "/".join(on) + " time", "/".join(on) + " ops", "switches")
                + (("fg loss",) if fg else ())):
        t.add_column(col, justify="right" if col != "scheduler" else "left")
    for r in rows:
        if not r["batches"]:   # declined at once (Swan's gate): no per-batch figures to show
            t.add_row(escape(r["scheduler"]), *((f"0/{r['batches_planned']}",) if early else ()),
                      *(["-"] * 5), f"{r['peak_c']:.1f}", *(["-"] * 3), *(("-",) if fg else ()))
            continue
        t.add_row(escape(r["scheduler"]),
                  *((f"{r['batches']}/{r['batches_planned']}",) if early else ()),
                  fmt_time(r["time_per_batch_s"]), _ratio(r["time_x_first"]),
                  fmt_energy(r["energy_per_batch_j"]), _ratio(r["energy_x_first"]),
                  _fmt_bytes(r["peak_memory_bytes"]), f"{r['peak_c']:.1f}",
                  "/".join(f"{100 * r['time_share'].get(u, 0.0):.0f}%" for u in on),
                  "/".join(f"{r.get(f'{u}_ops', 0):g}" for u in on), str(r["switches"]),
                  *((_fg_loss(r),) if fg else ()))
    if early:
        notes = [f"{r['scheduler']} stopped after {r['batches']} of {_plural(r['batches_planned'], 'batch', 'batches')}"
                 + (f": {r['stop_reason']}" if r["stop_reason"] else "") for r in early]
        t.caption = escape("; ".join(notes) + " (per-batch figures are means over the batches run)")
        t.caption_justify = "left"
    return t


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _fg_loss(r: dict[str, Any]) -> str:
    """Mean foreground throughput loss over the run's foreground apps."""
    return "-" if r["fg_loss"] is None else f"{100 * r['fg_loss']:.1f}%"


def sweep_table(rows: list[dict[str, Any]]) -> Table:
    t = Table(title="socsim sweep")
    for col in ("soc", "scheduler", "set", "time/batch", "energy/batch", "peak C", "peak mem"):
        t.add_column(col)
    for r in rows:
        s, p = r.get("summary"), r["point"]
        sets = escape(" ".join(f"{k}={v}" for k, v in p["set"].items()))
        if s is None:   # sweep --skip-infeasible: the reason follows the table as a note
            t.add_row(escape(p["soc"]), escape(str(p["scheduler"] or "-")), sets, "[yellow]skipped[/]", "-", "-", "-")
            continue
        t.add_row(escape(p["soc"]), escape(run_label(s)), sets,
                  fmt_time(s["per_batch"]["time_s"]), fmt_energy(s["per_batch"]["energy_j"]),
                  f"{s['thermal']['peak_c']:.1f}", _fmt_bytes(s["memory"]["peak_bytes"]))
    return t


def op_table(r: dict[str, Any]) -> Table:
    t = Table(title=escape(f"{r['kind']} on {r['unit']} of {r['soc']}"), show_header=False)
    t.add_column("metric", style="bold")
    t.add_column("value")
    for k, v in r.items():
        if k in ("kind", "unit", "soc"):
            continue
        if isinstance(v, float):
            v = f"{v:.6g}"
        elif isinstance(v, dict):
            v = ", ".join(f"{a}={b:.4g}" if isinstance(b, float) else f"{a}={b}" for a, b in v.items())
        t.add_row(escape(str(k)), escape(str(v)))
    return t


def listing(what: str) -> Table:
    if what == "socs":
        from socsim.spec import list_socs, load_soc
        t = Table("name", "SoC", *(u.title for u in units.units()), "phones")
        for n in list_socs():
            s = load_soc(n)
            t.add_row(n, s.marketing_name, *(u.part(s) if u.present(s) else "-" for u in units.units()),
                      ", ".join(s.phones))
        return t
    if what == "schedulers":
        from socsim.sched.registry import discover, name_clash
        t = Table("name", "status", "description / error", "target")
        entries = discover()
        for name, e in entries.items():
            clash = name_clash(entries, name) if e.cls else None
            status = "ok" if e.cls and not clash else ("[red]clash[/]" if clash else "[red]broken[/]")
            t.add_row(escape(name), status, escape(str(clash or (e.description if e.cls else e.error))),
                      escape(e.target))
        return t
    if what == "models":
        from socsim.workload.models import discover
        t = Table("model", "status", "canonical input", "from")
        for name, e in discover().items():
            dims = "x".join(map(str, e.defn.canonical_input)) if e.defn and e.defn.canonical_input else "-"
            status = "ok" if e.defn else f"[red]broken[/]: {escape(str(e.error))}"
            t.add_row(escape(name), status, dims, "zoo" if e.builtin else escape(e.target))
        t.add_row("*.onnx", "ok", "-", "model: path/to/net.onnx (docs/guide.md, Your own model)")
        return t
    if what == "precisions":
        from socsim.workload.precision import list_precisions
        t = Table("precision")
        for p in list_precisions():
            t.add_row(p)
        return t
    if what == "workloads":
        from socsim.spec import load_workload, workloads_dir
        t = Table("file", "model", "batch", "precision", "scheduler", "description")
        for p in sorted(workloads_dir().glob("*.yaml")):
            try:
                w = load_workload(p)
                t.add_row(escape(p.name), escape(w.model), str(w.batch_size), w.precision,
                          escape(w.scheduler.name), escape(w.description))
            except Exception as e:  # a broken file is listed, not fatal
                t.add_row(escape(p.name), "-", "-", "-", "-", f"[red]{escape(str(e))}[/]")
        return t
    if what == "instructions":
        from isa.hvx import list_instructions
        rows = list_instructions()
        t = Table("instruction", "intrinsic", "resources", "latency")
        for r in rows:
            t.add_row(str(r["name"]), str(r.get("intrinsic", "")), str(r.get("resources", "")),
                      str(r.get("latency", "")))
        return t
    raise ValueError(what)
