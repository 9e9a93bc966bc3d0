"""A phone's Perfetto trace for the tests, built with the perfetto package's TraceProtoBuilder
in the forms Android writes it (atrace markers and ftrace events in a bundle, interned
TrackEvent names, the android.power and battery data sources on their own sequences)."""
from __future__ import annotations

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, TrackEvent
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

RAIL_NAMES = ("S4M_VDD_CPUCL0", "S3M_VDD_CPUCL1", "S2M_VDD_CPUCL2")   # ODPM-style names


def phone_trace(batches: list[tuple[int, int]], freqs: list[tuple[int, int, int]],
                energy: list[tuple[int, list[int]]], charge: list[tuple[int, int]],
                temps: list[tuple[int, str, int]]) -> bytes:
    """batches: (start, end) ns as atrace B/E on pid 4242 plus a TrackEvent slice of that name (interned);
    freqs: (ts, cpu, kHz); energy: (ts, uWs per rail); charge: (ts, uAh); temps: (ts, zone, mC)."""
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.trusted_packet_sequence_id, p.sequence_flags = 7, TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    p.interned_data.event_names.add(iid=1, name="train_step")
    p.track_descriptor.uuid, p.track_descriptor.name = 99, "trainer"
    bundle = b.add_packet()
    bundle.trusted_packet_sequence_id = 2
    bundle.ftrace_events.cpu = 0
    for t0, t1 in batches:
        for t, buf in ((t0, "B|4242|train_step"), (t1, "E|4242")):
            bundle.ftrace_events.event.add(timestamp=t, pid=4242, print={"buf": buf + "\n"})
        for t, typ in ((t0, TrackEvent.TYPE_SLICE_BEGIN), (t1, TrackEvent.TYPE_SLICE_END)):
            q = b.add_packet()
            q.timestamp, q.trusted_packet_sequence_id = t, 7
            q.sequence_flags = TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
            q.track_event.type, q.track_event.track_uuid = typ, 99
            if typ == TrackEvent.TYPE_SLICE_BEGIN:
                q.track_event.name_iid = 1
    for ts, cpu, khz in freqs:
        bundle.ftrace_events.event.add(timestamp=ts, pid=0, cpu_frequency={"state": khz, "cpu_id": cpu})
    for ts, zone, mc in temps:
        bundle.ftrace_events.event.add(timestamp=ts, pid=0, thermal_temperature={
            "id": 0, "temp": mc, "thermal_zone": zone})
    d = b.add_packet()
    d.trusted_packet_sequence_id = 3
    for i, name in enumerate(RAIL_NAMES):
        d.power_rails.rail_descriptor.add(index=i, rail_name=name, subsys_name="cpu", sampling_rate=1000)
    for ts, values in energy:
        q = b.add_packet()
        q.timestamp, q.trusted_packet_sequence_id = ts, 3
        for i, e in enumerate(values):
            q.power_rails.energy_data.add(index=i, timestamp_ms=ts // 1_000_000, energy=e)
    for ts, uah in charge:
        q = b.add_packet()
        q.timestamp, q.trusted_packet_sequence_id = ts, 4
        q.battery.charge_counter_uah, q.battery.current_ua, q.battery.voltage_uv = uah, -800_000, 4_100_000
    return b.serialize()
