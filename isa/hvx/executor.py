"""Run a Program over a batch of tiles (values) and report its timing (isa.hvx.timing).

The program is compiled once into closures over the state arrays; control flow (hardware loops)
is the same for every tile, so a Python loop walks the packets while numpy/numba do the work of
all tiles for each instruction.  Addresses come from scalar registers and must be equal across
tiles (every tile runs the same kernel on its own memory image); ``check_uniform`` verifies this.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ops.mem import SCALAR_LOADS, SCALAR_STORES, VECTOR_LOADS, VECTOR_STORES
from .ops.scalar import s32
from .program import Loop, Packet, Program
from .state import HvxState
from .superblock import SUPPORTED, encode, run_loop
from .timing import Timing, TimingConfig, analyze


class MemoryFault(IndexError):
    pass


def _compile_instr(ins, st: HvxState, check_uniform: bool, fast: bool = True):
    s = ins.spec
    op = ins.op
    V, Q, Rg, mem = st.V, st.Q, st.R, st.mem
    nbytes = mem.shape[1]
    args = ins.args

    uniform_check = check_uniform and st.tiles > 1

    def addr(reg_n, extra):
        col = Rg[:, reg_n]
        a = int(col[0])
        if uniform_check and not (col == a).all():
            raise MemoryFault(f"{ins}: address register differs across tiles")
        return a + extra

    def bounds(a, n):
        if a < 0 or a + n > nbytes:
            raise MemoryFault(f"{ins}: access [{a}, {a + n}) outside tile memory of {nbytes} bytes")

    if op in VECTOR_LOADS:
        d, rb, imm = args[0].n, args[1].n, args[2]
        aligned = op.startswith("vL32b")
        post = op.endswith("_pi")

        def f():
            a = addr(rb, 0 if post else imm * 128)
            if aligned:
                a &= ~127
            bounds(a, 128)
            V[:, d] = mem[:, a:a + 128]
            if post:
                Rg[:, rb] += imm * 128   # addresses stay far below 2**31
        return f
    if op in VECTOR_STORES:
        if op.endswith("qpred_ai"):
            q, rb, imm, vs = args[0].n, args[1].n, args[2], args[3].n
            neg = "nqpred" in op

            def f():
                a = addr(rb, imm * 128) & ~127
                bounds(a, 128)
                m = ~Q[:, q] if neg else Q[:, q]
                mem[:, a:a + 128] = np.where(m, V[:, vs], mem[:, a:a + 128])
            return f
        rb, imm, vs = args[0].n, args[1], args[2].n
        aligned = op.startswith("vS32b")
        post = op.endswith("_pi")

        def f():
            a = addr(rb, 0 if post else imm * 128)
            if aligned:
                a &= ~127
            bounds(a, 128)
            mem[:, a:a + 128] = V[:, vs]
            if post:
                Rg[:, rb] += imm * 128   # addresses stay far below 2**31
        return f
    if op in SCALAR_LOADS:
        d, rb, imm = args[0].n, args[1].n, args[2]
        post = op.endswith("_pi")

        def f():
            a = addr(rb, 0 if post else imm) & ~3
            bounds(a, 4)
            Rg[:, d] = np.ascontiguousarray(mem[:, a:a + 4]).view(np.int32)[:, 0]
            if post:
                Rg[:, rb] += imm
        return f
    if op in SCALAR_STORES:
        rb, imm, rt = args[0].n, args[1], args[2].n
        post = op.endswith("_pi")

        def f():
            a = addr(rb, 0 if post else imm) & ~3
            bounds(a, 4)
            mem[:, a:a + 4] = Rg[:, rt].astype(np.int32).reshape(-1, 1).view(np.uint8)
            if post:
                Rg[:, rb] += imm
        return f
    if op == "J2_loop0i":
        return None
    if op == "vrmpybus_acc" and fast:   # the GEMM inner instruction: compiled, in place
        from .fast import vrmpybus_acc_inplace
        v32 = V.view(np.uint32)
        d, u, t = args[0].n, args[1].n, args[2].n

        def f():
            vrmpybus_acc_inplace(V, v32, d, u, Rg, t)
        return f
    if op == "vd0":
        n = args[0].n

        def f():
            V[:, n] = 0
        return f
    if op == "A2_tfrsi":
        n, imm = args[0].n, int(s32(args[1]))

        def f():
            Rg[:, n] = imm
        return f

    getters = []
    for i in s.reads:
        a = args[i]
        getters.append((a.kind, a.n))
    imms = [args[i] for i, c in enumerate(s.operands) if c[0] == "I"]
    outs = [(args[i].kind, args[i].n) for i in s.writes]
    fn = s.fn

    def get(kind, n):
        if kind == "V":
            return V[:, n]
        if kind == "W":
            return V[:, n:n + 2]
        if kind == "Q":
            return Q[:, n]
        return Rg[:, n]

    def put(kind, n, val):
        if kind == "V":
            V[:, n] = val
        elif kind == "W":
            V[:, n:n + 2] = val
        elif kind == "Q":
            Q[:, n] = val
        else:
            Rg[:, n] = val

    if len(outs) == 1 and len(getters) == 3 and not imms and all(k == "V" or k == "R" for k, _ in getters):
        (ok, on), ((k0, n0), (k1, n1), (k2, n2)) = outs[0], getters
        a0 = get(k0, n0)
        a1 = get(k1, n1)
        a2 = get(k2, n2)
        if ok == "V":
            dst = V[:, on]

            def f():
                dst[...] = fn(a0, a1, a2)
            return f

    def f():
        res = fn(*[get(k, n) for k, n in getters], *imms)
        if len(outs) == 1:
            put(*outs[0], res)
        else:
            for (k, n), r in zip(outs, res):
                put(k, n, r)
    return f


def _superblock(loop: Loop, st: HvxState):
    """Closure running a whole hot loop in one compiled call, or None if it does not qualify."""
    instrs = [ins for p in loop.body if isinstance(p, Packet) for ins in p.instrs]
    if any(not isinstance(p, Packet) for p in loop.body) or any(i.op not in SUPPORTED for i in instrs):
        return None
    code = encode(instrs)
    v8, v32, regs, mem, count = st.V, st.V.view(np.uint32), st.R, st.mem, loop.count

    def f():
        if run_loop(code, count, v8, v32, regs, mem):
            raise MemoryFault(f"memory access outside tile memory in compiled loop of {len(instrs)} instructions")
    return f


def compile_program(program: Program, st: HvxState, check_uniform: bool = True, fast: bool = True) -> list:
    """Closures for every instruction; hot loops become single compiled calls when ``fast``."""
    cache = {}

    def block(items):
        out = []
        for x in items:
            if not isinstance(x, Packet) and fast:
                sb = _superblock(x, st)
                if sb is not None:
                    out.append(sb)
                    continue
            if isinstance(x, Packet):
                for ins in x.instrs:
                    f = cache.get(id(ins))
                    if f is None:
                        f = _compile_instr(ins, st, check_uniform, fast)
                        cache[id(ins)] = f
                    if f is not None:
                        out.append(f)
            else:
                out.append((x.count, block(x.body)))
        return out
    return block(program.body)


def _exec(items) -> None:
    for it in items:
        if it.__class__ is tuple:
            cnt, body = it
            for _ in range(cnt):
                _exec(body)
        else:
            it()


@dataclass
class RunResult:
    state: HvxState
    timing: Timing


def run(program: Program, st: HvxState, config: TimingConfig = TimingConfig(),
        check_uniform: bool = True, fast: bool = True) -> RunResult:
    """Execute ``program`` on every tile of ``st`` (in place) and return values plus timing.
    ``fast=False`` runs every instruction through its numpy semantics (the reference path)."""
    if st.mem.shape[1] < program.mem_bytes:
        raise MemoryFault(f"program needs {program.mem_bytes} bytes of tile memory, state has {st.mem.shape[1]}")
    _exec(compile_program(program, st, check_uniform, fast))
    return RunResult(st, analyze(program, config))
