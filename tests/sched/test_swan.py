"""Swan: core-set choices, cost order and pruning, the control loop (docs/seeds.md 3).

The control-loop tests run on a fast analytic CPU cost model (``fast_cpu``): they test Swan's
decisions, not the CPU model, and the real one simulates caches per op and core set (seconds
each).  The depthwise test uses the real model and is marked slow.
"""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import socsim
from socsim.hw.cost import OpCost
from socsim.sched.swan import Choice, SwanOptions, core_set_choices, cost_key, prune
from socsim.spec import load_soc

SOC = load_soc("sd865")


class FastCpu:
    """Compute at the spec's sustained FP32 rate, traffic at the DRAM bandwidth."""

    def __init__(self, soc) -> None:
        self.soc = soc

    def supports(self, op) -> bool:
        return True

    def cost(self, op, cfg) -> OpCost:
        n = len(cfg.cores)
        cl = self.soc.cpu.cluster_of(cfg.cores[0])
        f = cfg.freq(cl.name)
        cycles = (2 * op.macs + op.flops) / (cl.fp32_flops_per_cycle * cl.fp32_efficiency) / n
        traffic = op.bytes_read + op.bytes_written
        stall = traffic / (self.soc.dram.bandwidth_gbs * 1e9 * 0.5)
        busy = {}
        for c in cfg.cores:
            name = self.soc.cpu.cluster_of(c).name
            busy[name] = busy.get(name, 0) + 1
        return OpCost.compose(int(cycles), f, stall, bytes=traffic, dram_bytes=traffic, activity=0.9,
                              busy=tuple(sorted(busy.items())))


@pytest.fixture
def fast_cpu(monkeypatch):
    import socsim.hw.cpu as cpu
    monkeypatch.setattr(cpu, "CpuCostModel", FastCpu)


def wl(batches=400, fg=None, upgrade_after_s=120.0, **env):
    return dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16,
                batches=batches, scheduler={"name": "swan", "options": {"upgrade_after_s": upgrade_after_s}},
                cpu={"governor": "schedutil"},
                environment={"foreground_load": fg, **env})


def test_choices_are_generalised_per_soc():
    names = ["".join(map(str, c)) for c in core_set_choices(SOC)]
    assert names == ["4567", "456", "45", "4", "0123", "012", "01", "0"]


def test_cost_order():
    k = {n: cost_key(SOC, tuple(int(ch) for ch in n)) for n in ["4567", "456", "45", "4", "0123", "0"]}
    assert k["4567"] > k["456"] > k["45"] > k["4"] > k["0123"] > k["0"]  # prime > big > little


def test_prune_drops_costlier_choices_that_are_not_faster():
    a = Choice("4567", (4, 5, 6, 7), (1, 1, 4, 0), latency_s=1.0)
    b = Choice("45", (4, 5), (1, 0, 2, 0), latency_s=0.9)     # cheaper and faster: prunes a
    c = Choice("0", (0,), (0, 0, 0, 1), latency_s=3.0)
    kept, pruned = prune([a, b, c])
    assert [x.name for x in kept] == ["45", "0"] and [x.name for x in pruned] == ["4567"]


def test_no_interference_no_moves(fast_cpu):
    s = socsim.run("sd865", wl(batches=50)).summary
    info = s["scheduler_info"]
    assert info["events"] == [] and info["start"] == info["final"]
    assert len(info["choices"]) + len(info["pruned"]) == 8


