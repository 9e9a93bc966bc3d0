"""Scan the fork-join background values (socsim.hw.forkjoin.BACKGROUND_UTIL_TOP) on Min-Energy's
Table II (calibration/dev/minenergy_table2.yaml): for each (big, little) point of a grid, every
row's time as the sum of its training ops' costs (socsim.hw.cpu.cpu_cost at the row's fixed core
set and clocks; the rows run a userspace governor and one graph, so the sum is the step time that
``socsim fidelity`` simulates, less the run's event overheads), and the time MAPE with the
Kendall tau-b of the times.  A fast stand-in for benchmarks/fit_forkjoin.py's full runs over a
finer grid (SERIAL_FRACTION as it is); prints figures, writes nothing.

    python benchmarks/scan_background.py [--big 0.10:0.22:0.01] [--little 0.16:0.24:0.01] [--top 15]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's socsim, not an installed one

from socsim.engine.context import build_graph  # noqa: E402
from socsim.engine.cores import resolve_cores  # noqa: E402
from socsim.fidelity.loader import load_measurements  # noqa: E402
from socsim.fidelity.metrics import kendall_tau_b  # noqa: E402
from socsim.hw import cpu, forkjoin  # noqa: E402
from socsim.hw.cost import CpuConfig  # noqa: E402
from socsim.spec import load_soc  # noqa: E402

TABLE = ROOT / "calibration" / "dev" / "minenergy_table2.yaml"


def _grid(spec: str) -> list[float]:
    lo, hi, step = (float(x) for x in spec.split(":"))
    n = int(round((hi - lo) / step))
    return [round(lo + i * step, 4) for i in range(n + 1)]


def row_times(soc, graph, cases) -> list[float]:
    out = []
    for c in cases:
        cfg = CpuConfig(resolve_cores(soc, c.cores), tuple(sorted(dict(c.freq).items())))
        t = 0.0
        for op in graph.ops:
            k = cpu.cpu_cost(soc, op, cfg)
            t += k.cycles / (k.freq_mhz * 1e6) + k.stall_s
        out.append(t)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", default="0.10:0.22:0.01")
    ap.add_argument("--little", default="0.16:0.24:0.01")
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args(argv)
    suite = load_measurements(TABLE)
    cases = suite.tables[0].cases
    soc = load_soc("sd855")
    graph = build_graph("alexnet", (3, 224, 224), 10, 16, "fp32")
    meas = [c.time_s for c in cases]
    res = []
    for big in _grid(a.big):
        for little in _grid(a.little):
            forkjoin.BACKGROUND_UTIL_TOP = {"little": little, "big": big}
            sims = row_times(soc, graph, cases)
            mape = 100 * sum(abs(s / m - 1) for s, m in zip(sims, meas)) / len(meas)
            res.append((mape, -kendall_tau_b(meas, sims), big, little, sims))
            print(f"big {big:.2f} little {little:.2f}: time MAPE {mape:5.2f}%  tau {-res[-1][1]:.3f}", flush=True)
    res.sort()
    print("best:")
    for mape, ntau, big, little, sims in res[:a.top]:
        rows = ", ".join(f"{c.id} {100 * (s / c.time_s - 1):+.0f}%" for c, s in zip(cases, sims))
        print(f"big {big:.2f} little {little:.2f}: {mape:.2f}% tau {-ntau:.3f} | {rows}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
