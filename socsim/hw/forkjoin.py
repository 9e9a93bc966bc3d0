"""Fork-join threading of the CPU frameworks: the serial part of each op and background tasks
preempting threads that run in lockstep.

MNN's thread pool (alibaba/MNN source/backend/cpu/ThreadPool.cpp) runs every parallel op as a
static split: task index i goes to thread i (thread 0 is the caller), the workers spin on an
atomic flag with ``std::this_thread::yield()`` between ops and the caller spins the same way
until every worker has cleared its flag.  Two consequences are modelled here, each with a constant
fitted on the development set (calibration/dev/minenergy_table2.yaml; docs/modeling.md, "Fitted
constants"; ``python benchmarks/fit_forkjoin.py`` re-fits them):

* **Serial part per op** (Amdahl): work of each op that one thread does alone (the caller's
  set-up, MNN's per-op packing / re-layout of the operands that is not split, the tail tile).
  ``SERIAL_FRACTION`` of the op's single-thread compute runs on one core; the rest is split.
* **Background preemption amplified by lockstep** (Petrini, Kerbyson & Pakin, SC'03: noise on
  any one of N synchronising threads delays all N).  An Android phone runs background work
  (system services, kernel threads) all the time; Android's cpusets confine the
  ``background`` and ``system-background`` groups to the little cores (the vendor's init
  script writes them, e.g. ``/dev/cpuset/background/cpus`` 0-1 or 0-3 and
  ``system-background/cpus`` 0-3 on Qualcomm phones; assumption for any one phone), and the
  scheduler places other wake-ups on idle cores first.  This is the phone's own background, not
  the foreground apps of a workload's ``environment`` (modelled apart, docs/modeling.md).  It is
  a run condition (how busy the phone was while it measured), so a workload states it as
  ``environment.background: {little, big}`` (a measurement file's rows likewise, docs/fidelity.md);
  ``BACKGROUND_UTIL_TOP`` is its default, and ``{little: 0, big: 0}`` gives ideal lockstep.
  While the framework's threads leave an idle core in a domain, that domain's background work
  runs there and costs the training nothing; when they occupy every core of a domain, the background work preempts a spinning
  thread and, in lockstep, holds up all of them.  The background work is a fixed number of cycles
  per second, so its share of a core grows as the clock drops: ``u = u_top * f_top / f``
  (core-seconds per second).  Each core-second of it on a fully occupied domain stalls the op
  for a second, so the op's time is ``T / (1 - U)`` with ``U`` the sum over the fully occupied
  domains (capped at ``U_MAX``).  The op waits for its last thread, so on a set that fills
  several domains each domain's ``U`` stretches its own threads only, and a domain whose threads
  finish early under the static split (the big ones of a hybrid set) absorbs its background work
  in that slack (socsim.hw.cpu; :func:`background_shares`).
"""
from __future__ import annotations

from socsim.hw.cost import CpuConfig
from socsim.spec.soc import SocSpec

