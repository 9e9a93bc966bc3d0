"""Average training-attributable power of every row of an energy table (by default the development
set's 21 Min-Energy rows, calibration/dev/minenergy_table2.yaml), measured against simulated:
P = E / t per batch, which does not depend on the time error, and the energy each row would
have at the measured time (P_sim * t_meas).  Also the simulated power by rail (each rail's
energy above its idle baseline, per second), so that a power error can be traced to the cores,
the memory system (the ``dram`` rail carries DRAM traffic and the uncore's power) or leakage.
Prints figures; asserts nothing.

    python benchmarks/attributable_power.py [--table FILE] [--batches 2] [--rows BIG4@H ...]
        [--sustained 600] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TABLE = ROOT / "calibration" / "dev" / "minenergy_table2.yaml"
sys.path.insert(0, str(ROOT))  # this tree's socsim, not an installed one

from socsim.fidelity.evaluate import sustained_batches, workload_of  # noqa: E402
from socsim.fidelity.loader import load_measurements  # noqa: E402
from socsim.fidelity.metrics import kendall_tau_b  # noqa: E402


def simulate_row(case, batches: int, sustained_s: float = 0.0) -> dict:
    """The row's simulated per-batch time, training energy and attributable power by rail
    (``sustained_s``: over that much training from cold, as ``socsim fidelity --sustained``)."""
    from socsim.api import run
    from socsim.hw.power import SocPower
    from socsim.spec import load_soc

    s = run(case.soc, workload_of(case, batches), deterministic=True, reports=False).summary
    if sustained_s > 0:
        n = sustained_batches(sustained_s, float(s["per_batch"]["time_s"]), batches)
        if n > batches:
            s = run(case.soc, workload_of(case, n), deterministic=True, reports=False).summary
    n = max(int(s["batches"]), 1)
    t = float(s["per_batch"]["time_s"])
    e = float(s["energy_j"]["training"]) / n
    idle = SocPower.from_spec(load_soc(case.soc)).idle_mw()
    sim_t = float(s["sim_time_s"])
    rails = {k: (float(v) - idle.get(k, 0.0) * 1e-3 * sim_t) / sim_t for k, v in s["energy_j"]["rails"].items()}
    return {"time_s": t, "energy_j": e, "rails_w": rails}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", default=str(DEFAULT_TABLE))
    ap.add_argument("--batches", type=int, default=2)
    ap.add_argument("--sustained", type=float, default=0.0,
                    help="seconds of training each row is measured over, from cold (socsim fidelity --sustained)")
    ap.add_argument("--rows", nargs="*", default=None, help="only these row ids (e.g. BIG4@H)")
    ap.add_argument("--json", default=None, help="write the per-row figures to this file")
    a = ap.parse_args(argv)
    suite = load_measurements(a.table)
    cases = [c for t in suite.tables for c in t.cases if c.energy_j is not None]
    if a.rows:
        cases = [c for c in cases if c.id in a.rows]
    rows = []
    for c in cases:
        r = simulate_row(c, a.batches, a.sustained)
        rows.append({"id": c.id, "t_meas": c.time_s, "e_meas": c.energy_j, "t_sim": r["time_s"],
                     "e_sim": r["energy_j"], "rails_w": r["rails_w"]})
    rail_names = sorted({k for r in rows for k in r["rails_w"]})
    print(f"{'row':10s} {'t_meas':>6s} {'t_sim':>6s} {'t_err':>6s} {'P_meas':>7s} {'P_sim':>7s} {'P_err':>6s} "
          f"{'E_meas':>6s} {'E@t_m':>6s} {'E_sim':>6s} {'E_err':>6s}  " + " ".join(f"{k:>10s}" for k in rail_names))
    for r in rows:
        p_m, p_s = r["e_meas"] / r["t_meas"], r["e_sim"] / r["t_sim"]
        r.update(p_meas=p_m, p_sim=p_s, e_at_meas_t=p_s * r["t_meas"])
        print(f"{r['id']:10s} {r['t_meas']:6.2f} {r['t_sim']:6.2f} {100 * (r['t_sim'] / r['t_meas'] - 1):+5.0f}% "
              f"{p_m:7.3f} {p_s:7.3f} {100 * (p_s / p_m - 1):+5.0f}% "
              f"{r['e_meas']:6.2f} {r['e_at_meas_t']:6.2f} {r['e_sim']:6.2f} {100 * (r['e_sim'] / r['e_meas'] - 1):+5.0f}%  "
              + " ".join(f"{r['rails_w'].get(k, 0.0):10.3f}" for k in rail_names))
    if len(rows) > 1:
        def mape(meas: str, sim: str) -> float:
            return 100 * sum(abs(r[sim] - r[meas]) / r[meas] for r in rows) / len(rows)

        def tau(meas: str, sim: str) -> float:
            return kendall_tau_b([r[meas] for r in rows], [r[sim] for r in rows]) or 0.0

        print(f"n {len(rows)}  time MAPE {mape('t_meas', 't_sim'):.1f}%  energy MAPE {mape('e_meas', 'e_sim'):.1f}%  "
              f"power MAPE {mape('p_meas', 'p_sim'):.1f}%  energy-at-measured-time MAPE "
              f"{mape('e_meas', 'e_at_meas_t'):.1f}%")
        print(f"tau-b time {tau('t_meas', 't_sim'):.3f}  energy {tau('e_meas', 'e_sim'):.3f}  "
              f"power {tau('p_meas', 'p_sim'):.3f}  energy at measured time {tau('e_meas', 'e_at_meas_t'):.3f}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
