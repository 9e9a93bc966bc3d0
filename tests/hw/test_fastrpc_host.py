"""A FastRPC switch's copy is host code on the calling core (socsim.hw.fastrpc.switch_s): it
scales with the host core's speed (socsim.hw.host.host_speed), in Mandheling's placement and in
what the engine charges alike."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import socsim
from socsim.engine.context import PlanContext
from socsim.engine.oracle import CostOracle
from socsim.hw import fastrpc
from socsim.hw.host import HOST_COREMARK_PER_MHZ, HOST_REF, host_speed
from socsim.sched.mandheling import Mandheling, MandhelingOptions
from socsim.spec import load_soc, workload_from_dict

SOC = load_soc("sd865")


def test_the_calibration_host_has_speed_one_and_a_little_core_is_slower():
    # Mandheling's default host (big2: core 4, the A77 mid core at 2419.2 MHz) is the reference
    assert SOC.cpu.cluster_of(4).core_type == HOST_REF[0] and SOC.cpu.cluster_of(4).max_mhz == HOST_REF[1]
    assert host_speed(SOC, 4) == pytest.approx(1.0)
    little = SOC.cpu.cluster_of(0)
    assert host_speed(SOC, 0) == pytest.approx(
        HOST_COREMARK_PER_MHZ["cortex-a55"] * little.max_mhz / (HOST_COREMARK_PER_MHZ["cortex-a77"] * HOST_REF[1]))
    assert host_speed(SOC, 0) < 0.4


@settings(max_examples=50, deadline=None)
@given(nbytes=st.integers(0, 1 << 28), speed=st.floats(0.05, 4.0))
def test_only_the_copy_scales_with_the_host(nbytes, speed):
    rpc = SOC.fastrpc
    fixed = fastrpc.switch_s(rpc, nbytes, shared_buffers=True)
    assert fastrpc.switch_s(rpc, nbytes, True, host_speed=speed) == fixed      # ION: nothing copied
    copy = fastrpc.switch_s(rpc, nbytes) - fixed
    assert fastrpc.switch_s(rpc, nbytes, host_speed=speed) == pytest.approx(fixed + copy / speed, rel=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_host_speed_must_be_positive(bad):
    with pytest.raises(ValueError):
        fastrpc.switch_s(SOC.fastrpc, 1000, host_speed=bad)


def test_engine_and_placement_charge_the_host_cores_copy():
    cores = "little1"   # LeNet on one little core keeps a DSP part (on big cores it stays on the CPU)
    wl = {"name": "t", "model": "lenet", "input": [1, 28, 28], "batch_size": 16, "batches": 1, "precision": "niti",
          "scheduler": {"name": "mandheling", "options": {"cpu_cores": cores, "adaptive_rescale": False}}}
    plan = Mandheling(MandhelingOptions(cpu_cores=cores, adaptive_rescale=False)).plan(
        PlanContext(SOC, workload_from_dict(wl), CostOracle(SOC, True), precision="niti"))
    cross = fastrpc.expected_crossings([s.op for s in plan.steps])
    speed = host_speed(SOC, plan.cpu_cores[0])
    expect, at_ref, cur = 0.0, 0.0, "cpu"
    for k, step in enumerate(plan.steps):
        if step.unit != cur:
            expect += fastrpc.switch_s(SOC.fastrpc, cross[k], host_speed=speed)
            at_ref += fastrpc.switch_s(SOC.fastrpc, cross[k])
            cur = step.unit
    assert expect > at_ref > 0
    charged = socsim.run("sd865", wl, reports=False).summary["placement"]["time_s"]["switch"]
    assert charged == pytest.approx(expect, rel=1e-6)
