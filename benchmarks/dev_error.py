"""Development-set error of the CPU model: the 21 Min-Energy configurations (AlexNet, MNN FP32,
batch 16, on sd855: 7 core sets x 3 frequency steps) against the published per-batch time and
training-attributable energy (calibration/dev/minenergy_table2.yaml, Min-Energy Table II).
Prints time MAPE, energy MAPE, Kendall tau-b of both orderings and the per-row errors; asserts
nothing.  A stand-in for `socsim fidelity` until that command exists.

    python benchmarks/dev_error.py [--table calibration/dev/minenergy_table2.yaml] [--batches 2]

Each configuration runs ``--batches`` batches (the engine builds one batch template per plan and
the userspace governor holds the clocks, so batches are identical; the script prints the spread
of the per-batch time to show it).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TABLE = ROOT / "calibration" / "dev" / "minenergy_table2.yaml"
WORKLOAD = ROOT / "workloads" / "min_energy_alexnet.yaml"
sys.path.insert(0, str(ROOT))  # this tree's socsim, not an installed one

from socsim.fidelity.metrics import kendall_tau_b  # noqa: E402


def run_config(soc: str, cores: str, big_mhz: float, little_mhz: float, batches: int,
               scheduler: str = "mnn-fp32") -> tuple[float, float, float]:
    import socsim

    r = socsim.run(soc, WORKLOAD, scheduler=scheduler, reports=False, deterministic=True,
                   overrides={"batches": batches, "cpu.cores": cores, "cpu.governor": "userspace",
                              "cpu.freq": {"little": little_mhz, "mid": big_mhz, "prime": big_mhz}})
    s = r.summary
    n = s["batches"]
    t = s["per_batch"]["time_s"]
    e = s["energy_j"]["training"] / n
    return t, e, s["sim_time_s"] / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", default=str(DEFAULT_TABLE))
    ap.add_argument("--batches", type=int, default=2)
    ap.add_argument("--scheduler", default="mnn-fp32")
    a = ap.parse_args(argv)
    tab = yaml.safe_load(Path(a.table).read_text())
    rows = []
    for name, row in tab["rows"].items():
        for i, lvl in enumerate(tab["levels"]):
            big = tab["big_ghz"][i] * 1000
            little = tab["little_ghz"][i] * 1000
            t, e, _ = run_config(tab["soc"], name.lower(), big, little, a.batches, a.scheduler)
            rows.append((name, lvl, row["time_s"][i], t, row["energy_j"][i], e))
    print(f"{'config':10s} {'t_pub':>7s} {'t_sim':>7s} {'t_err':>7s} {'e_pub':>6s} {'e_sim':>6s} {'e_err':>7s}")
    for name, lvl, tp, ts, ep, es in rows:
        print(f"{name + ' ' + lvl:10s} {tp:7.2f} {ts:7.2f} {100 * (ts - tp) / tp:+6.0f}% "
              f"{ep:6.1f} {es:6.1f} {100 * (es - ep) / ep:+6.0f}%")
    t_mape = 100 * sum(abs(r[3] - r[2]) / r[2] for r in rows) / len(rows)
    e_mape = 100 * sum(abs(r[5] - r[4]) / r[4] for r in rows) / len(rows)
    tau_t = kendall_tau_b([r[2] for r in rows], [r[3] for r in rows])
    tau_e = kendall_tau_b([r[4] for r in rows], [r[5] for r in rows])
    print(f"time MAPE {t_mape:.1f}%  energy MAPE {e_mape:.1f}%  tau_b time {tau_t:.3f}  tau_b energy {tau_e:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
