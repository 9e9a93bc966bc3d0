"""Native Perfetto trace (protobuf) of a run directory, for ui.perfetto.dev.

Reads the files of :mod:`socsim.report.events` (ops.csv, events.csv, timeseries.csv,
batches.csv) one row at a time and streams TracePackets to the output, so an hour-long simulated
run is never held in memory whole.  Layout:

- a process ``SoC`` with one thread-like track per op track (``cpu0``..``cpu7``, ``dsp``, ``gpu``,
  ``fastrpc``, ``engine``) carrying a slice per op (debug annotations batch, phase, kind), a
  ``batches`` track (one slice per batch) and tracks for the instants of events.csv;
- counter tracks named as the columns of timeseries.csv (Android's names): ``power.<rail>_uws``,
  ``power.<rail>_mw``, ``cpufreq.<cluster>``, ``<zone> Temperature``, ``thermal.<node>_c``,
  ``batt.*``, ``mem.used_bytes``, ``batch``, under group tracks.  A row's value holds from its
  timestamp to the next row in the CSV as on a Perfetto counter track (interval means are stamped
  at their interval's start), so the area under ``power.<rail>_mw`` is the rail's energy.

Descriptors, interned strings, instants and batch slices are TracePacket objects written by the
perfetto package's streaming trace builder.  The two hot paths (op slices, counter samples; a
million packets an hour) are encoded by hand, several times faster, in
:mod:`socsim.report.perfetto_encode` (slices) and :mod:`socsim.report.perfetto_counters`
(counters); tests check those bytes against the same packets built with the protobuf classes.  Output is deterministic: track
uuids are hashes of names, strings are interned in order of first use, no wall-clock anything.
"""
from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path
from typing import BinaryIO, Generator

import numpy as np
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    CounterDescriptor, TracePacket, TrackDescriptor, TrackEvent)
from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder

from socsim.hw import units
from socsim.report.perfetto_android import AndroidCounters, SchedRuns, android_columns, cluster_cpus
from socsim.report.events import (BATCH_COLUMNS, EVENT_COLUMNS, OPS_COLUMNS, PARSE_ERRORS,
                                  malformed, timeseries_header)

# the hand-encoded hot paths live beside this module; their public names are re-exported here
from socsim.report.perfetto_counters import (  # noqa: F401
    _counter_row_fallback, _counter_row_py, _counters_kernel)
from socsim.report.perfetto_encode import (  # noqa: F401
    _BEGIN, _COUNTER_TAIL, _END, _INSTANT, _NEEDS_STATE, _SEQ, _TS, SEQUENCE_ID, _SliceBatch,
    _counter_head, _counter_start, _key, _pack_double, annotation_int, annotation_str,
    begin_event_tail, counter_bytes, end_event, framed, slice_begin_bytes, slice_end_bytes)

PROCESS_NAME, PROCESS_PID = "SoC", 1
_CHUNK = 1 << 14           # hand-encoded packets buffered before a write
_FIXED_TIDS = {"fastrpc": 202, "engine": 203, "batches": 204}   # and the units' own (socsim.hw.units)
_GROUPS = (  # (predicate on counter name, group track, unit), first match wins
    (lambda n: n.startswith("power.") and n.endswith("_uws"), "Rail energy", "uWs"),
    (lambda n: n.startswith("power.") and n.endswith("_mw"), "Rail power", "mW"),
    (lambda n: n.startswith("cpufreq"), "CPU frequency", "MHz"),
    (lambda n: n.endswith(" Temperature") or (n.startswith("thermal.") and n.endswith("_c")), "Thermal", "C"),
    (lambda n: n.startswith("batt."), "Battery", ""),
    (lambda n: n.startswith("mem."), "Memory", "bytes"),
)
_BATTERY_UNITS = {"_uah": "uAh", "_pct": "%", "_ua": "uA", "_mv": "mV"}
_STR = "debug_annotation_string_values"


def _fixed_tid(track: str, default: int) -> int:
    """The fixed thread id of a unit's track (its ``trace_tid``) or of an engine track, else ``default``."""
    tid = next((u.trace_tid for u in units.accelerators() if u.name == track and u.trace_tid is not None), None)
    return _FIXED_TIDS.get(track, default) if tid is None else tid


def track_uuid(key: str) -> int:
    """Deterministic track uuid: a 63-bit hash of ``key`` with bit 62 set (never 0, and always
    a 9-byte varint, so hand-encoded packets of one kind have one length)."""
    h = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    return (h & ((1 << 62) - 1)) | (1 << 62)


