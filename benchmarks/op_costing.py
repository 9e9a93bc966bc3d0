"""Op costing speed: every op of one VGG-16 / CIFAR-10 batch-64 NITI training graph costed cold,
on 2 big cores of sd865 and then on its DSP (the cache model and, on the DSP, the HVX emulator's
cycle counts), in a fresh process.  Prints figures; asserts nothing.

    python benchmarks/op_costing.py
"""
from __future__ import annotations

import os
import time

# cold figures: cache simulations are not read from an earlier run's store (docs/performance.md)
os.environ.setdefault("SOCSIM_CACHE", "off")


def main() -> None:
    t0 = time.perf_counter()
    from socsim.engine.context import PlanContext
    from socsim.engine.oracle import CostOracle
    from socsim.spec import load_soc, workload_from_dict

    soc = load_soc("sd865")
    wl = workload_from_dict(dict(name="bench-opcost", model="vgg16", input=[3, 32, 32], num_classes=10,
                                 batch_size=64, batches=1, precision="niti", scheduler={"name": "mandheling"}))
    ctx = PlanContext(soc, wl, CostOracle(soc))
    ops = ctx.graph().ops
    setup = time.perf_counter() - t0
    t = time.perf_counter()
    for op in ops:
        ctx.profile(op, "cpu", cores=(4, 5))
    cpu = time.perf_counter() - t
    t = time.perf_counter()
    for op in ops:
        ctx.profile(op, "dsp")
    dsp = time.perf_counter() - t
    print(f"{len(ops)} ops; imports + graph {setup:.2f} s; CPU (cores 4,5) {cpu:.2f} s; DSP {dsp:.2f} s")
    print(f"ops={len(ops)} cpu_s={cpu:.2f} dsp_s={dsp:.2f}")


if __name__ == "__main__":
    main()
