"""Hand-encoded TracePacket bytes for the two hot paths of :mod:`socsim.report.perfetto`.

Op slices and counter samples are a million packets an hour, so they are encoded here by hand
rather than through the protobuf classes (several times faster).  The small Python functions are
the reference encoding of one packet (tests check them against the protobuf classes);
:func:`_slices_kernel` is the numba batch encoder of slice begin/end pairs, checked against
:func:`slice_begin_bytes` / :func:`slice_end_bytes` by the tests; :class:`_SliceBatch` feeds it.
"""
from __future__ import annotations

import struct
from typing import Protocol

import numba as nb
import numpy as np
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, TrackEvent



class RawSink(Protocol):
    """Where encoded packets wait to be written in order (the trace writer's packet stream)."""

    raw: list[bytes]

SEQUENCE_ID = 1            # trusted_packet_sequence_id of every packet
_BEGIN, _END = TrackEvent.TYPE_SLICE_BEGIN, TrackEvent.TYPE_SLICE_END
_INSTANT, _COUNTER = TrackEvent.TYPE_INSTANT, TrackEvent.TYPE_COUNTER
_NEEDS_STATE = TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
_pack_double = struct.Struct("<d").pack


def _varint(n: int) -> bytes:
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = [bytes((i,)) for i in range(0x80)]


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _sub(field: int, payload: bytes) -> bytes:
    return _key(field, 2) + _varint(len(payload)) + payload


def framed(packet: bytes) -> bytes:
    """A serialised TracePacket as an entry of Trace.packet (field 1)."""
    return _PACKET + _varint(len(packet)) + packet


# field numbers: Trace packet 1; TracePacket timestamp 8, trusted_packet_sequence_id 10,
# track_event 11, sequence_flags 13; TrackEvent debug_annotations 4, type 9, name_iid 10,
# track_uuid 11, double_counter_value 44; DebugAnnotation name_iid 1, int_value 4,
# string_value_iid 17
_PACKET, _TS, _EVENT = _key(1, 2), _key(8, 0), _key(11, 2)
_SEQ = _key(10, 0) + _varint(SEQUENCE_ID)
_FLAGS = _key(13, 0) + _varint(_NEEDS_STATE)
_TYPE_BEGIN, _TYPE_END = _key(9, 0) + _varint(_BEGIN), _key(9, 0) + _varint(_END)
_TYPE_COUNTER = _key(9, 0) + _varint(_COUNTER)


def _uuid_field(uuid: int) -> bytes:
    return _key(11, 0) + _varint(uuid)


def begin_event_tail(uuid: int, name_iid: int, annotations: bytes = b"") -> bytes:
    """The part of a TYPE_SLICE_BEGIN TrackEvent after its leading annotations (constant per
    track, name, phase and kind, so the slice writer caches it)."""
    return annotations + _TYPE_BEGIN + _key(10, 0) + _varint(name_iid) + _uuid_field(uuid)


def slice_begin_bytes(t_ns: int, event: bytes) -> bytes:
    """Framed TYPE_SLICE_BEGIN packet (interned name, so it needs incremental state)."""
    packet = _TS + _varint(t_ns) + _SEQ + _EVENT + _varint(len(event)) + event + _FLAGS
    return _PACKET + _varint(len(packet)) + packet


def end_event(uuid: int) -> bytes:
    """The encoded track_event field of a TYPE_SLICE_END on ``uuid``."""
    return _sub(11, _TYPE_END + _uuid_field(uuid))


def slice_end_bytes(t_ns: int, event: bytes) -> bytes:
    packet = _TS + _varint(t_ns) + _SEQ + event
    return _PACKET + _varint(len(packet)) + packet


def annotation_int(name_iid: int, value: int) -> bytes:
    # int64: negative values are sent as their 64-bit two's complement
    return _sub(4, _key(1, 0) + _varint(name_iid) + _key(4, 0) + _varint(value & (2**64 - 1)))


def annotation_str(name_iid: int, string_iid: int) -> bytes:
    return _sub(4, _key(1, 0) + _varint(name_iid) + _key(17, 0) + _varint(string_iid))


def counter_bytes(t_ns: int, uuid: int, value: float) -> bytes:
    """TYPE_COUNTER packet (the per-row fast path in :func:`_write_counters` splits this into a
    per-row start and a per-counter head)."""
    return _counter_start(t_ns) + _counter_head(uuid) + _pack_double(value)


def _counter_event(uuid: int) -> bytes:
    # the track_event field minus its trailing 8-byte double (its length prefix counts it)
    event = _TYPE_COUNTER + _uuid_field(uuid) + _key(44, 1)
    return _key(11, 2) + _varint(len(event) + 8) + event


_COUNTER_TAIL = len(_counter_event(1 << 62)) + 8   # the same for every uuid from track_uuid()


