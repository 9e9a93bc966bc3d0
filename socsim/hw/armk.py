"""Cycles per inner-loop unit of the CPU kernels, per core type, from their instruction streams.

The table (calibration/armk_cycles.json) is made by isa.arm.armk: socsim's C/NEON versions of
the inner loops MNN runs (isa/arm/kernels) compiled with clang for aarch64 and costed with
llvm-mca's scheduling model of each core type (or the model that stands in for it, the table's
``core_models``; docs/oracles.md section 2, docs/modeling.md "CPU kernels from instruction
streams").  Data in L1, back end only: socsim adds the memory hierarchy (socsim.hw.memory).
Reading a committed table keeps clang and llvm-mca out of socsim's run time;
tests/isa/test_armk_oracle.py regenerates it and checks that it matches.
"""
from __future__ import annotations

import json
from functools import lru_cache
from socsim.spec import _repo_dir

# calibration/ sits at the top of the source tree, beside soc_specs/ (found the same way)
TABLE = _repo_dir("calibration") / "armk_cycles.json"


@lru_cache(maxsize=1)
def table() -> dict[str, dict[str, float]]:
    """kernel -> core type -> cycles per inner-loop unit."""
    data = json.loads(TABLE.read_text())
    return {k: dict(v["cycles_per_unit"]) for k, v in data["kernels"].items()}


def cycles(kernel: str, core_type: str) -> float | None:
    """Cycles per unit of ``kernel`` on a ``core_type`` core, or None when the table has no
    model for that core type (the caller then keeps its instruction-mix bound)."""
    return table()[kernel].get(core_type.lower())
