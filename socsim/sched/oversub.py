"""Threads that share CPU cores: more runnable threads than the cores of their affinity set.

Two frameworks' thread pools meet this (docs/modeling.md, "Threads sharing cores"):

* ncnn with ``num_threads`` above the cores of its mask (socsim.sched.ncnn): one OpenMP pool
  (libomp), whose spinning threads yield the core when oversubscribed;
* PyTorch up to 1.10 at a batch of 16 or more (socsim.sched.baselines, ``PyTorchRun``): ATen's
  OpenMP pool (libgomp in a Linux build with gcc) beside NNPACK's pthreadpool, each of n
  threads with the caller shared, so 2n - 1 threads on n cores, and neither pool yields: a
  worker that finishes a region spins for a fixed number of iterations before it sleeps
  (:data:`SPIN_ITERATIONS`), holding its core from the other pool's worker until then.

The per-switch cost of two threads trading a core (:data:`OMP_OVERSUBSCRIBED_SWITCH_S`) is one
fit shared by both; the spin windows are counted from the runtimes' source and the cores'
scheduling models (:func:`spin_window_s`), not fitted.
"""
from __future__ import annotations

import math

# OpenMP threads sharing a core (ncnn's num_threads above the cores of its affinity mask: benchncnn
# with 8 threads and powersave 2 on a phone whose big mask has 4 cores binds every thread to those
# 4, src/cpu.cpp set_cpu_thread_affinity): every layer is one `#pragma omp parallel for` over
# ncnn's static schedule, so at each kernel the threads that share a core run their chunks in
# turn, and the one that finishes first spins at the region's barrier (ncnn sets the OpenMP block
# time to 20 ms, src/option.cpp openmp_blocktime) until it yields the core to its sibling
# (libomp's spin loop yields between pauses, kmp_wait_release.h KMP_YIELD_OVERSUB_ELSE_SPIN),
# then the two switch back for the next region.  Cost per kernel and per extra thread on the
# busiest core: 40 us, FITTED on the sd888 rows of calibration/dev/ncnn_phones.yaml (8 threads on
# 4 big cores, the only ncnn runs with more threads than cores), a scan of 0-60 us: GPU/CPU ratio
# MAPE 26.2 / 23.2 / 23.1 / 24.0 / 24.9 / 25.7% at 0 / 20 / 30 / 40 / 50 / 60 us, the six
# 8-thread FP32 CPU rows' own mean |time error| 28.9 / 21.5 / 17.7 / 14.0 / 12.0 / 16.4%; 40 us keeps
# both low and holds with a quiet phone's background (23.6% and 19.8%); docs/modeling.md, Fitted
# constants.  Plausible 10-100 us: two context switches of a few microseconds each on a big core,
# plus the spin before the yield and the refill of the sibling's working set in the core's caches.
# PyTorch's two pools pay the same switch once a spinning thread has left the core
# (socsim.sched.baselines.two_pool_waits_s).
OMP_OVERSUBSCRIBED_SWITCH_S = 40e-6

