"""Sage's tables in docs/validation.md: GPU time per sample against micro-batch size, graph
optimisation, the memory-management strategies under fixed budgets, and MobileNet-v2 under
micro-batching.

ResNet-50 (and MobileNet-v2) 3x224x224, mini-batch 32, FP32 on the sd865 GPU (Sage, docs/seeds.md 2);
per-batch time and whole-phone energy are ``PlanContext.estimate`` of the plan each strategy
makes (JIT compilation left out, i.e. steady-state batches).  Prints markdown; asserts nothing.
Takes a few seconds.

    python benchmarks/sage_tables.py
"""
from __future__ import annotations

from socsim.engine.context import PlanContext
from socsim.engine.oracle import CostOracle
from socsim.errors import ScheduleError
from socsim.sched.sage import Sage, SageOptions
from socsim.spec import load_soc, workload_from_dict

MB = 1 << 20
SOC = load_soc("sd865")
STRATEGIES = ("none", "static-checkpoint", "static-accumulation", "dgc", "dga", "hybrid")
BUDGETS_MB = (None, 1500, 1000, 600, 400, 300)


def _ctx(batch: int = 32, budget: float | None = None, model: str = "resnet50") -> PlanContext:
    w = workload_from_dict(dict(name="sage-tables", model=model, input=[3, 224, 224], num_classes=1000,
                                batch_size=batch, batches=2, environment={"memory_budget_mb": budget}))
    return PlanContext(SOC, w, CostOracle(SOC))


MICRO_BATCHES = (1, 2, 4, 6, 8, 16, 32)


def per_sample_rows(model: str = "resnet50") -> list[str]:
    """GPU time per sample of the unoptimised graph, and its ratio to the time at batch 32 (the
    ResNet-50 MTP, pinned in tests/hw/test_gpu_calibration.py, is read off this ratio)."""
    ms = []
    for m in MICRO_BATCHES:
        ctx = _ctx(batch=m, model=model)
        plan = Sage(SageOptions(strategy="none", fusion=False, subgraph_reduction=False, jit_compile=False)).plan(ctx)
        ms.append(ctx.estimate(plan)[0] / m * 1e3)
    return ["| ms / sample | " + " | ".join(f"{x:.0f}" if x >= 100 else f"{x:.1f}" for x in ms) + " |",
            "| x batch 32 | " + " | ".join(f"{x / ms[-1]:.2f}" for x in ms) + " |"]


def optimisation_rows() -> list[str]:
    rows = []
    for label, fusion, reduction in (("unoptimised", False, False), ("fusion only", True, False),
                                     ("subgraph reduction only", False, True), ("both (Sage)", True, True)):
        ctx = _ctx()
        plan = Sage(SageOptions(strategy="none", fusion=fusion, subgraph_reduction=reduction,
                                jit_compile=False)).plan(ctx)
        t, e = ctx.estimate(plan)
        rows.append(f"| {label} | {plan.peak_memory_bytes / MB:.0f} MB | {len(plan.steps)} | {t:.2f} s | {e:.1f} J |")
    return rows


def strategy_rows() -> list[str]:
    rows = []
    for budget in BUDGETS_MB:
        cells = []
        for strategy in STRATEGIES:
            ctx = _ctx(budget=budget)
            try:
                plan = Sage(SageOptions(strategy=strategy, jit_compile=False)).plan(ctx)
            except ScheduleError:
                cells.append("infeasible")
                continue
            t, _ = ctx.estimate(plan)
            split = "+".join(map(str, plan.micro_batches))
            cells.append(f"{t:.2f} s ({split}, {plan.peak_memory_bytes / MB:.0f} MB)")
        rows.append(f"| {budget or 'none'} | " + " | ".join(cells) + " |")
    return rows


def mobilenet_rows() -> list[str]:
    """MobileNet-v2: static accumulation without a budget, and the strategies at 600 MB
    (workloads/sage_mobilenetv2.yaml)."""
    rows = []
    for budget, strategies in ((None, ("none", "static-accumulation")), (600, ("dgc", "dga", "hybrid"))):
        for strategy in strategies:
            ctx = _ctx(budget=budget, model="mobilenetv2")
            plan = Sage(SageOptions(strategy=strategy, jit_compile=False)).plan(ctx)
            t, e = ctx.estimate(plan)
            split = "+".join(map(str, plan.micro_batches))
            rows.append(f"| {budget or 'none'} | {strategy} | {split} | {t:.3f} s | {e:.2f} J | "
                        f"{plan.peak_memory_bytes / MB:.0f} MB |")
    return rows


def main() -> None:
    header = "| micro-batch | " + " | ".join(map(str, MICRO_BATCHES)) + " |\n" + "|---" * (len(MICRO_BATCHES) + 1) + "|"
    print("ResNet-50\n\n" + header)
    print("\n".join(per_sample_rows()))
    print("\n| | peak memory | kernels | time / batch | energy / batch |\n|---|---|---|---|---|")
    print("\n".join(optimisation_rows()))
    print("\n| budget (MB) | " + " | ".join(STRATEGIES) + " |\n" + "|---" * (len(STRATEGIES) + 1) + "|")
    print("\n".join(strategy_rows()))
    print("\nMobileNet-v2\n\n" + header)
    print("\n".join(per_sample_rows("mobilenetv2")))
    print("\n| budget (MB) | strategy | split | time / batch | energy / batch | peak |\n|---|---|---|---|---|---|")
    print("\n".join(mobilenet_rows()))


if __name__ == "__main__":
    main()
