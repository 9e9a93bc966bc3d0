"""Compiled execution of program regions (the emulator's "translation blocks").

A run of consecutive packets and hardware loops that use only the instructions in ``SUPPORTED``
is encoded once into an int64 code table (one row per instruction, loop begin/end markers) and
executed by numba: tiles in the outer loop (chunks handed to CPU threads, numba releases the
GIL), a small batch of tiles in lockstep per decoded instruction (control flow is the same for
every tile), the register state in the state arrays.  Each tile is independent and instructions
inside a packet never depend on each other (isa.hvx.program), so per-tile sequential execution
gives the state of the per-instruction numpy path; tests/isa/test_fast_paths.py checks the two
against each other.  Timing is not computed here: isa.hvx.timing derives it once from the
packet/resource model (a loop body's cost times its trip count), since control flow is static.
The uniform-address contract is checked with a per-tile hash of every address accessed.
vrmpy is isa.hvx.fast's intrinsic (AVX512-VNNI, AVX2 or generic LLVM IR, whichever the host
runs); numba's on-disk cache of these functions is keyed on this file, so a change of the
intrinsics there takes effect here only when this file changes too (or its cache is deleted).

Shared memory: up to two read-only byte ranges of every tile's address space may each be backed
by one of a few shared images (e.g. a GEMM's A row block, read by every column-block tile, and
its B panel, read by every row-block tile); loads inside one read ``images[group[tile]]``, stores
into one fault.  See ``HvxState.share``.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numpy as np
import numba
from numba import njit

from .fast import load_s32, rmpy_bus_acc, rmpy_bus_acc4, rmpy_bv_acc, vcopy
from .ops.scalar import s32

(OP_VRMPYBUS_ACC, OP_VRMPYBV_ACC, OP_VLOAD_AI, OP_VLOAD_PI, OP_VSTORE_AI, OP_VSTORE_PI, OP_SLOAD_AI,
 OP_SLOAD_PI, OP_ADDI, OP_TFRSI, OP_TFR, OP_SPLATW, OP_VROR, OP_VADDW, OP_VSUBW, OP_VASLW, OP_VD0,
 OP_VASSIGN, OP_NOP, OP_LOOP, OP_END, OP_VRMPYBUS_RUN) = range(22)

_ENC = {   # op -> (code, how to turn its args into (a, b, c))
    "vrmpybus_acc": (OP_VRMPYBUS_ACC, lambda a: (a[0].n, a[1].n, a[2].n)),
    "vrmpybv_acc": (OP_VRMPYBV_ACC, lambda a: (a[0].n, a[1].n, a[2].n)),
    "vL32b_ai": (OP_VLOAD_AI, lambda a: (a[0].n, a[1].n, a[2] * 128)),
    "vL32b_pi": (OP_VLOAD_PI, lambda a: (a[0].n, a[1].n, a[2] * 128)),
    "vS32b_ai": (OP_VSTORE_AI, lambda a: (a[2].n, a[0].n, a[1] * 128)),
    "vS32b_pi": (OP_VSTORE_PI, lambda a: (a[2].n, a[0].n, a[1] * 128)),
    "L2_loadri_io": (OP_SLOAD_AI, lambda a: (a[0].n, a[1].n, a[2])),
    "L2_loadri_pi": (OP_SLOAD_PI, lambda a: (a[0].n, a[1].n, a[2])),
    "A2_addi": (OP_ADDI, lambda a: (a[0].n, a[1].n, a[2])),
    "A2_tfrsi": (OP_TFRSI, lambda a: (a[0].n, int(s32(np.array([a[1]]))[0]), 0)),
    "A2_tfr": (OP_TFR, lambda a: (a[0].n, a[1].n, 0)),
    "lvsplatw": (OP_SPLATW, lambda a: (a[0].n, a[1].n, 0)),
    "vror": (OP_VROR, lambda a: (a[0].n, a[1].n, a[2].n)),
    "vaddw": (OP_VADDW, lambda a: (a[0].n, a[1].n, a[2].n)),
    "vsubw": (OP_VSUBW, lambda a: (a[0].n, a[1].n, a[2].n)),
    "vaslw": (OP_VASLW, lambda a: (a[0].n, a[1].n, a[2].n)),
    "vd0": (OP_VD0, lambda a: (a[0].n, 0, 0)),
    "vassign": (OP_VASSIGN, lambda a: (a[0].n, a[1].n, 0)),
    "J2_loop0i": (OP_NOP, lambda a: (0, 0, 0)),
}
SUPPORTED = frozenset(_ENC)


def _row(ins) -> tuple:
    code, f = _ENC[ins.op]
    return (code,) + tuple(f(ins.args))


def _groups_of_four(run: list) -> tuple:
    """A run's vrmpybus_acc as (groups, rest): ``groups`` holds whole groups of four that read the
    same Vu (by Vu in order of first use), ``rest`` the others in order.  The accumulates commute
    (wrapping int32 sums), so reordering them leaves the same state, unless a vrmpy writes a
    register that another reads as Vu: then nothing is grouped."""
    if {i.args[0].n for i in run} & {i.args[1].n for i in run}:
        return [], list(run)
    by_u: dict = {}
    for k, i in enumerate(run):
        by_u.setdefault(i.args[1].n, []).append(k)
    grouped: list = []
    for same in by_u.values():
        grouped += same[:len(same) - len(same) % 4]
    left = sorted(set(range(len(run))) - set(grouped))
    return [run[k] for k in grouped], [run[k] for k in left]


def _emit_straight(instrs: list, rows: list) -> None:
    """Rows for straight-line code (the instructions of consecutive packets, in order), with the
    vrmpybus_acc gathered into runs: each one moves ahead of the other instructions met since its
    run began when it neither reads nor writes what they write nor writes what they read (so
    every tile's state after the segment is that of the instructions in program order); those
    others keep their order, memory accesses included.  A run of n >= 2 becomes one RUN row
    (n) and the n instruction rows it executes tile by tile: one decode per run instead of one
    per instruction; its rows start with the groups of four that share Vu (``_groups_of_four``),
    each executed as one fused vrmpy (Vu loaded once).  The loop setup (J2_loop0i) does nothing
    here and is left out."""
    run: list = []
    pending: list = []
    pr: set = set()
    pw: set = set()

    def flush():
        if len(run) > 1:
            groups, rest = _groups_of_four(run)
            rows.append((OP_VRMPYBUS_RUN, len(run), len(groups) // 4, 0))
            rows.extend(_row(i) for i in groups + rest)
        else:
            rows.extend(_row(i) for i in run)
        rows.extend(_row(i) for i in pending)
        run.clear()
        pending.clear()
        pr.clear()
        pw.clear()
    for ins in instrs:
        if ins.op == "J2_loop0i":
            continue
        if ins.op == "vrmpybus_acc":
            r, w = ins.reads(), ins.writes()
            if pending and (r & pw or w & pr or w & pw):
                flush()
            run.append(ins)
        elif run:
            pending.append(ins)
            pr.update(ins.reads())
            pw.update(ins.writes())
        else:
            rows.append(_row(ins))
    flush()


def encode(items) -> np.ndarray:
    """Packets and Loops (isa.hvx.program) -> int64 code rows (op, a, b, c): straight-line code
    as ``_emit_straight`` orders it, a loop as LOOP(count) body END."""
    from .program import Packet
    rows: list = []

    def walk(xs):
        straight: list = []
        for x in xs:
            if isinstance(x, Packet):
                straight.extend(x.instrs)
                continue
            _emit_straight(straight, rows)
            straight = []
            rows.append((OP_LOOP, x.count, 0, 0))
            walk(x.body)
            rows.append((OP_END, 0, 0, 0))
        _emit_straight(straight, rows)
    walk(items)
    return np.array(rows, np.int64).reshape(-1, 4)


def compilable(x) -> bool:
    """True when a Packet or Loop uses only SUPPORTED instructions (recursively)."""
    from .program import Packet
    if isinstance(x, Packet):
        return all(i.op in SUPPORTED for i in x.instrs)
    return all(compilable(y) for y in x.body)


@njit(cache=True, boundscheck=False, error_model="numpy", inline="always")
def _s32(v):
    v &= 0xFFFFFFFF
    return v - (np.int64(1) << 32) if v >= (np.int64(1) << 31) else v


@njit(cache=True, boundscheck=False, error_model="numpy", inline="always")
def _where(a, n, nbytes, sh_off, sh_end, s2_off, s2_end):
    """Bytes [a, a + n) of a tile's address space: 1 inside the first shared range, 2 inside the
    second, 0 inside private memory (and clear of both), -1 anywhere else (a fault)."""
    if a >= sh_off and a + n <= sh_end:
        return 1
    if a >= s2_off and a + n <= s2_end:
        return 2
    if a < 0 or a + n > nbytes or (a + n > sh_off and a < sh_end) or (a + n > s2_off and a < s2_end):
        return -1
    return 0


@njit(cache=True, boundscheck=False, error_model="numpy", nogil=True)
def _run_batch(code, v8, v32, regs, mem, sh_off, sh_data, sh_group, s2_off, s2_data, s2_group, ah, t0, t1):
    """Execute ``code`` on tiles [t0, t1) in lockstep (control flow is the same for every tile, so
    one decode serves the batch); returns 0, or 1 on a memory fault.  Sets ``ah[t]`` to a hash of
    every address tile t accessed, so the caller can check that addresses agree across tiles: the
    batch hashes the addresses of its first tile, compares every other tile's address with that
    one, and classifies it (shared, private, fault) once for all the tiles that agree; a tile
    that disagrees is classified on its own and gets a hash of its own.  Releases the GIL."""
    nbytes = mem.shape[1]
    sh_end = sh_off + sh_data.shape[1]
    s2_end = s2_off + s2_data.shape[1]
    stack_pc = np.zeros(8, np.int64)
    stack_n = np.zeros(8, np.int64)
    rot = np.empty(128, np.uint8)
    h = np.int64(0)       # hash of the addresses tile t0 accessed
    odd = 0               # bit t - t0: tile t accessed an address other than tile t0's
    sp = 0
    pc = 0
    n = code.shape[0]
    while pc < n:
        op = code[pc, 0]
        x = code[pc, 1]
        y = code[pc, 2]
        z = code[pc, 3]
        pc += 1
        if op == OP_VRMPYBUS_RUN:       # x vrmpybus_acc rows follow, y groups of four on one Vu first
            for t in range(t0, t1):
                vb = t * 4096
                for i in range(pc, pc + 4 * y, 4):
                    rmpy_bus_acc4(v8, vb + code[i, 2] * 128, vb + code[i, 1] * 128, vb + code[i + 1, 1] * 128,
                                  vb + code[i + 2, 1] * 128, vb + code[i + 3, 1] * 128, regs[t, code[i, 3]],
                                  regs[t, code[i + 1, 3]], regs[t, code[i + 2, 3]], regs[t, code[i + 3, 3]])
                for i in range(pc + 4 * y, pc + x):
                    rmpy_bus_acc(v8, vb + code[i, 1] * 128, vb + code[i, 2] * 128, regs[t, code[i, 3]])
            pc += x
        elif op == OP_VRMPYBUS_ACC:
            for t in range(t0, t1):
                vb = t * 4096
                rmpy_bus_acc(v8, vb + x * 128, vb + y * 128, regs[t, z])
        elif op == OP_VLOAD_AI or op == OP_VLOAD_PI:
            off = z if op == OP_VLOAD_AI else 0
            a0 = regs[t0, y] + off
            h = (h * 1000003) ^ a0
            al = a0 & ~127
            where = _where(al, 128, nbytes, sh_off, sh_end, s2_off, s2_end)
            if where < 0:
                return 1
            same = True
            for t in range(t0 + 1, t1):
                same &= regs[t, y] + off == a0
            if same:                                    # the usual case: one address, classified once
                vd = t0 * 4096 + x * 128
                if where == 1:
                    for t in range(t0, t1):
                        vcopy(v8, vd, sh_data, sh_group[t] * sh_data.shape[1] + al - sh_off)
                        vd += 4096
                elif where == 2:
                    for t in range(t0, t1):
                        vcopy(v8, vd, s2_data, s2_group[t] * s2_data.shape[1] + al - s2_off)
                        vd += 4096
                else:
                    for t in range(t0, t1):
                        vcopy(v8, vd, mem, t * nbytes + al)
                        vd += 4096
                if op == OP_VLOAD_PI:
                    nxt = _s32(a0 - off + z)
                    for t in range(t0, t1):
                        regs[t, y] = nxt
                continue
            for t in range(t0, t1):
                a = regs[t, y] + off
                if a == a0:
                    w, at = where, al
                else:                                   # a tile off the batch's address
                    odd |= 1 << (t - t0)
                    at = a & ~127
                    w = _where(at, 128, nbytes, sh_off, sh_end, s2_off, s2_end)
                    if w < 0:
                        return 1
                if w == 1:
                    vcopy(v8, t * 4096 + x * 128, sh_data, sh_group[t] * sh_data.shape[1] + at - sh_off)
                elif w == 2:
                    vcopy(v8, t * 4096 + x * 128, s2_data, s2_group[t] * s2_data.shape[1] + at - s2_off)
                else:
                    vcopy(v8, t * 4096 + x * 128, mem, t * nbytes + at)
                if op == OP_VLOAD_PI:
                    regs[t, y] = _s32(regs[t, y] + z)
        elif op == OP_VRMPYBV_ACC:
            for t in range(t0, t1):
                vb = t * 4096
                rmpy_bv_acc(v8, vb + x * 128, vb + y * 128, vb + z * 128)
        elif op == OP_SLOAD_AI or op == OP_SLOAD_PI:
            off = z if op == OP_SLOAD_AI else 0
            a0 = regs[t0, y] + off
            h = (h * 1000003) ^ a0
            al = a0 & ~3
            where = _where(al, 4, nbytes, sh_off, sh_end, s2_off, s2_end)
            if where < 0:
                return 1
            same = True
            for t in range(t0 + 1, t1):
                same &= regs[t, y] + off == a0
            if same:                                    # the usual case: one address, classified once
                if where == 1:
                    for t in range(t0, t1):
                        regs[t, x] = load_s32(sh_data, sh_group[t] * sh_data.shape[1] + al - sh_off)
                elif where == 2:
                    for t in range(t0, t1):
                        regs[t, x] = load_s32(s2_data, s2_group[t] * s2_data.shape[1] + al - s2_off)
                else:
                    for t in range(t0, t1):
                        regs[t, x] = load_s32(mem, t * nbytes + al)
                if op == OP_SLOAD_PI:
                    for t in range(t0, t1):
                        regs[t, y] = _s32(regs[t, y] + z)
                continue
            for t in range(t0, t1):
                a = regs[t, y] + off
                if a == a0:
                    w, at = where, al
                else:
                    odd |= 1 << (t - t0)
                    at = a & ~3
                    w = _where(at, 4, nbytes, sh_off, sh_end, s2_off, s2_end)
                    if w < 0:
                        return 1
                if w == 1:
                    g = sh_group[t]   # the word's bytes read in place: no row view (below)
                    b0 = at - sh_off
                    wd = (np.int64(sh_data[g, b0]) | (np.int64(sh_data[g, b0 + 1]) << 8)
                          | (np.int64(sh_data[g, b0 + 2]) << 16) | (np.int64(sh_data[g, b0 + 3]) << 24))
                elif w == 2:
                    g = s2_group[t]
                    b0 = at - s2_off
                    wd = (np.int64(s2_data[g, b0]) | (np.int64(s2_data[g, b0 + 1]) << 8)
                          | (np.int64(s2_data[g, b0 + 2]) << 16) | (np.int64(s2_data[g, b0 + 3]) << 24))
                else:
                    # in place, not through a helper or a row view (mem[t]): numba counts references to an
                    # array passed or sliced with atomic operations on one cache line that every
                    # thread touches, a fifth of the emulator's time in the GEMM benchmark
                    wd = (np.int64(mem[t, at]) | (np.int64(mem[t, at + 1]) << 8)
                          | (np.int64(mem[t, at + 2]) << 16) | (np.int64(mem[t, at + 3]) << 24))
                regs[t, x] = _s32(wd)
                if op == OP_SLOAD_PI:
                    regs[t, y] = _s32(regs[t, y] + z)
        elif op == OP_ADDI:
            for t in range(t0, t1):
                regs[t, x] = _s32(regs[t, y] + z)
        elif op == OP_VSTORE_AI or op == OP_VSTORE_PI:
            off = z if op == OP_VSTORE_AI else 0
            a0 = regs[t0, y] + off
            h = (h * 1000003) ^ a0
            for t in range(t0, t1):
                a = regs[t, y] + off
                if a != a0:
                    odd |= 1 << (t - t0)
                a &= ~127
                if _where(a, 128, nbytes, sh_off, sh_end, s2_off, s2_end) != 0:   # outside, or into the shared range
                    return 1
                vcopy(mem, t * nbytes + a, v8, t * 4096 + x * 128)
                if op == OP_VSTORE_PI:
                    regs[t, y] = _s32(regs[t, y] + z)
        elif op == OP_TFRSI:
            for t in range(t0, t1):
                regs[t, x] = y
        elif op == OP_TFR:
            for t in range(t0, t1):
                regs[t, x] = regs[t, y]
        elif op == OP_SPLATW:
            for t in range(t0, t1):
                w = np.int32(_s32(regs[t, y]))
                for j in range(32):
                    v32[t, x, j] = w
        elif op == OP_VROR:
            for t in range(t0, t1):
                k = regs[t, z] & 127
                for j in range(128):        # through a scratch vector: Vd may be Vu
                    rot[j] = v8[t, y, j]
                for j in range(128):
                    v8[t, x, j] = rot[(j + k) & 127]
        elif op == OP_VADDW:
            for t in range(t0, t1):
                for j in range(32):
                    v32[t, x, j] = v32[t, y, j] + v32[t, z, j]
        elif op == OP_VSUBW:
            for t in range(t0, t1):
                for j in range(32):
                    v32[t, x, j] = v32[t, y, j] - v32[t, z, j]
        elif op == OP_VASLW:
            for t in range(t0, t1):
                k = np.int32(regs[t, z] & 31)
                for j in range(32):
                    v32[t, x, j] = v32[t, y, j] << k
        elif op == OP_VD0:
            for t in range(t0, t1):
                for j in range(128):
                    v8[t, x, j] = 0
        elif op == OP_VASSIGN:
            for t in range(t0, t1):
                vcopy(v8, t * 4096 + x * 128, v8, t * 4096 + y * 128)
        elif op == OP_LOOP:
            stack_pc[sp] = pc
            stack_n[sp] = x
            sp += 1
        elif op == OP_END:
            stack_n[sp - 1] -= 1
            if stack_n[sp - 1] > 0:
                pc = stack_pc[sp - 1]
            else:
                sp -= 1
    for t in range(t0, t1):
        ah[t] = h if not (odd >> (t - t0)) & 1 else h ^ 0x5BD1E995
    return 0


_BATCH = 8   # tiles executed in lockstep per decode (8 x 4 KiB register files fit a 48 KiB L1; 3-6% faster
#              than 4 on the GEMM benchmark region, alternated in one process; 6 and 16 slower)


@njit(cache=True, boundscheck=False, error_model="numpy", nogil=True)
def _run_range(code, v8, v32, regs, mem, sh_off, sh_data, sh_group, s2_off, s2_data, s2_group, ah, t0, t1):
    """Run ``code`` on tiles [t0, t1) in lockstep batches; 0, or 1 on a memory fault."""
    for t in range(t0, t1, _BATCH):
        if _run_batch(code, v8, v32, regs, mem, sh_off, sh_data, sh_group, s2_off, s2_data, s2_group, ah, t,
                      min(t + _BATCH, t1)):
            return 1
    return 0


@lru_cache(maxsize=1)
def _workers() -> int:
    return max(1, min(os.cpu_count() or 1, numba.config.NUMBA_NUM_THREADS))


_POOL: tuple[int, ThreadPoolExecutor] | None = None


def _pool() -> ThreadPoolExecutor:
    """One thread pool per process (a child forked by a costing worker builds its own: threads
    do not survive fork); starting a pool per region cost more than short regions run."""
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():
        _POOL = (os.getpid(), ThreadPoolExecutor(_workers(), thread_name_prefix="hvx"))
    return _POOL[1]


_NO_SHARE = (-1, np.zeros((1, 0), np.uint8), np.zeros(1, np.int64))


def run_region(code: np.ndarray, v8: np.ndarray, regs: np.ndarray, mem: np.ndarray, shares) -> str:
    """Run an encoded region on every tile; ``shares`` lists up to two shared ranges, each
    (offset, data [G, n], group [T]) (HvxState.shares).  Returns "" or the reason for a fault
    ("range": an access outside tile memory or a store into a shared range; "uniform": tiles
    accessed different addresses).  Regions with loops over many tiles are split into chunks
    handed out to CPU threads on demand (numba releases the GIL), which balances the threads on
    a machine that other work shares; short regions run on the calling thread."""
    if len(shares) > 2:
        raise ValueError("a compiled region takes at most two shared ranges")
    tiles = v8.shape[0]
    (o1, d1, g1), (o2, d2, g2) = (list(shares) + [_NO_SHARE, _NO_SHARE])[:2]
    if o2 < 0:
        g2 = np.zeros(tiles, np.int64)
    if o1 < 0:
        g1 = np.zeros(tiles, np.int64)
    v32 = v8.view(np.int32)
    ah = np.zeros(tiles, np.int64)
    nw = _workers()
    args = (code, v8, v32, regs, mem, o1, d1, g1, o2, d2, g2, ah)
    if nw == 1 or tiles < 8 or not (code[:, 0] == OP_LOOP).any():
        fault = _run_range(*args, 0, tiles)
    else:
        step = max(1, -(-tiles // (8 * nw)))
        pool = _pool()
        futs = [pool.submit(_run_range, *args, t, min(t + step, tiles)) for t in range(0, tiles, step)]
        fault = any([f.result() for f in futs])
    if fault:
        return "range"
    return "" if (ah == ah[0]).all() else "uniform"