# Spin-wait iterations before a pool's idle worker sleeps on a futex, by runtime:
# * "libgomp": 300,000 (gcc libgomp/env.c: ``gomp_spin_count_var = 300000LL`` with
#   OMP_WAIT_POLICY and GOMP_SPINCOUNT unset, "3 msec blocking" at "100000 spins per msec").  The
#   short count (``gomp_throttled_spin_count_var``, 100) applies only while
#   ``gomp_managed_threads > gomp_available_cpus`` (libgomp/config/linux/wait.h ``do_spin``):
#   libgomp counts its own threads only, so NNPACK's beside it never throttle it.  The same code
#   since gcc 4.4; gcc 13 adds an x86-only adjustment for hybrid CPUs (config/linux/x86/spincount.h).
# * "pthreadpool": 1,000,000 (Maratyszcza/pthreadpool src/threadpool-common.h
#   PTHREADPOOL_SPIN_WAIT_ITERATIONS, spin-wait in workers and caller since 2019-09-30; a worker
#   spins in ``wait_for_new_command`` unless the call passed PTHREADPOOL_FLAG_YIELD_WORKERS, which
#   NNPACK does not; src/pthreads.c).  Neither loop calls sched_yield: libgomp's ``cpu_relax`` is a
#   compiler barrier on aarch64 (libgomp/config/linux/futex.h, no aarch64 override), pthreadpool's
#   ``pthreadpool_yield`` is the ARM ``yield`` hint (src/threadpool-atomics.h), a NOP to the
#   scheduler.
SPIN_ITERATIONS = {"libgomp": 300_000, "pthreadpool": 1_000_000}
# Cycles per spin iteration on each core type: llvm-mca 19 with the scheduling model that stands in
# for the core (isa.arm.armk.CORE_MODELS) on each loop as clang 14 -O2 compiles it for aarch64
# (libgomp: ldr, cmp, b.ne, subs, b.ne; pthreadpool: yield, ldar, cmp, b.ne, adds, b.lo; the loops
# are printed in docs/modeling.md, "Threads sharing cores", with the command;
# tests/sched/test_oversub.py re-derives them where llvm-mca-19 is installed).  llvm-mca does not
# model ``ldar``'s acquire ordering, which can serialise pthreadpool's iterations at the L1 load
# latency (4 cycles on the A76-A78 family): the pthreadpool windows are a lower bound.
SPIN_LOOP_CYCLES: dict[str, dict[str, float]] = {
    "libgomp": {"cortex-a55": 9.0, "cortex-a510": 4.0, "cortex-a75": 2.0, "cortex-a76": 2.0,
                "cortex-a77": 2.0, "cortex-a78": 2.0, "cortex-x1": 1.0, "cortex-a715": 1.0,
                "cortex-x3": 1.0, "exynos-m4": 1.0, "cortex-a720": 1.0, "cortex-x4": 1.0,
                "cortex-a53": 10.0, "cortex-a73": 2.0},
    "pthreadpool": {"cortex-a55": 10.0, "cortex-a510": 5.0, "cortex-a75": 2.0, "cortex-a76": 2.0,
                    "cortex-a77": 2.0, "cortex-a78": 2.0, "cortex-x1": 1.0, "cortex-a715": 1.0,
                    "cortex-x3": 1.0, "exynos-m4": 1.0, "cortex-a720": 1.0, "cortex-x4": 1.0,
                    "cortex-a53": 11.0, "cortex-a73": 2.0},
}
# A core type without a model: the in-order cores' figure if it issues two or fewer per cycle,
# else the A76 family's (assumption, the nearest modelled kind).
_FALLBACK = {"in-order": "cortex-a55", "out-of-order": "cortex-a77"}


def oversubscription(threads: int | None, cores: int) -> tuple[int, float]:
    """(extra threads on the busiest core, compute stretch) of ``threads`` OpenMP threads bound
    to ``cores`` cores with ncnn's static schedule: each region splits into ``threads`` equal
    chunks, the busiest core runs ceil(threads / cores) of them, so the region takes
    ceil(threads / cores) x cores / threads of its one-thread-per-core time, and pays
    ceil(threads / cores) - 1 switches (:data:`OMP_OVERSUBSCRIBED_SWITCH_S`).  (0, 1.0) when
    every thread has a core of its own."""
    if threads is None or threads <= cores:
        return 0, 1.0
    per_core = math.ceil(threads / cores)
    return per_core - 1, per_core * cores / threads


def spin_cycles(runtime: str, core_type: str, issue_width: int = 4) -> float:
    """Cycles per spin-wait iteration of ``runtime`` (:data:`SPIN_LOOP_CYCLES`) on a core."""
    table = SPIN_LOOP_CYCLES[runtime]
    if core_type in table:
        return table[core_type]
    return table[_FALLBACK["in-order" if issue_width <= 2 else "out-of-order"]]


def spin_window_s(runtime: str, cores: list[tuple[str, float, int]]) -> float:
    """How long the idle workers of a ``runtime`` pool keep spinning after a region, on worker
    cores given as (core type, MHz, issue width): :data:`SPIN_ITERATIONS` iterations at the
    slowest of them (the last to give its core back)."""
    if not cores:
        return 0.0
    n = SPIN_ITERATIONS[runtime]
    return max(n * spin_cycles(runtime, t, w) / (mhz * 1e6) for t, mhz, w in cores)
