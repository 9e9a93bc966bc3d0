"""Where the cache model waits for a cold run's compiling children: socsim.kernels.prefetch
(above this layer) starts child processes that compile the cache model's driver into numba's
on-disk cache and registers here what waits for them; memory.sampled_streams calls :func:`wait`
before any simulation runs the driver, so the driver is loaded from the cache, not compiled
again.  Nothing registered (a warm run): a no-op."""
from __future__ import annotations

from typing import Callable

_waits: list[Callable[[], object]] = []


def add(wait_fn: Callable[[], object]) -> None:
    """Call ``wait_fn`` once, at the next :func:`wait`."""
    _waits.append(wait_fn)


def wait() -> None:
    """Call (and forget) what :func:`add` registered."""
    while _waits:
        _waits.pop(0)()
