"""The instruction table: one immutable InstrSpec per emulated instruction.

Each entry names the instruction (QEMU's ``V6_`` tag without the prefix), its assembly syntax,
its ``Q6_*`` intrinsic, its operands, its V66 resource class and result latency, and the numpy
function giving its semantics over a leading tile axis.  Resource classes and latencies follow
QEMU's ext.idef attributes (A_CVI_VA, A_CVI_VX, A_CVI_VX_DV, A_CVI_VS, A_CVI_VP, A_CVI_VP_VS, ...)
and LLVM's HexagonDepIICHVX.td itineraries; see docs/hvx.md.

Operand codes: first letter V (vector), W (vector pair), Q (predicate), R (scalar), I (immediate);
a second letter ``d`` means written, ``x`` read and written, anything else read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

# Packets until a result may be read without a stall: 1 = next packet.  Multiply, shift and
# permute results used in the next packet cost one stall (hardware.yaml hexagon.latency).
LATENCY = {
    "VA": 1, "VA_DV": 1, "VX": 2, "VX_DV": 2, "VS": 2, "VP": 2, "VP_VS": 2,
    "LD": 1, "LDU": 1, "ST": 1, "STU": 1, "VEXT": 3,
    "S_ALU": 1, "S_MPY": 1, "S_LD": 1, "S_ST": 1, "S_CR": 1,
}

SOURCE_HVX = "QEMU target/hexagon/imported/mmvec/ext.idef; LLVM HexagonDepIICHVX.td"
SOURCE_SCALAR = "Hexagon V66 scalar ISA (QEMU target/hexagon/imported/*.idef)"


@dataclass(frozen=True)
class InstrSpec:
    name: str
    syntax: str
    intrinsic: str
    operands: tuple
    resources: str
    fn: Optional[Callable] = field(default=None, compare=False, repr=False)
    family: str = ""
    source: str = SOURCE_HVX

    @property
    def latency(self) -> int:
        return LATENCY[self.resources]

    @property
    def reads(self) -> tuple:
        return tuple(i for i, o in enumerate(self.operands) if o[0] != "I" and o[1] != "d")

    @property
    def writes(self) -> tuple:
        return tuple(i for i, o in enumerate(self.operands) if o[0] != "I" and o[1] in "dx")


INSTRUCTIONS: dict = {}


def defop(name: str, intrinsic: str, syntax: str, operands: str, resources: str, family: str,
          source: str = SOURCE_HVX) -> Callable:
    """Register an instruction; the decorated function gives its semantics."""
    ops = tuple(o.strip() for o in operands.split(",") if o.strip())

    def deco(fn: Callable) -> Callable:
        if name in INSTRUCTIONS:
            raise ValueError(f"duplicate instruction {name}")
        INSTRUCTIONS[name] = InstrSpec(name, syntax, intrinsic, ops, resources, fn, family, source)
        return fn
    return deco


def spec(name: str) -> InstrSpec:
    try:
        return INSTRUCTIONS[name]
    except KeyError:
        raise KeyError(f"unknown HVX/scalar instruction {name!r}") from None
