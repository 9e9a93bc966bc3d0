"""What Sage does with a memory budget that drops mid-iteration (docs/validation.md, Sage).

A small ResNet-18 (3x96x96, mini-batch 16, FP32 on the sd865 GPU, no JIT) trains 3 batches under
a budget of 200 MiB that drops once, at a random time in the first two batches, to a value near
what the strategy can reach.  For each strategy, how many drops needed no re-split (the rest of
the batch fitted), were met by continuing the micro-batch in progress under DGC, by abandoning it
in its forward pass and re-splitting, or could not be met (the micro-batch in progress, in a
backward pass, holds more than the new budget in tensors it may not evict).  Prints markdown;
asserts nothing.  Takes about a minute.

    python benchmarks/sage_drops.py [--drops 12] [--seed 0]
"""
from __future__ import annotations

import argparse

import numpy as np

import socsim

BUDGETS_MB = {"hybrid": (110, 98, 90), "dga": (110, 98, 90), "dgc": (118, 116, 114)}  # dgc: >= its 114 MiB floor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drops", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    base = dict(name="drops", model="resnet18", input=[3, 96, 96], num_classes=10, batch_size=16, batches=3)
    print("| strategy | drops | no re-split needed | continued (DGC) | abandoned + re-split | cannot | over budget (s) |")
    print("|---|---|---|---|---|---|---|")
    for strategy, budgets in BUDGETS_MB.items():
        n = {"none": 0, "continued": 0, "abandoned": 0, "cannot": 0}
        over = 0.0
        for _ in range(args.drops):
            at_s, mb = float(rng.uniform(0.55, 1.5)), int(rng.choice(budgets))
            wl = dict(base, scheduler={"name": "sage", "options": {"jit_compile": False, "strategy": strategy}},
                      environment={"memory_budget_mb": [{"at_s": 0, "mb": 200}, {"at_s": at_s, "mb": mb}]})
            s = socsim.run("sd865", wl).summary
            resplits = s["scheduler_info"]["resplits"]
            if not resplits:
                n["none"] += 1
            for r in resplits:
                key = ("cannot" if r["micro_batches"] is None else
                       "continued" if r["how"] == "continued" else "abandoned")
                n[key] += 1
            over += s["memory"]["over_budget"]["seconds"]
        print(f"| {strategy} | {args.drops} | {n['none']} | {n['continued']} | {n['abandoned']} | {n['cannot']} "
              f"| {over:.3f} |")


if __name__ == "__main__":
    main()