def counter_track_name(column: str) -> str:
    """The counter track of a timeseries.csv column: the column's own name (``cpufreq.big``,
    ``power.gpu_mw``, ``skin-therm Temperature``), so the trace and the CSV name a counter alike."""
    return column


def _ns(t_s: float) -> int:
    return round(t_s * 1e9)


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
        elif units.core_of_track(track) is not None:
            name, tid = track, 100 + units.core_of_track(track)
        else:
            name, tid = track, _fixed_tid(track, 300 + self._n_other)
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

def _write_slices(stream: _PacketStream, tracks: _SliceTracks, ops_csv: Path) -> None:
    """One begin/end pair per ops.csv row, annotated with batch, phase and kind; the rows on
    ``cpuN`` also become the sched_switch/cpu_idle events of CPU N (:class:`~socsim.report.perfetto_android.SchedRuns`,
    the bulk encoder of :class:`~socsim.report.perfetto_android.SchedWriter`)."""
    if not ops_csv.exists():
        return
    sched = SchedRuns()
    cpu_of: dict[str, int | None] = {}
    a_batch, a_phase, a_kind = (stream.intern("debug_annotation_names", n)
                                for n in ("batch", "phase", "kind"))
    batch_ann: dict[str, int] = {}                    # batch -> id of its annotation
    tails: dict[tuple[int, str, str, str], int] = {}  # (uuid, name, phase, kind) -> id of tail
    ends: dict[int, int] = {}                         # uuid -> id of its end event
    pending = _SliceBatch(stream)

    def drain() -> None:   # the sched packets queued since the last flush, then the slices
        sched.drain(stream.raw)
        pending.drain()

    stream.drain = drain
    rows = pending.rows
    try:
        with open(ops_csv, newline="") as f:
            reader = csv.reader(f)
            try:
                next(reader, None)
                for track, name, kind, batch, phase, start_s, dur_s in reader:
                    start, dur = float(start_s), float(dur_s)
                    # simulated times are finite and not negative (a slice before 0 s would never
                    # leave the lane allocator's queue)
                    if not (0 <= start < 1e12 and 0 <= dur < 1e12):
                        raise ValueError(f"start_s {start_s} and dur_s {dur_s} must be finite seconds >= 0")
                    t0 = round(start * 1e9)
                    t1 = max(t0, round((start + dur) * 1e9))
                    uuid = tracks.place(track, t0, t1)
                    cpu = cpu_of.get(track, -1)
                    if cpu == -1:
                        cpu = cpu_of[track] = units.core_of_track(track)
                    if cpu is not None:
                        sched.op(cpu, t0, t1)
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
            except PARSE_ERRORS as e:
                raise malformed(ops_csv, reader.line_num, e, OPS_COLUMNS) from None
        sched.close()
        stream.flush()
    finally:
        stream.drain = None


def _write_batches(stream: _PacketStream, tracks: _SliceTracks, batches_csv: Path) -> None:
    """A ``batches`` track with one slice per row of batches.csv (plan and energy as args; a row
    that sums a group of batches is one slice ``batches N-M``)."""
    if not batches_csv.exists():
        return
    with open(batches_csv, newline="") as f:
        reader = csv.DictReader(f)
        try:
            for row in reader:
                if None in row or None in row.values():
                    raise ValueError(f"expected {len(BATCH_COLUMNS)} fields")
                start = float(row["start_s"])
                t0 = _ns(start)
                t1 = max(t0, _ns(start + float(row["time_s"])))
                # a row of a long run's batches.csv may sum a group of batches (its "batches" column)
                n = int(row.get("batches") or 1)
                if n < 1:
                    raise ValueError(f"batches {n} must be at least 1")
                b = int(row["batch"])
                begin = TrackEvent(type=_BEGIN, name=f"batch {row['batch']}" if n == 1 else f"batches {b}-{b + n - 1}")
                begin.debug_annotations.add(name="batch", int_value=b)
                if n > 1:
                    begin.debug_annotations.add(name="batches", int_value=n)
                if row.get("energy_j"):
                    begin.debug_annotations.add(name="energy_j", double_value=float(row["energy_j"]))
                if row.get("plan"):
                    begin.debug_annotations.add(name="plan", string_value=row["plan"])
                begin.track_uuid = uuid = tracks.place("batches", t0, t1)
                stream.emit(TracePacket(timestamp=t0, track_event=begin))
                stream.emit(TracePacket(timestamp=t1, track_event={"type": _END, "track_uuid": uuid}))
        except PARSE_ERRORS as e:
            raise malformed(batches_csv, reader.line_num, e, BATCH_COLUMNS) from None


