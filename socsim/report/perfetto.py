"""Native Perfetto trace (protobuf) of a run directory, for ui.perfetto.dev.

Reads the files of :mod:`socsim.report.events` (ops.csv, events.csv, timeseries.csv,
batches.csv) one row at a time and streams TracePackets to the output, so an hour-long simulated
run is never held in memory whole.  Layout:

- a process ``SoC`` with one thread-like track per op track (``cpu0``..``cpu7``, ``dsp``, ``gpu``,
  ``fastrpc``, ``engine``) carrying a slice per op (debug annotations batch, phase, kind), a
  ``batches`` track (one slice per batch) and tracks for the instants of events.csv;
- counter tracks named as Android names them (ORACLES.md section 4, calibration/hardware.yaml
  ``android_conventions``): ``power.<rail>_uws``, ``power.<rail>_mw``, ``cpufreq <cluster>``,
  ``<zone> Temperature``, ``batt.*``, ``mem.used_bytes``, under group tracks.

Descriptors, interned strings, instants and batch slices are TracePacket objects written by the
perfetto package's streaming trace builder.  The two hot paths (op slices, counter samples; a
million packets an hour) are encoded by hand below, several times faster; tests check those
bytes against the same packets built with the protobuf classes.  Output is deterministic: track
uuids are hashes of names, strings are interned in order of first use, no wall-clock anything.
"""
from __future__ import annotations

import csv
import hashlib
import struct
from pathlib import Path
from typing import BinaryIO

import numba as nb
import numpy as np
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    CounterDescriptor, TracePacket, TrackDescriptor, TrackEvent)
from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder

SEQUENCE_ID = 1            # trusted_packet_sequence_id of every packet
PROCESS_NAME, PROCESS_PID = "SoC", 1
_CHUNK = 1 << 14           # hand-encoded packets buffered before a write
_BEGIN, _END = TrackEvent.TYPE_SLICE_BEGIN, TrackEvent.TYPE_SLICE_END
_INSTANT, _COUNTER = TrackEvent.TYPE_INSTANT, TrackEvent.TYPE_COUNTER
_NEEDS_STATE = TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
_FIXED_TIDS = {"dsp": 200, "gpu": 201, "fastrpc": 202, "engine": 203, "batches": 204}
_GROUPS = (  # (predicate on counter name, group track, unit), first match wins
    (lambda n: n.startswith("power.") and n.endswith("_uws"), "Rail energy", "uWs"),
    (lambda n: n.startswith("power.") and n.endswith("_mw"), "Rail power", "mW"),
    (lambda n: n.startswith("cpufreq"), "CPU frequency", "MHz"),
    (lambda n: n.endswith(" Temperature"), "Thermal", "C"),
    (lambda n: n.startswith("batt."), "Battery", ""),
    (lambda n: n.startswith("mem."), "Memory", "bytes"),
)
_BATTERY_UNITS = {"_uah": "uAh", "_pct": "%", "_ua": "uA", "_mv": "mV"}
_pack_double = struct.Struct("<d").pack
_STR = "debug_annotation_string_values"


def track_uuid(key: str) -> int:
    """Deterministic track uuid: a 63-bit hash of ``key`` with bit 62 set (never 0, and always
    a 9-byte varint, so hand-encoded packets of one kind have one length)."""
    h = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    return (h & ((1 << 62) - 1)) | (1 << 62)


def counter_track_name(column: str) -> str:
    """Android name of a timeseries.csv column: ``cpufreq.big`` -> ``cpufreq big``."""
    return "cpufreq " + column[8:] if column.startswith("cpufreq.") else column


def _ns(t_s: float) -> int:
    return round(t_s * 1e9)


# ------------------------------------------------------------------ hand-encoded packets

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


# ------------------------------------------------------------------ stream and tracks

