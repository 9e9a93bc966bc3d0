"""Mandheling's placement prices the DSP subgraph re-preparation its plan incurs under the DSP
memory budget (``reprepare_in_placement``, socsim/sched/mandheling.py): the cost the plan's
``prep_overheads`` carry for the engine, shared through :func:`reprepare_cost`."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.hw import fastrpc
from socsim.sched.dp import co_schedule, placement_time
from socsim.sched.mandheling import (MB, Mandheling, MandhelingOptions, _Item, dsp_regions,
                                     reprepare_cost, reprepared_regions)
from socsim.contract import Step
from socsim.spec import load_soc
from socsim.workload.ops import Op

RPC = load_soc("sd865").fastrpc
CTX = SimpleNamespace(soc=SimpleNamespace(fastrpc=RPC))
SWITCH = 0.001


def _op(name: str, weights_mb: float, inputs=()) -> Op:
    return Op(name=name, kind="relu", phase="forward", layer=name, dtype="int8", params=(),
              out_bytes=1 << 10, weight_bytes=int(weights_mb * MB), inputs=tuple(inputs))


def _items(lat: list[tuple[float, float]], weights_mb: list[float]) -> list[_Item]:
    ops: list[Op] = []
    for i, w in enumerate(weights_mb):
        ops.append(_op(f"o{i}", w, [f"o{i - 1}"] if i else []))
    return [_Item(op, (Step(op, "cpu"),), (Step(op, "dsp"),), lc, ld) for op, (lc, ld) in zip(ops, lat)]


def _cost(items, units, budget_bytes: int) -> float:
    """A plan's batch time as the engine charges it: ops, switches and re-preparation."""
    l_cpu = [it.l_cpu for it in items]
    l_dsp = [it.l_dsp for it in items]
    return (placement_time(units, l_cpu, l_dsp, SWITCH, start="cpu")
            + reprepare_cost(RPC, dsp_regions(items, units), budget_bytes)[1])


def _place(items, budget_mb: float, **opts) -> tuple[str, ...]:
    return Mandheling(MandhelingOptions(**{"reprepare_in_placement": True, **opts}))._place(CTX, items, SWITCH, int(budget_mb * MB))


# two ops, 300 MB of weights each: the DSP saves 1 ms on the first and 8 ms on the second; both
# on the DSP (600 MB) overflow a 400 MB budget and are prepared again every batch (~14.5 ms)
TRADE = ([(0.010, 0.009), (0.010, 0.002)], [300.0, 300.0])


def test_budget_forces_the_plan_that_fits():
    items = _items(*TRADE)
    published = co_schedule([it.l_cpu for it in items], [it.l_dsp for it in items], SWITCH, start="cpu").units
    assert published == ("dsp", "dsp")
    budget = int(400 * MB)
    evicted, prep = reprepare_cost(RPC, dsp_regions(items, published), budget)
    assert evicted == [0] and prep > 0.010
    chosen = _place(items, 400)
    assert chosen == ("cpu", "dsp")   # the second op's 300 MB subgraph fits: nothing prepared again
    assert reprepare_cost(RPC, dsp_regions(items, chosen), budget) == ([], 0)
    assert _cost(items, chosen, budget) < _cost(items, published, budget)


def test_published_plan_kept_when_it_fits_or_when_switched_off():
    items = _items(*TRADE)
    assert _place(items, 1000) == ("dsp", "dsp")          # 600 MB fits: the published DP's plan
    assert _place(items, 400, reprepare_in_placement=False) == ("dsp", "dsp")
    assert _place(items, 400, subgraph_reuse=False) == ("dsp", "dsp")


def test_repreparation_cheaper_than_the_cpu_stays_on_the_dsp():
    # each op saves 30 ms on the DSP, more than re-preparing 600 MB (~14.5 ms): overflowing is cheaper
    items = _items([(0.040, 0.010), (0.040, 0.010)], [300.0, 300.0])
    assert _place(items, 400) == ("dsp", "dsp")


def test_dsp_regions_are_the_maximal_dsp_runs():
    items = _items([(1, 1)] * 5, [1, 2, 3, 4, 5])
    regions = dsp_regions(items, ("dsp", "dsp", "cpu", "dsp", "cpu"))
    assert [n for n, _ in regions] == [2, 1]
    assert regions[0][1] >= 3 * MB and 4 * MB <= regions[1][1] < 5 * MB
    evicted, cost = reprepare_cost(RPC, regions, int(5 * MB))
    assert evicted == reprepared_regions([b for _, b in regions], int(5 * MB))
    assert cost == sum(fastrpc.graph_prep_s(RPC, *regions[r]) for r in evicted) > 0


@settings(max_examples=60, deadline=None)
@given(lat=st.lists(st.tuples(st.floats(0.001, 0.05), st.floats(0.0005, 0.05)), min_size=1, max_size=7),
       weights=st.lists(st.floats(0.0, 400.0), min_size=7, max_size=7),
       budget_mb=st.floats(10.0, 1200.0))
def test_placement_never_costs_more_than_the_published_dp(lat, weights, budget_mb):
    """Priced as the engine charges a plan, the placement is never worse than the published DP's
    plan (always a candidate), and when that plan's subgraphs fit it is the plan."""
    items = _items(lat, weights[:len(lat)])
    budget = int(budget_mb * MB)
    published = co_schedule([it.l_cpu for it in items], [it.l_dsp for it in items], SWITCH, start="cpu").units
    chosen = _place(items, budget_mb)
    assert _cost(items, chosen, budget) <= _cost(items, published, budget)
    if not reprepare_cost(RPC, dsp_regions(items, published), budget)[0]:
        assert chosen == published


def test_sd888_resnet18_placement_avoids_repreparation():
    """sd888's ResNet-18 subgraphs (535 MB under the published DP) overflow the 512 MB budget;
    priced with re-preparation, the placement re-prepares less and predicts a cheaper batch."""
    from pathlib import Path

    import socsim

    wl = Path(__file__).resolve().parents[2] / "workloads" / "mandheling_resnet18.yaml"
    on = socsim.run("sd888", wl, overrides={"batches": 2, "scheduler.options.reprepare_in_placement": True}
                    ).summary["scheduler_info"]["plans"]["static"]
    off = socsim.run("sd888", wl, overrides={"batches": 2}).summary["scheduler_info"]["plans"]["static"]
    assert "reprepare_in_placement" not in off
    note = on["reprepare_in_placement"]
    assert note["chosen_cost_s"] < note["published_dp_cost_s"]
    assert on["reprepare_s_per_batch"] < off["reprepare_s_per_batch"]
    assert off["predicted_op_time_s"] + off["reprepare_s_per_batch"] == pytest.approx(note["published_dp_cost_s"], abs=1e-5)
