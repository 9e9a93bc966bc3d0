"""Where Swan's core-set choice is decided: one training batch's op costs by op class and core set.

Sums the CPU cost model's per-op times (PyTorch's kernels, every cluster at its top frequency,
sd865, batch 16) for MobileNet-v2, ShuffleNet-v2 and ResNet-34 on the core sets 4567 / 456 /
45 / 4 / 0123 / 01, for the PyTorch Swan ran (1.8) and for 1.11, which differentiates a grouped convolution
without full-size gradient sums (socsim.sched.baselines.PyTorchRun).  The host-core dispatch
(per op, and per group of the grouped convolutions' loop) runs at the host core's speed, with a
fork-join per parallel region of the loop and, on 1.8 at a batch of 16, per region of NNPACK's
own pool, and the two pools' waits for each other's spinning workers ("dispatch" column).
Prints markdown tables (docs/validation.md, Swan); asserts nothing.

    python benchmarks/swan_breakdown.py
"""
from __future__ import annotations

import collections

from socsim.engine.context import build_graph
from socsim.sched.baselines import PYTORCH_VERSIONS, PyTorchRun
from socsim.sched.swan import op_times_by_kind
from socsim.spec import load_soc

CLASSES = ("conv fwd", "conv bwd", "depthwise", "group grad sums", "other (BN, act, pool, ...)", "dispatch")
MODELS = (("mobilenetv2", (3, 224, 224), 1000), ("shufflenetv2", (3, 224, 224), 1000),
          ("resnet34", (3, 32, 32), 10))
CORE_SETS = ((4, 5, 6, 7), (4, 5, 6), (4, 5), (4,), (0, 1, 2, 3), (0, 1))


def op_class(kind: str) -> str:
    if kind.startswith("dwconv"):
        return "depthwise"
    if kind in ("conv2d", "gemm"):
        return "conv fwd"
    if kind in ("conv2d_dgrad", "conv2d_wgrad"):
        return "conv bwd"
    if kind == "group_grad_sum":
        return "group grad sums"
    return "other (BN, act, pool, ...)"


def main() -> None:
    soc = load_soc("sd865")
    for version in PYTORCH_VERSIONS:
        print(f"PyTorch {version}, seconds per batch:")
        print("| model | cores | " + " | ".join(CLASSES) + " | total |")
        print("|---" * (len(CLASSES) + 3) + "|")
        for name, chw, classes in MODELS:
            graph = build_graph(name, chw, classes, 16, "fp32")
            for cores in CORE_SETS:
                dispatch = sum(s for _, s in PyTorchRun(graph, version, soc, cores).overheads)
                by: collections.Counter = collections.Counter()
                for kind, t in op_times_by_kind(soc, graph, cores, version).items():
                    by[op_class(kind)] += t
                by["dispatch"] = dispatch
                label = "".join(map(str, cores))
                print(f"| {name} {chw[1]} | {label} | " + " | ".join(f"{by[c]:.3f}" for c in CLASSES)
                      + f" | {sum(by.values()):.3f} |")
        print()


if __name__ == "__main__":
    main()
