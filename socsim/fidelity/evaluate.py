"""Simulate every row of a measurement file and compare: per table n, time and energy MAPE,
Kendall tau-b of the orderings and the worst rows, or, for a ratio table, the error of each ratio.
The result is a JSON-ready dict (what ``socsim fidelity --json`` writes)."""
from __future__ import annotations

import math
from typing import Any, Callable

from socsim.errors import InputError
from socsim.fidelity.cases import Case, Suite, TableCases
from socsim.fidelity.metrics import kendall_tau_b, kendall_tau_b_resolved, mape, rel_error_pct, resolution, worst

#: batches simulated per row: the per-batch figures of a fixed configuration settle from the first
DEFAULT_BATCHES = 2
#: rows listed as the worst of a table
WORST = 5


def _r(x: float | None) -> float | None:
    """Six significant digits: readable, and stable across platforms' last bits."""
    return None if x is None else float(f"{x:.6g}")


def workload_of(case: Case, batches: int) -> dict[str, Any]:
    """The socsim workload (a dict, as a YAML file would give it) that stands for ``case``."""
    cpu: dict[str, Any] = {"governor": case.governor, "freq": case.freq}
    if case.cores is not None:
        cpu["cores"] = case.cores
    w = {"name": f"fidelity {case.id}", "model": case.model, "input": list(case.input),
         "num_classes": case.num_classes, "batch_size": case.batch, "batches": batches, "mode": case.mode,
         "scheduler": {"name": case.scheduler, **({"options": dict(case.options)} if case.options else {})},
         "cpu": cpu}
    if case.background is not None:
        w["environment"] = {"background": dict(case.background)}
    return w


def simulate(case: Case, batches: int, file: str, sustained_s: float = 0.0) -> tuple[float, float]:
    """(time, training energy) per batch of the run standing for ``case``; an error of the run
    is an InputError at the row's place in the measurement file.

    ``sustained_s`` > 0: the row is measured over that much training from a cold phone, as a
    power monitor averaging a whole training round sees it (the phone heats and its thermal
    governor caps the clocks meanwhile; docs/fidelity.md, "Sustained rows"): the run is
    ``batches`` batches, then as many as fill ``sustained_s`` at the first run's per-batch time,
    and the figures are the averages over every batch of that run."""
    from socsim.api import run

    def once(n: int) -> tuple[float, float]:
        try:
            s = run(case.soc, workload_of(case, n), deterministic=True, reports=False).summary
        except InputError as e:
            raise InputError(f"socsim cannot run this row: {e.render()}", file=file, field=case.where, value=case.id,
                             line=case.line) from None
        done = max(int(s["batches"]), 1)
        return float(s["per_batch"]["time_s"]), float(s["energy_j"]["training"]) / done

    t, e = once(batches)
    if sustained_s > 0 and t > 0:
        n = sustained_batches(sustained_s, t, batches)
        if n > batches:
            t, e = once(n)
    return t, e


def sustained_batches(sustained_s: float, batch_s: float, batches: int) -> int:
    """Batches that fill ``sustained_s`` of training at ``batch_s`` each (at least ``batches``;
    at most the workload's limit, socsim.spec.workload.MAX_BATCHES)."""
    from socsim.spec.workload import MAX_BATCHES

    return int(min(MAX_BATCHES, max(batches, math.ceil(sustained_s / batch_s))))


def evaluate(suite: Suite, batches: int = DEFAULT_BATCHES, worst_n: int = WORST,
             progress: Callable[[int, int], None] | None = None, sustained_s: float = 0.0) -> dict[str, Any]:
    """Run every distinct configuration of ``suite`` once and compare each table; ``sustained_s``
    > 0 measures each row over that much training from cold (:func:`simulate`)."""
    if batches < 1:
        raise InputError("must be at least 1", field="--batches", value=batches)
    if not (sustained_s >= 0 and math.isfinite(sustained_s)):
        raise InputError("must be 0 (off) or a number of seconds", field="--sustained", value=sustained_s)
    unique: dict[tuple, Case] = {}
    for t in suite.tables:
        for c in t.cases:
            unique.setdefault(c.run_key(), c)
    sims: dict[tuple, tuple[float, float]] = {}
    for i, (key, case) in enumerate(unique.items()):
        sims[key] = simulate(case, batches, suite.file, sustained_s)
        if progress:
            progress(i + 1, len(unique))
    return {"file": suite.file, "format": suite.format, "source": suite.source, "batches_per_row": batches,
            **({"sustained_s": sustained_s} if sustained_s > 0 else {}),
            "tables": [_table(t, sims, worst_n) for t in suite.tables],
            "skipped": [{"what": w, "reason": r} for w, r in suite.skipped], "notes": list(suite.notes)}


