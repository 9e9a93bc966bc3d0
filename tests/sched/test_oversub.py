"""Threads sharing cores (socsim.sched.oversub) and PyTorch 1.8's two spinning pools
(socsim.sched.baselines.two_pool_waits_s; docs/modeling.md "Threads sharing cores")."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.sched import oversub as O
from socsim.sched.baselines import (PYTORCH_DISPATCH_S_PER_OP, PYTORCH_GRAIN_SIZE, PyTorchRun, grouped_convs,
                                    pool_switches, two_pool_waits_s)
from socsim.spec import load_soc
from socsim.workload.ops import Op

SOC = load_soc("sd865")     # cores 0-3 A55, 4-6 A77, 7 the prime A77


def dw(c: int, hw: int, batch: int = 16) -> Op:
    return Op(name="dw", kind="dwconv2d", phase="forward", layer="l", dtype="fp32",
              params=(("batch", batch), ("cin", c), ("cout", c), ("groups", c), ("h", hw), ("w", hw),
                      ("kh", 3), ("kw", 3), ("oh", hw), ("ow", hw), ("pad", 1), ("stride", 1)))


def test_ncnn_keeps_the_shared_helper_and_constant():
    """ncnn's oversubscription is the shared one (moved, not copied)."""
    from socsim.sched import ncnn as N
    assert N.oversubscription is O.oversubscription
    assert N.OMP_OVERSUBSCRIBED_SWITCH_S == O.OMP_OVERSUBSCRIBED_SWITCH_S == 40e-6


def test_spin_windows_from_iterations_and_cycles():
    """libgomp's 300,000 iterations at 2 cycles on a 2419.2 MHz A77: 0.248 ms; pthreadpool's
    1,000,000 at 2 cycles: 0.827 ms; the slowest worker core sets the window (an A55 at 10 cycles
    and 1804.8 MHz keeps pthreadpool's workers 5.5 ms)."""
    a77, a55 = ("cortex-a77", 2419.2, 4), ("cortex-a55", 1804.8, 2)
    assert O.spin_window_s("libgomp", [a77]) == pytest.approx(300_000 * 2 / 2419.2e6)
    assert O.spin_window_s("pthreadpool", [a77]) == pytest.approx(1e6 * 2 / 2419.2e6)
    assert O.spin_window_s("pthreadpool", [a77, a55]) == pytest.approx(1e6 * 10 / 1804.8e6)
    assert O.spin_window_s("libgomp", []) == 0.0
    assert O.spin_cycles("pthreadpool", "some-new-little", 2) == O.SPIN_LOOP_CYCLES["pthreadpool"]["cortex-a55"]
    assert O.spin_cycles("pthreadpool", "some-new-big", 6) == O.SPIN_LOOP_CYCLES["pthreadpool"]["cortex-a77"]


def test_pool_switches_follow_atens_grain_size():
    """A group's input copy opens an OpenMP region only at 32,768 elements or more: at 112x112 and
    56x56 (16 x 3136 = 50,176) every group hands the cores over, at 28x28 (12,544) only the layer."""
    assert pool_switches(dw(32, 112)) == 32
    assert pool_switches(dw(144, 56)) == 144
    assert pool_switches(dw(192, 28)) == 1
    assert 16 * 28 * 28 < PYTORCH_GRAIN_SIZE <= 16 * 56 * 56


def test_two_pools_wait_only_with_workers_and_on_1_8_at_a_batch_of_16():
    """The waits appear on two or more cores with NNPACK's pool (1.8, batch 16) and are the same
    for every set of A77 workers: the window, not the thread count, sets them."""
    from socsim.engine.context import build_graph
    g = build_graph("mobilenetv2", (3, 224, 224), 10, 16, "fp32")
    ov = {c: dict(PyTorchRun(g, "1.8", SOC, c).overheads) for c in ((4,), (4, 5), (4, 5, 6), (0, 1))}
    assert "two-pool-waits" not in ov[(4,)]
    assert ov[(4, 5)]["two-pool-waits"] > 0
    assert ov[(4, 5)]["two-pool-waits"] == pytest.approx(ov[(4, 5, 6)]["two-pool-waits"])
    assert ov[(0, 1)]["two-pool-waits"] > 3 * ov[(4, 5)]["two-pool-waits"]   # A55 spin loops: longer windows
    assert "two-pool-waits" not in dict(PyTorchRun(g, "1.11", SOC, (4, 5, 6, 7)).overheads)
    small = build_graph("mobilenetv2", (3, 224, 224), 10, 8, "fp32")
    assert "two-pool-waits" not in dict(PyTorchRun(small, "1.8", SOC, (4, 5, 6, 7)).overheads)


