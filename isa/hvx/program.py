"""HVX kernels as programs: registers, instructions, packets, hardware loops and a builder.

Kernels are written in Python with :class:`Builder` rather than as assembly text: the builder
gives loops, address arithmetic and register allocation in plain Python, validates every operand
against the instruction table at build time, and groups instructions into packets in program
order (a new packet starts on a register dependence, a resource conflict or four instructions),
which is what a Hexagon assembler does with unbundled code.  ``with b.packet():`` forces an
explicit packet.  docs/hvx.md discusses the choice.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple, Union

from . import ops  # noqa: F401  (fills the instruction table)
from .ops.mem import MEMORY_OPS, SCALAR_LOADS, SCALAR_STORES, VECTOR_LOADS, VECTOR_STORES
from .resources import fits
from .table import INSTRUCTIONS, spec


class Reg(NamedTuple):
    kind: str  # "V" vector, "W" vector pair (n even: V(n+1):V(n)), "Q" predicate, "R" scalar
    n: int

    def __repr__(self) -> str:
        return f"{self.kind.lower()}{self.n}"

    def units(self) -> tuple:
        """The architectural registers this operand names (a pair names two vectors)."""
        if self.kind == "W":
            return (("V", self.n), ("V", self.n + 1))
        return ((self.kind, self.n),)


def V(n: int) -> Reg:
    return Reg("V", n)


def W(n: int) -> Reg:
    if n % 2:
        raise ValueError("a vector pair starts at an even register")
    return Reg("W", n)


def Q(n: int) -> Reg:
    return Reg("Q", n)


def R(n: int) -> Reg:
    return Reg("R", n)


_LIMITS = {"V": 32, "W": 32, "Q": 4, "R": 32}


@dataclass(frozen=True)
class Instr:
    op: str
    args: tuple
    buf: Union[str, None] = None

    @property
    def spec(self):
        return INSTRUCTIONS[self.op]

    def reads(self) -> frozenset:
        s = self.spec
        return frozenset(u for i in s.reads for u in self.args[i].units())

    def writes(self) -> frozenset:
        s = self.spec
        return frozenset(u for i in s.writes for u in self.args[i].units())

    def __str__(self) -> str:
        return f"{self.op}({', '.join(map(str, self.args))})" + (f" @{self.buf}" if self.buf else "")


@dataclass(frozen=True)
class Packet:
    instrs: tuple

    def __str__(self) -> str:
        return "{ " + "; ".join(map(str, self.instrs)) + " }"


@dataclass(frozen=True)
class Loop:
    count: int
    body: tuple


@dataclass(frozen=True)
class Buffer:
    name: str
    offset: int
    size: int
    level: str  # "vtcm", "l2" or "ddr"


@dataclass(frozen=True)
class Program:
    name: str
    body: tuple
    buffers: tuple
    mem_bytes: int

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    def static_packets(self) -> int:
        def count(block):
            return sum(1 if isinstance(x, Packet) else count(x.body) for x in block)
        return count(self.body)

    def listing(self) -> str:
        lines = []

        def walk(block, ind):
            for x in block:
                if isinstance(x, Packet):
                    lines.append(" " * ind + str(x))
                else:
                    lines.append(" " * ind + f"loop x{x.count} {{")
                    walk(x.body, ind + 2)
                    lines.append(" " * ind + "}")
        walk(self.body, 0)
        return "\n".join(lines)


def _check(op: str, args: tuple) -> None:
    s = spec(op)
    if len(args) != len(s.operands):
        raise TypeError(f"{op} takes {s.operands}, got {args}")
    for code, a in zip(s.operands, args):
        if code[0] == "I":
            if not isinstance(a, int):
                raise TypeError(f"{op}: immediate expected, got {a!r}")
            continue
        if not isinstance(a, Reg) or a.kind != code[0]:
            raise TypeError(f"{op}: operand {code} expects a {code[0]} register, got {a!r}")
        if not 0 <= a.n < _LIMITS[a.kind] or (a.kind == "W" and a.n % 2):
            raise ValueError(f"{op}: bad register {a!r}")


def _is_store(ins: Instr) -> bool:
    return ins.op in VECTOR_STORES or ins.op in SCALAR_STORES


def _is_load(ins: Instr) -> bool:
    return ins.op in VECTOR_LOADS or ins.op in SCALAR_LOADS


def can_join(packet: list, ins: Instr) -> bool:
    """Program-order packing rule: no dependence on the packet so far, and resources fit."""
    if len(packet) >= 4:
        return False
    w = frozenset().union(*(p.writes() for p in packet)) if packet else frozenset()
    if ins.reads() & w or ins.writes() & w:
        return False
    if _is_load(ins) and any(_is_store(p) for p in packet):
        return False
    if _is_store(ins) and any(_is_store(p) for p in packet):
        return False
    return fits(tuple(p.spec.resources for p in packet) + (ins.spec.resources,))


class Builder:
    """Build a :class:`Program`; instructions are methods named after the table entries."""

    def __init__(self, name: str):
        self.name = name
        self._blocks = [[]]
        self._open: list = []
        self._explicit = False
        self._buffers: list = []
        self._top = 0

    # ---- memory layout ------------------------------------------------------------------------
    def buffer(self, name: str, size: int, level: str = "l2") -> int:
        """Reserve a 128-byte aligned region of each tile's memory; returns its byte offset."""
        if level not in ("vtcm", "l2", "ddr"):
            raise ValueError(level)
        off = self._top
        self._top = off + ((size + 127) // 128) * 128 + 128  # a guard vector after each buffer
        self._buffers.append(Buffer(name, off, size, level))
        return off

    # ---- instructions ---------------------------------------------------------------------------
    def emit(self, op: str, *args, buf: Union[str, None] = None) -> None:
        _check(op, args)
        if op in MEMORY_OPS and buf is None:
            raise ValueError(f"{op}: memory instructions name the buffer they touch (buf=...)")
        ins = Instr(op, tuple(args), buf)
        if self._explicit:
            if not can_join(self._open, ins):
                raise ValueError(f"{ins} does not fit the explicit packet {self._open}")
            self._open.append(ins)
            return
        if not can_join(self._open, ins):
            self._close()
        self._open.append(ins)

    def __getattr__(self, name: str):
        if name in INSTRUCTIONS:
            return lambda *a, buf=None: self.emit(name, *a, buf=buf)
        raise AttributeError(name)

    def _close(self) -> None:
        if self._open:
            self._blocks[-1].append(Packet(tuple(self._open)))
            self._open = []

    @contextmanager
    def packet(self):
        """Group the instructions emitted inside into exactly one packet."""
        self._close()
        self._explicit = True
        try:
            yield
        finally:
            self._explicit = False
            self._close()

    @contextmanager
    def loop(self, count: int):
        """A hardware loop (loop0/loop1) running its body ``count`` times."""
        if count < 0:
            raise ValueError("negative trip count")
        self.emit("J2_loop0i", int(count))
        self._close()
        self._blocks.append([])
        try:
            yield
        finally:
            self._close()
            body = self._blocks.pop()
            if count > 0 and body:
                self._blocks[-1].append(Loop(int(count), tuple(body)))

    def barrier(self) -> None:
        """End the current packet (e.g. to keep a store and a later load apart)."""
        self._close()

    def build(self) -> Program:
        self._close()
        if len(self._blocks) != 1:
            raise RuntimeError("unclosed loop")
        return Program(self.name, tuple(self._blocks[0]), tuple(self._buffers), self._top)
