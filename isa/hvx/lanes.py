"""Lane views and saturation helpers for 128-byte HVX vectors with a leading tile axis.

A vector value is a uint8 array shaped [tiles, 128]; a register pair is [tiles, 2, 128] with
index 0 the low (even-numbered) register, as in QEMU's ``VddV.v[0]``.  Lanes are little-endian,
so ``x.view(np.int32)`` gives the ``.w`` lanes of QEMU's mmvector_t.
"""
from __future__ import annotations

import numpy as np

VBYTES = 128


def ub(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint8)


def b(x: np.ndarray) -> np.ndarray:
    return x.view(np.int8)


def uh(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint16)


def h(x: np.ndarray) -> np.ndarray:
    return x.view(np.int16)


def uw(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint32)


def w(x: np.ndarray) -> np.ndarray:
    return x.view(np.int32)


def to_bytes(a: np.ndarray) -> np.ndarray:
    """Typed lanes -> contiguous uint8 vector bytes (wrapping to the lane width)."""
    return np.ascontiguousarray(a).view(np.uint8)


def wrap(a: np.ndarray, dtype) -> np.ndarray:
    """Truncate a wide integer array to ``dtype`` lanes (two's complement wrap) as bytes."""
    return to_bytes(a.astype(dtype))


def sat(a: np.ndarray, dtype) -> np.ndarray:
    """Saturate a wide integer array into ``dtype`` lanes and return the bytes."""
    info = np.iinfo(dtype)
    return to_bytes(np.clip(a, info.min, info.max).astype(dtype))


def i64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int64)


def rt_u32(rt: np.ndarray) -> np.ndarray:
    """Scalar register column [tiles] (int64 holding a 32-bit value) -> uint32."""
    return (np.asarray(rt, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)


def rt_bytes(rt: np.ndarray, signed: bool) -> np.ndarray:
    """Scalar register -> its 4 bytes, [tiles, 4] (byte 0 is the least significant)."""
    by = rt_u32(rt).view(np.uint8).reshape(-1, 4)
    return by.view(np.int8) if signed else by


def rt_halves(rt: np.ndarray, signed: bool) -> np.ndarray:
    """Scalar register -> its 2 halfwords, [tiles, 2]."""
    hv = rt_u32(rt).view(np.uint16).reshape(-1, 2)
    return hv.view(np.int16) if signed else hv


def clz(a: np.ndarray, bits: int) -> np.ndarray:
    """Count leading zeros of unsigned ``bits``-wide lanes (``bits`` for zero), exactly."""
    a = a.astype(np.uint64) & np.uint64((1 << bits) - 1)
    _, e = np.frexp(a.astype(np.float64))  # a = m * 2**e with 0.5 <= m < 1, so bit length = e
    return (bits - e).astype(np.int64)


def sxtn(a: np.ndarray, bits: int) -> np.ndarray:
    """Sign-extend the low ``bits`` bits of an integer array (QEMU fSXTN)."""
    a = a.astype(np.int64) & ((1 << bits) - 1)
    return np.where(a >= (1 << (bits - 1)), a - (1 << bits), a)


def bidir_shift_right(x: np.ndarray, sh: np.ndarray, width: int, signed: bool) -> np.ndarray:
    """QEMU fBIDIR_(A|L)SHIFTR: shift right by sh, or left by -sh when sh < 0; wraps to width."""
    x = x.astype(np.int64)
    if not signed:
        x = x & ((1 << width) - 1)
    left = np.left_shift(x, np.clip(-sh, 0, 63))
    right = np.right_shift(x, np.clip(sh, 0, 63))
    return np.where(sh < 0, left, right)


def bidir_shift_left(x: np.ndarray, sh: np.ndarray, width: int, signed: bool) -> np.ndarray:
    """QEMU fBIDIR_ASHIFTL: shift left by sh, or right by -sh when sh < 0."""
    return bidir_shift_right(x, -sh, width, signed)
