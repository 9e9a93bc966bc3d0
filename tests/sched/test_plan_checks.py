"""What the engine checks of a scheduler's plans (socsim.contract.check_plan, also behind
``socsim validate --soc``) and what the runtime hooks see of the run (RunContext).

The schedulers here are BaseScheduler subclasses handed to the Engine directly; the plugin
machinery (entry points, third-party exceptions) is tested in test_plugins.py.
"""
from __future__ import annotations

import dataclasses
import math

import pytest

from socsim.engine.context import PlanContext
from socsim.engine.oracle import CostOracle
from socsim.contract import BaseScheduler, Plan, Step, check_plan, single_unit_plan
from socsim.engine.sim import Engine
from socsim.errors import ScheduleError
from socsim.spec import load_soc, workload_from_dict

SOC = load_soc("sd865")
WL = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=2)


@pytest.fixture(scope="module")
def graph():
    wl = workload_from_dict(WL)
    return PlanContext(SOC, wl, CostOracle(SOC, wl.dsp.batch_padding)).graph()


def _cpu(graph, **kw) -> Plan:
    return single_unit_plan(graph, "cpu", (4, 5, 6, 7), "big4", **kw)


def _bad(plan, soc=SOC, **kw) -> ScheduleError:
    with pytest.raises(ScheduleError) as e:
        check_plan(plan, soc, scheduler="mine", **kw)
    return e.value


def test_a_good_plan_passes(graph):
    check_plan(_cpu(graph), SOC, scheduler="mine", hook="plan()")
    check_plan(_cpu(graph, cpu_freq_mhz=(("mid", 2000.0), ("prime", 2841.6))), SOC)  # between OPPs: floored


def test_unknown_unit_is_a_schedule_error(graph):
    plan = Plan(steps=tuple(Step(op, "npu") for op in graph.ops), cpu_cores=(4, 5, 6, 7))
    e = _bad(plan, hook="plan()")
    assert e.field == "scheduler.name" and e.value == "mine"
    assert "'npu'" in e.message and "plan()" in e.message


def test_a_unit_the_soc_lacks_is_a_schedule_error(graph):
    e = _bad(Plan(steps=tuple(Step(op, "dsp") for op in graph.ops), cpu_cores=(4,)), load_soc("exynos9820"))
    assert "DSP" in e.message and e.value == "mine"
    no_gpu = SOC.model_copy(update={"gpu": None})
    e = _bad(Plan(steps=tuple(Step(op, "gpu") for op in graph.ops), cpu_cores=(4,)), no_gpu)
    assert "GPU" in e.message


def test_a_step_that_is_not_a_step_is_a_schedule_error(graph):
    e = _bad(Plan(steps=(graph.ops[0],), cpu_cores=(4,)))
    assert "not a Step" in e.message


@pytest.mark.parametrize("change, words", [
    (dict(cpu_cores=(4, 4, 4, 4)), "more than once"),
    (dict(cpu_cores=(4.0, 5.0)), "integer core ids"),
    (dict(micro_batches=(320, 320)), "add up to the mini-batch"),
    (dict(micro_batches=(8, 0, 8)), "positive sample counts"),
    (dict(governor="turbo"), "governor 'turbo'"),
    (dict(dsp_graph="sometimes"), "dsp_graph 'sometimes'"),
    (dict(cpu_graph_prep_s=-5.0), "cpu_graph_prep_s -5.0"),
    (dict(cpu_graph_prep_s=math.inf), "cpu_graph_prep_s inf"),
    (dict(prep_overheads=(("jit", -1.0),)), "prep_overheads entry ('jit', -1.0)"),
    (dict(prep_overheads=(("jit",),)), "(name, seconds) pairs"),
    (dict(dsp_graph_bytes=-1), "dsp_graph_bytes -1"),
    (dict(shared_buffers="yes"), "shared_buffers 'yes'"),
    (dict(label=None), "label None"),
    (dict(notes={"x": object()}), "cannot carry as JSON"),
    (dict(notes=[1, 2]), "notes of type list"),
])
def test_nonsense_plan_fields_are_schedule_errors(graph, change, words):
    """What a plan says is checked like the same values in a workload (a repeated core, an
    unknown governor) or rejected before it reaches the engine (a negative overhead): the
    engine never runs it, and never fails on it with an internal error."""
    e = _bad(dataclasses.replace(_cpu(graph), **change), hook="plan()", batch_size=graph.batch)
    assert words in e.message, e.message


