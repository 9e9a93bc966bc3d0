"""Apply one instruction's semantics directly to operand arrays (used by differential tests)."""
from __future__ import annotations

from .table import spec


def apply(name: str, *operands):
    """Evaluate instruction ``name`` on its read operands (vectors [T,128] uint8, pairs
    [T,2,128], predicates [T,128] bool, scalars [T] int64, immediates int), in operand order."""
    s = spec(name)
    if s.fn is None:
        raise ValueError(f"{name} acts on memory; run it through isa.hvx.run")
    return s.fn(*operands)
