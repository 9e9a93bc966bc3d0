"""Min-Energy: configuration space, the DP under a time budget and the published observations
(docs/seeds.md 4) on LeNet, batch 16, MNN FP32 (workloads/min_energy_lenet.yaml)."""
from __future__ import annotations

from pathlib import Path

import pytest

import socsim
from socsim.errors import InputError
from socsim.sched.min_energy import CORE_SETS, LEVELS

ROOT = Path(__file__).resolve().parents[2]
LENET = ROOT / "workloads" / "min_energy_lenet.yaml"
SOC = "sd855" if (ROOT / "soc_specs" / "sd855.yaml").exists() else "sd865"
BATCHES = 50  # LeNet batches take ~1 ms: a 3.5 ms configuration switch must pay off


def _run(batches: int = BATCHES, **options):
    ov = {f"scheduler.options.{k}": v for k, v in options.items()}
    ov["batches"] = batches
    return socsim.run(SOC, LENET, scheduler="min-energy", overrides=ov).summary


@pytest.fixture(scope="module")
def dp_run():
    return _run()


def test_configuration_space(dp_run):
    configs = dp_run["scheduler_info"]["configs"]
    assert set(configs) == {f"{c}@{lv}" for c in CORE_SETS for lv in LEVELS}
    # sd855: big 2.4/1.6/0.8 GHz, little 1.8/1.2/0.6 GHz (pub:devices.sd855)
    if SOC == "sd855":
        from socsim.sched.min_energy import MinEnergy
        from socsim.engine.context import PlanContext
        from socsim.engine.oracle import CostOracle
        from socsim.spec import load_soc, load_workload
        soc = load_soc(SOC)
        ctx = PlanContext(soc, load_workload(LENET), CostOracle(soc))
        big = [dict(MinEnergy.config_freqs(ctx, ctx.cores("big2"), lv))["mid"] for lv in LEVELS]
        little = [dict(MinEnergy.config_freqs(ctx, ctx.cores("little1"), lv))["little"] for lv in LEVELS]
        assert big == [2400, 1600, 800] and little == [1800, 1200, 600]


# Was a strict xfail (the model's least-energy configuration was little2@low, 3.49 mJ against
# little1@low's 3.54 mJ).  MNN's weight gradient's one-thread dY packing and its round-robin dW
# tiles (socsim.hw.cpu.serial_pack_elements, split_share: LeNet's first convolution has 25 im2col
# rows, 3 tiles, so the busier of two threads does 2 of them) cost two cores more than one:
# little1@low 3.74 mJ, little2@low 3.91 mJ.
def test_published_observations(dp_run):
    """Big cores win on time; one little core at low frequency wins on energy; using both
    clusters is not better than the big cores alone."""
    info = dp_run["scheduler_info"]
    configs = info["configs"]
    assert info["fastest"].startswith("big")
    assert info["least_energy"] == "little1@low"
    for lv in LEVELS:
        h, b = configs[f"hybrid8@{lv}"], configs[f"big4@{lv}"]
        assert not (h["time_s"] < b["time_s"] and h["energy_j"] < b["energy_j"])


def test_dp_meets_budget_and_beats_every_fixed_configuration(dp_run):
    info = dp_run["scheduler_info"]
    theta = info["theta_t_s"]
    assert info["feasible"] and dp_run["sim_time_s"] <= theta * 1.0001
    dp_energy = dp_run["energy_j"]["training"]
    within = 0
    for name in info["configs"]:
        fixed = _run(mode="fixed", config=name)
        if fixed["sim_time_s"] <= theta:
            within += 1
            assert dp_energy <= fixed["energy_j"]["training"] * 1.001, name
    assert within >= 1
    # with a 1.2x budget the DP mixes configurations and saves energy over the best fixed one
    assert len(info["sequence"]) >= 2
    assert info["predicted"]["energy_j"] < info["best_fixed_energy_j"]
    assert dp_run["placement"]["config_switches"] == len(info["sequence"]) - 1


