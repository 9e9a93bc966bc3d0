"""Cache geometry and the access-stream encoding shared by the simulator and its reference twin.

A stream is two parallel arrays: ``lines`` (int64 line addresses in units of the stream's line
size, normally the first level's line) and ``kinds`` (uint8):

* ``READ`` (0)        a load;
* ``WRITE`` (1)       a partial store: write-allocate fetches the line first;
* ``WRITE_FULL`` (2)  a store covering the whole line (vector store, streaming store, or a
                      writeback arriving from the level above): allocated without a fetch.

Levels are write-back/write-allocate or write-through/no-write-allocate (the two combinations
real caches pair; Hennessy & Patterson, Computer Architecture 6th ed., B.1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

READ, WRITE, WRITE_FULL = 0, 1, 2

# Replacement policies; codes are what the numba kernel switches on.
POLICIES = {"lru": 0, "fifo": 1, "random": 2, "plru": 3}

# Counter columns per level.
RD_HIT, RD_MISS, WR_HIT, WR_MISS, WRITEBACKS, FILLS = range(6)
N_COUNTERS = 6

# Seed of the xorshift64 generator behind the ``random`` policy: fixed so runs are deterministic.
RNG_SEED = 0x9E3779B97F4A7C15


@dataclass(frozen=True, slots=True)
class CacheGeom:
    """One cache level: size, associativity, line size, replacement and write policy."""

    name: str
    size_bytes: int
    assoc: int
    line_bytes: int
    policy: str = "lru"
    write_back: bool = True

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"unknown replacement policy {self.policy!r}; known: {sorted(POLICIES)}")
        if self.line_bytes & (self.line_bytes - 1):
            raise ValueError(f"line size must be a power of two, got {self.line_bytes}")
        if self.size_bytes % (self.assoc * self.line_bytes):
            raise ValueError(f"{self.name}: size {self.size_bytes} is not assoc x line x sets")
        if self.policy == "plru" and self.assoc & (self.assoc - 1):
            raise ValueError(f"{self.name}: tree-PLRU needs a power-of-two associativity")

    @property
    def sets(self) -> int:
        return self.size_bytes // (self.assoc * self.line_bytes)

    @property
    def lines(self) -> int:
        return self.size_bytes // self.line_bytes

    @staticmethod
    def from_spec(name: str, level) -> "CacheGeom":
        """From a :class:`socsim.spec.soc.CacheLevel`."""
        size = int(round(level.size_kb * 1024))
        unit = level.assoc * level.line_bytes
        size -= size % unit
        return CacheGeom(name, size, level.assoc, level.line_bytes, level.policy,
                         level.write_policy == "write-back")


def level_arrays(geoms: tuple[CacheGeom, ...], stream_line_bytes: int):
    """Flatten a chain of levels into the arrays the simulators take (and fresh state)."""
    n = len(geoms)
    sets = np.array([g.sets for g in geoms], dtype=np.int64)
    assoc = np.array([g.assoc for g in geoms], dtype=np.int64)
    shift = np.zeros(n, dtype=np.int64)
    for i, g in enumerate(geoms):
        if g.line_bytes < stream_line_bytes:
            raise ValueError(f"{g.name}: line {g.line_bytes} B is smaller than the stream's {stream_line_bytes} B")
        shift[i] = int(np.log2(g.line_bytes // stream_line_bytes))
    policy = np.array([POLICIES[g.policy] for g in geoms], dtype=np.int64)
    wb = np.array([1 if g.write_back else 0 for g in geoms], dtype=np.int64)
    width = int(max(g.sets * g.assoc for g in geoms))
    return sets, assoc, shift, policy, wb, width


@dataclass
class ChainState:
    """Mutable contents of a chain of cache levels (tags, replacement metadata, dirty bits)."""

    tags: np.ndarray
    meta: np.ndarray
    dirty: np.ndarray
    clock: np.ndarray
    rng: np.ndarray

    @staticmethod
    def empty(n_levels: int, width: int) -> "ChainState":
        return ChainState(
            tags=np.full((n_levels, width), -1, dtype=np.int64),
            meta=np.zeros((n_levels, width), dtype=np.int64),
            dirty=np.zeros((n_levels, width), dtype=np.uint8),
            clock=np.zeros(n_levels, dtype=np.int64),
            rng=np.array([RNG_SEED], dtype=np.uint64),
        )

    def copy(self) -> "ChainState":
        return ChainState(self.tags.copy(), self.meta.copy(), self.dirty.copy(), self.clock.copy(), self.rng.copy())