def test_downgrade_within_one_batch_and_upgrade_after_timeout(fast_cpu):
    fg = {"cores": [4, 5, 6, 7], "start_s": 0.2, "duration_s": 0.3, "utilization": 0.9}
    s = socsim.run("sd865", wl(batches=1500, fg=fg, upgrade_after_s=0.2)).summary
    info = s["scheduler_info"]
    ev = info["events"]
    assert ev and ev[0]["event"] == "downgrade" and ev[0]["from"] == info["start"]
    # the first batch that ran under the foreground load triggered it: at most one batch late
    assert 0.2 <= ev[0]["t_s"] <= 0.2 + 2 * max(c["latency_max_s"] for c in info["choices"])
    downs = [e for e in ev if e["event"] == "downgrade"]
    # downgrades continue until a choice off the loaded cores (little cores) is reached
    assert not set(downs[-1]["to"]) & set("4567")
    ups = [e for e in ev if e["event"] == "upgrade"]
    assert ups, "no upgrade after the quiet timeout"
    first_up = ups[0]
    last_interference = max(e["t_s"] for e in downs if e["t_s"] < first_up["t_s"])
    assert first_up["t_s"] - last_interference >= 0.2
    assert info["final"] == info["start"]  # back on the fastest choice once the app is gone


def _hot(ref: str, fg=None) -> dict:
    """400 LeNet batches on a phone at 45 C ambient: sd865's skin sensor caps the big clusters
    from its first poll (0.25 s), after Swan profiled its choices on the idle, uncapped phone.
    The battery gate is raised so that the run is not declined."""
    w = wl(batches=400, fg=fg, ambient_c=45)
    w["scheduler"]["options"].update(max_battery_temp_c=80, interference_reference=ref)
    return socsim.run("sd865", w).summary


def test_thermal_caps_are_not_interference(fast_cpu):
    """Taken literally (``idle_profile``), the 1.1x test reads batches slowed by a thermal cap as
    a foreground app and downgrades with no app running; against the profile at the clocks
    cpufreq allows (``cpufreq``, the default) those batches are throttling: no move, and
    Swan stays on its fastest set."""
    lit = _hot("idle_profile")["scheduler_info"]
    assert lit["downgrades"] > 0 and lit["final"] != lit["start"]
    hot = _hot("cpufreq")
    info = hot["scheduler_info"]
    assert hot["batches"] == 400 and info["events"] == [] and info["interfered_batches"] == 0
    # the batches the literal test would have flagged are counted as throttled
    assert info["throttled_batches"] > 0 and info["final"] == info["start"]
    assert SwanOptions().interference_reference == "cpufreq"


def test_an_app_under_thermal_caps_is_still_interference(fast_cpu):
    """Under the caps, a foreground app on the big cores still slows Swan's batches past 1.1x
    the capped profile: Swan downgrades within a batch or two of the app's start, off its
    cores."""
    fg = {"cores": [4, 5, 6, 7], "start_s": 0.5, "duration_s": 0.5, "utilization": 0.9}
    info = _hot("cpufreq", fg)["scheduler_info"]
    downs = [e for e in info["events"] if e["event"] == "downgrade"]
    assert downs and downs[0]["from"] == info["start"]
    # two batches, each at most twice its idle latency under the caps
    assert 0.5 <= downs[0]["t_s"] <= 0.5 + 2 * 2 * max(c["latency_max_s"] for c in info["choices"])
    assert not set(downs[-1]["to"]) & set("4567")