def _rows(t: TableCases, sims: dict[tuple, tuple[float, float]]) -> list[dict[str, Any]]:
    rows = []
    for c in t.cases:
        st, se = sims[c.run_key()]
        row = {"id": c.id, "soc": c.soc, "model": c.model, "mode": c.mode, "batch": c.batch, "config": c.config(),
               "measured_time_s": _r(c.time_s), "simulated_time_s": _r(st),
               "time_error_pct": _r(rel_error_pct(c.time_s, st))}
        if c.energy_j is not None:
            row.update(measured_energy_j=_r(c.energy_j), simulated_energy_j=_r(se),
                       energy_error_pct=_r(rel_error_pct(c.energy_j, se)))
            if c.time_s > 0 and st > 0:
                # the average power the energy is drawn at (E / t): what the power model alone
                # gets right or wrong, whatever the time's error
                pm, ps = c.energy_j / c.time_s, se / st
                row.update(measured_power_w=_r(pm), simulated_power_w=_r(ps),
                           power_error_pct=_r(rel_error_pct(pm, ps)))
        rows.append(row)
    return rows


def _table(t: TableCases, sims: dict[tuple, tuple[float, float]], worst_n: int) -> dict[str, Any]:
    rows = _rows(t, sims)
    if t.compare == "ratios":
        return _ratio_table(t, rows, worst_n)
    times = [(r["measured_time_s"], r["simulated_time_s"]) for r in rows]
    energies = [(r["measured_energy_j"], r["simulated_energy_j"]) for r in rows if "measured_energy_j" in r]
    powers = [(r["measured_power_w"], r["simulated_power_w"]) for r in rows if "measured_power_w" in r]
    errors = [max(abs(r["time_error_pct"]), abs(r.get("energy_error_pct") or 0.0)) for r in rows]
    return {"name": t.name, "compare": "absolute", "n": len(rows),
            "time_mape_pct": _r(mape(*_cols(times))),
            "energy_mape_pct": _r(mape(*_cols(energies))) if energies else None,
            "power_mape_pct": _r(mape(*_cols(powers))) if powers else None,
            "time_tau": _r(kendall_tau_b(*_cols(times))),
            "energy_tau": _r(kendall_tau_b(*_cols(energies))) if energies else None,
            "power_tau": _r(kendall_tau_b(*_cols(powers))) if powers else None,
            **_resolved(times, energies),
            "worst": worst([r["id"] for r in rows], errors, worst_n), "rows": rows}


def _resolved(times: list[tuple[float, float]], energies: list[tuple[float, float]]) -> dict[str, Any]:
    """The taus over the pairs the measurements resolve (metrics.kendall_tau_b_resolved: pairs
    within one unit of the last digit the file gives, ``resolution``, left out), printed beside
    the taus, never in their place: how far a comparison's ordering can be held to the figures."""
    out: dict[str, Any] = {}
    res: dict[str, float] = {}
    for key, pairs, unit in (("time", times, "time_s"), ("energy", energies, "energy_j")):
        r = resolution([p[0] for p in pairs]) if pairs else None
        if r is None:
            continue
        res[unit] = r
        out[f"{key}_tau_resolved"] = _r(kendall_tau_b_resolved(*_cols(pairs), r))
    if res:
        out["resolution"] = res
    return out


def _ratio_table(t: TableCases, rows: list[dict[str, Any]], worst_n: int) -> dict[str, Any]:
    """Each ratio's error; the MAPE and tau over the ratios no measurement of the phone's own
    contradicts (RatioCase.contradicted, shown and counted apart), and over all of them."""
    sim_time = {r["id"]: r["simulated_time_s"] for r in rows}
    ratios = []
    for q in t.ratios:
        simulated = sim_time[q.num] / sim_time[q.den]
        ratio = {"name": q.name, "kind": q.kind, "num": q.num, "den": q.den, "measured": _r(q.measured),
                 "simulated": _r(simulated), "error_pct": _r(rel_error_pct(q.measured, simulated))}
        if q.contradicted:
            ratio["contradicted"] = q.contradicted
        ratios.append(ratio)
    kept = [q for q in ratios if "contradicted" not in q]
    pairs = [(q["measured"], q["simulated"]) for q in kept]
    every = [(q["measured"], q["simulated"]) for q in ratios]
    out = {"name": t.name, "compare": "ratios", "n": len(kept), "ratio_mape_pct": _r(mape(*_cols(pairs))),
           "ratio_tau": _r(kendall_tau_b(*_cols(pairs))),
           "worst": worst([q["name"] for q in kept], [q["error_pct"] for q in kept], worst_n),
           "ratios": ratios, "rows": rows}
    if len(kept) < len(ratios):
        out.update(n_contradicted=len(ratios) - len(kept), ratio_mape_all_pct=_r(mape(*_cols(every))))
    return out


def _cols(pairs: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    return [p[0] for p in pairs], [p[1] for p in pairs]