class _PacketStream:
    """One trusted sequence: TracePacket objects through StreamingTraceProtoBuilder, hand-encoded
    packets buffered in :attr:`raw` (always written before the next object, keeping order), and
    the interning tables of event names, annotation names and annotation strings."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._builder = StreamingTraceProtoBuilder(out)
        self.raw: list[bytes] = []
        self.drain = None    # called first by flush(): puts batched packets into raw
        self.interned: dict[tuple[str, str], int] = {}
        self.emit(TracePacket(first_packet_on_sequence=True,
                              sequence_flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED))

    def emit(self, packet: TracePacket) -> TracePacket:
        self.flush()
        packet.trusted_packet_sequence_id = SEQUENCE_ID
        self._builder.write_packet(packet)
        return packet

    def flush(self) -> None:
        if self.drain is not None:
            self.drain()
        if self.raw:
            self._out.write(b"".join(self.raw))
            self.raw.clear()

    def intern(self, kind: str, value: str) -> int:
        """iid of ``value`` in the InternedData list ``kind`` (``event_names``,
        ``debug_annotation_names`` or ``debug_annotation_string_values``), emitted when new."""
        iid = self.interned.get((kind, value))
        if iid is None:
            iid = self.interned[(kind, value)] = len(self.interned) + 1
            p = TracePacket(sequence_flags=_NEEDS_STATE)
            if kind == "debug_annotation_string_values":
                p.interned_data.debug_annotation_string_values.add(iid=iid, str=value.encode())
            else:
                getattr(p.interned_data, kind).add(iid=iid, name=value)
            self.emit(p)
        return iid


class _SliceTracks:
    """Thread-like tracks of the SoC process, created on first use.  A slice overlapping the
    previous one on its track goes to an overflow lane (``gpu (2)``), so begin/end pairs always
    nest correctly.  Stable tids: cpuN -> 100+N, dsp/gpu/fastrpc/engine/batches 200.., others
    300.. in order of appearance; lane k adds 10000*k."""

    def __init__(self, stream: _PacketStream, process_uuid: int) -> None:
        self._stream, self._process_uuid = stream, process_uuid
        self._lanes: dict[str, list[list[int]]] = {}   # track -> [[uuid, end_ns, tid], ...]
        self._n_other = 0

    def _new_lane(self, track: str) -> list[int]:
        lanes = self._lanes.setdefault(track, [])
        if lanes:
            name, tid = f"{track} ({len(lanes) + 1})", lanes[0][2] + 10000 * len(lanes)
        elif track.startswith("cpu") and track[3:].isdigit():
            name, tid = track, 100 + int(track[3:])
        else:
            name, tid = track, _FIXED_TIDS.get(track, 300 + self._n_other)
            self._n_other += tid >= 300
        uuid = track_uuid("thread/" + name)
        self._stream.emit(TracePacket(track_descriptor=TrackDescriptor(
            uuid=uuid, parent_uuid=self._process_uuid, name=name, sibling_order_rank=tid,
            thread={"pid": PROCESS_PID, "tid": tid, "thread_name": name})))
        lanes.append([uuid, 0, tid])
        return lanes[-1]

    def place(self, track: str, start_ns: int, end_ns: int) -> int:
        """uuid of the lane of ``track`` that takes [start_ns, end_ns] without overlap."""
        for lane in self._lanes.get(track, ()):
            if start_ns >= lane[1]:
                lane[1] = end_ns
                return lane[0]
        lane = self._new_lane(track)
        lane[1] = end_ns
        return lane[0]

    def instant_track(self, track: str) -> int:
        return (self._lanes.get(track) or [self._new_lane(track)])[0][0]


# ------------------------------------------------------------------ writers per file

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

    def __init__(self, stream: _PacketStream) -> None:
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


def _write_slices(stream: _PacketStream, tracks: _SliceTracks, ops_csv: Path) -> None:
    """One begin/end pair per ops.csv row, annotated with batch, phase and kind."""
    if not ops_csv.exists():
        return
    a_batch, a_phase, a_kind = (stream.intern("debug_annotation_names", n)
                                for n in ("batch", "phase", "kind"))
    batch_ann: dict[str, int] = {}                    # batch -> id of its annotation
    tails: dict[tuple[int, str, str, str], int] = {}  # (uuid, name, phase, kind) -> id of tail
    ends: dict[int, int] = {}                         # uuid -> id of its end event
    pending = _SliceBatch(stream)
    stream.drain = pending.drain
    rows = pending.rows
    try:
        with open(ops_csv, newline="") as f:
            reader = csv.reader(f)
            next(reader, None)
            for track, name, kind, batch, phase, start_s, dur_s in reader:
                start = float(start_s)
                t0 = round(start * 1e9)
                t1 = max(t0, round((start + float(dur_s)) * 1e9))
                uuid = tracks.place(track, t0, t1)
                tail = tails.get((uuid, name, phase, kind))
                if tail is None:
                    ann = (annotation_str(a_phase, stream.intern(_STR, phase))
                           + annotation_str(a_kind, stream.intern(_STR, kind)))
                    tail = tails[(uuid, name, phase, kind)] = pending.id(begin_event_tail(
                        uuid, stream.intern("event_names", name), ann))
                    ends[uuid] = pending.id(end_event(uuid))
                ann = batch_ann.get(batch)
                if ann is None:
                    ann = batch_ann[batch] = pending.id(annotation_int(a_batch, int(batch)))
                rows.append((t0, t1, ann, tail, ends[uuid]))
                if len(rows) >= _CHUNK:
                    stream.flush()
        stream.flush()
    finally:
        stream.drain = None


def _write_batches(stream: _PacketStream, tracks: _SliceTracks, batches_csv: Path) -> None:
    """A ``batches`` track with one slice per row of batches.csv (plan and energy as args)."""
    if not batches_csv.exists():
        return
    with open(batches_csv, newline="") as f:
        for row in csv.DictReader(f):
            start = float(row["start_s"])
            t0 = _ns(start)
            t1 = max(t0, _ns(start + float(row["time_s"])))
            uuid = tracks.place("batches", t0, t1)
            begin = TrackEvent(type=_BEGIN, track_uuid=uuid, name=f"batch {row['batch']}")
            begin.debug_annotations.add(name="batch", int_value=int(row["batch"]))
            if row.get("energy_j"):
                begin.debug_annotations.add(name="energy_j", double_value=float(row["energy_j"]))
            if row.get("plan"):
                begin.debug_annotations.add(name="plan", string_value=row["plan"])
            stream.emit(TracePacket(timestamp=t0, track_event=begin))
            stream.emit(TracePacket(timestamp=t1, track_event={"type": _END, "track_uuid": uuid}))


def _write_instants(stream: _PacketStream, tracks: _SliceTracks, events_csv: Path) -> None:
    """Instants for events.csv rows (thermal trips, throttling, memory pressure)."""
    if not events_csv.exists():
        return
    with open(events_csv, newline="") as f:
        reader = csv.reader(f)
        next(reader, None)
        for t_s, track, name, detail in reader:
            event = TrackEvent(type=_INSTANT, track_uuid=tracks.instant_track(track or "events"),
                               name=name)
            if detail:
                event.debug_annotations.add(name="detail", string_value=detail)
            stream.emit(TracePacket(timestamp=_ns(float(t_s)), track_event=event))


def _counter_descriptors(stream: _PacketStream, columns: list[str]) -> list[int]:
    """Group tracks and one counter track per column; returns the counter uuids."""
    groups: dict[str, int] = {}
    uuids = []
    for column in columns:
        name = counter_track_name(column)
        group, unit = next(((g, u) for match, g, u in _GROUPS if match(name)), ("Counters", ""))
        if group == "Battery":
            unit = next((u for s, u in _BATTERY_UNITS.items() if name.endswith(s)), "")
        if group not in groups:
            groups[group] = track_uuid("group/" + group)
            stream.emit(TracePacket(track_descriptor=TrackDescriptor(
                uuid=groups[group], name=group, sibling_order_rank=len(groups))))
        counter = CounterDescriptor(unit_name=unit)
        if unit == "bytes":
            counter.unit = CounterDescriptor.UNIT_SIZE_BYTES
        uuids.append(track_uuid("counter/" + name))
        stream.emit(TracePacket(track_descriptor=TrackDescriptor(
            uuid=uuids[-1], parent_uuid=groups[group], name=name, counter=counter)))
    return uuids


# Counter packets are the bulk of a trace (an hour: millions).  A numba kernel reads
# timeseries.csv in chunks and writes the same bytes as :func:`_counter_row_py`, the plain
# reference it falls back to for a row it cannot take exactly (a value with more than 15
# significant digits or a power of ten beyond 1e22, nan, inf: there Python's float() parses).
# Values of up to 15 digits parse exactly as one multiply or divide by an exact power of ten
# (Clinger's fast path), so both give the same doubles.

_POW10 = np.array([10.0 ** k for k in range(23)])
_TS_CHUNK = 1 << 22        # bytes of timeseries.csv read at a time
_OUT_CAP = 1 << 23         # bytes of counter packets buffered per kernel call


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


@nb.njit(cache=True, nogil=True, inline="always")
def _put_varint(out: np.ndarray, pos: int, n: int) -> int:
    while n > 0x7F:
        out[pos] = (n & 0x7F) | 0x80
        n >>= 7
        pos += 1
    out[pos] = n
    return pos + 1


@nb.njit(cache=True, nogil=True)
def _counters_kernel(buf: np.ndarray, n: int, pos: int, ncols: int, heads: np.ndarray,
                     consts: np.ndarray, out: np.ndarray, fs: np.ndarray, fe: np.ndarray,
                     state: np.ndarray, eq: np.ndarray, lastv: np.ndarray) -> tuple[int, int, int]:
    """Counter packets of the complete rows of ``buf[pos:n]``.

    ``fs``/``fe`` row 0 hold the field bounds of the previous row (``state[0]`` rows seen so
    far), row 1 the current row's.  ``consts`` = [key of Trace.packet, key of timestamp,
    sequence-id field (2 bytes), length of a counter packet after its timestamp].  Per column,
    ``eq`` says whether the last row repeats the one before and ``lastv`` is its value;
    ``state[1]`` is the last row's timestamp (ns).  Returns (position of the next row, bytes
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


