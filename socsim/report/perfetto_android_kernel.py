"""The Android packets of timeseries.csv, a block of rows at a time (compiled).

:class:`socsim.report.perfetto_android.AndroidCounters` turns rows into packets one at a time in
Python (:meth:`~socsim.report.perfetto_android.AndroidCounters.row`, the reference); an hour is
~40,000 rows and that took seconds.  Here a block of rows is read by :func:`_parse_rows` (numba,
the counter kernel's exact float parser; a value it cannot take exactly is parsed by Python's
``float()``), rounded and compared with numpy (change points of every column at once), and
encoded by :func:`_encode_rows` (numba).  :func:`encode_block` returns ``None`` for a block the
reference must take (a value that is not finite or does not fit int64 after rounding, a
capacity beyond float32: there the reference raises or writes Python's big-int varints), so
the bytes are always the reference's; tests compare the two.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from socsim.report.perfetto_counters import _parse_float

_I64_LIMIT = 2.0 ** 63


@nb.njit(cache=True, nogil=True)
def _parse_rows(buf: np.ndarray, n: int, pos: int, ncols: int, slot: np.ndarray, vals: np.ndarray,
                bounds: np.ndarray, bad: np.ndarray) -> tuple[int, int]:
    """The values of the columns with ``slot[c] >= 0`` (into ``vals[r, slot[c]]``) of the
    complete rows of ``buf[pos:n]``, at most ``len(vals)`` rows.  ``bounds[r]`` is a row's
    [start, end) without its line end; ``bad[r]`` marks a row Python must parse (a value
    :func:`_parse_float` cannot take exactly, or not ``ncols`` fields).  Returns (position of
    the next row, rows read)."""
    r = 0
    while r < vals.shape[0]:
        j = pos
        while j < n and buf[j] != 10:
            j += 1
        if j >= n:
            break
        e = j - 1 if j > pos and buf[j - 1] == 13 else j
        bounds[r, 0] = pos
        bounds[r, 1] = e
        bad[r] = False
        c, s, k = 0, pos, pos
        while True:
            if k == e or buf[k] == 44:
                if c < ncols and slot[c] >= 0:
                    v, ok = _parse_float(buf, s, k)
                    if ok:
                        vals[r, slot[c]] = v
                    else:
                        bad[r] = True
                c += 1
                if k == e:
                    break
                s = k + 1
            k += 1
        if c != ncols:
            bad[r] = True
        r += 1
        pos = j + 1
    return pos, r


@nb.njit(cache=True, nogil=True, inline="always")
def _vlen(n: int) -> int:
    """Bytes of the varint of ``n`` (a negative int64 as its 64-bit two's complement: 10)."""
    if n < 0:
        return 10
    k = 1
    while n > 0x7F:
        n >>= 7
        k += 1
    return k


@nb.njit(cache=True, nogil=True, inline="always")
def _put(out: np.ndarray, o: int, n: int) -> int:
    if n < 0:
        for k in range(9):
            out[o + k] = ((n >> (7 * k)) & 0x7F) | 0x80
        out[o + 9] = 1
        return o + 10
    while n > 0x7F:
        out[o] = (n & 0x7F) | 0x80
        n >>= 7
        o += 1
    out[o] = n
    return o + 1


@nb.njit(cache=True, nogil=True, inline="always")
def _packet_head(out: np.ndarray, o: int, t: int, key0: int, key1: int, payload: int) -> int:
    """The start of a framed TracePacket at ``t`` on socsim's sequence whose field (key bytes
    ``key0``, ``key1``; ``key1`` < 0: one byte) holds ``payload`` bytes."""
    nkey = 1 if key1 < 0 else 2
    body = 1 + _vlen(t) + 2 + nkey + _vlen(payload) + payload
    out[o] = 0x0A                     # Trace.packet
    o = _put(out, o + 1, body)
    out[o] = 0x40                     # timestamp
    o = _put(out, o + 1, t)
    out[o] = 0x50                     # trusted_packet_sequence_id 1
    out[o + 1] = 0x01
    out[o + 2] = key0
    o += 3
    if key1 >= 0:
        out[o] = key1
        o += 1
    return _put(out, o, payload)


@nb.njit(cache=True, nogil=True)
def _encode_rows(t_ns: np.ndarray, khz: np.ndarray, fchg: np.ndarray, fcpu: np.ndarray,
                 fcpu_off: np.ndarray, milli: np.ndarray, zprev: np.ndarray, zchg: np.ndarray,
                 names: np.ndarray, name_off: np.ndarray, rails: np.ndarray, bat: np.ndarray,
                 bmask: np.ndarray, pct: np.ndarray, out: np.ndarray) -> int:
    """The packets of :meth:`AndroidCounters.row` for every row: an ftrace bundle (CPU 0) of
    the ``cpu_frequency`` events of changed clusters (``fchg``; one per CPU of
    ``fcpu[fcpu_off[j]:fcpu_off[j + 1]]``) and the ``thermal_temperature`` events of changed
    zones (``zchg``; name ``names[name_off[z]:name_off[z + 1]]``), the rails' EnergyData and
    the BatteryCounters (``bmask``: charge, capacity, current, voltage present; ``bat``
    columns charge uAh, current uA, voltage uV; ``pct`` the capacity's float32 bytes).
    Returns bytes written."""
    o = 0
    nf, nz, nr = khz.shape[1], milli.shape[1], rails.shape[1]
    any_bat = bmask[0] + bmask[1] + bmask[2] + bmask[3] > 0
    for r in range(len(t_ns)):
        t = t_ns[r]
        lt = _vlen(t)
        # ftrace bundle: cpu_frequency (field 11) and thermal_temperature (field 341) events
        events = 0
        for j in range(nf):
            if fchg[r, j]:
                for k in range(fcpu_off[j], fcpu_off[j + 1]):
                    p = 2 + _vlen(khz[r, j]) + _vlen(fcpu[k])
                    e = 1 + lt + 2 + 1 + _vlen(p) + p
                    events += 1 + _vlen(e) + e
        for z in range(nz):
            if zchg[r, z]:
                nl = name_off[z + 1] - name_off[z]
                p = 4 + _vlen(z) + _vlen(milli[r, z]) + _vlen(zprev[r, z]) + _vlen(nl) + nl
                e = 1 + lt + 2 + 2 + _vlen(p) + p
                events += 1 + _vlen(e) + e
        if events:
            o = _packet_head(out, o, t, 0x0A, -1, 2 + events)
            out[o] = 0x08                 # FtraceEventBundle.cpu 0
            out[o + 1] = 0
            o += 2
            for j in range(nf):
                if fchg[r, j]:
                    for k in range(fcpu_off[j], fcpu_off[j + 1]):
                        p = 2 + _vlen(khz[r, j]) + _vlen(fcpu[k])
                        e = 1 + lt + 2 + 1 + _vlen(p) + p
                        out[o] = 0x12     # FtraceEventBundle.event
                        o = _put(out, o + 1, e)
                        out[o] = 0x08     # timestamp
                        o = _put(out, o + 1, t)
                        out[o] = 0x10     # pid 0
                        out[o + 1] = 0
                        out[o + 2] = 0x5A  # cpu_frequency
                        o = _put(out, o + 3, p)
                        out[o] = 0x08
                        o = _put(out, o + 1, khz[r, j])
                        out[o] = 0x10
                        o = _put(out, o + 1, fcpu[k])
            for z in range(nz):
                if zchg[r, z]:
                    n0, n1 = name_off[z], name_off[z + 1]
                    nl = n1 - n0
                    p = 4 + _vlen(z) + _vlen(milli[r, z]) + _vlen(zprev[r, z]) + _vlen(nl) + nl
                    e = 1 + lt + 2 + 2 + _vlen(p) + p
                    out[o] = 0x12
                    o = _put(out, o + 1, e)
                    out[o] = 0x08
                    o = _put(out, o + 1, t)
                    out[o] = 0x10
                    out[o + 1] = 0
                    out[o + 2] = 0xAA     # thermal_temperature (341)
                    out[o + 3] = 0x15
                    o = _put(out, o + 4, p)
                    out[o] = 0x08
                    o = _put(out, o + 1, z)
                    out[o] = 0x10
                    o = _put(out, o + 1, milli[r, z])
                    out[o] = 0x18
                    o = _put(out, o + 1, zprev[r, z])
                    out[o] = 0x22
                    o = _put(out, o + 1, nl)
                    for k in range(n0, n1):
                        out[o] = names[k]
                        o += 1
        # PowerRails (field 40): EnergyData {index, timestamp_ms, energy} per rail
        if nr:
            ms = t // 1_000_000
            lms = _vlen(ms)
            payload = 0
            for k in range(nr):
                inner = 3 + _vlen(k) + lms + _vlen(rails[r, k])
                payload += 1 + _vlen(inner) + inner
            o = _packet_head(out, o, t, 0xC2, 0x02, payload)
            for k in range(nr):
                inner = 3 + _vlen(k) + lms + _vlen(rails[r, k])
                out[o] = 0x12
                o = _put(out, o + 1, inner)
                out[o] = 0x08
                o = _put(out, o + 1, k)
                out[o] = 0x10
                o = _put(out, o + 1, ms)
                out[o] = 0x18
                o = _put(out, o + 1, rails[r, k])
        # BatteryCounters (field 38)
        if any_bat:
            payload = 0
            if bmask[0]:
                payload += 1 + _vlen(bat[r, 0])
            if bmask[1]:
                payload += 5
            if bmask[2]:
                payload += 1 + _vlen(bat[r, 1])
            if bmask[3]:
                payload += 1 + _vlen(bat[r, 2])
            o = _packet_head(out, o, t, 0xB2, 0x02, payload)
            if bmask[0]:
                out[o] = 0x08
                o = _put(out, o + 1, bat[r, 0])
            if bmask[1]:
                out[o] = 0x15
                for k in range(4):
                    out[o + 1 + k] = pct[r, k]
                o += 5
            if bmask[2]:
                out[o] = 0x18
                o = _put(out, o + 1, bat[r, 1])
            if bmask[3]:
                out[o] = 0x38
                o = _put(out, o + 1, bat[r, 2])
    return o


def _rounded(x: np.ndarray) -> np.ndarray | None:
    """Python's round() of every value as int64 (half to even), or None when one is not finite
    or does not fit (the reference then raises, or writes a big int's varint)."""
    r = np.rint(x)
    if not np.all(np.abs(r) < _I64_LIMIT):     # also false for nan
        return None
    return r.astype(np.int64)


class BlockEncoder:
    """The compiled path of :class:`~socsim.report.perfetto_android.AndroidCounters`: the
    column layout of a header, and the change state carried from block to block (shared with
    the reference through ``last``, the same dict the reference keeps)."""

    def __init__(self, ncols: int, freq: list[tuple[int, tuple[int, ...]]], zones: list[tuple[int, str]],
                 rails: list[int], battery: list[tuple[int, int]]) -> None:
        self.ncols = ncols
        self.freq, self.zones, self.rails, self.battery = freq, zones, rails, battery
        cols = [0] + [c for c, _ in freq] + [c for c, _ in zones] + rails + [c for c, _ in battery]
        self.cols = cols
        self.slot = np.full(ncols, -1, np.int64)
        for k, c in enumerate(cols):
            self.slot[c] = k
        cpus = [cpu for _, cs in freq for cpu in cs]
        self.fcpu = np.array(cpus, np.int64)
        self.fcpu_off = np.cumsum([0] + [len(cs) for _, cs in freq]).astype(np.int64)
        encoded = [z.encode() for _, z in zones]
        self.names = np.frombuffer(b"".join(encoded) or b"\0", np.uint8)
        self.name_off = np.cumsum([0] + [len(z) for z in encoded]).astype(np.int64)
        self.bmask = np.zeros(4, np.int64)
        for _, s in battery:
            self.bmask[s] = 1
        self._bound = (192 + 40 * len(rails) + 64 * len(zones) + int(self.name_off[-1])
                       + 40 * len(cpus))

    def parse(self, buf: np.ndarray, data: bytes, pos: int, rows: int) -> tuple[int, np.ndarray]:
        """Up to ``rows`` complete rows of ``buf[pos:]`` (``data``'s bytes): (position of the
        next row, values by :attr:`cols`)."""
        vals = np.empty((rows, len(self.cols)), np.float64)
        bounds = np.empty((rows, 2), np.int64)
        bad = np.empty(rows, np.bool_)
        pos, n = _parse_rows(buf, len(buf), pos, self.ncols, self.slot, vals, bounds, bad)
        for r in np.flatnonzero(bad[:n]):
            fields = data[bounds[r, 0]:bounds[r, 1]].decode().split(",")
            if len(fields) != self.ncols:
                raise ValueError(f"a row has {len(fields)} fields, the header {self.ncols}")
            vals[r] = [float(fields[c]) for c in self.cols]
        return pos, vals[:n]

    def encode(self, vals: np.ndarray, last: dict[int, float]) -> bytes | None:
        """The packets of the rows ``vals`` (from :meth:`parse`), updating ``last`` as the
        reference does; None (``last`` untouched) when the reference must take them."""
        n = len(vals)
        if n == 0:
            return b""
        nf, nz, nr = len(self.freq), len(self.zones), len(self.rails)
        with np.errstate(all="ignore"):
            t_ns = _rounded(vals[:, 0] * 1e9)
            f = vals[:, 1:1 + nf]
            khz = _rounded(f * 1000)
            milli = _rounded(vals[:, 1 + nf:1 + nf + nz] * 1000)
            rails = _rounded(vals[:, 1 + nf + nz:1 + nf + nz + nr])
            b = np.zeros((n, 4), np.float64)
            for k, (_, s) in enumerate(self.battery):
                b[:, s] = vals[:, 1 + nf + nz + nr + k]
            b[:, 3] *= 1000                              # mV -> uV, as the reference
            bat = _rounded(b[:, [0, 2, 3]])
            pct32 = b[:, 1].astype(np.float32)
            if np.any(np.isinf(pct32) & np.isfinite(b[:, 1])):
                return None                              # struct.pack("<f") overflows
        if t_ns is None or khz is None or milli is None or rails is None or bat is None:
            return None
        # change points: a frequency when its float differs from the row before, a zone when
        # its milli-degrees do (the first row of the file: every one)
        prev_f = np.empty_like(f)
        prev_f[1:] = f[:-1]
        prev_f[0] = [last.get(c, np.nan) for c, _ in self.freq]
        fchg = ~(f == prev_f)
        zprev = np.empty_like(milli)
        zprev[1:] = milli[:-1]
        zchg = np.ones_like(milli, np.bool_)
        zchg[1:] = milli[1:] != milli[:-1]
        for z, (c, _) in enumerate(self.zones):
            p = last.get(c)
            zprev[0, z] = milli[0, z] if p is None else int(p)
            zchg[0, z] = p is None or int(p) != milli[0, z]
        out = np.empty(n * self._bound, np.uint8)
        size = _encode_rows(t_ns, khz, fchg, self.fcpu, self.fcpu_off, milli, zprev, zchg,
                            self.names, self.name_off, rails, bat, self.bmask,
                            pct32.view(np.uint8).reshape(n, 4), out)
        for j, (c, _) in enumerate(self.freq):
            last[c] = float(f[-1, j])
        for z, (c, _) in enumerate(self.zones):
            last[c] = int(milli[-1, z])
        return out[:size].tobytes()


# ------------------------------------------------------------------ sched_switch / cpu_idle

@nb.njit(cache=True, nogil=True)
def _sched_rows(cpu: np.ndarray, which: np.ndarray, t0: np.ndarray, t1: np.ndarray,
                table: np.ndarray, off: np.ndarray, out: np.ndarray) -> int:
    """The packets of :meth:`SchedWriter._run` for every run: CPU ``cpu[r]``'s ftrace bundle of
    four events, at t0, t0, t1, t1, whose bytes after their timestamp are
    ``table[off[w, k]:off[w, k + 1]]`` (``w = which[r]``, k = 0..3).  Returns bytes written."""
    o = 0
    for r in range(len(cpu)):
        a, b, w = t0[r], t1[r], which[r]
        la, lb = _vlen(a), _vlen(b)
        events = 0
        for k in range(4):
            inner = 1 + (la if k < 2 else lb) + off[w, k + 1] - off[w, k]
            events += 1 + _vlen(inner) + inner
        o = _packet_head(out, o, a, 0x0A, -1, 1 + _vlen(cpu[r]) + events)
        out[o] = 0x08                     # FtraceEventBundle.cpu
        o = _put(out, o + 1, cpu[r])
        for k in range(4):
            s, e = off[w, k], off[w, k + 1]
            inner = 1 + (la if k < 2 else lb) + e - s
            out[o] = 0x12                 # FtraceEventBundle.event
            o = _put(out, o + 1, inner)
            out[o] = 0x08                 # FtraceEvent.timestamp
            o = _put(out, o + 1, a if k < 2 else b)
            for i in range(s, e):
                out[o] = table[i]
                o += 1
    return o