def test_plan_steps_must_hold_ops_and_string_labels(graph):
    e = _bad(Plan(steps=(Step("conv1", "cpu"),), cpu_cores=(4,)), hook="plan()")
    assert "not an Op" in e.message
    e = _bad(Plan(steps=(Step(graph.ops[0], "cpu", label=None),), cpu_cores=(4,)), hook="plan()")
    assert "label None" in e.message


def test_numpy_values_in_a_plan_are_accepted_and_written_as_json(graph):
    import json

    import numpy as np

    from socsim.api import dump_json
    plan = dataclasses.replace(_cpu(graph), notes={"n": np.int64(3), "a": np.arange(2), "f": np.float32(0.5)},
                               cpu_cores=tuple(np.array([4, 5])))
    check_plan(plan, SOC, scheduler="mine", batch_size=graph.batch)
    assert json.loads(dump_json({"cores": plan.cpu_cores, "notes": plan.notes})) == \
        {"cores": [4, 5], "notes": {"n": 3, "a": [0, 1], "f": 0.5}}


def test_an_empty_plan_is_a_schedule_error():
    e = _bad(Plan(steps=(), cpu_cores=(4,), label="empty"), hook="on_batch_end()")
    assert "no steps" in e.message and "on_batch_end()" in e.message and e.value == "mine"


@pytest.mark.parametrize("freqs, words", [
    ((("nosuchcluster", 1000.0),), ["'nosuchcluster'", "little, mid, prime"]),
    ((("mid", -5.0),), ["below the lowest"]),
    ((("mid", 1e9),), ["above the highest"]),
    ((("mid", math.nan),), ["expected MHz"]),
    ((("mid", "max"),), ["expected MHz"]),
    ((("mid", 2000.0), ("mid", 1000.0)), ["twice"]),
    ((("mid",),), ["(cluster, MHz) pairs"]),
])
def test_cpu_freq_mhz_is_checked_like_cpu_freq(graph, freqs, words):
    e = _bad(_cpu(graph, cpu_freq_mhz=freqs), hook="plan()")
    assert e.field == "scheduler.name" and e.value == "mine"
    for w in words:
        assert w in e.message, e.message


class _Sched(BaseScheduler):
    name = "checked"

    def plan(self, ctx):
        return single_unit_plan(ctx.graph(), "cpu", (4, 5, 6, 7), "big4")


def _engine(sched, **wl) -> Engine:
    return Engine(SOC, workload_from_dict({**WL, **wl, "scheduler": {"name": sched.name}}), sched)


def _batches_lasting(seconds: float, **wl) -> int:
    """Batches of ``_Sched``'s plan (with ``wl``'s overrides) that run for at least ``seconds``,
    from a short run's batch length: tests that place events in time stay independent of the
    cost model's speed."""
    st = _engine(_Sched(), **{**wl, "batches": 3}).run()
    per = st.sim_time_s / st.batches
    assert per > 0
    return max(3, math.ceil(seconds / per))


def test_a_plan_that_is_not_a_plan_names_the_scheduler_and_the_method():
    class DictPlan(_Sched):
        name = "dict-plan"

        def plan(self, ctx):
            return {"steps": []}

    with pytest.raises(ScheduleError) as e:
        _engine(DictPlan()).run()
    assert e.value.field == "scheduler.name" and e.value.value == "dict-plan"
    assert e.value.message == "plan() returned dict, not a Plan"

    class StrFromHook(_Sched):
        name = "str-hook"

        def on_batch_end(self, ctx, batch, record):
            return "not a plan"

    with pytest.raises(ScheduleError) as e:
        _engine(StrFromHook()).run()
    assert e.value.value == "str-hook" and "on_batch_end() returned str" in e.value.message


def test_a_bad_plan_from_a_hook_is_rejected():
    class EmptyLater(_Sched):
        name = "empty-later"

        def on_batch_start(self, ctx, batch):
            return Plan(steps=(), cpu_cores=(4,)) if batch == 1 else None

    with pytest.raises(ScheduleError) as e:
        _engine(EmptyLater()).run()
    assert "on_batch_start()" in e.value.message and "no steps" in e.value.message