def _counter_row_py(fields: list[str], prev: list[str] | None, heads: list[bytes]) -> bytes:
    """Counter packets of one row given the row before (reference of the kernel)."""
    start = _counter_start(round(float(fields[0]) * 1e9))
    return b"".join(start + heads[i] + _pack_double(float(v)) for i, v in enumerate(fields[1:])
                    if prev is None or v != prev[i + 1])


def _counter_row_fallback(data: bytes, pos: int, ncols: int, heads: list[bytes], write,
                          fs: np.ndarray, fe: np.ndarray, state: np.ndarray, eq: np.ndarray,
                          lastv: np.ndarray) -> int:
    """Encode the row at ``data[pos:]`` in Python and update the kernel's state; returns the
    position of the next row."""
    end = data.index(b"\n", pos)
    line = data[pos:end]
    line = line[:-1] if line.endswith(b"\r") else line
    row = line.decode().split(",")
    if len(row) != ncols:
        raise ValueError(f"timeseries.csv: a row has {len(row)} fields, the header {ncols}")
    prev = data[fs[0, 0]:fe[0, ncols - 1]].decode().split(",") if state[0] else None
    write(_counter_row_py(row, prev, heads))
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


def _write_counters(stream: _PacketStream, ts_csv: Path) -> None:
    """Counter values of timeseries.csv, written only when they change (and at the last
    sample): Perfetto holds a counter's value until the next, so the display is identical."""
    if not ts_csv.exists():
        return
    with open(ts_csv, "rb") as f:
        first = f.readline()
        header = next(csv.reader([first.decode()]), None)
        if not header or header[0] != "t_s":
            return
        ncols = len(header)
        head_list = [_counter_head(u) for u in _counter_descriptors(stream, header[1:])]
        stream.flush()
        if ncols < 2:
            return
        heads = np.frombuffer(b"".join(head_list), np.uint8).reshape(ncols - 1, -1)
        ts_key, seq = _TS, _SEQ
        consts = np.array([_key(1, 2)[0], ts_key[0], seq[0], seq[1], _COUNTER_TAIL], np.int64)
        out = np.empty(_OUT_CAP, np.uint8)
        fs = np.zeros((2, ncols), np.int64)
        fe = np.zeros((2, ncols), np.int64)
        state = np.zeros(2, np.int64)
        eq = np.zeros(ncols - 1, np.bool_)
        lastv = np.zeros(ncols - 1, np.float64)
        data, pos, eof = b"", 0, False
        write = stream._out.write
        while not eof:
            more = f.read(_TS_CHUNK)
            if not more:
                eof = True
                if len(data) > pos and not data.endswith(b"\n"):
                    more = b"\n"
            data += more
            buf = np.frombuffer(data, np.uint8)
            while True:
                pos, o, status = _counters_kernel(buf, len(buf), pos, ncols, heads, consts,
                                                  out, fs, fe, state, eq, lastv)
                if o:
                    write(memoryview(out)[:o])
                if status == 0:
                    break
                if status == 2:
                    pos = _counter_row_fallback(data, pos, ncols, head_list, write,
                                                fs, fe, state, eq, lastv)
            keep = int(fs[0, 0]) if state[0] else pos   # keep the previous row
            data = data[keep:]
            fs -= keep
            fe -= keep
            pos -= keep
        if state[0] >= 2:  # repeat suppressed values at the last sample, so every track spans the run
            tail_start = _counter_start(int(state[1]))
            write(b"".join(tail_start + head_list[i] + _pack_double(float(lastv[i]))
                           for i in range(ncols - 1) if eq[i]))


def write_perfetto(run_dir: Path, out_path: Path) -> None:
    """Write the native Perfetto trace of the run in ``run_dir`` to ``out_path``."""
    run_dir = Path(run_dir)
    with open(out_path, "wb", buffering=1 << 20) as out:
        stream = _PacketStream(out)
        process_uuid = track_uuid("process/" + PROCESS_NAME)
        stream.emit(TracePacket(track_descriptor=TrackDescriptor(
            uuid=process_uuid, name=PROCESS_NAME, child_ordering=TrackDescriptor.EXPLICIT,
            process={"pid": PROCESS_PID, "process_name": PROCESS_NAME})))
        tracks = _SliceTracks(stream, process_uuid)
        _write_slices(stream, tracks, run_dir / "ops.csv")
        _write_batches(stream, tracks, run_dir / "batches.csv")
        _write_instants(stream, tracks, run_dir / "events.csv")
        _write_counters(stream, run_dir / "timeseries.csv")
        stream.flush()