class _Est:
    """A planning context whose estimate is 1 s at 2000 MHz, scaled by clock; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def estimate(self, plan, freq=None):
        self.calls += 1
        return 2000.0 / min(freq.values()), 0.0


@given(st.floats(100, 4000), st.floats(100, 4000))
def test_capped_reference_clamps_the_profile_clocks_to_the_caps(cap_big, cap_little):
    """The reference is the idle profile when no used cluster is capped below its profiled clock
    (no estimate), else the profile re-estimated at the clamped clocks, memoised; never faster
    than the profile."""
    from socsim.sched.swan import capped_reference
    c = Choice("45", (4, 5), (1, 0, 2, 0), latency_s=1.0, latency_max_s=1.0, freqs=((("big", 2000.0),),))
    ctx, memo = _Est(), {}
    ref = capped_reference(ctx, None, c, {"big": cap_big, "little": cap_little}, memo)
    if cap_big >= 2000.0:
        assert ref == 1.0 and ctx.calls == 0
    else:
        assert ref == pytest.approx(2000.0 / cap_big) and ref > 1.0 and ctx.calls == 1
        assert capped_reference(ctx, None, c, {"big": cap_big}, memo) == ref and ctx.calls == 1


def test_stops_when_not_charging_or_battery_hot(fast_cpu):
    """The gates run before every batch, the first included: a phone off the charger, or a
    battery already above 35 C, trains nothing (docs/seeds.md 3)."""
    s = socsim.run("sd865", wl(batches=20, charging=False)).summary
    assert s["batches"] == 0 and "not charging" in s["engine"]["stop_reason"]
    assert s["sim_time_s"] == 0 and s["thermal"]["peak_c"] == pytest.approx(25.0)
    s = socsim.run("sd865", wl(batches=20, ambient_c=40)).summary
    assert s["batches"] == 0 and "declined" in s["engine"]["stop_reason"]


def test_bad_choice_option_is_an_input_error():
    from socsim.errors import InputError
    with pytest.raises(InputError) as e:
        socsim.run("sd865", wl(batches=1), overrides={"scheduler.options.choices": ["4x"]})
    assert e.value.field == "scheduler.options.choices"


def test_torch_version_option():
    """A release as YAML writes it unquoted (a number) is read as the string; one we do not
    model, or a torch_version for MNN's kernels, is an input error naming the field."""
    from socsim.errors import InputError
    from socsim.sched.baselines import PyTorchOptions
    from socsim.sched.swan import SwanOptions
    assert PyTorchOptions(torch_version=1.11).torch_version == "1.11"
    assert SwanOptions(torch_version=1.8).torch_version == "1.8" and SwanOptions().torch_version == "1.8"
    for opts in ({"torch_version": 1.9}, {"torch_version": "2.0"}, {"framework": "mnn", "torch_version": "1.8"}):
        with pytest.raises(InputError) as e:
            socsim.run("sd865", {**wl(batches=1), "scheduler": {"name": "swan", "options": opts}})
        assert e.value.field == "scheduler.options.torch_version", opts


def test_foreground_loss_swan_leaves_the_app_its_cores(fast_cpu):
    """Swan's third metric: the foreground app's throughput loss.  PyTorch keeps its threads on
    the app's cores (CFS halves the app's share while they run); Swan moves off them."""
    fg = {"name": "game", "cores": [4, 5, 6, 7], "start_s": 0.1, "duration_s": 2.0, "utilization": 0.9}
    w = wl(batches=800, fg=fg, upgrade_after_s=100.0)
    swan = socsim.run("sd865", w).summary
    torch = socsim.run("sd865", {**w, "scheduler": {"name": "pytorch"}}).summary
    (fs,), (ft,) = swan["foreground"], torch["foreground"]
    assert ft["name"] == "game" and ft["cores"] == [4, 5, 6, 7]
    # PyTorch keeps threads on all four cores (idle only in per-op dispatch): towards the 50% bound
    assert 0.25 < ft["throughput_loss"] <= 0.5
    assert ft["contended_core_s"] <= 4 * ft["window_simulated_s"] + 1e-9
    # Swan pays for the first batches under the load, then trains on the little cores
    assert fs["throughput_loss"] < 0.25 * ft["throughput_loss"]


def test_foreground_on_other_cores_costs_the_app_nothing(fast_cpu):
    fg = {"cores": [0, 1], "start_s": 0.0, "duration_s": 0.5}
    torch = {"scheduler": {"name": "pytorch"}}
    s = socsim.run("sd865", {**wl(batches=100, fg=fg), **torch}).summary
    assert s["foreground"][0]["throughput_loss"] == 0.0
    assert "foreground" not in socsim.run("sd865", {**wl(batches=5), **torch}).summary


