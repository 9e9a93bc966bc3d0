"""What a Perfetto trace measured, read as a phone writes it (or as socsim's writer does).

Streams the trace packet by packet (the outer ``Trace.packet`` framing is read by hand, each
packet decoded with the perfetto package's protobuf classes) and keeps: the durations of the
slices with a given name (TrackEvent slices, interned names resolved per sequence, or atrace
``B|pid|name`` / ``E|pid`` markers in ftrace ``print`` events), each CPU's frequency residency
(ftrace ``cpu_frequency``, kHz, a value holding until the CPU's next event or the trace's end),
each rail's energy (``android.power`` descriptors and cumulative uWs samples: last minus first),
the battery's discharge (``charge_counter_uah``, first minus last) and each thermal zone's peak
(ftrace ``thermal_temperature``, milli-degrees C).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

from google.protobuf.message import DecodeError
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, TrackEvent

from socsim.errors import InputError


@dataclass
class TraceMeasurements:
    """What one trace measured (times in seconds, as Perfetto's units otherwise)."""

    slices_s: list[float] = field(default_factory=list)          # the named slices, in start order
    freq_residency_s: dict[int, dict[int, float]] = field(default_factory=dict)  # cpu -> kHz -> s
    rail_energy_uws: dict[str, int] = field(default_factory=dict)
    battery_discharge_uah: int | None = None
    peak_temp_c: dict[str, float] = field(default_factory=dict)
    span_s: float = 0.0


def _varint(f: BinaryIO, path: str) -> int | None:
    shift = value = 0
    while True:
        b = f.read(1)
        if not b:
            if shift:
                raise InputError("truncated: the file ends inside a packet's length", file=path)
            return None
        value |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            return value
        shift += 7
        if shift > 63:
            raise InputError("not a Perfetto trace: a length is longer than 64 bits", file=path)


def packets(path: Path | str) -> Iterator[TracePacket]:
    """The TracePackets of a trace file, one at a time."""
    path = str(path)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise InputError(f"cannot read the trace: {e.strerror}", file=path) from None
    with f:
        while True:
            key = _varint(f, path)
            if key is None:
                return
            if key != 0x0A:   # Trace.packet, length-delimited: all a trace file holds
                raise InputError(f"not a Perfetto trace: field key {key} where Trace.packet (10) "
                                 "should be", file=path, field="packet")
            n = _varint(f, path)
            data = f.read(n or 0)
            if n is None or len(data) != n:
                raise InputError("truncated: the file ends inside a packet", file=path)
            try:
                yield TracePacket.FromString(data)
            except DecodeError as e:
                raise InputError(f"not a Perfetto trace: a packet does not decode ({e})",
                                 file=path, field="packet") from None


class _Slices:
    """Begin/end pairing per track (TrackEvent) or per pid (atrace), keeping the named ones."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.open: dict[object, list[tuple[str, int]]] = defaultdict(list)
        self.done: list[tuple[int, float]] = []

    def begin(self, key: object, name: str, t: int) -> None:
        self.open[key].append((name, t))

    def end(self, key: object, t: int) -> None:
        if self.open[key]:
            name, t0 = self.open[key].pop()
            if name == self.name:
                self.done.append((t0, (t - t0) / 1e9))


def read_trace(path: Path | str, slice_name: str) -> TraceMeasurements:
    """The measurements of the trace at ``path`` (``slice_name``: the slices to time)."""
    slices = _Slices(slice_name)
    names: dict[tuple[int, int], str] = {}             # (sequence, iid) -> event name
    freq: dict[int, list[tuple[int, int]]] = defaultdict(list)
    rails: dict[int, str] = {}
    energy: dict[str, list[tuple[int, int]]] = defaultdict(list)
    charge: list[tuple[int, int]] = []
    peaks: dict[str, int] = {}
    first = last = None
    for p in packets(path):
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            for k in [k for k in names if k[0] == seq]:
                del names[k]
        for e in p.interned_data.event_names:
            names[(seq, e.iid)] = e.name
        t = p.timestamp
        if p.HasField("timestamp"):
            first = t if first is None else min(first, t)
            last = t if last is None else max(last, t)
        if p.HasField("track_event"):
            te = p.track_event
            if te.type == TrackEvent.TYPE_SLICE_BEGIN:
                slices.begin(te.track_uuid, te.name or names.get((seq, te.name_iid), ""), t)
            elif te.type == TrackEvent.TYPE_SLICE_END:
                slices.end(te.track_uuid, t)
        for e in p.ftrace_events.event:
            et = e.timestamp
            last = et if last is None else max(last, et)
            which = e.WhichOneof("event")
            if which == "cpu_frequency":
                freq[e.cpu_frequency.cpu_id].append((et, e.cpu_frequency.state))
            elif which == "thermal_temperature":
                z = e.thermal_temperature
                peaks[z.thermal_zone] = max(peaks.get(z.thermal_zone, z.temp), z.temp)
            elif which == "print":
                parts = e.print.buf.rstrip("\n").split("|")
                if parts[0] == "B" and len(parts) >= 3:
                    slices.begin(("atrace", parts[1]), "|".join(parts[2:]), et)
                elif parts[0] == "E" and len(parts) >= 2:
                    slices.end(("atrace", parts[1]), et)
        for d in p.power_rails.rail_descriptor:
            rails[d.index] = d.rail_name
        for d in p.power_rails.energy_data:
            if d.index not in rails:
                raise InputError(f"energy sample of rail {d.index} before its descriptor "
                                 "(Perfetto's importer needs the descriptors first)",
                                 file=str(path), field="power_rails.energy_data.index", value=d.index)
            energy[rails[d.index]].append((t, d.energy))
        if p.battery.HasField("charge_counter_uah"):
            charge.append((t, p.battery.charge_counter_uah))
    end = last or 0
    out = TraceMeasurements(span_s=((end - first) / 1e9) if first is not None else 0.0)
    out.slices_s = [d for _, d in sorted(slices.done)]
    for cpu, evs in sorted(freq.items()):
        evs.sort()
        res: dict[int, float] = defaultdict(float)
        for (t0, khz), (t1, _) in zip(evs, evs[1:] + [(max(end, evs[-1][0]), 0)]):
            res[khz] += (t1 - t0) / 1e9
        out.freq_residency_s[cpu] = dict(sorted(res.items()))
    for rail, samples in energy.items():
        samples.sort()
        out.rail_energy_uws[rail] = samples[-1][1] - samples[0][1]
    if charge:
        charge.sort()
        out.battery_discharge_uah = charge[0][1] - charge[-1][1]
    out.peak_temp_c = {z: v / 1000 for z, v in sorted(peaks.items())}
    return out