def _write_instants(stream: _PacketStream, tracks: _SliceTracks, events_csv: Path) -> None:
    """Instants for events.csv rows (thermal trips, throttling, memory pressure)."""
    if not events_csv.exists():
        return
    with open(events_csv, newline="") as f:
        reader = csv.reader(f)
        try:
            next(reader, None)
            for t_s, track, name, detail in reader:
                t_ns = _ns(float(t_s))
                event = TrackEvent(type=_INSTANT, track_uuid=tracks.instant_track(track or "events"),
                                   name=name)
                if detail:
                    event.debug_annotations.add(name="detail", string_value=detail)
                stream.emit(TracePacket(timestamp=t_ns, track_event=event))
        except PARSE_ERRORS as e:
            raise malformed(events_csv, reader.line_num, e, EVENT_COLUMNS) from None


def _counter_descriptors(stream: _PacketStream, columns: list[str], skip: set[int]) -> list[int]:
    """Group tracks and one counter track per column but those in ``skip`` (indices of
    ``columns``: they go out in Android's forms); returns the counter uuids of every column."""
    groups: dict[str, int] = {}
    uuids = []
    for k, column in enumerate(columns):
        name = counter_track_name(column)
        if k in skip:
            uuids.append(track_uuid("counter/" + name))
            continue
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


# bytes of timeseries.csv read at a time, and of counter packets buffered per kernel call: 1 MiB
# and 2 MiB: 4 and 8 MiB cost a long run's report ~17 MiB more peak memory (issue 29) for no speed
# (a 53,000-row series: 1.6-1.8 s of CPU either way, measured alternately)
_TS_CHUNK = 1 << 20


def _row_chunks(f: BinaryIO) -> Generator[bytes, int, None]:
    """The rest of an open CSV file, a chunk at a time, for the two passes over timeseries.csv:
    each chunk is the previous one from the offset sent back (:func:`_next_chunk`; the rows not
    yet taken, or a row the reader still needs) followed by the next ``_TS_CHUNK`` bytes; at the
    end of the file, once more with what is left and a missing last newline added."""
    data = b""
    while True:
        more = f.read(_TS_CHUNK)
        last = not more
        if last and data and not data.endswith(b"\n"):
            more = b"\n"
        keep = yield data + more
        if last:
            return
        data = (data + more)[keep:]


def _next_chunk(chunks: Generator[bytes, int, None], keep: int) -> bytes | None:
    """The next chunk of :func:`_row_chunks`, keeping the last one's bytes from ``keep``; None at the end."""
    try:
        return chunks.send(keep)
    except StopIteration:
        return None


_OUT_CAP = 1 << 21


def _write_counters(stream: _PacketStream, ts_csv: Path, clusters: dict[str, tuple[int, ...]]) -> None:
    """Counter values of timeseries.csv, written only when they change (and at the last
    sample): Perfetto holds a counter's value until the next, so the display is identical."""
    if not ts_csv.exists():
        return
    state = np.zeros(2, np.int64)
    try:
        android = _write_counter_rows(stream, ts_csv, state, clusters)
    except PARSE_ERRORS as e:
        # state[0]: rows done; the header is line 1
        raise malformed(ts_csv, int(state[0]) + 2, e) from None
    if android is not None:
        _write_android_rows(stream, ts_csv, android)


_ANDROID_ROWS = 4096       # rows of timeseries.csv encoded at a time in Android's forms


def _write_android_rows(stream: _PacketStream, ts_csv: Path, android: AndroidCounters) -> None:
    """The Android packets of every row of timeseries.csv (a second streaming pass), a block
    of rows at a time through the compiled encoder; a block it cannot take exactly goes through
    :meth:`AndroidCounters.row` (the reference, :func:`_write_android_rows_py`)."""
    stream.flush()
    write = stream._out.write
    write(android.head())
    with open(ts_csv, "rb") as f:
        f.readline()
        chunks = _row_chunks(f)
        data, pos, line = next(chunks, None), 0, 2     # line: the file's line of the row at pos
        while data is not None:
            pos = 0
            buf = np.frombuffer(data, np.uint8)
            while True:
                start = pos
                try:
                    pos, vals = android.fast.parse(buf, data, pos, _ANDROID_ROWS)
                except PARSE_ERRORS as e:
                    raise malformed(ts_csv, line, e) from None
                if not len(vals):
                    break
                packets = android.block(vals)
                if packets is None:
                    packets = _android_rows_py(android, data[start:pos], ts_csv, line)
                write(packets)
                line += len(vals)
            data = _next_chunk(chunks, pos)