def test_foreground_load_on_a_missing_core_is_an_input_error():
    from socsim.errors import InputError
    fg = [{"cores": [4]}, {"cores": [7, 12], "duration_s": 1.0}]
    fg[0]["duration_s"] = 1.0
    with pytest.raises(InputError) as e:
        socsim.run("sd865", wl(batches=1, fg=fg))
    assert e.value.field == "environment.foreground_load[1].cores" and e.value.value == [7, 12]


def _class_times(model: str, chw: tuple, classes: int, cores: tuple, version: str = "1.11") -> dict[str, float]:
    """One batch's PyTorch-kernel op costs summed into memory-bound ops and convolutions."""
    from socsim.engine.context import build_graph
    from socsim.sched.swan import op_times_by_kind
    out = {"conv": 0.0, "memory": 0.0}
    for kind, t in op_times_by_kind(SOC, build_graph(model, chw, classes, 16, "fp32"), cores, version).items():
        out["conv" if kind in ("conv2d", "conv2d_dgrad", "conv2d_wgrad", "gemm") else "memory"] += t
    return out


@pytest.mark.slow
def test_memory_bound_ops_of_depthwise_models_do_not_scale():
    """Swan's mechanism at the op level (docs/seeds.md 3): in a depthwise model the memory-bound ops
    (depthwise convs, batch norm, activations) get slower from three to four big cores, and
    they are a far larger share of the step than in ResNet-34, whose convolutions scale.  Shown
    on PyTorch 1.11, without 1.8's grouped-convolution gradient sums, which only add to it."""
    mb3 = _class_times("mobilenetv2", (3, 224, 224), 1000, (4, 5, 6))
    mb4 = _class_times("mobilenetv2", (3, 224, 224), 1000, (4, 5, 6, 7))
    assert mb4["memory"] > mb3["memory"]
    # the convolutions still gain from the fourth core, though far less than 4/3: four threads
    # fill sd865's big domain, whose background work then pauses them (socsim.hw.forkjoin, fitted
    # on the development set).  MNN's one-thread MatMul passes and round-robin dW tiles
    # (socsim/hw/cpu.py) are not PyTorch's: its ops (Op.cpu_framework) take the split path
    assert mb4["conv"] < mb3["conv"]
    rn4 = _class_times("resnet34", (3, 32, 32), 10, (4, 5, 6, 7))
    share_mb = mb4["memory"] / sum(mb4.values())
    share_rn = rn4["memory"] / sum(rn4.values())
    assert share_mb > 5 * share_rn


@pytest.mark.slow
@pytest.mark.parametrize("model", ["shufflenetv2", "mobilenetv2"])
def test_fewer_cores_win_for_depthwise_models(model):
    """docs/seeds.md 3: for the depthwise models fewer cores are both faster and more
    energy-efficient than PyTorch's four threads.  On the PyTorch Swan ran (1.8), the group
    loop's full-size gradient sums make the step memory-bound (docs/validation.md, Swan)."""
    w = dict(name="t", model=model, input=[3, 224, 224], num_classes=1000, batch_size=16, batches=3)
    swan = socsim.run("sd865", w, scheduler="swan").summary
    torch = socsim.run("sd865", {**w, "scheduler": {"name": "pytorch"}}).summary
    assert len(swan["scheduler_info"]["start"]) < len(torch["placement"]["cpu_cores"]) == 4
    assert swan["per_batch"]["time_s"] < torch["per_batch"]["time_s"]
    assert swan["per_batch"]["energy_j"] < torch["per_batch"]["energy_j"]


@pytest.mark.slow
def test_compute_bound_resnet34_scales_with_cores():
    """docs/seeds.md 3: ResNet-34 (no grouped convolutions) scales with cores, so Swan's fastest
    choice is PyTorch's four big cores."""
    w = dict(name="t", model="resnet34", input=[3, 32, 32], num_classes=10, batch_size=16, batches=2)
    swan = socsim.run("sd865", w, scheduler="swan").summary
    assert swan["scheduler_info"]["start"] == "4567"