class _Recorder(_Sched):
    name = "recorder"

    def __init__(self, options=None):
        super().__init__(options)
        self.ends, self.interference, self.trips = [], [], []

    def on_batch_end(self, ctx, batch, record):
        self.ends.append((ctx.now_s, ctx.interference_cores, record.interference))

    def on_interference(self, ctx, event):
        self.interference.append((event.t_s, event.started, event.name, ctx.interference_cores))

    def on_thermal_trip(self, ctx, event):
        self.trips.append((ctx.now_s, dict(ctx.temps_c), dict(ctx.caps_mhz), event))


def test_overlapping_foreground_loads_keep_their_cores_busy():
    """Load a on [6, 7] 0.1-0.5 s, load b on [6] 0.2-0.9 s: after a ends, core 6 is still b's."""
    s = _Recorder()
    loads = [dict(name="a", cores=[6, 7], start_s=0.1, duration_s=0.4, utilization=0.8),
             dict(name="b", cores=[6], start_s=0.2, duration_s=0.7, utilization=0.5)]
    # without the loads the run would last 1.5 s (past b's end at 0.9 s, with batches after it)
    _engine(s, batches=_batches_lasting(1.5), environment={"foreground_load": loads}).run()
    assert [(round(t, 3), st, n, c) for t, st, n, c in s.interference] == [
        (0.1, True, "a", (6, 7)), (0.2, True, "b", (6, 7)), (0.5, False, "a", (6,)), (0.9, False, "b", ())]
    during_b_only = [(c, i) for t, c, i in s.ends if 0.5 < t < 0.9]
    assert during_b_only and all(c == (6,) and i for c, i in during_b_only)
    assert all(c == () and not i for t, c, i in s.ends if t > 0.9 + 0.05)


def test_thermal_trip_hook_sees_the_time_and_readings_of_the_trip():
    s = _Recorder()
    # a run past the first thermal poll (0.25 s) whatever the batch length
    n = _batches_lasting(0.6, batch_size=64)
    _engine(s, batches=n, batch_size=64, environment={"ambient_c": 45}).run()
    assert s.trips, "a 45 C ambient trips the skin zone at the first poll (0.25 s)"
    zones = {z.name: z for z in SOC.thermal.zones}
    for now, temps, caps, ev in s.trips:
        assert now == pytest.approx(ev.t_s)
        assert temps[ev.zone] == pytest.approx(ev.temp_c)
        if ev.rising:
            assert temps[ev.zone] >= zones[ev.zone].trips_c[ev.trip]
        assert caps == dict(ev.caps_mhz)
    assert s.trips[0][0] > 0.0


def test_estimate_of_a_plan_a_unit_cannot_run_is_infinite(graph):
    """As ``ctx.profile`` is for the op: a scheduler comparing candidates can drop it."""
    wl = workload_from_dict(WL)
    ctx = PlanContext(SOC, wl, CostOracle(SOC, wl.dsp.batch_padding))
    on_dsp = Plan(steps=tuple(Step(op, "dsp") for op in graph.ops), cpu_cores=(4,), dsp_graph="reuse")
    assert ctx.estimate(on_dsp) == (math.inf, math.inf)
    t, e = ctx.estimate(_cpu(graph))
    assert 0 < t < math.inf and 0 < e < math.inf


def test_a_plan_stating_no_memory_is_charged_its_steps_liveness(graph):
    """A plan without peak_memory_bytes / step_memory holds what its ops hold (the same liveness
    the built-in plans state), not nothing: the budget checks see it."""
    class NoMemory(_Sched):
        name = "no-memory"

        def plan(self, ctx):
            p = single_unit_plan(ctx.graph(), "cpu", (4, 5, 6, 7), "big4")
            return dataclasses.replace(p, peak_memory_bytes=0, step_memory=None)

    stated = _engine(_Sched(), environment={"memory_budget_mb": 0.05}).run()
    derived = _engine(NoMemory(), environment={"memory_budget_mb": 0.05}).run()
    model_input = graph.input_bytes  # the one thing the derived figure leaves out
    assert derived.peak_mem_bytes > 0
    assert stated.peak_mem_bytes - model_input <= derived.peak_mem_bytes <= stated.peak_mem_bytes
    assert derived.over_budget_s > 0 and derived.over_budget_s == pytest.approx(stated.over_budget_s)