# FITTED on both development files, Min-Energy's 21 rows (calibration/dev/minenergy_table2.yaml)
# and ncnn's 1->4 thread-scaling ratios (calibration/dev/ncnn_phones.yaml) (docs/modeling.md,
# Fitted constants; benchmarks/fit_forkjoin.py --ncnn): the fraction of an op's single-thread
# compute that one thread runs alone.  Plausible 0-0.2.
SERIAL_FRACTION = 0.0  # joint fit on both dev files (0.06 on Min-Energy alone, 0.03 before the kernels' streams)
# FITTED (same): background work confined to a domain, as a fraction of one core at the domain's
# top OPP (core-seconds per second); the Min-Energy rows carry it (the ncnn rows state their own
# run condition, a quiet phone: socsim.fidelity.ncnn.BENCHNCNN_BACKGROUND; the joint fit with
# them gave the same values).  "little": the first cluster (Android's background
# cpusets); "big": the other clusters (per-CPU kernel threads, foreground wake-ups that land
# on a fully busy big domain).  Plausible 0-0.3 at the top clock (an idle phone's little cores
# run a few percent busy; a phone in use, measuring itself, more).  Fitted: little 0.22 (LITTLE4
# and HYBRID8 carry it; 0.06 while a hybrid set paid little + big as a sum, before the op waited
# only for its last thread, socsim.hw.cpu), big 0.20 (BIG4 and HYBRID8; at the upper end of
# plausible, as it also stood in for what the model lacked on four big cores, docs/validation.md).
# Re-fitted once MNN's Express training step was costed (socsim.hw.cpu: the forward passes'
# weights as inputs, the SGD and batch-norm chains; BACKWARD_KERNEL_SLOWDOWN 1.77):
# ``benchmarks/fit_forkjoin.py --passes 1 --max-ncnn-threads-mape 12.1``: little 0.21, big 0.16.
# Re-fitted again with MNN's MatMul row tiles (socsim.hw.cpu.split_shares: a training step's
# batch-16 fully connected layers on two threads): ``benchmarks/scan_background.py`` (big
# 0.08-0.22 x little 0.12-0.24, step 0.01, Min-Energy time MAPE with tau time beside), each
# candidate then run in full by ``socsim fidelity``: little 0.20, big 0.13 (docs/modeling.md,
# Fitted constants; docs/validation.md, "Big-core scaling at the top steps").
BACKGROUND_UTIL_TOP = {"little": 0.2, "big": 0.13}
# Cap of the preempted share: beyond it the model would diverge (the phone's scheduler would
# then starve the background work instead); assumption.
U_MAX = 0.9


def domains(soc: SocSpec) -> dict[str, tuple[int, ...]]:
    """Core ids of the little domain (the first cluster) and the big one (the rest)."""
    cls = soc.cpu.clusters
    little = tuple(cls[0].core_ids)
    big = tuple(c for cl in cls[1:] for c in cl.core_ids)
    return {"little": little, "big": big} if big else {"little": little}


def background_of(little: float | None = None, big: float | None = None) -> tuple[tuple[str, float], ...]:
    """A run's background work per domain (a ``CpuConfig.background``): the values a workload's
    ``environment.background`` states, the fitted ``BACKGROUND_UTIL_TOP`` for a domain it leaves
    out."""
    return (("big", float(BACKGROUND_UTIL_TOP["big"] if big is None else big)),
            ("little", float(BACKGROUND_UTIL_TOP["little"] if little is None else little)))


def background_share(soc: SocSpec, cfg: CpuConfig, cores: tuple[int, ...],
                     util_top: dict[str, float] | None = None) -> float:
    """``U``: the background work (core-seconds per second) that must preempt the op's threads,
    from the domains that ``cores`` fill completely; 0 for one thread.  The work per domain is
    ``util_top`` if given, else the run's (``cfg.background``, from the workload's
    ``environment.background``), else the fitted ``BACKGROUND_UTIL_TOP``."""
    return min(sum(background_shares(soc, cfg, cores, util_top).values()), U_MAX)


def background_shares(soc: SocSpec, cfg: CpuConfig, cores: tuple[int, ...],
                      util_top: dict[str, float] | None = None) -> dict[str, float]:
    """``U`` per fully occupied domain (name -> core-seconds per second, each capped at
    ``U_MAX``); domains that ``cores`` leave an idle core in are absent.  The op waits for the
    last of its threads, so a domain's preemption delays it only beyond that domain's threads'
    slack (socsim.hw.cpu: on a hybrid set the big threads finish early and absorb theirs)."""
    out: dict[str, float] = {}
    if len(cores) < 2:
        return out
    if util_top is not None:
        util = util_top
    elif cfg.background is not None:
        util = dict(cfg.background)
    else:
        util = BACKGROUND_UTIL_TOP
    busy = set(cores)
    for name, ids in domains(soc).items():
        if not ids or not set(ids) <= busy:
            continue
        u = 0.0
        for cl in soc.cpu.clusters:
            if cl.core_ids[0] in ids:
                f = cfg.freq(cl.name)
                # the domain's work spread over its clusters by core count
                u += util.get(name, 0.0) * (len(cl.core_ids) / len(ids)) * cl.max_mhz / f
        out[name] = min(u, U_MAX)
    return out