def _lower_hull(points: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """The lower convex hull of (time, energy, name) points, by increasing time: the
    configurations whose mixes are the least energy for their average batch time."""
    hull: list[tuple[float, float, str]] = []
    for p in sorted(points):
        while len(hull) >= 2 and ((hull[-1][0] - hull[-2][0]) * (p[1] - hull[-2][1])
                                  - (hull[-1][1] - hull[-2][1]) * (p[0] - hull[-2][0])) <= 0:
            hull.pop()
        hull.append(p)
    return hull


def _mixing_pair(info: dict, switch_s: float, batches: int) -> tuple[str, str]:
    """Two configurations the DP must mix under a budget between their run times, from the
    model's own profile (``scheduler_info``): adjacent on the lower convex hull of the
    non-dominated (time, energy) configurations, so at a budget halfway between their runs
    every fixed configuration within it costs more than running some batches in each.  Their
    batch times differ by less than a switch (a third run would cost a switch more than the
    rounding of a two-run mix leaves over) and by enough that half the batches pay for a switch;
    of those pairs, the one with the most energy per batch at stake."""
    cfg = info["configs"]
    hull = _lower_hull([(cfg[n]["time_s"], cfg[n]["energy_j"], n) for n in info["pareto"]])
    pairs = [(a, b) for a, b in zip(hull, hull[1:])
             if b[0] - a[0] < switch_s < batches * (b[0] - a[0]) / 2]
    assert pairs, f"no two configurations to mix on the front {hull}"
    a, b = max(pairs, key=lambda p: p[0][1] - p[1][1])
    return a[2], b[2]


def test_the_dp_prices_switches_as_the_engine_charges_them(dp_run, tmp_path):
    """Under a budget halfway between two configurations' runs, derived from the model's own
    per-configuration times, the DP mixes them with one switch, its predicted time is the
    batches' and the switch's, the engine's run meets the budget (a DP that left out or
    mispriced the switch's 3.5 ms plans a run that misses it or mixes other counts), the DP's
    price of the switch's energy is what the engine charged for it, the predicted training energy
    is the engine's to 0.5%, and a front thinned to two triples finds the same optimum
    (docs/validation.md)."""
    import csv

    from socsim.engine.context import PlanContext
    from socsim.engine.oracle import CostOracle
    from socsim.sched.min_energy import MinEnergy
    from socsim.spec import load_soc, load_workload
    batches = 40
    soc = load_soc(SOC)
    switch_s = soc.cpu.config_switch_ms * 1e-3
    cfg = dp_run["scheduler_info"]["configs"]
    fast, slow = _mixing_pair(dp_run["scheduler_info"], switch_s, batches)
    theta = batches * (cfg[fast]["time_s"] + cfg[slow]["time_s"]) / 2 + switch_s
    ov = {"batches": batches, "scheduler.options.time_budget_s": theta, "scheduler.options.max_front": None}
    exact = socsim.run(SOC, LENET, scheduler="min-energy", overrides=ov, out=tmp_path, reports=False).summary
    info = exact["scheduler_info"]
    assert info["configs"] == cfg  # the per-batch profile does not depend on the run
    # every fixed configuration within the budget costs more than the mix: one switch, A then B
    # or B then A
    assert info["best_fixed_within_budget"] == fast
    assert info["predicted"]["energy_j"] < info["best_fixed_energy_j"]
    assert len(info["sequence"]) == 2 and {c for c, _ in info["sequence"]} == {fast, slow}
    assert exact["placement"]["config_switches"] == 1
    # the DP's time is the batches' and one switch's, and the engine's run meets the budget
    assert exact["sim_time_s"] <= theta * (1 + 1e-6)
    runs = sum(n * cfg[c]["time_s"] for c, n in info["sequence"])
    assert info["predicted"]["time_s"] == pytest.approx(runs + switch_s, abs=batches * 1e-6)
    # the switch's energy above the idle phone (~0.1-0.3 mJ, below this run's 0.5%): the batch
    # that paid it against the next, in the same configuration, as the engine charged them
    (first, k), (then, _) = info["sequence"]
    rows = list(csv.DictReader((tmp_path / "batches.csv").open()))
    assert [r["plan"] for r in rows[k - 1:k + 2]] == [first, then, then]
    idle_w = exact["energy_j"]["idle_baseline"] / exact["sim_time_s"]
    charged = float(rows[k]["energy_j"]) - float(rows[k + 1]["energy_j"]) - idle_w * switch_s
    ctx = PlanContext(soc, load_workload(LENET), CostOracle(soc))
    me = MinEnergy()
    graph = ctx.graph(me.precision)
    _, sw_e = me._switch_costs(ctx, [me.config_plan(ctx, graph, c) for c in (first, then)], ctx.idle_power_w())
    assert sw_e[0][1] == pytest.approx(charged, rel=0.02)
    energy = sum(n * cfg[c]["energy_j"] for c, n in info["sequence"])   # (rounded to 1 uJ each)
    assert info["predicted"]["energy_j"] == pytest.approx(energy + sw_e[0][1], abs=batches * 1e-6)
    assert info["predicted"]["energy_j"] == pytest.approx(exact["energy_j"]["training"], rel=5e-3)
    thin = _run(batches=batches, time_budget_s=theta, max_front=2)["scheduler_info"]
    assert thin["dp_approximate"] and thin["sequence"] == info["sequence"]
    assert thin["predicted"]["energy_j"] == pytest.approx(info["predicted"]["energy_j"], rel=1e-9)


def test_budget_changes_the_choice():
    loose = _run(slack=100.0)["scheduler_info"]
    assert loose["sequence"] == [[loose["least_energy"], BATCHES]]
    tight = _run(slack=1.0)["scheduler_info"]
    assert tight["sequence"] == [[tight["fastest"], BATCHES]]
    assert tight["feasible"]  # slack 1: exactly the fastest run, feasible despite rounding


@pytest.mark.parametrize("option,value", [("time_budget_s", 1e-6), ("slack", 0.5)])
def test_infeasible_budget_is_a_schedule_error(option, value):
    """A budget below the fastest run cannot be met: an error naming the budget's field and
    value and the least feasible run time, not a run of the fastest configuration."""
    from socsim.errors import ScheduleError
    fastest = _run(batches=4, slack=1.0)["scheduler_info"]
    least = 4 * fastest["configs"][fastest["fastest"]]["time_s"]
    with pytest.raises(ScheduleError) as e:
        _run(batches=4, **{option: value})
    assert e.value.field == f"scheduler.options.{option}" and e.value.value == value
    assert "minimum feasible run time" in e.value.message and f"{least:.4g}"[:4] in e.value.message
    assert fastest["fastest"] in e.value.message


def test_fixed_and_governor_modes():
    s = _run(batches=3, mode="governor")
    assert s["scheduler_info"]["mode"] == "governor" and s["placement"]["config_switches"] == 0
    with pytest.raises(InputError):
        _run(batches=1, mode="fixed", config="big9@high")


@pytest.mark.parametrize("option,value,field", [
    ("config", "big9@ultra", "scheduler.options.config"),   # unknown level
    ("config", "big4", "scheduler.options.config"),         # no level
    ("config", "big0@high", "scheduler.options.config"),    # no cores
    ("config", "foo@high", "scheduler.options.config"),     # unknown core set
    ("config", "big9@high", "scheduler.options.config"),    # more cores than the SoC has
    ("core_sets", ["foo"], "scheduler.options.core_sets"),
    ("core_sets", ["big2", "big9"], "scheduler.options.core_sets"),
    ("core_sets", [], "scheduler.options.core_sets"),
])
def test_bad_configuration_options_are_input_errors(option, value, field):
    """Bad configurations are input errors (exit 2) naming the option, not ValueErrors."""
    from socsim.errors import InputError as IE
    with pytest.raises(IE) as e:
        _run(batches=1, mode="fixed" if option == "config" else "dp", **{option: value})
    assert e.value.field == field
    assert e.value.value in (value, "big9")  # the option's value, or the offending core set


def test_bad_configuration_exits_2_on_the_cli():
    from click.testing import CliRunner
    from socsim.cli import main
    for extra in (["scheduler.options.config=big9@ultra"], ["scheduler.options.config=big4"]):
        args = ["run", "--soc", SOC, str(LENET), "--quiet", "--set", "batches=1",
                "--set", "scheduler.options.mode=fixed"] + [a for x in extra for a in ("--set", x)]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, r.output
        assert "scheduler.options.config" in r.output
    r = CliRunner().invoke(main, ["run", "--soc", SOC, str(LENET), "--quiet", "--set", "batches=1",
                                  "--set", "scheduler.options.core_sets=[foo]"])
    assert r.exit_code == 2 and "scheduler.options.core_sets" in r.output, r.output


def test_explicit_core_sets_are_the_configuration_space():
    info = _run(batches=2, core_sets=["big2", "little1"], levels=["high", "low"])["scheduler_info"]
    assert set(info["configs"]) == {"big2@high", "big2@low", "little1@high", "little1@low"}


def test_min_energy_dvfs_composes_with_mandheling():
    """SEEDS 'What reproduce means': min-energy's DVFS for Mandheling's CPU side."""
    wl = {"name": "c", "model": "vgg11", "input": [3, 32, 32], "num_classes": 10, "batch_size": 16,
          "batches": 6, "precision": "niti", "cpu": {"cores": "big2"}}
    plain = socsim.run("sd865", dict(wl, scheduler={"name": "mandheling"})).summary
    comp = socsim.run("sd865", dict(wl, scheduler={"name": "min-energy", "options": {
        "base": {"name": "mandheling"}, "slack": 1.5}})).summary
    info = comp["scheduler_info"]
    assert info["mode"] == "compose" and info["base"] == "mandheling"
    assert comp["placement"]["dsp_ops"] == plain["placement"]["dsp_ops"]  # Mandheling's placement kept
    levels = info["levels"]
    assert levels["low"]["time_s"] > levels["high"]["time_s"]
    # it trades the slack it was given for energy: slower than Mandheling under schedutil, within
    # the 1.5x budget (plus the first batch's graph preparation), and less training energy
    assert plain["per_batch"]["time_s"] < comp["per_batch"]["time_s"] <= 1.5 * plain["per_batch"]["time_s"] * 1.05
    assert comp["energy_j"]["training"] < plain["energy_j"]["training"]
    # base_info is Mandheling's report at the end of the run (its rescales as they happened), not
    # the one it had at plan time (0 dynamic batches)
    rescale = info["base_info"]["rescale"]
    assert rescale["dynamic_batches"] == plain["scheduler_info"]["rescale"]["dynamic_batches"] > 0
    assert rescale["periods"] == plain["scheduler_info"]["rescale"]["periods"]
