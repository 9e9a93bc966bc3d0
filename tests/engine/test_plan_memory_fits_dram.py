"""A plan whose memory (``peak_memory_bytes``, or any step of ``step_memory``) exceeds the phone's
DRAM (``dram.capacity_gb``, GiB) is an impossible schedule: ScheduleError (exit 2) from
socsim.contract.check_plan naming the peak and the capacity, and the input that sets the batch's
memory (``batch_size``, or ``input`` at batch size 1) where the caller gives it, else the
scheduler."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from socsim.engine.context import PlanContext
from socsim.engine.oracle import CostOracle
from socsim.contract import check_plan, single_unit_plan
from socsim.errors import ScheduleError
from socsim.spec import load_soc, workload_from_dict

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cli_helpers import invoke, write_workload  # noqa: E402

SOC = load_soc("sd865")  # 8 GiB
GIB = 1 << 30
WL = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=1)


@pytest.fixture(scope="module")
def plan():
    wl = workload_from_dict(WL)
    g = PlanContext(SOC, wl, CostOracle(SOC)).graph()
    return single_unit_plan(g, "cpu", (4, 5, 6, 7), "big4")


def _bad(plan) -> ScheduleError:
    with pytest.raises(ScheduleError) as e:
        check_plan(plan, SOC, scheduler="mine", hook="plan()")
    return e.value


def test_peak_above_dram_is_a_schedule_error(plan):
    check_plan(replace(plan, peak_memory_bytes=8 * GIB, step_memory=None), SOC, scheduler="mine")  # just fits
    e = _bad(replace(plan, peak_memory_bytes=9 * GIB, step_memory=None))
    assert e.field == "scheduler.name" and e.value == "mine"
    for needle in ("9.0 GiB", "8 GiB", "sd865", "batch_size", "sage", "memory_budget_mb"):
        assert needle in e.message, (needle, e.message)


def test_a_step_above_dram_is_a_schedule_error(plan):
    mem = [1 << 20] * len(plan.steps)
    mem[3] = 12 * GIB
    e = _bad(replace(plan, peak_memory_bytes=1 << 20, step_memory=tuple(mem)))
    assert "12.0 GiB" in e.message and "step 3" in e.message and plan.steps[3].op.name in e.message


@pytest.mark.parametrize("change", [dict(step_memory=(1, 2)), dict(step_memory=5), dict(peak_memory_bytes=-1),
                                    dict(peak_memory_bytes="lots")])
def test_malformed_memory_is_a_schedule_error_not_a_crash(plan, change):
    e = _bad(replace(plan, **change))
    assert e.value == "mine" and "memory" in e.message


def test_cli_exit_2_for_a_batch_the_phone_cannot_hold(tmp_path):
    p = write_workload(tmp_path, model="vgg16", input=[3, 32, 32], batch_size=10000,
                       scheduler={"name": "mnn-fp32"})
    r = invoke("validate", str(p), "--soc", "sd865")
    assert r.exit_code == 2, r.output
    for needle in ("wl.yaml", "field 'batch_size'", "value 10000", "22.1 GiB", "8 GiB"):
        assert needle in r.output, (needle, r.output)
    assert "scheduler.name" not in r.output, r.output


@pytest.mark.parametrize("batch, field, value", [(64, "batch_size", 64), (1, "input", [1, 28, 28])])
def test_a_batch_too_big_names_the_input_not_the_scheduler(plan, batch, field, value):
    with pytest.raises(ScheduleError) as e:
        check_plan(replace(plan, peak_memory_bytes=9 * GIB, step_memory=None), SOC, scheduler="mine",
                   hook="plan()", batch_size=batch, input_shape=(1, 28, 28))
    assert (e.value.field, e.value.value) == (field, value)
    assert "9.0 GiB" in e.value.message and "input" in e.value.message

