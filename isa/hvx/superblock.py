"""Compiled execution of hot loops (the emulator's "translation blocks").

A hardware loop whose body uses only the instructions below is executed by one numba call that
walks tiles in the outer loop and runs every iteration of the body for a tile while its
registers are in cache, instead of one numpy call per instruction over all tiles.  Each tile is
independent and instructions inside a packet never depend on each other (isa.hvx.program), so
per-tile sequential execution gives the same state as the per-instruction path; tests check the
two paths against each other.  Timing is unaffected (isa.hvx.timing is static).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .fast import _vrmpybus_acc_row

OP_VRMPYBUS_ACC, OP_VLOAD_PI, OP_SLOAD_PI, OP_ADDI, OP_NOP = 0, 1, 2, 3, 4
SUPPORTED = frozenset({"vrmpybus_acc", "vL32b_pi", "L2_loadri_pi", "A2_addi", "J2_loop0i"})


def encode(instrs) -> np.ndarray:
    """Instruction list -> int64 code rows (op, a, b, c)."""
    rows = []
    for ins in instrs:
        a = ins.args
        if ins.op == "vrmpybus_acc":
            rows.append((OP_VRMPYBUS_ACC, a[0].n, a[1].n, a[2].n))
        elif ins.op == "vL32b_pi":
            rows.append((OP_VLOAD_PI, a[0].n, a[1].n, a[2] * 128))
        elif ins.op == "L2_loadri_pi":
            rows.append((OP_SLOAD_PI, a[0].n, a[1].n, a[2]))
        elif ins.op == "A2_addi":
            rows.append((OP_ADDI, a[0].n, a[1].n, a[2]))
        else:
            rows.append((OP_NOP, 0, 0, 0))
    return np.array(rows, np.int64).reshape(-1, 4)


@njit(cache=True, boundscheck=False, error_model="numpy", parallel=True)
def run_loop(code, count, v8, v32, regs, mem):
    """Run ``count`` iterations of ``code`` on every tile; returns 0, or 1 on a memory fault.
    Tiles are independent, so they are spread over CPU threads (prange)."""
    nbytes = mem.shape[1]
    fault = np.zeros(v8.shape[0], np.int64)
    for t in prange(v8.shape[0]):
        fault[t] = _run_tile(code, count, v8, v32, regs, mem, nbytes, t)
    return 1 if fault.any() else 0


@njit(cache=True, boundscheck=False, error_model="numpy")
def _run_tile(code, count, v8, v32, regs, mem, nbytes, t):
    a16 = np.empty(128, np.int16)
    b16 = np.empty(128, np.int16)
    prod = np.empty(64, np.int32)
    if True:
        for _ in range(count):
            for p in range(code.shape[0]):
                op = code[p, 0]
                x = code[p, 1]
                y = code[p, 2]
                z = code[p, 3]
                if op == 0:
                    _vrmpybus_acc_row(v8, v32, t, x, y, regs[t, z], a16, b16, prod)
                elif op == 1:
                    a = regs[t, y] & ~127
                    if a < 0 or a + 128 > nbytes:
                        return 1
                    for j in range(128):
                        v8[t, x, j] = mem[t, a + j]
                    regs[t, y] += z
                elif op == 2:
                    a = regs[t, y] & ~3
                    if a < 0 or a + 4 > nbytes:
                        return 1
                    w = np.int64(mem[t, a]) | (np.int64(mem[t, a + 1]) << 8) | (np.int64(mem[t, a + 2]) << 16) \
                        | (np.int64(mem[t, a + 3]) << 24)
                    regs[t, x] = w - (np.int64(1) << 32) if w >= (np.int64(1) << 31) else w
                    regs[t, y] += z
                elif op == 3:
                    v = (regs[t, y] + z) & 0xFFFFFFFF
                    regs[t, x] = v - (np.int64(1) << 32) if v >= (np.int64(1) << 31) else v
    return 0
