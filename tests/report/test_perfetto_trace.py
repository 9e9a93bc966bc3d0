"""The Perfetto trace parses back (protobuf) with the expected tracks, slices and counters.

TraceProcessor needs a native binary downloaded at run time (docs/oracles.md section 4), so the trace
is decoded with the protobuf classes shipped in the perfetto package and checked directly.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

from socsim.report.events import StreamRecorder
from socsim.report.perfetto import track_uuid, write_perfetto

from report_synthetic import BATCHES, FORWARD_OPS, RAILS, SyntheticRun


@dataclass
class DecodedTrace:
    """Tracks by name and their slices/instants/counter points, interning resolved."""

    track_names: dict[int, str] = field(default_factory=dict)
    parents: dict[int, int] = field(default_factory=dict)
    threads: dict[str, tuple[int, int]] = field(default_factory=dict)   # name -> (pid, tid)
    processes: dict[int, str] = field(default_factory=dict)
    slices: dict[str, list[tuple[str, int, int, dict]]] = field(default_factory=lambda: defaultdict(list))
    instants: dict[str, list[tuple[str, int, dict]]] = field(default_factory=lambda: defaultdict(list))
    counters: dict[str, list[tuple[int, float]]] = field(default_factory=lambda: defaultdict(list))


def decode(path: Path) -> DecodedTrace:
    """Decode a trace: resolve interned names, pair begin/end per track in timestamp order."""
    trace = Trace.FromString(path.read_bytes())
    out = DecodedTrace()
    names: dict[int, str] = {}
    ann_names: dict[int, str] = {}
    strings: dict[int, str] = {}
    events = []
    for i, p in enumerate(trace.packet):
        if p.HasField("interned_data"):
            names.update({e.iid: e.name for e in p.interned_data.event_names})
            ann_names.update({e.iid: e.name for e in p.interned_data.debug_annotation_names})
            strings.update({e.iid: e.str.decode() for e in p.interned_data.debug_annotation_string_values})
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            out.track_names[td.uuid] = td.name
            if td.parent_uuid:
                out.parents[td.uuid] = td.parent_uuid
            if td.HasField("thread"):
                out.threads[td.thread.thread_name] = (td.thread.pid, td.thread.tid)
            if td.HasField("process"):
                out.processes[td.process.pid] = td.process.process_name
        if p.HasField("track_event"):
            te = p.track_event
            name = te.name or names.get(te.name_iid, "")
            args = {}
            for d in te.debug_annotations:
                key = d.name or ann_names[d.name_iid]
                which = d.WhichOneof("value")
                args[key] = strings[d.string_value_iid] if which == "string_value_iid" else getattr(d, which)
            events.append((p.timestamp, i, te.type, te.track_uuid, name, args, te.double_counter_value))
    open_slices: dict[int, list] = defaultdict(list)
    for ts, _, typ, uuid, name, args, value in sorted(events, key=lambda e: (e[0], e[1])):
        track = out.track_names[uuid]
        if typ == TrackEvent.TYPE_SLICE_BEGIN:
            open_slices[uuid].append((name, ts, args))
        elif typ == TrackEvent.TYPE_SLICE_END:
            n, t0, a = open_slices[uuid].pop()
            out.slices[track].append((n, t0, ts - t0, a))
        elif typ == TrackEvent.TYPE_INSTANT:
            out.instants[track].append((name, ts, args))
        elif typ == TrackEvent.TYPE_COUNTER:
            out.counters[track].append((ts, value))
    assert not any(open_slices.values()), "unterminated slices"
    return out


@pytest.fixture(scope="module")
def decoded(synthetic_run: SyntheticRun, tmp_path_factory: pytest.TempPathFactory) -> DecodedTrace:
    out = tmp_path_factory.mktemp("trace") / "trace.perfetto-trace"
    write_perfetto(synthetic_run.path, out)
    return decode(out)


def test_soc_process_and_thread_tracks(decoded: DecodedTrace) -> None:
    assert decoded.processes == {1: "SoC"}
    expected = {"cpu4", "cpu5", "cpu6", "cpu7", "dsp", "gpu", "fastrpc", "engine", "batches",
                "thermal"}
    assert set(decoded.threads) == expected
    assert decoded.threads["cpu5"] == (1, 105)
    soc = track_uuid("process/SoC")
    assert all(decoded.parents[track_uuid("thread/" + t)] == soc for t in expected)


def test_slice_counts_names_and_annotations(decoded: DecodedTrace, synthetic_run: SyntheticRun) -> None:
    counts = {t: len(s) for t, s in decoded.slices.items()}
    assert counts == {**synthetic_run.slices_by_track, "batches": BATCHES}
    assert counts["cpu4"] == BATCHES * FORWARD_OPS
    name, t0, dur, args = decoded.slices["cpu4"][0]
    assert (name, t0, dur) == ("conv0", 50_000_000, 40_000_000)
    assert args == {"batch": 0, "phase": "forward", "kind": "conv2d"}
    assert {a["phase"] for _, _, _, a in decoded.slices["cpu7"]} == {"forward", "weight_grad", "update"}
    assert [a["batch"] for _, _, _, a in decoded.slices["dsp"]] == list(range(BATCHES))
    assert decoded.slices["engine"][0][0] == "graph_prepare"
    name, t0, dur, args = decoded.slices["batches"][1]
    assert name == "batch 1" and args == {"batch": 1, "energy_j": 1.25, "plan": "cpu:big4,dsp"}  # as labelled
    assert t0 == decoded.slices["cpu4"][FORWARD_OPS][1]   # batch 1 starts with its first op


def test_instants_for_thermal_events(decoded: DecodedTrace, synthetic_run: SyntheticRun) -> None:
    names = [(n, ts) for n, ts, _ in decoded.instants["thermal"]]
    assert names == [("trip_point_1", round((synthetic_run.throttle_t_s - 0.05) * 1e9)),
                     ("throttle cpu_big", round(synthetic_run.throttle_t_s * 1e9))]
    assert decoded.instants["thermal"][1][2] == {"detail": "cap 1.86 GHz"}


def test_counter_tracks_named_as_android(decoded: DecodedTrace, synthetic_run: SyntheticRun) -> None:
    """Columns Android has no data source for stay TrackEvent counters (the rest:
    tests/report/test_perfetto_android.py); ``cpufreq.big`` too: sd865 has no cluster ``big``."""
    expected = {f"power.{r}_mw" for r in RAILS} | {"cpufreq.big", "mem.used_bytes", "batch"}
    assert set(decoded.counters) == expected
    n, end_ns = synthetic_run.n_samples, round((synthetic_run.n_samples - 1) * 0.1 * 1e9)
    power = decoded.counters["power.cpu_big_mw"]
    assert len(power) == n and power[0] == (0, 3000.0)
    freq = decoded.counters["cpufreq.big"]
    assert {v for _, v in freq} == {2419.2, 1862.4} and freq[-1][0] == end_ns
    drop = next(ts for ts, v in freq if v == 1862.4)
    assert drop >= round(synthetic_run.throttle_t_s * 1e9)
    group = decoded.track_names[decoded.parents[track_uuid("counter/cpufreq.big")]]
    assert group == "CPU frequency"


def test_overlapping_slices_go_to_lanes(tmp_path: Path) -> None:
    rec = StreamRecorder(tmp_path)
    rec.op_slice("gpu", "a", "k", 0, "forward", 0.0, 1.0)
    rec.op_slice("gpu", "b", "k", 0, "forward", 0.5, 1.0)   # overlaps a, not nested
    rec.op_slice("gpu", "c", "k", 0, "forward", 1.0, 0.5)   # fits after a
    rec.close()
    write_perfetto(tmp_path, tmp_path / "t.perfetto-trace")
    d = decode(tmp_path / "t.perfetto-trace")
    assert [s[0] for s in d.slices["gpu"]] == ["a", "c"]
    assert [s[0] for s in d.slices["gpu (2)"]] == ["b"]


def test_deterministic_bytes(synthetic_run: SyntheticRun, tmp_path: Path) -> None:
    a, b = tmp_path / "a.perfetto-trace", tmp_path / "b.perfetto-trace"
    write_perfetto(synthetic_run.path, a)
    write_perfetto(synthetic_run.path, b)
    assert a.read_bytes() == b.read_bytes() and a.stat().st_size > 1000


def test_empty_run_directory(tmp_path: Path) -> None:
    write_perfetto(tmp_path, tmp_path / "t.perfetto-trace")
    d = decode(tmp_path / "t.perfetto-trace")
    assert d.processes == {1: "SoC"} and not d.slices and not d.counters


@pytest.mark.parametrize("t_ns", [0, 1, 127, 128, 50_000_000, 3_600_000_000_000])
def test_hand_encoded_packets_match_protobuf(t_ns: int) -> None:
    """The fast paths (slices, counters) give the bytes the protobuf classes serialise."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

    from socsim.report.perfetto import (annotation_int, annotation_str, begin_event_tail,
                                        counter_bytes, end_event, framed, slice_begin_bytes,
                                        slice_end_bytes)
    uuid = track_uuid("thread/cpu4")
    for value in (0.0, -1.5, 2419.2, 4e9, float("inf")):
        ref = TracePacket(timestamp=t_ns, trusted_packet_sequence_id=1)
        ref.track_event.type = TrackEvent.TYPE_COUNTER
        ref.track_event.track_uuid = uuid
        ref.track_event.double_counter_value = value
        assert counter_bytes(t_ns, uuid, value) == framed(ref.SerializeToString())
    ref = TracePacket(timestamp=t_ns, trusted_packet_sequence_id=1,
                      sequence_flags=TracePacket.SEQ_NEEDS_INCREMENTAL_STATE)
    te = ref.track_event
    te.debug_annotations.add(name_iid=1, int_value=1199)
    te.debug_annotations.add(name_iid=2, string_value_iid=300)
    te.type, te.name_iid, te.track_uuid = TrackEvent.TYPE_SLICE_BEGIN, 4242, uuid
    event = annotation_int(1, 1199) + begin_event_tail(uuid, 4242, annotation_str(2, 300))
    assert slice_begin_bytes(t_ns, event) == framed(ref.SerializeToString())
    end = TracePacket(timestamp=t_ns, trusted_packet_sequence_id=1)
    end.track_event.type, end.track_event.track_uuid = TrackEvent.TYPE_SLICE_END, uuid
    assert slice_end_bytes(t_ns, end_event(uuid)) == framed(end.SerializeToString())


def test_track_uuids_are_stable_nine_byte_varints() -> None:
    uuids = {track_uuid(f"counter/c{i}") for i in range(1000)}
    assert len(uuids) == 1000 and all(1 << 62 <= u < 1 << 63 for u in uuids)
    assert track_uuid("thread/cpu0") == track_uuid("thread/cpu0")
