"""Sage's JIT compilation is simulated: the first batch of every new plan (the first plan
included) pays it once, later batches do not (docs/seeds.md 2; socsim/sched/sage.py)."""
from __future__ import annotations

import csv

import pytest

import socsim
from socsim.spec import load_soc

SMALL = dict(name="t", model="resnet18", input=[3, 96, 96], num_classes=10, batch_size=16)
# peaks of the small model (MB): micro-batch 16 -> 122, 12 -> 113, 8 -> 104, 6 -> 100, 4 -> 96;
# 110 MB -> 10+6, 98 MB -> 6+6+4 with checkpointing (the MTP); the steps fall in backward passes
# (1.2 s before Sage's kernels had their own ramp, socsim.hw.gpu.SAGE_JIT_RAMP_CYCLES; 1.25-1.30 s now)
PROFILE = [{"at_s": 0, "mb": 200}, {"at_s": 0.5, "mb": 110}, {"at_s": 1.28, "mb": 98}]


# The GPU's clock is pinned (the performance governor): under simple_ondemand a compiling
# batch's idle GPU clocks down the next batch (tests/hw/test_gpu_dvfs.py), and these tests
# compare batch times with and without the JIT exactly.
_sd865 = load_soc("sd865")
SOC = _sd865.model_copy(update={"gpu": _sd865.gpu.model_copy(update={"governor": "performance"})})


def run(tmp_path, name, budget=None, batches=4, **opts):
    wl = dict(SMALL, batches=batches, scheduler={"name": "sage", "options": opts},
              environment={"memory_budget_mb": budget})
    r = socsim.run(SOC, wl, out=tmp_path / name, reports=False)
    with open(tmp_path / name / "batches.csv") as f:
        rows = list(csv.DictReader(f))
    return r.summary, [float(x["time_s"]) for x in rows], [x["plan"] for x in rows]


def test_first_batch_pays_the_jit_once(tmp_path):
    on, t_on, _ = run(tmp_path, "on", jit_compile=True)
    off, t_off, _ = run(tmp_path, "off", jit_compile=False)
    jit = on["scheduler_info"]["jit_compile_s"]
    assert jit > 0.05 and off["scheduler_info"]["jit_compile_s"] == 0
    assert t_on[0] - t_off[0] == pytest.approx(jit, abs=1e-6)
    assert t_on[1:] == pytest.approx(t_off[1:], rel=1e-9)
    assert on["sim_time_s"] - off["sim_time_s"] == pytest.approx(jit, abs=1e-6)
    ev = on["scheduler_info"]["splits"][0]
    assert ev["first_batch"] == 0 and ev["jit_s"] == pytest.approx(jit)
    assert on["per_batch"]["energy_j"] > off["per_batch"]["energy_j"]  # the host core compiles


def test_every_new_plan_pays_its_jit_in_its_first_batch_only(tmp_path):
    on, t_on, labels_on = run(tmp_path, "on", PROFILE, batches=9)
    with open(tmp_path / "on" / "events.csv") as f:
        plan_events = [r["detail"] for r in csv.DictReader(f) if r["name"] == "plan"]
    # a plan's steady copy after its compiling batch is not a new plan
    assert plan_events == on["placement"]["plans"][1:]
    steady = {}  # each plan's batch time without JIT, from a run at its budget alone
    for mb in (200, 110, 98):
        _, t_off, labels_off = run(tmp_path, f"off{mb}", mb, batches=2, jit_compile=False)
        assert t_off[0] == pytest.approx(t_off[1], rel=1e-9)
        steady[labels_off[0]] = t_off[0]
    info = on["scheduler_info"]
    events = info["splits"]
    assert [e["micro_batches"][0] for e in events] == [16, 10, 6]
    assert all(e["first_batch"] is not None for e in events)
    # both budget steps fall in a backward pass whose in-flight tensors alone exceed the new
    # budget: the batch in progress cannot be re-split, and finishes over it
    assert [r["micro_batches"] for r in info["resplits"]] == [None, None]
    assert set(steady) >= set(labels_on)
    assert set(labels_on) == set(on["placement"]["plans"])  # batches.csv names plans as the summary does
    jit_at = {e["first_batch"]: e["jit_s"] for e in events}
    for b, (t, label) in enumerate(zip(t_on, labels_on)):
        assert t - steady[label] == pytest.approx(jit_at.get(b, 0.0), abs=1e-6), b
    assert all(e["jit_s"] > 0 for e in events)
    assert info["jit_compile_s"] == pytest.approx(sum(e["jit_s"] for e in events), abs=1e-5)
    # a plan starts at the batch after the budget step that triggered it
    for e in events[1:]:
        assert e["first_batch"] == e["batch"] + 1


def test_a_plan_superseded_before_it_ran_charges_no_jit(tmp_path):
    # two budget steps inside the same batch, in its backward pass (batch 1; 0.45/0.47 s before
    # Sage's kernels had their own ramp, now in its forward pass, where Sage re-splits; 0.48-0.54 s
    # found by probing): the 110 MB plan never runs
    steps = [{"at_s": 0, "mb": 200}, {"at_s": 0.50, "mb": 110}, {"at_s": 0.52, "mb": 98}]
    s, t, labels = run(tmp_path, "sup", steps, batches=4)
    events = s["scheduler_info"]["splits"]
    assert [e["first_batch"] for e in events] == [0, None, 2]
    ran = [e for e in events if e["first_batch"] is not None]
    assert s["scheduler_info"]["jit_compile_s"] == pytest.approx(sum(e["jit_s"] for e in ran), abs=1e-5)
    assert t[2] > t[3] and t[1] < t[0]
    assert s["memory"]["micro_batch_sequence"] == [[16], [6, 6, 4]]


def test_a_budget_that_returns_within_a_batch_cancels_the_pending_plan(tmp_path):
    # down to 110 MB and back to 200 MB inside batch 1: batch 2 must keep running 16, no JIT
    steps = [{"at_s": 0, "mb": 200}, {"at_s": 0.50, "mb": 110}, {"at_s": 0.52, "mb": 200}]
    s, t, labels = run(tmp_path, "back", steps, batches=4)
    _, t_off, _ = run(tmp_path, "off", None, batches=4, jit_compile=False)
    events = s["scheduler_info"]["splits"]
    assert [(e["micro_batches"], e["first_batch"]) for e in events] == [([16], 0), ([10, 6], None), ([16], 2)]
    assert set(labels) == {"sage hybrid 16"}
    assert t[1:] == pytest.approx(t_off[1:], rel=1e-9)
    assert s["scheduler_info"]["jit_compile_s"] == pytest.approx(events[0]["jit_s"])
    assert s["memory"]["micro_batch_sequence"] == [[16]]
