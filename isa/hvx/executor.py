"""Run a Program over a batch of tiles (values) and report its timing (isa.hvx.timing).

The program is compiled once against the state: runs of packets and loops whose instructions the
compiled path supports become single numba calls (isa.hvx.superblock); the rest becomes one numpy
closure per instruction over all tiles, walked by a Python loop (control flow is the same for
every tile).  ``fast=False`` uses the numpy closures throughout (the reference path).
Addresses come from scalar registers and must be equal across tiles (every tile runs the same
kernel on its own memory image, or reads a shared read-only range, HvxState.share);
``check_uniform`` verifies this.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .ops.mem import SCALAR_LOADS, SCALAR_STORES, VECTOR_LOADS, VECTOR_STORES
from .ops.scalar import s32
from .program import Packet, Program
from .state import HvxState
from .superblock import compilable, encode, run_region
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

    shares = st.shares

    def bounds(a, n, store=False):
        """The shared range holding [a, a + n) (its index), or None for private memory."""
        for i, (lo, data, _) in enumerate(shares):
            hi = lo + data.shape[1]
            if a < hi and a + n > lo:
                if store or a < lo or a + n > hi:
                    raise MemoryFault(f"{ins}: {'store into' if store else 'access straddling'} a shared read-only range")
                return i
        if a < 0 or a + n > nbytes:
            raise MemoryFault(f"{ins}: access [{a}, {a + n}) outside tile memory of {nbytes} bytes")
        return None

    def load(a, n):
        """Bytes [a, a+n) of every tile's address space, [tiles, n]."""
        i = bounds(a, n)
        if i is not None:
            lo, data, group = shares[i]
            return data[group, a - lo:a - lo + n]
        return mem[:, a:a + n]

    if op in VECTOR_LOADS:
        d, rb, imm = args[0].n, args[1].n, args[2]
        aligned = op.startswith("vL32b")
        post = op.endswith("_pi")

        def f():
            a = addr(rb, 0 if post else imm * 128)
            if aligned:
                a &= ~127
            V[:, d] = load(a, 128)
            if post:
                Rg[:, rb] += imm * 128   # addresses stay far below 2**31
        return f
    if op in VECTOR_STORES:
        if op.endswith("qpred_ai"):
            q, rb, imm, vs = args[0].n, args[1].n, args[2], args[3].n
            neg = "nqpred" in op

            def f():
                a = addr(rb, imm * 128) & ~127
                bounds(a, 128, True)
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
            bounds(a, 128, True)
            mem[:, a:a + 128] = V[:, vs]
            if post:
                Rg[:, rb] += imm * 128   # addresses stay far below 2**31
        return f
    if op in SCALAR_LOADS:
        d, rb, imm = args[0].n, args[1].n, args[2]
        post = op.endswith("_pi")

        def f():
            a = addr(rb, 0 if post else imm) & ~3
            Rg[:, d] = np.ascontiguousarray(load(a, 4)).view(np.int32)[:, 0]
            if post:
                Rg[:, rb] += imm
        return f
    if op in SCALAR_STORES:
        rb, imm, rt = args[0].n, args[1], args[2].n
        post = op.endswith("_pi")

        def f():
            a = addr(rb, 0 if post else imm) & ~3
            bounds(a, 4, True)
            mem[:, a:a + 4] = Rg[:, rt].astype(np.int32).reshape(-1, 1).view(np.uint8)
            if post:
                Rg[:, rb] += imm
        return f
    if op == "J2_loop0i":
        return None
    if op == "vrmpybus_acc" and not fast:   # the reference path stays plain numpy
        from .fast import vrmpybus_acc_ref
        d, u, t = args[0].n, args[1].n, args[2].n

        def f():
            V[:, d] = vrmpybus_acc_ref(V[:, d], V[:, u], Rg[:, t])
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


def _region(code: np.ndarray, st: HvxState, check_uniform: bool):
    """Closure running an encoded run of compilable packets/loops in one compiled call.  Faults are
    detected per access; differing addresses across tiles are detected when the region ends."""
    def f():
        why = run_region(code, st.V, st.R, st.mem, st.shares)
        if why == "range":
            raise MemoryFault(f"memory access outside tile memory (or a store into a shared read-only range) "
                              f"in a compiled region of {len(code)} instructions")
        if why == "uniform" and check_uniform:
            raise MemoryFault(f"address registers differ across tiles in a compiled region of {len(code)} instructions")
    return f


def _plan(program: Program, fast: bool) -> list:
    """The program as steps that do not depend on the state: ("region", code) for every maximal run
    of compilable packets and loops (with ``fast``), ("instr", ins) for the other instructions,
    ("loop", count, steps) for the other loops."""
    def block(items):
        out, run = [], []
        for x in items:
            if fast and compilable(x):
                run.append(x)
                continue
            if run:
                out.append(("region", encode(run)))
                run = []
            if isinstance(x, Packet):
                out.extend(("instr", ins) for ins in x.instrs)
            else:
                out.append(("loop", x.count, block(x.body)))
        if run:
            out.append(("region", encode(run)))
        return out
    return block(program.body)


_PLANS: OrderedDict = OrderedDict()   # (id(program), fast) -> (program, plan); the program kept alive


def _cached_plan(program: Program, fast: bool) -> list:
    """``_plan``, once per program: a GEMM or conv tile runs many times (gemm_hvx, op costing), and
    encoding its regions cost ~10% of a 512x1024x1024 GEMM's run."""
    key = (id(program), fast)
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is program:
        _PLANS.move_to_end(key)
        return hit[1]
    plan = _plan(program, fast)
    _PLANS[key] = (program, plan)
    while len(_PLANS) > 256:
        _PLANS.popitem(last=False)
    return plan


def compile_program(program: Program, st: HvxState, check_uniform: bool = True, fast: bool = True) -> list:
    """Closures for the program.  With ``fast``, every maximal run of packets and loops made of
    compilable instructions (isa.hvx.superblock) becomes one compiled call; the rest runs one
    numpy closure per instruction over all tiles."""
    cache: dict = {}

    def bind(steps):
        out = []
        for step in steps:
            if step[0] == "region":
                out.append(_region(step[1], st, check_uniform))
            elif step[0] == "instr":
                ins = step[1]
                f = cache.get(id(ins))
                if f is None:
                    f = _compile_instr(ins, st, check_uniform, fast)
                    cache[id(ins)] = f
                if f is not None:
                    out.append(f)
            else:
                out.append((step[1], bind(step[2])))
        return out
    return bind(_cached_plan(program, fast))


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
    if st.address_bytes < program.mem_bytes:
        raise MemoryFault(f"program needs {program.mem_bytes} bytes of tile memory, state has {st.address_bytes}")
    _exec(compile_program(program, st, check_uniform, fast))
    return RunResult(st, analyze(program, config))
