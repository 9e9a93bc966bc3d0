"""Sage's tables in docs/validation.md: GPU time per sample against micro-batch size, graph
optimisation, and the memory-management strategies under fixed budgets.

ResNet-50 3x224x224, mini-batch 32, FP32 on the sd865 GPU (Sage, SEEDS.md 2); per-batch time
and whole-phone energy are ``PlanContext.estimate`` of the plan each strategy makes (JIT
compilation left out).  Prints markdown; asserts nothing.  Takes a minute or two.

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


def _ctx(batch: int = 32, budget: float | None = None) -> PlanContext:
    w = workload_from_dict(dict(name="sage-tables", model="resnet50", input=[3, 224, 224], num_classes=1000,
                                batch_size=batch, batches=2, environment={"memory_budget_mb": budget}))
    return PlanContext(SOC, w, CostOracle(SOC))


def per_sample_row() -> str:
    cells = []
    for m in (1, 2, 4, 6, 8, 16, 32):
        ctx = _ctx(batch=m)
        plan = Sage(SageOptions(strategy="none", fusion=False, subgraph_reduction=False, jit_compile=False)).plan(ctx)
        cells.append(f"{ctx.estimate(plan)[0] / m * 1e3:.0f}")
    return "| ms / sample | " + " | ".join(cells) + " |"


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


def main() -> None:
    print("| micro-batch | 1 | 2 | 4 | 6 | 8 | 16 | 32 |\n|---|---|---|---|---|---|---|---|")
    print(per_sample_row())
    print("\n| | peak memory | kernels | time / batch | energy / batch |\n|---|---|---|---|---|")
    print("\n".join(optimisation_rows()))
    print("\n| budget (MB) | " + " | ".join(STRATEGIES) + " |\n" + "|---" * (len(STRATEGIES) + 1) + "|")
    print("\n".join(strategy_rows()))


if __name__ == "__main__":
    main()
