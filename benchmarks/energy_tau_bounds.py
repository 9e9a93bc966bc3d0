"""How far the Kendall tau of a table's energies can go, and what stands in its way: from a
``socsim fidelity --json`` report (an absolute table with energies, by default the development
set's Min-Energy table), prints

- the tau-b of the energies and the tau over the pairs the measurements resolve, at one, two and
  three units of the file's last digit (socsim.fidelity.metrics.kendall_tau_b_resolved);
- the tau the energies would have with the power right and the simulated times (E = P_meas *
  t_sim), and with the simulated power at the measured times (E = P_sim * t_meas): which of time
  and power holds the ordering back;
- the tau a model with a random per-row energy error would reach on average (lognormal, sigma
  1-20%, a fixed seed): the accuracy per row a tau target asks for, and, read the other way, the
  tau a perfect model reaches against one measurement of a phone whose run-to-run spread is sigma;
- per step (the rows whose ids end in the same ``@X``, e.g. Min-Energy's H / M / L): n, time,
  energy and power MAPE, tau of the times and of the energies.

Prints figures; asserts nothing.

    python benchmarks/energy_tau_bounds.py [REPORT.json] [--table NAME] [--draws 400]

Without REPORT it runs ``socsim fidelity`` on calibration/dev/minenergy_table2.yaml (2 batches
per row) first.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's socsim, not an installed one

from socsim.fidelity.metrics import kendall_tau_b, kendall_tau_b_resolved, mape, resolution  # noqa: E402

DEFAULT_TABLE = ROOT / "calibration" / "dev" / "minenergy_table2.yaml"
SIGMAS = (0.01, 0.02, 0.03, 0.05, 0.1, 0.15, 0.2)


def report_of(path: str | None) -> dict:
    if path:
        return json.loads(Path(path).read_text())
    from socsim.fidelity import evaluate, load_measurements
    from socsim.fidelity.evaluate import DEFAULT_BATCHES

    return evaluate(load_measurements(str(DEFAULT_TABLE)), DEFAULT_BATCHES)


def expected_tau(em: list[float], sigma: float, draws: int, seed: int = 0) -> tuple[float, float, float]:
    """(mean, 10th, 90th percentile) of the tau-b of ``em`` against ``em`` with a lognormal
    error of ``sigma`` on each value."""
    rng = random.Random(seed)
    taus = sorted(kendall_tau_b(em, [e * math.exp(rng.gauss(0.0, sigma)) for e in em]) or 0.0
                  for _ in range(draws))
    return sum(taus) / draws, taus[draws // 10], taus[(9 * draws) // 10]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", nargs="?", default=None, help="a socsim fidelity --json report")
    ap.add_argument("--table", default=None, help="the table's name (default: the first with energies)")
    ap.add_argument("--draws", type=int, default=400)
    a = ap.parse_args(argv)
    rep = report_of(a.report)
    tables = [t for t in rep["tables"] if t.get("compare") == "absolute" and t.get("energy_tau") is not None
              and (a.table is None or t["name"] == a.table)]
    if not tables:
        raise SystemExit("no absolute table with energies in the report")
    t = tables[0]
    rows = [r for r in t["rows"] if "measured_energy_j" in r]
    em = [r["measured_energy_j"] for r in rows]
    es = [r["simulated_energy_j"] for r in rows]
    tm = [r["measured_time_s"] for r in rows]
    ts = [r["simulated_time_s"] for r in rows]
    res = resolution(em) or 0.0
    print(f"{t['name']}: n {len(rows)}, energies given to {res:g} J")
    print(f"tau-b of the energies {kendall_tau_b(em, es):.3f}")
    for k in (1, 2, 3):
        n_out = sum(1 for i in range(len(em)) for j in range(i + 1, len(em)) if abs(em[i] - em[j]) <= k * res * (1 + 1e-9))
        print(f"  over the pairs more than {k * res:g} J apart ({n_out} of {len(em) * (len(em) - 1) // 2} left out): "
              f"{kendall_tau_b_resolved(em, es, k * res):.3f}")
    pm = [e / x for e, x in zip(em, tm)]
    ps = [e / x for e, x in zip(es, ts)]
    print(f"with the measured power at the simulated times (P_meas * t_sim): {kendall_tau_b(em, [p * x for p, x in zip(pm, ts)]):.3f}")
    print(f"with the simulated power at the measured times (P_sim * t_meas): {kendall_tau_b(em, [p * x for p, x in zip(ps, tm)]):.3f}")
    print(f"a model with a random lognormal error per row ({a.draws} draws): sigma, mean tau-b, 10th-90th percentile")
    for s in SIGMAS:
        m, lo, hi = expected_tau(em, s, a.draws)
        print(f"  {100 * s:4.0f}%  {m:.3f}  {lo:.3f}-{hi:.3f}")
    steps = list(dict.fromkeys(r["id"].rsplit("@", 1)[1] for r in rows if "@" in r["id"]))  # as the file orders them
    if steps:
        print("per step: n, time MAPE, energy MAPE, power MAPE, tau time, tau energy")
    for step in steps:
        sel = [i for i, r in enumerate(rows) if r["id"].endswith("@" + step)]
        c = {k: [v[i] for i in sel] for k, v in (("tm", tm), ("ts", ts), ("em", em), ("es", es), ("pm", pm), ("ps", ps))}
        tt, te = kendall_tau_b(c["tm"], c["ts"]), kendall_tau_b(c["em"], c["es"])
        print(f"  {step:4s} {len(sel):2d}  {mape(c['tm'], c['ts']):5.1f}%  {mape(c['em'], c['es']):5.1f}%  "
              f"{mape(c['pm'], c['ps']):5.1f}%  {'-' if tt is None else f'{tt:.3f}'}  {'-' if te is None else f'{te:.3f}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
