"""A real phone's Perfetto trace as a measurement: what it measured against a simulated run of
the same workload, as a fidelity report (:func:`socsim.fidelity.evaluate`'s shape).

The trace's slices named ``slice_name`` are the batches (one per batch); the same number of
batches is simulated and read back through the same reader
(:func:`socsim.report.trace_reader.read_trace`), so both sides are measured alike.  Two tables:
the batches (time per batch, row by row; energy per batch from the rails' energy, spread evenly)
and the run's quantities (rail energy in total, battery discharge, the peak of each thermal zone
both sides name, each CPU's mean frequency), compared as measured against simulated.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from socsim.errors import InputError
from socsim.fidelity.evaluate import _cols, _r
from socsim.fidelity.metrics import kendall_tau_b, mape, rel_error_pct, worst
from socsim.report.trace_reader import TraceMeasurements, read_trace

WORST = 5


def _mean_khz(res: dict[int, float]) -> float | None:
    total = sum(res.values())
    return None if total <= 0 else sum(k * s for k, s in res.items()) / total


def quantities(m: TraceMeasurements) -> dict[str, float]:
    """The run-level figures of one trace, by name."""
    out: dict[str, float] = {}
    if m.rail_energy_uws:
        out["rail energy, all rails (J)"] = sum(m.rail_energy_uws.values()) / 1e6
    if m.battery_discharge_uah is not None:
        out["battery discharge (uAh)"] = float(m.battery_discharge_uah)
    for zone, c in m.peak_temp_c.items():
        out[f"peak {zone} (C)"] = c
    for cpu, res in m.freq_residency_s.items():
        mean = _mean_khz(res)
        if mean is not None:
            out[f"cpu{cpu} mean frequency (MHz)"] = mean / 1000
    return out


def compare_trace(trace: str | Path, workload: str | Path, soc: str, slice_name: str,
                  overrides: list[str] | None = None) -> dict[str, Any]:
    """Read ``trace``, simulate ``workload`` on ``soc`` for as many batches as it has slices
    named ``slice_name``, and compare."""
    from socsim.api import run
    measured = read_trace(trace, slice_name)
    n = len(measured.slices_s)
    if n == 0:
        raise InputError(f"the trace has no slice named {slice_name!r}", file=str(trace),
                         field="--slice", value=slice_name)
    with tempfile.TemporaryDirectory(prefix="socsim-trace-") as tmp:
        res = run(soc, workload, overrides=[*(overrides or []), f"batches={n}"], out=tmp,
                  deterministic=True)
        sim = read_trace(Path(tmp) / "trace.perfetto-trace", "")
        sim_times = [float(line.split(",")[2]) for line in
                     (Path(tmp) / "batches.csv").read_text().splitlines()[1:]]
    per_batch_j = sum(measured.rail_energy_uws.values()) / 1e6 / n if measured.rail_energy_uws else None
    sim_j = float(res.summary["energy_j"]["total"]) / max(1, len(sim_times))
    rows = []
    for i, (mt, st) in enumerate(zip(measured.slices_s, sim_times)):
        row = {"id": f"batch {i}", "config": f"{soc} {Path(str(workload)).name}",
               "measured_time_s": _r(mt), "simulated_time_s": _r(st),
               "time_error_pct": _r(rel_error_pct(mt, st))}
        if per_batch_j is not None:
            row.update(measured_energy_j=_r(per_batch_j), simulated_energy_j=_r(sim_j),
                       energy_error_pct=_r(rel_error_pct(per_batch_j, sim_j)))
        rows.append(row)
    times = [(r["measured_time_s"], r["simulated_time_s"]) for r in rows]
    energies = [(r["measured_energy_j"], r["simulated_energy_j"]) for r in rows if "measured_energy_j" in r]
    errors = [abs(r["time_error_pct"]) for r in rows]
    batches = {"name": f"{slice_name} slices", "compare": "absolute", "n": len(rows),
               "time_mape_pct": _r(mape(*_cols(times))),
               "energy_mape_pct": _r(mape(*_cols(energies))) if energies else None,
               "time_tau": _r(kendall_tau_b(*_cols(times))) if len(rows) > 1 else None,
               "energy_tau": None, "worst": worst([r["id"] for r in rows], errors, WORST), "rows": rows}
    mq, sq = quantities(measured), quantities(sim)
    qs = [{"name": k, "kind": "quantity", "measured": _r(v), "simulated": _r(sq[k]),
           "error_pct": _r(rel_error_pct(v, sq[k]) if v else None)} for k, v in mq.items() if k in sq]
    pairs = [(q["measured"], q["simulated"]) for q in qs if q["error_pct"] is not None]
    run_table = {"name": "the run", "compare": "quantities", "n": len(qs),
                 "ratio_mape_pct": _r(mape(*_cols(pairs))) if pairs else None,
                 "ratio_tau": _r(kendall_tau_b(*_cols(pairs))) if len(pairs) > 1 else None,
                 "worst": worst([q["name"] for q in qs], [abs(q["error_pct"] or 0) for q in qs], WORST),
                 "ratios": qs, "rows": []}
    missing = sorted(set(mq) - set(sq))
    notes = [f"measured only (socsim has no counterpart by that name): {', '.join(missing)}"] if missing else []
    return {"file": str(trace), "format": "perfetto-trace", "source": f"slices named {slice_name!r}",
            "batches_per_row": n, "tables": [batches, run_table], "skipped": [], "notes": notes}