def test_two_pool_waits_count_each_switch_once():
    """Per switch: pthreadpool's window less two calls' dispatch, libgomp's less four, each plus
    one switch of the ncnn fit (2n - 1 threads on n cores: one extra thread on the busiest)."""
    convs = grouped_convs(_graph())
    n_switch = sum(pool_switches(c) for c in convs)
    a77 = [("cortex-a77", 2419.2, 4)]
    per = (O.spin_window_s("pthreadpool", a77) - 2 * PYTORCH_DISPATCH_S_PER_OP + O.OMP_OVERSUBSCRIBED_SWITCH_S
           + O.spin_window_s("libgomp", a77) - 4 * PYTORCH_DISPATCH_S_PER_OP + O.OMP_OVERSUBSCRIBED_SWITCH_S)
    assert two_pool_waits_s(SOC, (4, 5), convs, 1.0) == pytest.approx(per * n_switch)
    # a host slow enough that its dispatch outlasts libgomp's window: only pthreadpool's is paid
    slow = 0.1
    assert two_pool_waits_s(SOC, (4, 5), convs, slow) == pytest.approx(
        (O.spin_window_s("pthreadpool", a77) - 2 * PYTORCH_DISPATCH_S_PER_OP / slow
         + O.OMP_OVERSUBSCRIBED_SWITCH_S) * n_switch)


def _graph():
    from socsim.engine.context import build_graph
    return build_graph("mobilenetv2", (3, 224, 224), 10, 16, "fp32")


@settings(max_examples=40, deadline=None)
@given(cores=st.lists(st.integers(0, 7), min_size=1, max_size=8, unique=True), speed=st.floats(0.05, 3.0))
def test_two_pool_waits_are_never_negative_and_vanish_on_one_core(cores, speed):
    convs = [dw(32, 112), dw(96, 56), dw(192, 28)]
    w = two_pool_waits_s(SOC, tuple(cores), convs, speed)
    assert w >= 0.0
    assert (len(cores) == 1) <= (w == 0.0)
    # never more than both windows and a switch each, per switch
    workers = [(cl.core_type, cl.max_mhz, cl.issue_width) for cl in (SOC.cpu.cluster_of(c) for c in cores[1:])]
    bound = (O.spin_window_s("pthreadpool", workers) + O.spin_window_s("libgomp", workers)
             + 2 * O.OMP_OVERSUBSCRIBED_SWITCH_S) * sum(pool_switches(c) for c in convs)
    assert w <= bound + 1e-12


LIBGOMP_LOOP = "ldr w9, [x0]\ncmp w9, w1\nb.ne 1f\nsubs x8, x8, #1\nb.ne 2f\n1:\n2:\n"
PTHREADPOOL_LOOP = "yield\nldar w9, [x0]\ncmp w9, w1\nb.ne 1f\nadds w8, w8, #1\nb.lo 2f\n1:\n2:\n"


@pytest.mark.oracle
def test_spin_loop_cycles_match_llvm_mca(tmp_path):
    """SPIN_LOOP_CYCLES re-derived: llvm-mca 19, each core type's stand-in model (isa.arm.armk)."""
    mca = shutil.which("llvm-mca-19")
    if mca is None:
        if os.environ.get("CI") == "true":
            pytest.fail("llvm-mca-19 missing on CI")
        pytest.skip("llvm-mca-19 not installed")
    from isa.arm.armk import CORE_MODELS
    for runtime, loop in (("libgomp", LIBGOMP_LOOP), ("pthreadpool", PTHREADPOOL_LOOP)):
        src = tmp_path / f"{runtime}.s"
        src.write_text(loop)
        for core, cycles in O.SPIN_LOOP_CYCLES[runtime].items():
            out = subprocess.run([mca, "-mtriple=aarch64", f"-mcpu={CORE_MODELS[core]}", "-iterations=1000", str(src)],
                                 capture_output=True, text=True, check=True).stdout
            total = int(next(ln.split()[-1] for ln in out.splitlines() if ln.startswith("Total Cycles")))
            assert round(total / 1000) == cycles, (runtime, core)