def test_pytorch_up_to_1_10_sums_grouped_convolution_gradients_at_full_size():
    """PyTorch 1.8 differentiates a grouped convolution's loop op by op: one full-size gradient
    sum per grouped layer, its traffic G times the input's; 1.11 adds none.  Both pay the
    loop's per-group dispatch."""
    from socsim.engine.context import build_graph
    from socsim.sched.baselines import PYTORCH_GROUP_LOOP_CALLS, PyTorchRun, grouped_convs
    g = build_graph("mobilenetv2", (3, 64, 64), 10, 4, "fp32")
    convs = grouped_convs(g)
    old, new = PyTorchRun(g, "1.8"), PyTorchRun(g, "1.11")
    sums = [op for op in old.ops if op.name.endswith(".group_grad_sum")]
    assert len(sums) == len(convs) > 0 and len(new.ops) == len(g.ops)
    for conv, s in zip(sorted(convs, key=lambda c: c.layer), sorted(sums, key=lambda o: o.layer)):
        p = conv.p
        x = p["batch"] * p["cin"] * p["h"] * p["w"] * 4 + conv.weight_bytes
        assert s.layer == conv.layer and s.bytes_written == 2 * p["groups"] * x
        assert s.phase == "error_grad" and old.ops.index(s) == old.ops.index(
            next(o for o in old.ops if o.layer == conv.layer and o.kind.endswith("_dgrad"))) + 1
    groups = sum(c.p["groups"] for c in convs)
    assert dict(old.overheads)["group-loop-dispatch"] == dict(new.overheads)["group-loop-dispatch"] == pytest.approx(
        30e-6 * PYTORCH_GROUP_LOOP_CALLS * groups)
    assert old.peak_memory_bytes >= new.peak_memory_bytes
    r = build_graph("resnet18", (3, 32, 32), 10, 4, "fp32")
    assert PyTorchRun(r, "1.8").ops == PyTorchRun(r, "1.11").ops and len(PyTorchRun(r).overheads) == 1
    with pytest.raises(ValueError, match="unknown PyTorch version"):
        PyTorchRun(g, "2.0")


def test_pytorch_dispatch_runs_at_the_host_core_speed():
    """PyTorch's per-op dispatch is host code: 30 us on the reference core (sd865's A77 mid core at
    its top clock), slower on a little host core by CoreMark/MHz x clock (A55 at 1804.8 MHz:
    8.48 x 2419.2 / (3.71 x 1804.8) = 3.06x), and the same on every set hosted by the same core."""
    from socsim.engine.context import build_graph
    from socsim.sched.baselines import PyTorchRun, host_speed
    g = build_graph("mobilenetv2", (3, 64, 64), 10, 4, "fp32")
    assert host_speed(SOC, 4) == pytest.approx(1.0)
    assert 1 / host_speed(SOC, 0) == pytest.approx(8.48 * 2419.2 / (3.71 * 1804.8))
    assert host_speed(SOC, 7) > 1.0        # the prime core's higher clock
    big, little = dict(PyTorchRun(g, "1.8", SOC, (4, 5)).overheads), dict(PyTorchRun(g, "1.8", SOC, (0, 1)).overheads)
    legacy = dict(PyTorchRun(g, "1.8").overheads)
    assert big["group-loop-dispatch"] == pytest.approx(legacy["group-loop-dispatch"])
    assert little["group-loop-dispatch"] == pytest.approx(legacy["group-loop-dispatch"] / host_speed(SOC, 0))
    assert little["autograd-dispatch"] == pytest.approx(legacy["autograd-dispatch"] / host_speed(SOC, 0))


