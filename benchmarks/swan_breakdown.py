"""Where Swan's core-set choice is decided: one training batch's op costs by op class and core set.

Sums the CPU cost model's per-op times (PyTorch kernel efficiencies, every cluster at its top
frequency, sd865, batch 16) for MobileNet-v2, ShuffleNet-v2 and ResNet-34 on the big core sets
4567 / 456 / 45.  Prints a markdown table (docs/validation.md, Swan); asserts nothing.

A second table is a what-if, not the model: the same op costs recombined the way PyTorch's
CPU convolution without MKLDNN (``aten/src/ATen/native/ConvolutionMM2d.cpp``, the ``Slow2d``
backend) spreads its work over threads.  The forward pass and the input gradient run
``at::parallel_for`` over the images of the batch, so the slowest thread gets ceil(16 / n)
whole images (costed as one thread of the slowest core in the set doing that share); the
weight gradient loops over the images on the calling thread, one single-threaded GEMM each
(mobile builds link Eigen's BLAS without OpenMP), costed as one thread of the fastest core (the
scheduler moves a busy single thread there).  Depthwise convolutions are taken the same way;
their per-group loop (a copy, a fork-join and a few dispatches per channel) would add serial
time on top.  Other ops keep the model's cost.  Whether the phones' PyTorch ran this path for
every convolution (NNPACK may take the forward) is not known here.

    python benchmarks/swan_breakdown.py
"""
from __future__ import annotations

import collections
import math

from socsim.engine.context import build_graph
from socsim.hw.cost import CpuConfig
from socsim.hw.cpu import CpuCostModel
from socsim.sched.baselines import PYTORCH_EFFICIENCY, _Scaled
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


PER_IMAGE = {"conv2d", "conv2d_dgrad", "gemm", "dwconv2d", "dwconv2d_dgrad"}
SERIAL = {"conv2d_wgrad", "dwconv2d_wgrad"}


def slow2d_whatif(soc, graph, cores: tuple[int, ...]) -> tuple[float, float, float]:
    """(per-image parallel, serial weight gradients, other) seconds of one batch, as above."""
    cfg_of = lambda cs: CpuConfig(cores=cs, freqs_mhz=tuple(sorted((cl.name, cl.max_mhz) for cl in soc.cpu.clusters)))
    model = CpuCostModel(soc)
    mhz = lambda c: soc.cpu.cluster_of(c).max_mhz
    slow, fast = min(cores, key=mhz), max(cores, key=mhz)
    images = graph.batch
    share = math.ceil(images / len(cores)) / images
    par = serial = other = 0.0
    for op in _Scaled(graph, PYTORCH_EFFICIENCY).ops:
        if op.kind in PER_IMAGE:
            par += model.cost(op, cfg_of((slow,))).time_s * share
        elif op.kind in SERIAL:
            serial += model.cost(op, cfg_of((fast,))).time_s
        else:
            other += model.cost(op, cfg_of(tuple(cores))).time_s
    return par, serial, other


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
    print()
    print("What-if, PyTorch's Slow2d thread structure (not the model):")
    print("| model | cores | per-image parallel | weight grads, one thread | other | total |")
    print("|---|---|---|---|---|---|")
    for name, chw, classes in MODELS:
        graph = build_graph(name, chw, classes, 16, "fp32")
        for cores in CORE_SETS:
            parts = slow2d_whatif(soc, graph, cores)
            label = "".join(map(str, cores))
            print(f"| {name} {chw[1]} | {label} | " + " | ".join(f"{x:.3f}" for x in parts)
                  + f" | {sum(parts):.3f} |")

if __name__ == "__main__":
    main()
