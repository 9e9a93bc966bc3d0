"""Where a training graph's DSP time goes: every op of a model's NITI graph that the SoC's DSP
runs, costed alone on the DSP (whole batch, no splitting, no CPU placement), summed by op kind
into HVX compute and memory stall.  For comparing activation stagings and clocks (docs/hvx.md
"Activation staging"); prints a table, writes nothing.

    python benchmarks/dsp_breakdown.py --soc sd888 --model resnet18 --input 3x224x224 --batch 64 \\
        [--staging l2|vtcm_dma] [--freq 1402]
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from socsim.engine.context import build_graph  # noqa: E402
from socsim.hw.cost import DspConfig  # noqa: E402
from socsim.hw.dsp import DspCostModel, dsp_supports  # noqa: E402
from socsim.spec import load_soc  # noqa: E402
from socsim.spec.soc import with_activation_staging  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--soc", default="sd888")
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--input", default="3x224x224", help="CxHxW")
    ap.add_argument("--classes", type=int, default=None, help="default: 1000 above 100x100 inputs, else 10")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--staging", choices=["l2", "vtcm_dma"], default=None, help="default: the SoC's")
    ap.add_argument("--freq", type=float, default=None, help="DSP MHz (default: the training clock)")
    a = ap.parse_args()
    soc = with_activation_staging(load_soc(a.soc), a.staging)
    chw = tuple(int(x) for x in a.input.split("x"))
    classes = a.classes or (1000 if chw[1] >= 100 else 10)
    mhz = a.freq or soc.dsp.training_clock_mhz
    graph = build_graph(a.model, chw, classes, a.batch, "niti")
    model = DspCostModel(soc)
    by_kind: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
    for op in graph.ops:
        if not dsp_supports(soc, op):
            continue
        c = model.cost(op, DspConfig(freq_mhz=mhz))
        row = by_kind[op.kind]
        row[0] += 1
        row[1] += c.time_s
        row[2] += dict(c.detail)["compute_s"]
        row[3] += c.stall_s
        row[4] += c.dram_bytes
    total = [sum(r[i] for r in by_kind.values()) for i in range(5)]
    print(f"{soc.name} ({soc.dsp.hvx_arch}, staging {soc.dsp.activation_staging}) {a.model} {a.input} batch {a.batch} "
          f"at {mhz:g} MHz: {int(total[0])} DSP ops, {total[1]:.3f} s = compute {total[2]:.3f} s + stall {total[3]:.3f} s, "
          f"DRAM {total[4] / 1e6:.0f} MB")
    for kind, (n, t, comp, stall, dram) in sorted(by_kind.items(), key=lambda kv: -kv[1][1]):
        print(f"  {kind:16s} {int(n):4d} ops  {t:8.3f} s  compute {comp:8.3f}  stall {stall:8.3f}  DRAM {dram / 1e6:8.0f} MB")


if __name__ == "__main__":
    main()
