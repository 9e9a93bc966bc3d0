"""Reuse of generated streams and of simulations within one process, keyed on what they are
functions of (exact: the results are those of generating and simulating again).

Planning profiles every op on every core set: Min-Energy's 7 core sets on the SD855 generate the
same streams for Big 4x and Little 4x (the same plan: kernel, geometry, threads, line), and two
ops with different stream keys (a forward and a backward op of one shape, an int8 and an fp32
DSP op of one layout) can make the same plan.  A plan's sampled streams are a pure function of
:func:`plan_key` and the sampler's budget; a simulation's counters a pure function of those
streams and the hierarchy's geometry (per-thread private levels, shared levels, scratch ranges),
never of clocks.  Held in bounded, least-recently-used tables: streams by their bytes (an FC
step's streams are ~100 MB), simulation results by count.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any, Callable

from socsim.hw.cache.streams import StreamPlan

# Bytes of generated streams kept (numerical method parameter, not a model constant: the
# reuse comes from the previous few profiles when the caller orders its work so that
# profiles sharing a plan are adjacent, socsim.engine.oracle.CostOracle.warm_cpu).
STREAM_BYTES = 256 << 20
# Simulation results kept (each a few hundred bytes).
SIM_ENTRIES = 8192


def plan_key(plan: StreamPlan) -> tuple:
    """What a plan's streams depend on: the kernel and its geometry (threads included), the
    line size, the number of outer-loop steps and the scratchpad ranges."""
    return (int(plan.kernel), int(plan.line_bytes), int(plan.n_segments), int(plan.threads),
            plan.params.tobytes(), tuple(plan.scratch))


class _Table:
    """A least-recently-used table bounded by a weight per entry."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.used = 0
        self.items: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple, make: Callable[[], Any], weigh: Callable[[Any], int]) -> Any:
        got = self.items.get(key)
        if got is not None:
            self.items.move_to_end(key)
            self.hits += 1
            return got[0]
        self.misses += 1
        value = make()
        w = weigh(value)
        if w <= self.cap:
            self.items[key] = (value, w)
            self.used += w
            while self.used > self.cap:
                _, (_, w0) = self.items.popitem(last=False)
                self.used -= w0
        return value

    def clear(self) -> None:
        self.items.clear()
        self.used = self.hits = self.misses = 0


_streams = _Table(STREAM_BYTES)
_sims = _Table(SIM_ENTRIES)


def _nbytes(streams: tuple) -> int:
    return sum(int(a.nbytes) for a in streams[:3])


def streams(plan: StreamPlan, budget: int, make: Callable[[], tuple]) -> tuple:
    """The sampled streams of ``plan`` under ``budget``: ``make()``'s, or the same arrays again
    (read, never written, by the cache drivers)."""
    return _streams.get((plan_key(plan), int(budget)), make, _nbytes)


def simulation(plan: StreamPlan, budget: int, geometry: tuple, flush: bool, make: Callable[[], tuple]) -> tuple:
    """A sampled simulation's result (memory.simulate's tuple) of ``plan``'s streams through a
    hierarchy of ``geometry`` (everything the hierarchy is built from): ``make()``'s, or a copy
    of the same (its level counters are mutable dataclasses)."""
    stats, *rest = _sims.get((plan_key(plan), int(budget), geometry, bool(flush)), make, lambda _: 1)
    return (tuple(replace(s) for s in stats), *rest)


def stats() -> dict[str, int]:
    """Hits and misses of both tables (tests, profiling)."""
    return {"stream_hits": _streams.hits, "stream_misses": _streams.misses,
            "sim_hits": _sims.hits, "sim_misses": _sims.misses}


def clear() -> None:
    """Forget both tables (tests)."""
    _streams.clear()
    _sims.clear()
