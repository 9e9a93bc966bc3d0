"""Sage's hybrid rule (docs/seeds.md 2): DGA while the largest micro-batch that fits stays >= MTP,
else checkpoint at the MTP.  The rule consults the MTP, not a latency estimate, so where a model's
GPU tipping point is above the mini-batch (MobileNet-v2 in this GPU model), the workload sets a
larger ``mtp`` and the hybrid then checkpoints the full batch as DGC does."""
from __future__ import annotations

import pytest

from socsim.engine.context import PlanContext
from socsim.engine.oracle import CostOracle
from socsim.sched.sage import Sage, SageOptions
from socsim.spec import load_soc, workload_from_dict

SOC = load_soc("sd865")
WL = workload_from_dict(dict(name="t", model="resnet18", input=[3, 96, 96], num_classes=10, batch_size=16,
                             batches=2, scheduler={"name": "sage"}, environment={"memory_budget_mb": None}))


def plan(**opts):
    ctx = PlanContext(SOC, WL, CostOracle(SOC))
    p = Sage(SageOptions(jit_compile=False, budget_mb=114, **opts)).plan(ctx)
    return p, ctx.estimate(p)[0]


def test_hybrid_micro_batches_at_or_above_the_mtp():
    hyb, _ = plan(strategy="hybrid")              # 114 MB fits micro-batch 12 >= MTP 6
    dga, _ = plan(strategy="dga")
    assert hyb.micro_batches == dga.micro_batches == (12, 4)


def test_hybrid_with_the_mtp_at_the_mini_batch_is_dgc():
    hyb, t_hyb = plan(strategy="hybrid", mtp=16)
    dgc, t_dgc = plan(strategy="dgc")
    assert hyb.micro_batches == dgc.micro_batches == (16,)
    assert any(s.op.name.endswith("@rc") for s in hyb.steps)
    assert t_hyb == pytest.approx(t_dgc, rel=1e-12)
