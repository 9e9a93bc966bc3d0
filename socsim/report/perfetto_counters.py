"""Counter packets of timeseries.csv, encoded a chunk at a time (the hot path of the trace).

Counter packets are the bulk of a trace (an hour: millions).  :func:`_counters_kernel` (numba)
reads timeseries.csv in chunks and writes the same bytes as :func:`_counter_row_py`, the plain
reference it falls back to (:func:`_counter_row_fallback`) for a row it cannot take exactly (a
value with more than 15 significant digits or a power of ten beyond 1e22, nan, inf: there
Python's float() parses).  Values of up to 15 digits parse exactly as one multiply or divide by
an exact power of ten (Clinger's fast path), so both give the same doubles.  The driver is
:func:`socsim.report.perfetto._write_counters`.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from socsim.report.perfetto_encode import _counter_start, _pack_double, _put_varint

_POW10 = np.array([10.0 ** k for k in range(23)])


@nb.njit(cache=True, nogil=True, inline="always")
def _parse_float(buf: np.ndarray, s: int, e: int) -> tuple[float, bool]:
    """float(buf[s:e]) for a plain decimal of at most 15 significant digits; (0, False) else."""
    i, neg = s, False
    if i < e and (buf[i] == 45 or buf[i] == 43):
        neg = buf[i] == 45
        i += 1
    m, nd, exp10, seen = np.int64(0), 0, 0, False
    while i < e and 48 <= buf[i] <= 57:
        seen = True
        if m or buf[i] != 48:
            m = m * 10 + (buf[i] - 48)
            nd += 1
            if nd > 15:
                return 0.0, False
        i += 1
    if i < e and buf[i] == 46:
        i += 1
        while i < e and 48 <= buf[i] <= 57:
            seen = True
            if m or buf[i] != 48:
                m = m * 10 + (buf[i] - 48)
                nd += 1
                if nd > 15:
                    return 0.0, False
            exp10 -= 1
            i += 1
    if not seen:
        return 0.0, False
    if i < e and (buf[i] == 101 or buf[i] == 69):
        i += 1
        eneg = False
        if i < e and (buf[i] == 45 or buf[i] == 43):
            eneg = buf[i] == 45
            i += 1
        if i >= e:
            return 0.0, False
        ex = 0
        while i < e and 48 <= buf[i] <= 57:
            if ex < 10000:
                ex = ex * 10 + (buf[i] - 48)
            i += 1
        exp10 += -ex if eneg else ex
    if i != e:
        return 0.0, False
    if m == 0:
        return (-0.0 if neg else 0.0), True
    if exp10 > 22 or exp10 < -22:
        return 0.0, False
    v = m * _POW10[exp10] if exp10 >= 0 else m / _POW10[-exp10]
    return (-v if neg else v), True


@nb.njit(cache=True, nogil=True)
def _counters_kernel(buf: np.ndarray, n: int, pos: int, ncols: int, heads: np.ndarray,
                     consts: np.ndarray, out: np.ndarray, fs: np.ndarray, fe: np.ndarray,
                     state: np.ndarray, eq: np.ndarray, lastv: np.ndarray,
                     keep: np.ndarray) -> tuple[int, int, int]:
    """Counter packets of the complete rows of ``buf[pos:n]``.

    ``fs``/``fe`` row 0 hold the field bounds of the previous row (``state[0]`` rows seen so
    far), row 1 the current row's.  ``consts`` = [key of Trace.packet, key of timestamp,
    sequence-id field (2 bytes), length of a counter packet after its timestamp].  Per column,
    ``eq`` says whether the last row repeats the one before and ``lastv`` is its value;
    ``state[1]`` is the last row's timestamp (ns); only columns with ``keep`` set are written
    (the others go out in Android's forms, :mod:`socsim.report.perfetto_android`).  Returns (position of the next row, bytes
    written, status): status 0 needs more input, 1 needs the output flushed, 2 needs Python for
    the row at the position."""
    o = 0
    f8 = np.empty(1, np.float64)
    b8 = f8.view(np.uint8)
    start = np.empty(32, np.uint8)
    hl = heads.shape[1]
    vals = np.empty(ncols, np.float64)
    while True:
        # split the row at pos into fields
        j, c = pos, 0
        fs[1, 0] = pos
        while j < n and buf[j] != 10:
            if buf[j] == 44:
                c += 1
                if c < ncols:
                    fe[1, c - 1] = j
                    fs[1, c] = j + 1
            j += 1
        if j >= n:
            return pos, o, 0
        if c + 1 != ncols:       # a malformed row: Python says what is wrong
            return pos, o, 2
        fe[1, c] = j - 1 if j > fs[1, c] and buf[j - 1] == 13 else j
        if o + ncols * (len(start) + hl + 8) > out.shape[0]:
            return pos, o, 1
        have_prev = state[0] > 0
        t_s, ok = _parse_float(buf, fs[1, 0], fe[1, 0])
        if not ok:
            return pos, o, 2
        for i in range(1, ncols):
            same = have_prev and fe[1, i] - fs[1, i] == fe[0, i] - fs[0, i]
            if same:
                a, b = fs[1, i], fs[0, i]
                for k in range(fe[1, i] - fs[1, i]):
                    if buf[a + k] != buf[b + k]:
                        same = False
                        break
            eq[i - 1] = same
            if not same:
                vals[i], ok = _parse_float(buf, fs[1, i], fe[1, i])
                if not ok:
                    return pos, o, 2
        t_ns = np.int64(np.rint(t_s * 1e9))   # Python's round(): half to even
        # packet start: Trace.packet key, length (one byte: < 128), timestamp, sequence id
        p = _put_varint(start, 3, t_ns)
        start[0] = consts[0]
        start[1] = p - 2 + 2 + consts[4]
        start[2] = consts[1]
        start[p] = consts[2]
        start[p + 1] = consts[3]
        sl = p + 2
        for i in range(1, ncols):
            if not eq[i - 1]:
                lastv[i - 1] = vals[i]
                if not keep[i - 1]:
                    continue
                for k in range(sl):
                    out[o + k] = start[k]
                o += sl
                for k in range(hl):
                    out[o + k] = heads[i - 1, k]
                o += hl
                f8[0] = vals[i]
                for k in range(8):
                    out[o + k] = b8[k]
                o += 8
        state[0] += 1
        state[1] = t_ns
        fs[0, :] = fs[1, :]
        fe[0, :] = fe[1, :]
        pos = j + 1


def _counter_row_py(fields: list[str], prev: list[str] | None, heads: list[bytes],
                    keep: np.ndarray | None = None) -> bytes:
    """Counter packets of one row given the row before (reference of the kernel)."""
    start = _counter_start(round(float(fields[0]) * 1e9))
    return b"".join(start + heads[i] + _pack_double(float(v)) for i, v in enumerate(fields[1:])
                    if (prev is None or v != prev[i + 1]) and (keep is None or keep[i]))


def _counter_row_fallback(data: bytes, pos: int, ncols: int, heads: list[bytes], write,
                          fs: np.ndarray, fe: np.ndarray, state: np.ndarray, eq: np.ndarray,
                          lastv: np.ndarray, keep: np.ndarray) -> int:
    """Encode the row at ``data[pos:]`` in Python and update the kernel's state; returns the
    position of the next row."""
    end = data.index(b"\n", pos)
    line = data[pos:end]
    line = line[:-1] if line.endswith(b"\r") else line
    row = line.decode().split(",")
    if len(row) != ncols:
        raise ValueError(f"a row has {len(row)} fields, the header {ncols}")
    prev = data[fs[0, 0]:fe[0, ncols - 1]].decode().split(",") if state[0] else None
    write(_counter_row_py(row, prev, heads, keep))
    for i, v in enumerate(row[1:]):
        eq[i] = prev is not None and v == prev[i + 1]
        if not eq[i]:
            lastv[i] = float(v)
    state[0] += 1
    state[1] = round(float(row[0]) * 1e9)
    starts = [pos] + [pos + k + 1 for k, ch in enumerate(line) if ch == 44]
    fs[0, :] = starts
    fe[0, :] = [b - 1 for b in starts[1:]] + [pos + len(line)]
    return end + 1
