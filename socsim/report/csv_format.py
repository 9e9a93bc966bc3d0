"""timeseries.csv rows as Python's ``"%.12g"`` text, compiled (:func:`format_rows`).

An hour of samples is millions of values, so rows are formatted by a numba kernel that gives the
same text as ``"%.12g" % x``: the 12 significant digits are round(|x| * 10**(11 - e)) computed with
one correctly rounded multiply or divide by an exact power of ten (|11 - e| <= 22), which is off
the exact product by at most half an ulp (6.1e-5 below 1e12 < 2**40); a value whose product lies
within 1e-4 of a rounding tie, and nan, inf and magnitudes outside 1e-11..1e33, go to Python's
formatter instead (its row is formatted there).  :func:`format_rows_py` is the plain reference;
tests check one against the other.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

_POW10 = np.array([10.0 ** k for k in range(23)])
_ROW_FMT_CACHE: dict[int, str] = {}


def format_rows_py(block: np.ndarray) -> bytes:
    """Rows of ``block`` as "%.12g" CSV text (the reference of :func:`format_rows`)."""
    fmt = _ROW_FMT_CACHE.get(block.shape[1])
    if fmt is None:
        fmt = _ROW_FMT_CACHE[block.shape[1]] = ",".join(["%.12g"] * block.shape[1]) + "\n"
    return "".join(fmt % tuple(row) for row in block.tolist()).encode()


@nb.njit(cache=True, nogil=True, inline="always")
def _digits12(a: float, e: int) -> tuple[int, int]:
    """(round(a * 10**(11-e)), e) for a > 0 and e = floor(log10(a)) or one less, fixed up here;
    (-1, 0) when the rounding is not certain or out of the exact range."""
    for _ in range(3):
        k = 11 - e
        if k > 22 or k < -22:
            return -1, 0
        y = a * _POW10[k] if k >= 0 else a / _POW10[-k]
        if y < 1e11:
            e -= 1
        elif y >= 1e12:
            e += 1
        else:
            fl = math.floor(y)
            frac = y - fl
            if abs(frac - 0.5) < 1e-4:
                return -1, 0
            m = np.int64(fl) + (1 if frac > 0.5 else 0)
            if m >= 1_000_000_000_000:
                m, e = np.int64(100_000_000_000), e + 1
            return m, e
    return -1, 0


@nb.njit(cache=True, nogil=True, inline="always")
def _put_g12(x: float, out: np.ndarray, pos: int) -> int:
    """Write ``"%.12g" % x`` at ``out[pos:]``; the position after it, or -1 for Python."""
    if x != x or x == math.inf or x == -math.inf:
        return -1
    if x == 0.0:
        if math.copysign(1.0, x) < 0:
            out[pos] = 45
            pos += 1
        out[pos] = 48
        return pos + 1
    a = abs(x)
    # a = f * 2**b with f in [0.5, 1): log10(a) in [(b - 1) log10(2), b log10(2))
    m, e = _digits12(a, int(math.floor((math.frexp(a)[1] - 1) * 0.30102999566398120)))
    if m < 0:
        return -1
    if x < 0:
        out[pos] = 45
        pos += 1
    nd = 12
    while m % 10 == 0:
        m //= 10
        nd -= 1
    if -4 <= e < 12:
        if e >= 0:
            if nd <= e + 1:                       # an integer: digits then zeros
                for i in range(nd, e + 1):
                    out[pos + i] = 48
                for i in range(nd - 1, -1, -1):
                    out[pos + i] = 48 + m % 10
                    m //= 10
                return pos + e + 1
            for i in range(nd - 1, -1, -1):       # digits with the point after digit e
                out[pos + i + (1 if i > e else 0)] = 48 + m % 10
                m //= 10
            out[pos + e + 1] = 46
            return pos + nd + 1
        out[pos] = 48                             # 0.000ddd
        out[pos + 1] = 46
        z = -e - 1
        for i in range(z):
            out[pos + 2 + i] = 48
        p = pos + 2 + z
        for i in range(nd - 1, -1, -1):
            out[p + i] = 48 + m % 10
            m //= 10
        return p + nd
    for i in range(nd - 1, -1, -1):               # d.ddde+XX
        out[pos + i + (1 if i > 0 else 0)] = 48 + m % 10
        m //= 10
    if nd > 1:
        out[pos + 1] = 46
        pos += nd + 1
    else:
        pos += 1
    out[pos] = 101
    out[pos + 1] = 45 if e < 0 else 43
    ae = abs(e)
    out[pos + 2] = 48 + ae // 10
    out[pos + 3] = 48 + ae % 10
    return pos + 4


@nb.njit(cache=True, nogil=True)
def _format_rows_kernel(block: np.ndarray, out: np.ndarray, row0: int) -> tuple[int, int]:
    """Format rows row0.. of ``block`` into ``out``; stops before a row that needs Python.
    Returns (first row not written, bytes written)."""
    pos = 0
    for r in range(row0, block.shape[0]):
        start = pos
        for c in range(block.shape[1]):
            if c:
                out[pos] = 44
                pos += 1
            pos = _put_g12(block[r, c], out, pos)
            if pos < 0:
                return r, start
        out[pos] = 10
        pos += 1
    return block.shape[0], pos


def format_rows(block: np.ndarray) -> bytes:
    """Rows of a 2-d float block as "%.12g" CSV text, the same bytes as :func:`format_rows_py`."""
    block = np.ascontiguousarray(block, dtype=np.float64)
    n, m = block.shape
    if n == 0:
        return b""
    out = np.empty(n * (m * 20 + 1), dtype=np.uint8)   # "-1.23456789012e+33" is 18 bytes
    parts, row = [], 0
    while row < n:
        row, length = _format_rows_kernel(block, out, row)
        parts.append(out[:length].tobytes())
        if row < n:
            parts.append(format_rows_py(block[row:row + 1]))
            row += 1
    return b"".join(parts)
