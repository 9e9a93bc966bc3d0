"""One door to the units' cost models, memoised per (op signature, unit, operating point).

Schedulers profile ops through it (as the real systems profile on the phone) and the engine
times ops with it, so both see the same numbers.

:meth:`CostOracle.warm_cpu` costs many CPU ops ahead of use in worker processes (the cost
models are pure functions, so a worker's answer is the one this process would compute).
``SOCSIM_JOBS=N`` asks for N workers (capped at the CPUs this process may run on; ``1`` never
forks); unset or ``auto``, the CPUs the load leaves free (:func:`parallel_jobs`); a worker
process (a ``socsim sweep`` job) never forks again.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import replace

from socsim import reuse
from socsim.hw import units
from socsim.hw.cost import CostModel, CpuConfig, OpCost, UnitConfig, UnsupportedOp
from socsim.spec.soc import SocSpec
from socsim.workload.ops import Op


class CostOracle:
    def __init__(self, soc: SocSpec, dsp_batch_padding: bool = True,
                 cpu_background: tuple[tuple[str, float], ...] | None = None) -> None:
        """``cpu_background``: the run's background work per CPU domain (the workload's
        ``environment.background`` as socsim.hw.forkjoin.background_of gives it), put into every
        CPU configuration (so it is part of every cost's memo key); None: the fitted default."""
        self.soc = soc
        self.dsp_batch_padding = dsp_batch_padding
        self.cpu_background = cpu_background
        self._models: dict[str, CostModel] = {}
        self._memo: dict[tuple, OpCost | None] = {}
        if reuse.enabled():
            # a fleet's runs on this SoC share one memo (the costs are pure functions of the
            # spec, the op and the configuration: socsim.reuse)
            self._memo = reuse.table("costs", (reuse.spec_key(soc), dsp_batch_padding))

    def model(self, unit: str) -> CostModel:
        """The cost model of ``unit`` on this SoC (built once); UnsupportedOp if the SoC lacks it."""
        m = self._models.get(unit)
        if m is None:
            u = units.unit(unit)
            if not u.present(self.soc):
                raise UnsupportedOp(f"{self.soc.name} has no {u.title}")
            m = self._models[unit] = u.cost_model(self.soc)
        return m

    def config(self, unit: str, cores: tuple[int, ...] = (), freqs: tuple[tuple[str, float], ...] = (),
               dsp_mhz: float | None = None, gpu_mhz: float | None = None, bg_dram_gbs: float = 0.0,
               mhz: float | None = None) -> UnitConfig:
        """A unit's configuration: CPU ``cores`` at per-cluster ``freqs``, another unit at ``mhz``
        (None: its default clock; ``dsp_mhz`` and ``gpu_mhz`` are older spellings of it);
        ``bg_dram_gbs``: DRAM bandwidth foreground apps take meanwhile."""
        if mhz is None:
            mhz = dsp_mhz if dsp_mhz is not None else gpu_mhz
        cfg = units.unit(unit).config(self.soc, cores=cores, freqs=freqs, mhz=mhz, bg_dram_gbs=float(bg_dram_gbs),
                                      batch_padding=self.dsp_batch_padding)
        if self.cpu_background is not None and isinstance(cfg, CpuConfig):
            cfg = replace(cfg, background=self.cpu_background)
        return cfg

    @staticmethod
    def _key(op: Op, unit: str, cfg) -> tuple:
        return (op.signature, op.macs, op.flops, op.bytes_read, op.bytes_written, unit, cfg)

    def cost(self, op: Op, unit: str, cfg) -> OpCost | None:
        """The op's cost on ``unit`` at ``cfg``, or None if the unit cannot run it."""
        key = self._key(op, unit, cfg)
        if key in self._memo:
            return self._memo[key]
        try:
            model = self.model(unit)
            c = model.cost(op, cfg) if model.supports(op) else None
        except UnsupportedOp:
            c = None
        self._memo[key] = c
        return c

    def time_s(self, op: Op, unit: str, cfg) -> float:
        c = self.cost(op, unit, cfg)
        return math.inf if c is None else c.time_s

    def warm_cpu(self, pairs, jobs: int | None = None) -> None:
        """Memoise the CPU cost of every (op, CpuConfig) in ``pairs`` now, in parallel when the
        work is long enough to pay for it.

        Nearly all of a CPU op's cost is the cache simulation of its access stream, which
        depends on the op and the core set (the threads and their caches), not on the
        frequency (socsim.hw.memory memoises it so).  Pairs are grouped by (op stream, core
        set), so one worker simulates each stream once for all the frequencies asked.  Groups
        are first costed here for ``WARM_SERIAL_S`` (small jobs end there, and the compiled
        simulator is loaded before any fork); the rest goes to forked workers if it is
        predicted to take longer than that again.  Whatever is left uncosted (no fork, a
        worker failed) is costed on demand as before: the results are the same either way.
        """
        groups: dict[tuple, list] = {}
        seen: set[tuple] = set()
        for op, cfg in pairs:
            key = self._key(op, units.host().name, cfg)
            if key in self._memo or key in seen:
                continue
            seen.add(key)
            groups.setdefault(_stream_group(op, cfg), []).append((op, cfg))
        # groups whose streams are one plan (one op on core sets of one size: Big 4x and Little
        # 4x) run one after the other, in one worker, so the second takes the first's streams
        # (socsim.hw.cache.reuse); the order of costing changes nothing else
        runs: dict[tuple, list] = {}
        for g, members in groups.items():
            runs.setdefault(g[:3] + (len(g[3]),), []).append(members)
        todo = [members for run in runs.values() for members in run]
        t0 = time.perf_counter()
        jobs = parallel_jobs() if jobs is None else jobs
        i = 0
        # with one job everything is costed here, in that order (on demand it would come in
        # the scheduler's order, a core set's ops apart)
        while i < len(todo) and (jobs < 2 or time.perf_counter() - t0 < WARM_SERIAL_S):
            for op, cfg in todo[i]:
                self.cost(op, units.host().name, cfg)
            i += 1
        rest = todo[i:]
        if not rest:
            return
        per_group = (time.perf_counter() - t0) / max(i, 1)
        if per_group * len(rest) < WARM_SERIAL_S:
            return
        # whole runs of one plan per chunk, dealt round-robin
        left = set(map(id, rest))
        rest_runs = [[m for m in run if id(m) in left] for run in runs.values()]
        rest_runs = [r for r in rest_runs if r]
        n_chunks = min(len(rest_runs), 4 * jobs)
        chunks = [[pair for run in rest_runs[j::n_chunks] for g in run for pair in g] for j in range(n_chunks)]
        try:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor
            mpc = mp.get_context("fork")
            with ProcessPoolExecutor(max_workers=min(jobs, n_chunks), mp_context=mpc, initializer=_init_worker,
                                     initargs=(self.soc, self.dsp_batch_padding)) as ex:
                for chunk, costs in zip(chunks, ex.map(_worker_costs, chunks)):
                    for (op, cfg), c in zip(chunk, costs):
                        self._memo[self._key(op, units.host().name, cfg)] = c
        except Exception:  # no fork here, a worker died: the rest is costed on demand
            return


# Seconds of CPU costing done in this process before forking workers for the rest.
WARM_SERIAL_S = 0.5


def parallel_jobs() -> int:
    """Worker processes :meth:`CostOracle.warm_cpu` may use: ``SOCSIM_JOBS=N`` (capped at the
    CPUs this process may run on), or, unset or ``auto``, this process's CPU and those the
    1-minute load average leaves free beside it (socsim.hostcpus, the same rule as the first
    run's compiling child): 2 on an idle 2-core machine, 1 on a busy one or a 1-core one, and 1
    whenever this process runs another thread (a progress display, a kernel's thread pool),
    which a fork could catch holding a lock.  The results are the same for any number."""
    import multiprocessing as mp

    if mp.parent_process() is not None:  # already a worker (socsim sweep): no nested pools
        return 1
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    env = os.environ.get("SOCSIM_JOBS", "").strip().lower()
    if env in ("", "auto"):
        import threading

        from socsim import hostcpus

        if threading.active_count() > 1:
            return 1
        return max(1, min(n, 1 + hostcpus.free_cpus()))
    from socsim.errors import InputError
    try:
        cap = int(env)
    except ValueError:
        cap = 0
    if cap < 1:
        raise InputError("must be a positive number of worker processes or 'auto'", field="SOCSIM_JOBS",
                         value=os.environ.get("SOCSIM_JOBS"))
    return max(1, min(n, cap))


def _stream_group(op: Op, cfg) -> tuple:
    """Pairs sharing one cache simulation: the op's stream (socsim.hw.memory's key) and the cores."""
    try:
        from socsim.hw.memory import _stream_key
        stream = _stream_key(op)
    except Exception:  # pragma: no cover - a memory model without the key: group by op
        stream = (op.signature,)
    return (stream, int(op.bytes_read), int(op.bytes_written), tuple(cfg.cores))


_WORKER: CostOracle | None = None


def _init_worker(soc: SocSpec, dsp_batch_padding: bool) -> None:
    global _WORKER
    _WORKER = CostOracle(soc, dsp_batch_padding)


def _worker_costs(chunk: list) -> list:
    assert _WORKER is not None, "a pool worker costs ops only after _init_worker"
    return [_WORKER.cost(op, units.host().name, cfg) for op, cfg in chunk]