def _counter_head(uuid: int) -> bytes:
    head = _counter_event(uuid)
    if len(head) + 8 != _COUNTER_TAIL:
        raise ValueError(f"counter uuid {uuid} is not from track_uuid()")
    return head


def _counter_start(t_ns: int) -> bytes:
    body = _TS + _varint(t_ns) + _SEQ
    return _key(1, 2) + _varint(len(body) + _COUNTER_TAIL) + body


# ------------------------------------------------------------------ compiled slice packets

@nb.njit(cache=True, nogil=True, inline="always")
def _put_varint(out: np.ndarray, pos: int, n: int) -> int:
    while n > 0x7F:
        out[pos] = (n & 0x7F) | 0x80
        n >>= 7
        pos += 1
    out[pos] = n
    return pos + 1


@nb.njit(cache=True, nogil=True)
def _slices_kernel(t0: np.ndarray, t1: np.ndarray, ann: np.ndarray, tail: np.ndarray,
                   end: np.ndarray, table: np.ndarray, off: np.ndarray, consts: np.ndarray,
                   out: np.ndarray) -> int:
    """Begin/end packet pairs (the bytes of :func:`slice_begin_bytes` and
    :func:`slice_end_bytes`); ``ann``, ``tail``, ``end`` index byte strings of ``table``
    (``table[off[k]:off[k + 1]]``).  ``consts`` = [Trace.packet key, timestamp key, sequence id
    field (2 bytes), track_event key, sequence flags field (2 bytes)].  Returns bytes written."""
    o = 0
    for r in range(len(t0)):
        a0, a1 = off[ann[r]], off[ann[r] + 1]
        b0, b1 = off[tail[r]], off[tail[r] + 1]
        n_ev = (a1 - a0) + (b1 - b0)
        n_t0 = 1
        v = t0[r] >> 7
        while v:
            n_t0 += 1
            v >>= 7
        n_evlen = 1 if n_ev < 128 else 2
        packet = 1 + n_t0 + 2 + 1 + n_evlen + n_ev + 2
        out[o] = consts[0]
        o = _put_varint(out, o + 1, packet)
        out[o] = consts[1]
        o = _put_varint(out, o + 1, t0[r])
        out[o] = consts[2]
        out[o + 1] = consts[3]
        out[o + 2] = consts[4]
        o = _put_varint(out, o + 3, n_ev)
        for k in range(a0, a1):
            out[o] = table[k]
            o += 1
        for k in range(b0, b1):
            out[o] = table[k]
            o += 1
        out[o] = consts[5]
        out[o + 1] = consts[6]
        o += 2
        e0, e1 = off[end[r]], off[end[r] + 1]
        n_t1 = 1
        v = t1[r] >> 7
        while v:
            n_t1 += 1
            v >>= 7
        out[o] = consts[0]
        o = _put_varint(out, o + 1, 1 + n_t1 + 2 + (e1 - e0))
        out[o] = consts[1]
        o = _put_varint(out, o + 1, t1[r])
        out[o] = consts[2]
        out[o + 1] = consts[3]
        o += 2
        for k in range(e0, e1):
            out[o] = table[k]
            o += 1
    return o


class _SliceBatch:
    """Slices waiting for :func:`_slices_kernel`: per row the times and the ids of its
    annotation, event tail and end event, byte strings kept once in a table."""

    def __init__(self, stream: RawSink) -> None:
        self._stream = stream
        self._ids: dict[bytes, int] = {}
        self._table: list[bytes] = []
        self._off = [0]
        self.rows: list[tuple[int, int, int, int, int]] = []
        self._consts = np.array([_PACKET[0], _TS[0], _SEQ[0], _SEQ[1], _EVENT[0],
                                 _FLAGS[0], _FLAGS[1]], np.int64)
        if len(_PACKET) != 1 or len(_TS) != 1 or len(_SEQ) != 2 or len(_FLAGS) != 2:
            raise AssertionError("field keys changed size")

    def id(self, piece: bytes) -> int:
        k = self._ids.get(piece)
        if k is None:
            k = self._ids[piece] = len(self._table)
            self._table.append(piece)
            self._off.append(self._off[-1] + len(piece))
        return k

    def drain(self) -> None:
        """Encode the waiting rows into the stream's raw packets."""
        if not self.rows:
            return
        t0, t1, ann, tail, end = (np.array(c, np.int64) for c in zip(*self.rows))
        self.rows.clear()
        table = np.frombuffer(b"".join(self._table), np.uint8)
        off = np.array(self._off, np.int64)
        lens = np.diff(off)
        bound = int((lens[ann] + lens[tail] + lens[end]).sum()) + 64 * len(t0)
        out = np.empty(bound, np.uint8)
        n = _slices_kernel(t0, t1, ann, tail, end, table, off, self._consts, out)
        self._stream.raw.append(out[:n].tobytes())
