"""Fit the per-core-type FP32 kernel efficiencies (socsim/spec/coretypes.py) on the development
set's single-core rows: Min-Energy Table II on sd855, BIG1 (one A76) and LITTLE1 (one A55) at the
three frequency steps (calibration/dev/minenergy_table2.yaml).  docs/modeling.md, "Fitted
constants".

A single-core row's simulated time is exactly linear in 1 / efficiency (the GEMM tile's cycles
are divided by it, nothing else is), so each row is simulated at two efficiencies and the line
through them is searched for the efficiency that minimises the MAPE of the core type's three
rows (a grid of step 0.005).

    python benchmarks/fit_core_efficiency.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.dev_error import DEFAULT_TABLE, run_config  # noqa: E402
from socsim.spec import _load_soc_path, coretypes  # noqa: E402

ROWS = {"BIG1": "cortex-a76", "LITTLE1": "cortex-a55"}
PROBES = (0.4, 0.8)


def times_at(eff: float) -> dict[tuple[str, int], float]:
    tab = yaml.safe_load(DEFAULT_TABLE.read_text())
    saved = dict(coretypes.FP32_EFFICIENCY)
    coretypes.FP32_EFFICIENCY.update({ct: eff for ct in ROWS.values()})
    _load_soc_path.cache_clear()
    try:
        out = {}
        for name in ROWS:
            for i in range(len(tab["levels"])):
                t, _, _ = run_config(tab["soc"], name.lower(), tab["big_ghz"][i] * 1000, tab["little_ghz"][i] * 1000, 1)
                out[(name, i)] = t
        return out
    finally:
        coretypes.FP32_EFFICIENCY.clear()
        coretypes.FP32_EFFICIENCY.update(saved)
        _load_soc_path.cache_clear()


def main() -> int:
    tab = yaml.safe_load(DEFAULT_TABLE.read_text())
    lo, hi = (times_at(e) for e in PROBES)
    for name, ct in ROWS.items():
        best = None
        for k in range(40, 200):
            eff = k * 0.005
            errs = []
            for i in range(len(tab["levels"])):
                # t = a + b / eff through the two probes
                b = (lo[(name, i)] - hi[(name, i)]) / (1 / PROBES[0] - 1 / PROBES[1])
                a = hi[(name, i)] - b / PROBES[1]
                errs.append(abs(a + b / eff - tab["rows"][name]["time_s"][i]) / tab["rows"][name]["time_s"][i])
            mape = 100 * sum(errs) / len(errs)
            if best is None or mape < best[1]:
                best = (eff, mape)
        print(f"{ct}: fp32_efficiency {best[0]:.3f} (MAPE of the {name} rows {best[1]:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
