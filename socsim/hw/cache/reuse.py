"""Reuse of generated streams within one process, keyed on what they are a function of (exact:
the arrays are those of generating again).

Planning profiles every op on every core set: Min-Energy's 7 core sets on the SD855 ask for the
same streams for Big 4x and Little 4x (or 2x, 1x: one plan, kernel geometry, threads and line,
on other caches), and the idle-thread check (socsim.hw.memory.busy_threads) generates the
fewer-thread plan's streams that its profile then needs.  A plan's sampled streams are a pure
function of :func:`plan_key` and the sampler's budget.  Held in a least-recently-used table
bounded by bytes (an FC step's streams are ~100 MB).  A profile of one plan on the same caches
is reused a level up (socsim.hw.memory, ``_BY_PLAN``).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

from socsim.hw.cache.streams import StreamPlan

# Bytes of generated streams kept (numerical method parameter, not a model constant: the
# reuse comes from the previous few profiles when the caller orders its work so that
# profiles sharing a plan are adjacent, socsim.engine.oracle.CostOracle.warm_cpu).
STREAM_BYTES = 256 << 20


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


def _nbytes(streams: tuple) -> int:
    return sum(int(a.nbytes) for a in streams[:3])


def streams(plan: StreamPlan, budget: int, make: Callable[[], tuple]) -> tuple:
    """The sampled streams of ``plan`` under ``budget``: ``make()``'s, or the same arrays again
    (read, never written, by the cache drivers)."""
    return _streams.get((plan_key(plan), int(budget)), make, _nbytes)


def stats() -> dict[str, int]:
    """Hits and misses of the table (tests, profiling)."""
    return {"stream_hits": _streams.hits, "stream_misses": _streams.misses}


def clear() -> None:
    """Forget the table (tests)."""
    _streams.clear()