def test_a_switch_to_other_cores_under_the_same_label_is_recorded():
    class Little(_Sched):
        name = "little-later"

        def on_batch_end(self, ctx, batch, record):
            if batch == 0:
                return dataclasses.replace(ctx.plan, cpu_cores=(0, 1, 2, 3))

    st = _engine(Little(), batches=3).run()
    assert st.plan_labels == ["big4", "big4"] and st.config_switches == 1


@pytest.mark.parametrize("name, extra", [
    ("mnn-fp32", {}), ("tflite-fp32", {}), ("mnn-int8", {}), ("mnn-fp32-gpu", {}), ("pytorch", {}),
    ("octo", {}), ("mandheling", {}), ("min-energy", {}), ("swan", {}),
    ("sage", {}), ("sage", {"environment": {"memory_budget_mb": 40}}),
])
def test_the_shipped_schedulers_plan_the_whole_training_step(name, extra):
    """plan_coverage: fused, rewritten, recomputed and micro-batch ops together carry at least the
    graph's multiply-accumulates; a plan without the weight gradients carries fewer and names them."""
    from socsim.api import prepare
    from socsim.contract import plan_coverage

    # MobileNet-v2 (depthwise, fusion, micro-batches); the schedulers that profile many candidate
    # plans (mandheling, min-energy, swan) on LeNet, which costs a second rather than 5-15
    model = (dict(model="mobilenetv2", input=[3, 32, 32], batch_size=32)
             if name not in ("mandheling", "min-energy", "swan") else {})
    wl, _, sched, _ = prepare(dict(WL, **model, scheduler={"name": name}, **extra))
    engine = Engine(SOC, wl, sched)
    plan = sched.plan(engine.pctx)
    frac, missing = plan_coverage(plan, engine.pctx.graph())
    assert frac >= 1.0 - 1e-6 and missing is None, (name, frac, missing)   # rounding of rescaled ops
    if name == "sage":   # the weight updates run once per mini-batch, never inside a micro-batch's kernel
        fused = [s.op for s in plan.steps if "sgd_update" in dict(s.op.attrs).get("fused", "")]
        updates = [s.op for s in plan.steps if s.op.kind == "sgd_update"]
        graph_updates = [op for op in engine.pctx.graph().ops if op.kind == "sgd_update"]
        assert not fused and len(updates) == len(graph_updates)
    if extra:
        assert len(plan.micro_batches) > 1     # the budget splits the mini-batch


def test_a_plan_without_weight_gradients_is_short(graph):
    from socsim.contract import plan_coverage

    plan = _cpu(graph)
    short = dataclasses.replace(plan, steps=tuple(s for s in plan.steps if not s.op.kind.endswith("_wgrad")))
    frac, missing = plan_coverage(short, graph)
    phase = [op for op in graph.ops if op.phase == "weight_grad"]
    dropped = sum(op.macs for op in phase if op.kind.endswith("_wgrad"))
    assert frac == pytest.approx(1 - dropped / sum(op.macs for op in phase))
    assert "of its weight-gradient work; ops of ctx.graph() not among its steps:" in missing and "wgrad" in missing
    assert plan_coverage(plan, graph) == (1.0, None)
    # the weight updates are element-wise: measured by their arithmetic, so dropping them shows too
    no_update = dataclasses.replace(plan, steps=tuple(s for s in plan.steps if s.op.phase != "update"))
    frac, missing = plan_coverage(no_update, graph)
    assert frac == 0.0 and "weight-update work" in missing and ".update" in missing


def test_ctx_freqs_names_the_clusters_the_cores_span():
    """500 MHz is below the big cores' OPPs but not the little cluster's: the message gives the
    range of the clusters the core set spans, not the SoC's."""
    wl = workload_from_dict(WL)
    ctx = PlanContext(SOC, wl, CostOracle(SOC, wl.dsp.batch_padding))
    with pytest.raises(ValueError) as e:
        ctx.freqs((4, 5, 6, 7), 500)
    msg = str(e.value)
    names = sorted({SOC.cpu.cluster_of(c).name for c in (4, 5, 6, 7)})
    low = min(SOC.cluster(n).min_mhz for n in names)
    assert f"any of the clusters {', '.join(names)} of sd865 ({low:g} MHz)" in msg, msg
    assert dict(ctx.freqs((0, 1), 500))   # the little cluster runs it
