"""Numba kernels for the hottest HVX instructions, each beside its plain-numpy twin.

``vrmpybus_acc`` is the inner instruction of every INT8 GEMM/conv kernel, so it gets a compiled
path; the numpy twins (``*_ref``) define the semantics and tests/isa/test_fast.py checks that the
two agree bit for bit.  Small batches use the numpy twin (numba's call overhead would dominate).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .lanes import rt_bytes, rt_u32

_NUMBA_MIN_TILES = 1  # the compiled path also wins at one tile (no temporaries)


def vrmpybus_ref(u: np.ndarray, rt: np.ndarray) -> np.ndarray:
    """Vd.w[i] = sum_j Vu.ub[4i+j] * Rt.b[j] (plain numpy)."""
    x = u.view(np.uint8).reshape(-1, 32, 4).astype(np.int32)
    r = rt_bytes(rt, True).astype(np.int32)
    return np.ascontiguousarray((x * r[:, None, :]).sum(axis=2, dtype=np.int32)).view(np.uint8)


def vrmpybus_acc_ref(x: np.ndarray, u: np.ndarray, rt: np.ndarray) -> np.ndarray:
    """Vx.w[i] += sum_j Vu.ub[4i+j] * Rt.b[j], wrapping (plain numpy)."""
    acc = x.view(np.int32).astype(np.int64) + vrmpybus_ref(u, rt).view(np.int32)
    return np.ascontiguousarray(acc.astype(np.int32)).view(np.uint8)


@njit(cache=True, boundscheck=False, error_model="numpy")
def _vrmpybus_nb(acc, u32, rt, accumulate, out):
    # acc, out: [T, 32] uint32 words; u32: [T, 32] uint32 (4 unsigned bytes each); rt: [T] uint32
    tmp = np.empty(32, np.int32)
    for t in range(u32.shape[0]):
        r = rt[t]
        r0 = np.int32(np.int8(r & 0xFF))
        r1 = np.int32(np.int8((r >> 8) & 0xFF))
        r2 = np.int32(np.int8((r >> 16) & 0xFF))
        r3 = np.int32(np.int8((r >> 24) & 0xFF))
        for i in range(32):
            wd = np.int32(u32[t, i])
            tmp[i] = (wd & 0xFF) * r0 + ((wd >> 8) & 0xFF) * r1 + ((wd >> 16) & 0xFF) * r2 + ((wd >> 24) & 0xFF) * r3
        if accumulate:
            for i in range(32):
                out[t, i] = np.uint32(np.int32(acc[t, i]) + tmp[i])
        else:
            for i in range(32):
                out[t, i] = np.uint32(tmp[i])


def vrmpybus(u: np.ndarray, rt: np.ndarray) -> np.ndarray:
    if u.shape[0] < _NUMBA_MIN_TILES:
        return vrmpybus_ref(u, rt)
    out = np.empty((u.shape[0], 32), np.uint32)
    _vrmpybus_nb(out, u.view(np.uint32), rt_u32(rt), False, out)
    return out.view(np.uint8)


def vrmpybus_acc(x: np.ndarray, u: np.ndarray, rt: np.ndarray) -> np.ndarray:
    if u.shape[0] < _NUMBA_MIN_TILES:
        return vrmpybus_acc_ref(x, u, rt)
    out = np.empty((u.shape[0], 32), np.uint32)
    _vrmpybus_nb(x.view(np.uint32), u.view(np.uint32), rt_u32(rt), True, out)
    return out.view(np.uint8)


@njit(cache=True, boundscheck=False, error_model="numpy", inline="always")
def _vrmpybus_acc_row(v8, v32, t, d, s, r, a16, b16, prod):
    """Vd.w += vrmpy(Vs.ub, r.b) for tile t.  Products of ub x b fit in int16, and pairs of
    int16 products summed in int32 are exact, so LLVM can use pmaddwd-style instructions."""
    for k in range(128):
        b16[k] = np.int16(np.int8((r >> (8 * (k & 3))) & 0xFF))
        a16[k] = np.int16(v8[t, s, k])
    for j in range(64):
        prod[j] = np.int32(a16[2 * j]) * np.int32(b16[2 * j]) + np.int32(a16[2 * j + 1]) * np.int32(b16[2 * j + 1])
    for j in range(32):
        v32[t, d, j] = np.uint32(np.int32(v32[t, d, j]) + prod[2 * j] + prod[2 * j + 1])


@njit(cache=True, boundscheck=False, error_model="numpy")
def vrmpybus_acc_inplace(v8, v32, d, s, regs, t):
    """In-place Vd.w += vrmpy(Vs.ub, R[t].b) over all tiles on the register file ([T,32,128] bytes
    and its [T,32,32] uint32 view); the executor's path for vrmpybus_acc.  Numpy twin:
    ``vrmpybus_acc_ref``."""
    a16 = np.empty(128, np.int16)
    b16 = np.empty(128, np.int16)
    prod = np.empty(64, np.int32)
    for i in range(v8.shape[0]):
        _vrmpybus_acc_row(v8, v32, i, d, s, regs[i, t] & 0xFFFFFFFF, a16, b16, prod)
