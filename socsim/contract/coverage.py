"""How much of the training step a plan runs (the engine does not refuse a plan that leaves
ops out; it reports it: the summary's ``placement.work_fraction`` and a warning)."""
from __future__ import annotations

from typing import Any, Iterable

from socsim.contract.plan import Plan

# Relative shortfall of a plan's multiply-accumulates below the graph's that counts as leaving
# work out (rounding of rescaled ops is far below it; a dropped op is far above it).
COVERAGE_TOL = 1e-6


def _phase_work(ops: Iterable[Any]) -> dict[str, float]:
    """Work per phase: multiply-accumulates, arithmetic for the (element-wise) weight updates;
    an op rescaled for a slower framework kernel counts with the work it stands for."""
    out: dict[str, float] = {}
    for op in ops:
        w = op.flops if op.phase == "update" else op.macs
        if w:
            eff = dict(op.attrs).get("kernel_efficiency") if op.attrs else None
            out[op.phase] = out.get(op.phase, 0.0) + w * (float(eff) if eff is not None else 1.0)
    return out


def short_plan_note(plan: Plan, hook: str, scheduler: str, missing: str) -> str:
    """What the reports say of a plan that runs only part of the training step."""
    label = f" {plan.label!r}" if plan.label else ""
    return f"the plan{label} from {hook} of scheduler {scheduler!r} runs only part of the training step: {missing}"


def plan_coverage(plan: Plan, graph: Any) -> tuple[float, str | None]:
    """How much of ``graph``'s training step the plan's steps run: the least share, over the
    forward pass, the error gradients and the weight gradients, of the graph's multiply-accumulates
    in that phase, and of its weight updates' arithmetic (their work is element-wise).  Fused,
    rewritten and micro-batch ops count with their own work; recomputation can take a share above
    1; an op a framework runs with slower kernels (``kernel_efficiency``, socsim.sched.baselines)
    counts with the work it stands for, not its inflated cost.  When a share falls short, also
    says which ops of the graph carrying that work no step is named after.  The engine does not
    refuse such a plan (a scheduler may mean to train part of a model, or use a kernel with fewer
    multiplications); it reports it (summary ``placement.work_fraction``, a warning)."""
    need, ran = _phase_work(graph.ops), _phase_work(st.op for st in plan.steps)
    fracs = [(ran.get(phase, 0.0) / w, phase) for phase, w in need.items() if w > 0]
    if not fracs:
        return 1.0, None
    frac, phase = min(fracs)
    if frac >= 1.0 - COVERAGE_TOL:
        return frac, None
    key = "flops" if phase == "update" else "macs"
    names = {st.op.name for st in plan.steps}
    missing = [op.name for op in graph.ops if op.phase == phase and getattr(op, key) and op.name not in names]
    shown = ", ".join(missing[:6]) + (f" (+{len(missing) - 6} more)" if len(missing) > 6 else "")
    what = {"forward": "forward", "error_grad": "error-gradient", "weight_grad": "weight-gradient",
            "update": "weight-update"}[phase]
    return frac, (f"{frac:.1%} of its {what} work; ops of ctx.graph() not among its steps: {shown}" if missing
                  else f"{frac:.1%} of its {what} work (its ops carry less work than the graph's)")
