"""The memory profile of one op on one unit: what :mod:`socsim.hw.memory` computes and
:mod:`socsim.hw.profile_store` keeps between runs (its own module, so neither imports the other)."""
from __future__ import annotations

from dataclasses import dataclass

from socsim.hw.cache.hierarchy import LevelStats


@dataclass(frozen=True, slots=True)
class MemProfile:
    """Cache and DRAM behaviour of one op (whole op, after extrapolation)."""

    levels: tuple[LevelStats, ...]
    dram_read_bytes: int
    dram_write_bytes: int
    scratch_accesses: int
    footprint_bytes: int
    simulated_fraction: float       # fraction of the op's outer-loop steps actually simulated
    line_bytes: int
    dram_clean_bytes: int = 0       # of dram_write_bytes: dirty lines cleaned at the op's end
    work_items: int = 0             # outer-loop items dealt to the threads (steps x threads)

    @property
    def dram_bytes(self) -> int:
        return self.dram_read_bytes + self.dram_write_bytes

    def hit_rates(self) -> dict[str, float]:
        return {lv.name: lv.hit_rate for lv in self.levels}

    def level(self, name: str) -> LevelStats:
        for lv in self.levels:
            if lv.name == name:
                return lv
        raise KeyError(name)
