"""What the runtime hooks see: the live state of the phone from the first batch on, and the
switch count of single-accelerator plans (socsim.engine.sim, socsim.engine.accounting)."""
from __future__ import annotations

import math

import pytest

from socsim.engine.sim import Engine
from socsim.sched.api import BaseScheduler, Plan, Step
from socsim.sched.baselines import MnnFp32
from socsim.spec import load_soc, workload_from_dict

SOC = load_soc("sd865")


def _wl(**kw):
    return workload_from_dict(dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16,
                                   batches=2, **kw))


class Spy(MnnFp32):
    def __init__(self) -> None:
        super().__init__()
        self.starts: dict[int, tuple] = {}

    def on_batch_start(self, ctx, batch):
        self.starts[batch] = (dict(ctx.temps_c), dict(ctx.caps_mhz), ctx.battery_soc, ctx.battery_temp_c)


def test_first_batch_hooks_see_the_initial_state():
    spy = Spy()
    Engine(SOC, _wl(environment={"ambient_c": 31.0, "initial_soc": 0.55}), spy).run()
    temps, caps, soc, batt_c = spy.starts[0]
    zones = [z.name for z in SOC.thermal.zones if z.node != SOC.thermal.ambient_node]
    # every node at 31 C: a zone on a node reads 31 C, a virtual zone its weighted sum + offset
    want = {z.name: (31.0 if z.sensors is None else sum(z.sensors.values()) * 31.0 + z.offset_c)
            for z in SOC.thermal.zones if z.node != SOC.thermal.ambient_node}
    assert set(temps) == set(zones) and all(t == pytest.approx(want[z]) for z, t in temps.items())
    top = {c.name: c.max_mhz for c in SOC.cpu.clusters}
    if any("gpu" in z.caps for z in SOC.thermal.zones):   # the GPU is a cooling device too
        top["gpu"] = SOC.gpu.opps[-1].freq_mhz
    assert caps == top   # nothing throttled yet
    assert soc == pytest.approx(0.55) and batt_c == pytest.approx(31.0)
    # the second batch's readings have moved on from the first's, keeping the same keys
    temps1, caps1, soc1, _ = spy.starts[1]
    assert set(temps1) == set(temps) and caps1 == caps and soc1 == pytest.approx(0.55, abs=1e-3)
    assert max(temps1.values()) > 31.0


class OnlyOn(BaseScheduler):
    """Every op the unit can run, on that unit (a single-unit accelerator plan)."""

    precision = "niti"

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def plan(self, ctx) -> Plan:
        ops = [op for op in ctx.graph(self.precision).ops if math.isfinite(ctx.profile(op, self.unit))]
        assert ops
        return Plan(steps=tuple(Step(op, self.unit) for op in ops), cpu_cores=(4,), label=self.unit,
                    dsp_graph="reuse" if self.unit == "dsp" else "none")


def test_single_accelerator_plans_count_switches_alike():
    """A batch starts on the host CPU: a DSP-only plan's first step is a FastRPC call (one
    switch, charged); a GPU-only plan's first step counts the same (one switch: a queue hand-over, nothing crossing), so the
    placement's switches per batch are 1 for both, while Plan.switches (within the steps) is 0."""
    counts = {}
    for unit in ("dsp", "gpu"):
        sched = OnlyOn(unit)
        st = Engine(SOC, _wl(precision="niti"), sched).run()
        counts[unit] = st.counts["switches"] // st.batches
        assert st.first_plan.switches == 0
    assert counts == {"dsp": 1, "gpu": 1}


def test_cpu_gpu_hand_overs_cost_what_crosses():
    """A plan alternating CPU and GPU ops pays a queue drain and a layout copy at every
    hand-over (the same price ctx.switch_s(..., unit="gpu") quotes), not nothing."""
    from socsim.engine.context import PlanContext
    from socsim.engine.oracle import CostOracle
    from socsim.hw.gpu import CPU_GPU_SYNC_S

    class Alternate(BaseScheduler):
        name = "alternate"

        def __init__(self, split: bool) -> None:
            super().__init__()
            self.split = split

        def plan(self, ctx) -> Plan:
            ops = ctx.graph().ops
            units = [("gpu" if k % 2 else "cpu") if self.split else "cpu" for k in range(len(ops))]
            return Plan(steps=tuple(Step(op, u) for op, u in zip(ops, units)), cpu_cores=(4, 5, 6, 7))

    wl = _wl()
    st = Engine(SOC, wl, Alternate(True)).run()
    n = st.counts["switches"] // st.batches
    assert n >= 10
    switch_s = st.time_on_s["switch"] / st.batches
    assert switch_s >= n * CPU_GPU_SYNC_S
    ctx = PlanContext(SOC, wl, CostOracle(SOC))
    assert ctx.switch_s(1 << 20, unit="gpu") > ctx.switch_s(0, unit="gpu") == CPU_GPU_SYNC_S
