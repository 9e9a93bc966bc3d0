"""Where Swan's core-set choice is decided: one training batch's op costs by op class and core set.

Sums the CPU cost model's per-op times (PyTorch kernel efficiencies, every cluster at its top
frequency, sd865, batch 16) for MobileNet-v2, ShuffleNet-v2 and ResNet-34 on the big core sets
4567 / 456 / 45.  Prints a markdown table (docs/validation.md, Swan); asserts nothing.

    python benchmarks/swan_breakdown.py
"""
from __future__ import annotations

import collections

from socsim.engine.context import build_graph
from socsim.sched.swan import op_times_by_kind
from socsim.spec import load_soc

CLASSES = ("conv fwd", "conv bwd", "depthwise", "other (BN, act, pool, ...)")
MODELS = (("mobilenetv2", (3, 224, 224), 1000), ("shufflenetv2", (3, 224, 224), 1000),
          ("resnet34", (3, 32, 32), 10))
CORE_SETS = ((4, 5, 6, 7), (4, 5, 6), (4, 5))


def op_class(kind: str) -> str:
    if kind.startswith("dwconv"):
        return "depthwise"
    if kind in ("conv2d", "gemm"):
        return "conv fwd"
    if kind in ("conv2d_dgrad", "conv2d_wgrad"):
        return "conv bwd"
    return CLASSES[-1]


def main() -> None:
    soc = load_soc("sd865")
    print("| model | cores | " + " | ".join(CLASSES) + " | total |")
    print("|---" * (len(CLASSES) + 3) + "|")
    for name, chw, classes in MODELS:
        graph = build_graph(name, chw, classes, 16, "fp32")
        for cores in CORE_SETS:
            by: collections.Counter = collections.Counter()
            for kind, t in op_times_by_kind(soc, graph, cores).items():
                by[op_class(kind)] += t
            label = "".join(map(str, cores))
            print(f"| {name} {chw[1]} | {label} | " + " | ".join(f"{by[c]:.3f}" for c in CLASSES)
                  + f" | {sum(by.values()):.3f} |")

if __name__ == "__main__":
    main()
