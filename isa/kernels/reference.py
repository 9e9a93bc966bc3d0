"""Plain-numpy references of the INT8 training kernels (int32 accumulation, NITI rescaling)."""
from __future__ import annotations

import numpy as np


def gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C[m, n] = sum_k A[m, k] * B[k, n]; int8 in, int32 out."""
    return a.astype(np.int64) @ b.astype(np.int64)


def conv2d(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """x [B, Cin, H, W] int8, w [Cout, Cin, KH, KW] int8 -> y [B, Cout, OH, OW] int32 (cross-correlation)."""
    bsz, cin, hh, ww = x.shape
    cout, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (hh + 2 * pad - kh) // stride + 1
    ow = (ww + 2 * pad - kw) // stride + 1
    y = np.zeros((bsz, cout, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            y += np.einsum("bchw,oc->bohw", patch, w[:, :, i, j].astype(np.int64))
    return y


def dwconv2d(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """Depthwise: x [B, C, H, W], w [C, KH, KW] -> [B, C, OH, OW] int32."""
    bsz, c, hh, ww = x.shape
    _, kh, kw = w.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (hh + 2 * pad - kh) // stride + 1
    ow = (ww + 2 * pad - kw) // stride + 1
    y = np.zeros((bsz, c, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            y += xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride] * w[None, :, i, j, None, None].astype(np.int64)
    return y


def conv2d_wgrad(x: np.ndarray, dy: np.ndarray, kh: int, kw: int, stride: int, pad: int) -> np.ndarray:
    """dW[co, ci, i, j] = sum_{b, oh, ow} dY[b, co, oh, ow] * Xpad[b, ci, oh*s+i, ow*s+j]."""
    bsz, cin, hh, ww = x.shape
    _, cout, oh, ow = dy.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dw = np.zeros((cout, cin, kh, kw), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            dw[:, :, i, j] = np.einsum("bchw,bohw->oc", patch, dy.astype(np.int64))
    return dw


def conv2d_dgrad(dy: np.ndarray, w: np.ndarray, in_hw: tuple, stride: int, pad: int) -> np.ndarray:
    """dX of conv2d (the transposed convolution): dy [B, Cout, OH, OW], w [Cout, Cin, KH, KW]."""
    bsz, cout, oh, ow = dy.shape
    _, cin, kh, kw = w.shape
    hh, ww = in_hw
    dxp = np.zeros((bsz, cin, hh + 2 * pad + stride, ww + 2 * pad + stride), np.int64)
    for i in range(kh):
        for j in range(kw):
            contrib = np.einsum("bohw,oc->bchw", dy.astype(np.int64), w[:, :, i, j].astype(np.int64))
            dxp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride] += contrib
    return dxp[:, :, pad:pad + hh, pad:pad + ww]


def niti_shift(x: np.ndarray) -> int:
    """NITI dynamic scale: bit width of max|x| (|x| saturated to int32) minus 7, at least 0."""
    m = int(min(np.abs(x.astype(np.int64)).max(initial=0), 2 ** 31 - 1))
    return max(0, m.bit_length() - 7)


def requant(x: np.ndarray, shift: int) -> np.ndarray:
    """int32 -> int8: round half up (add 2**(shift-1), saturating) then arithmetic shift, saturate."""
    x = x.astype(np.int64)
    rnd = (1 << shift) >> 1
    y = np.clip(x + rnd, -2 ** 31, 2 ** 31 - 1) >> shift
    return np.clip(y, -128, 127).astype(np.int8)


def requant_dynamic(x: np.ndarray):
    s = niti_shift(x)
    return requant(x, s), s


def maxpool(x: np.ndarray, k: int, stride: int) -> np.ndarray:
    bsz, c, hh, ww = x.shape
    oh = (hh - k) // stride + 1
    ow = (ww - k) // stride + 1
    y = np.full((bsz, c, oh, ow), -128, np.int16)
    for i in range(k):
        for j in range(k):
            y = np.maximum(y, x[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride])
    return y.astype(np.int8)


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0).astype(np.int8)


def reducemax(x: np.ndarray) -> int:
    return int(x.max())