def _android_rows_py(android: AndroidCounters, rows: bytes, ts_csv: Path, line: int) -> bytes:
    """The reference's packets of the CSV rows ``rows`` (the first on the file's ``line``)."""
    reader = csv.reader(io.StringIO(rows.decode(), newline=""))
    out = []
    try:
        for fields in reader:
            out.append(android.row(fields))
    except (*PARSE_ERRORS, OverflowError) as e:
        raise malformed(ts_csv, line + reader.line_num - 1, e) from None
    return b"".join(out)


def _write_android_rows_py(stream: _PacketStream, ts_csv: Path, android: AndroidCounters) -> None:
    """The Android packets of every row of timeseries.csv, row by row in Python (the reference
    of :func:`_write_android_rows`)."""
    stream.flush()
    write = stream._out.write
    write(android.head())
    with open(ts_csv, newline="") as f:
        reader = csv.reader(f)
        next(reader, None)
        try:
            buf: list[bytes] = []
            for fields in reader:
                buf.append(android.row(fields))
                if len(buf) >= _CHUNK:
                    write(b"".join(buf))
                    buf.clear()
            write(b"".join(buf))
        except PARSE_ERRORS as e:
            raise malformed(ts_csv, reader.line_num, e) from None


def _write_counter_rows(stream: _PacketStream, ts_csv: Path, state: np.ndarray,
                        clusters: dict[str, tuple[int, ...]]) -> AndroidCounters | None:
    """Plain counter packets of the columns Android has no data source for; returns the
    writer of the others' Android packets (None for an empty file)."""
    with open(ts_csv, "rb") as f:
        header = timeseries_header(ts_csv, f.readline().decode())
        if not header:
            return None
        ncols = len(header)
        cols = android_columns(header, clusters)
        wanted = np.array([i not in cols.taken for i in range(1, ncols)], np.bool_)
        skip = {i - 1 for i in cols.taken}
        head_list = [_counter_head(u) for u in _counter_descriptors(stream, header[1:], skip)]
        stream.flush()
        android = AndroidCounters(cols)
        if ncols < 2:
            return android
        heads = np.frombuffer(b"".join(head_list), np.uint8).reshape(ncols - 1, -1)
        ts_key, seq = _TS, _SEQ
        consts = np.array([_key(1, 2)[0], ts_key[0], seq[0], seq[1], _COUNTER_TAIL], np.int64)
        out = np.empty(_OUT_CAP, np.uint8)
        fs = np.zeros((2, ncols), np.int64)
        fe = np.zeros((2, ncols), np.int64)
        eq = np.zeros(ncols - 1, np.bool_)
        lastv = np.zeros(ncols - 1, np.float64)
        write = stream._out.write
        chunks = _row_chunks(f)
        data, pos = next(chunks, None), 0
        while data is not None:
            buf = np.frombuffer(data, np.uint8)
            while True:
                pos, o, status = _counters_kernel(buf, len(buf), pos, ncols, heads, consts,
                                                  out, fs, fe, state, eq, lastv, wanted)
                if o:
                    write(memoryview(out)[:o])
                if status == 0:
                    break
                if status == 2:
                    pos = _counter_row_fallback(data, pos, ncols, head_list, write,
                                                fs, fe, state, eq, lastv, wanted)
            keep = int(fs[0, 0]) if state[0] else pos   # keep the previous row
            fs -= keep
            fe -= keep
            pos -= keep
            data = _next_chunk(chunks, keep)
        if state[0] >= 2:  # repeat suppressed values at the last sample, so every track spans the run
            tail_start = _counter_start(int(state[1]))
            write(b"".join(tail_start + head_list[i] + _pack_double(float(lastv[i]))
                           for i in range(ncols - 1) if eq[i] and wanted[i]))
    return android


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
        _write_counters(stream, run_dir / "timeseries.csv", cluster_cpus(run_dir))
        stream.flush()
