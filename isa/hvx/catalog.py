"""The catalogue of emulated instructions: the table once every instruction family has
registered itself (importing :mod:`isa.hvx.ops` fills :data:`isa.hvx.table.INSTRUCTIONS`)."""
from __future__ import annotations

from . import ops  # noqa: F401  (registers everything)
from .table import INSTRUCTIONS


def list_instructions() -> list:
    """Every implemented instruction as a dict (name, intrinsic, syntax, family, resources, latency, source)."""
    return [
        {"name": s.name, "intrinsic": s.intrinsic, "syntax": s.syntax, "family": s.family,
         "resources": s.resources, "latency": s.latency, "source": s.source}
        for s in sorted(INSTRUCTIONS.values(), key=lambda s: (s.family, s.name))
    ]
