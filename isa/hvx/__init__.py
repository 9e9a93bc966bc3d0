"""Bit-exact, tile-vectorised emulation of Hexagon V66 HVX (128-byte vectors) with packet timing.

Public API:
    list_instructions()                      -> list of dicts describing every emulated instruction
    Builder, Program, V, W, Q, R             build kernels as packets and hardware loops
    HvxState(tiles, mem_bytes)               register file + memory, leading tile axis
    run(program, state, config) -> RunResult values (in state) and Timing
    analyze(program, config) -> Timing       timing alone (control flow is static)
    TimingConfig, Timing
"""
from .table import InstrSpec, spec
from .catalog import list_instructions
from .program import Builder, Program, Packet, Loop, Instr, V, W, Q, R
from .state import HvxState
from .timing import Timing, TimingConfig, analyze
from .executor import run, RunResult, MemoryFault
from .semantics import apply

__all__ = ["InstrSpec", "list_instructions", "spec", "Builder", "Program", "Packet", "Loop", "Instr",
           "V", "W", "Q", "R", "HvxState", "Timing", "TimingConfig", "analyze", "run", "RunResult",
           "MemoryFault", "apply"]