def test_pytorch_group_loop_fork_join_grows_with_threads():
    """Each group's parallel kernels open a parallel region; its fork-join grows with the extra
    threads and is absent on one core; 1.11's loop opens fewer regions than 1.8's."""
    from socsim.engine.context import build_graph
    from socsim.hw.cpu import THREAD_SYNC_S
    from socsim.sched.baselines import PYTORCH_GROUP_LOOP_REGIONS, PyTorchRun, grouped_convs
    g = build_graph("shufflenetv2", (3, 64, 64), 10, 4, "fp32")
    groups = sum(c.p["groups"] for c in grouped_convs(g))
    fj = {n: dict(PyTorchRun(g, "1.8", SOC, tuple(range(4, 4 + n))).overheads).get("group-loop-fork-join", 0.0)
          for n in (1, 2, 3, 4)}
    assert fj[1] == 0.0 and fj[2] < fj[3] < fj[4]
    assert fj[4] == pytest.approx(PYTORCH_GROUP_LOOP_REGIONS["1.8"] * groups * THREAD_SYNC_S * 3)
    new = dict(PyTorchRun(g, "1.11", SOC, (4, 5, 6, 7)).overheads)["group-loop-fork-join"]
    assert 0 < new < fj[4]
    r = build_graph("resnet18", (3, 32, 32), 10, 4, "fp32")
    assert "group-loop-fork-join" not in dict(PyTorchRun(r, "1.8", SOC, (4, 5, 6, 7)).overheads)


def test_pytorch_grouped_weight_gradient_on_one_thread_and_batch_split():
    """slow_conv2d's weight gradient loops over the batch on one thread: a grouped layer's weight
    gradient keeps one thread's work however many cores the set has (the CPU model splits an
    op evenly, so its work is n times); below NNPACK's batch of 16, its forward and input
    gradient split the batch in ceil(B/n) chunks (10 images on 4 threads: 3+3+3+1, 1.2x; 16 on
    3 threads: 1.125x).  At a batch of 16 1.8 runs the group's convolution
    through NNPACK: its forward splits evenly (NNPACK's pool) and its input gradient is
    slow_conv_dilated2d's serial loop, one thread.  Ungrouped layers are untouched."""
    from socsim.engine.context import build_graph
    from socsim.sched.baselines import PyTorchRun, batch_split, grouped_convs
    from socsim.workload.opkinds import lookup
    assert batch_split(16, 3) == pytest.approx(1.125) and batch_split(16, 4) == 1.0 and batch_split(16, 1) == 1.0
    assert batch_split(10, 4) == pytest.approx(1.2)
    for batch in (10, 16):
        g = build_graph("mobilenetv2", (3, 64, 64), 10, batch, "fp32")
        grouped = {c.layer for c in grouped_convs(g)}
        base = {o.name: o for o in PyTorchRun(g, "1.8").ops}
        for n in (2, 3, 4):
            run = {o.name: o for o in PyTorchRun(g, "1.8", SOC, tuple(range(4, 4 + n)) if n < 4 else (4, 5, 6, 7)).ops}
            assert run.keys() == base.keys()
            for name, op in run.items():
                b, role = base[name], lookup(op.kind).backward
                fwd = op.layer in grouped and op.phase == "forward" and op.p.get("groups", 1) > 1
                if op.layer in grouped and (role == "wgrad" or role == "dgrad" and batch == 16):
                    assert op.macs == b.macs * n and op.bytes_read == b.bytes_read
                elif op.layer in grouped and (role == "dgrad" or fwd):
                    assert op.macs == round(b.macs * (batch_split(batch, n) if batch < 16 else 1.0))
                else:
                    assert op == b
    r = build_graph("resnet18", (3, 32, 32), 10, 16, "fp32")
    assert PyTorchRun(r, "1.8", SOC, (4, 5, 6)).ops == PyTorchRun(r, "1.8").ops
    # 1.11 keeps slow_conv2d at any batch: the batch split of the forward and input gradient
    g = build_graph("mobilenetv2", (3, 64, 64), 10, 16, "fp32")
    grouped = {c.layer for c in grouped_convs(g)}
    base = {o.name: o for o in PyTorchRun(g, "1.11").ops}
    run = {o.name: o for o in PyTorchRun(g, "1.11", SOC, (4, 5, 6)).ops}
    for name, op in run.items():
        if op.layer in grouped and lookup(op.kind).backward == "dgrad":
            assert op.macs == round(base[name].macs * batch_split(16, 3))


def test_nnpack_regions_follow_nnpack_blocking():
    """NNPACK's parallel regions for one group, counted from its convolution-output code: a 3x3
    one-channel group at 112x112 picks 16x16 FFT tiles (8x8 Winograd needs 361 tiles per image,
    more than 4 x 64), 16 x 64 tiles in blocks of 28 -> 37 input transforms + 1 output transform;
    at 56x56 16 x 16 tiles -> 10 + 1; at 7x7 Winograd F(6x6, 3x3) (4 tiles, not more than 4 x 1):
    16 x 4 tiles in blocks of 48 -> 2 + 1; the tuple GEMMs and the kernel transform of one
    channel fit one tile and run on the caller.  A strided group: one call per image."""
    from socsim.sched.baselines import nnpack_regions, uses_nnpack
    from socsim.workload.ops import Op

    def dw(c, hw, stride=1, batch=16, k=3):
        o = -(-hw // stride)
        return Op(name="dw", kind="dwconv2d", phase="forward", layer="l", dtype="fp32",
                  params=(("batch", batch), ("cin", c), ("cout", c), ("groups", c), ("h", hw), ("w", hw),
                          ("kh", k), ("kw", k), ("oh", o), ("ow", o), ("pad", k // 2), ("stride", stride)))
    assert nnpack_regions(dw(32, 112)) == 38
    assert nnpack_regions(dw(144, 56)) == 11
    assert nnpack_regions(dw(960, 7)) == 3
    assert nnpack_regions(dw(96, 112, stride=2)) == 16
    assert uses_nnpack(dw(32, 112), "1.8") and not uses_nnpack(dw(32, 112, batch=15), "1.8")
    assert not uses_nnpack(dw(32, 112), "1.11") and not uses_nnpack(dw(32, 112, k=17), "1.8")


@given(st.integers(16, 64), st.integers(1, 8), st.sampled_from([1, 2]), st.sampled_from([1, 3, 5]),
       st.sampled_from([1, 4, 32]), st.integers(1, 128))
def test_nnpack_regions_grow_with_the_batch(batch, extra, stride, k, per_group, hw):
    """Every NNPACK call over a batch of 16 or more opens at least one region, and more images
    never open fewer."""
    from socsim.sched.baselines import nnpack_regions
    from socsim.workload.ops import Op

    def conv(b):
        o = -(-hw // stride)
        return Op(name="c", kind="conv2d", phase="forward", layer="l", dtype="fp32",
                  params=(("batch", b), ("cin", 2 * per_group), ("cout", 2 * per_group), ("groups", 2),
                          ("h", hw), ("w", hw), ("kh", k), ("kw", k), ("oh", o), ("ow", o), ("pad", k // 2),
                          ("stride", stride)))
    assert 1 <= nnpack_regions(conv(batch)) <= nnpack_regions(conv(batch + extra))


def test_pytorch_1_8_nnpack_pool_fork_joins():
    """At a batch of 16, 1.8's group loop runs each group's forward on NNPACK's own pool: a
    fork-join per NNPACK region on n threads (none on one core, none on 1.11 or below NNPACK's
    batch), 4 OpenMP regions per group instead of 6, and one more ATen call per group (the zero
    bias NNPACK's binding allocates)."""
    from socsim.engine.context import build_graph
    from socsim.hw.cpu import THREAD_SYNC_S
    from socsim.sched.baselines import (PYTORCH_GROUP_LOOP_CALLS, PYTORCH_GROUP_LOOP_REGIONS, PyTorchRun,
                                        grouped_convs, nnpack_regions)
    g = build_graph("mobilenetv2", (3, 64, 64), 10, 16, "fp32")
    convs = grouped_convs(g)
    groups = sum(c.p["groups"] for c in convs)
    pool = sum(c.p["groups"] * nnpack_regions(c) for c in convs)
    assert pool > groups
    ov = {n: dict(PyTorchRun(g, "1.8", SOC, tuple(range(4, 4 + n))).overheads) for n in (1, 2, 4)}
    assert "nnpack-fork-join" not in ov[1] and "group-loop-fork-join" not in ov[1]
    assert ov[4]["nnpack-fork-join"] == pytest.approx(pool * THREAD_SYNC_S * 3)
    assert ov[2]["nnpack-fork-join"] == pytest.approx(pool * THREAD_SYNC_S)
    assert ov[4]["group-loop-fork-join"] == pytest.approx(4 * groups * THREAD_SYNC_S * 3)
    assert ov[4]["group-loop-dispatch"] == pytest.approx(30e-6 * (PYTORCH_GROUP_LOOP_CALLS + 1) * groups)
    small = build_graph("mobilenetv2", (3, 64, 64), 10, 8, "fp32")
    for run in (PyTorchRun(small, "1.8", SOC, (4, 5, 6, 7)), PyTorchRun(g, "1.11", SOC, (4, 5, 6, 7))):
        assert "nnpack-fork-join" not in dict(run.overheads)
    assert dict(PyTorchRun(small, "1.8", SOC, (4, 5, 6, 7)).overheads)["group-loop-fork-join"] == pytest.approx(
        PYTORCH_GROUP_LOOP_REGIONS["1.8"] * groups * THREAD_SYNC_S * 3)


def test_channel_shuffle_is_not_a_grouped_convolution():
    """ShuffleNet-v2's channel shuffles carry ``groups`` but run no group loop."""
    from socsim.engine.context import build_graph
    from socsim.sched.baselines import grouped_convs
    g = build_graph("shufflenetv2", (3, 64, 64), 10, 2, "fp32")
    assert any(o.kind == "channel_shuffle" for o in g.ops)
    assert grouped_convs(g) and all(c.kind.startswith(("dwconv", "conv")) for c in grouped_convs(g))


@given(st.integers(1, 256), st.integers(1, 16))
def test_batch_split_bounds(batch, threads):
    """The slowest thread's images (chunks of ceil(B/n)) are never fewer than an even split's
    and at most one image more."""
    from socsim.sched.baselines import batch_split
    per_thread = batch_split(batch, threads) * batch / threads
    assert batch / threads - 1e-9 <= per_thread <= batch / threads + 1 + 1e-9
    assert per_thread == pytest.approx(-(-batch // min(batch, threads)))


def test_swan_and_the_pytorch_baseline_price_each_core_set_as_pytorch_runs_it():
    """Swan's choices and the pytorch baseline use PyTorchRun on their own core set: a little-core
    choice pays its host core's slower dispatch, a big set its fork-joins; framework mnn none."""
    from socsim.engine.context import build_graph
    from socsim.sched.baselines import PyTorchRun
    from socsim.sched.swan import Swan, SwanOptions
    g = build_graph("shufflenetv2", (3, 64, 64), 10, 4, "fp32")
    swan = Swan()
    for cores in ((0, 1), (4, 5, 6, 7)):
        plan = swan._plan_for(SOC, g, cores)
        run = PyTorchRun(g, "1.8", SOC, cores)
        assert plan.prep_overheads == run.overheads and tuple(s.op for s in plan.steps) == run.ops
    little, big = (dict(swan._plan_for(SOC, g, c).prep_overheads) for c in ((0, 1), (4, 5)))
    assert little["group-loop-dispatch"] > 2.5 * big["group-loop-dispatch"]
    assert Swan(SwanOptions(framework="mnn"))._plan_for(SOC, g, (4, 5)).prep_overheads == ()
