"""The trace's Android forms, checked against the perfetto package's protobuf schema and the
importer rules docs/trace.md lists (units, descriptors before samples, sequence flags)."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    BatteryCounters, FtraceEvent, FtraceEventBundle, PowerRails, Trace, TracePacket)

from socsim.report import perfetto_android as pa
from socsim.report.perfetto import write_perfetto

from report_synthetic import BIG_CORES, RAILS, SAMPLE_S, SyntheticRun

_I32 = st.integers(-(2**31), 2**31 - 1)
_U32 = st.integers(0, 2**32 - 1)
_TS = st.integers(0, 2**62)


@pytest.fixture(scope="module")
def trace(synthetic_run: SyntheticRun, tmp_path_factory: pytest.TempPathFactory) -> Trace:
    out = tmp_path_factory.mktemp("android") / "trace.perfetto-trace"
    write_perfetto(synthetic_run.path, out)
    return Trace.FromString(out.read_bytes())


def _same(framed: bytes, expect: TracePacket) -> bool:
    """``framed`` decodes to ``expect`` and has its size (no field the schema does not know;
    the field order may differ from the protobuf library's, which the wire format allows)."""
    packets = Trace.FromString(framed).packet
    return (len(packets) == 1 and packets[0] == expect
            and len(framed) == len(Trace(packet=[expect]).SerializeToString()))


# ------------------------------------------------------------------ bytes vs the schema

@given(_TS, st.integers(0, 15), _U32)
def test_cpu_frequency_matches_protobuf(t: int, cpu: int, khz: int) -> None:
    ev = FtraceEvent(timestamp=t, pid=0, cpu_frequency={"state": khz, "cpu_id": cpu})
    expect = TracePacket(timestamp=t, trusted_packet_sequence_id=1,
                         ftrace_events=FtraceEventBundle(cpu=cpu, event=[ev]))
    got = pa.ftrace_bundle(t, cpu, pa.cpu_frequency(t, cpu, khz))
    assert _same(got, expect)


@given(_TS, _I32, _I32, st.integers(0, 99), st.text(max_size=20))
def test_thermal_and_sched_match_protobuf(t: int, temp: int, prev: int, zone_id: int, zone: str) -> None:
    events = [FtraceEvent(timestamp=t, pid=0, thermal_temperature={
                  "id": zone_id, "temp": temp, "temp_prev": prev, "thermal_zone": zone}),
              FtraceEvent(timestamp=t, pid=7, sched_switch={
                  "prev_comm": "a", "prev_pid": 7, "prev_prio": 120, "prev_state": 1,
                  "next_comm": "swapper", "next_pid": 0, "next_prio": 120}),
              FtraceEvent(timestamp=t, pid=0, cpu_idle={"state": pa.IDLE_EXIT, "cpu_id": 3})]
    expect = TracePacket(timestamp=t, trusted_packet_sequence_id=1,
                         ftrace_events=FtraceEventBundle(cpu=3, event=events))
    got = pa.ftrace_bundle(t, 3, pa.thermal_temperature(t, zone_id, zone, temp, prev)
                           + pa.sched_switch(t, ("a", 7), ("swapper", 0), 1)
                           + pa.cpu_idle(t, 3, pa.IDLE_EXIT))
    assert _same(got, expect)


@given(_TS, st.lists(st.integers(0, 2**63 - 1), min_size=1, max_size=8),
       st.integers(-(2**40), 2**40), st.floats(0, 100, width=32), st.integers(0, 2**40))
def test_rails_and_battery_match_protobuf(t: int, energies: list[int], current: int, pct: float,
                                          charge: int) -> None:
    expect = TracePacket(timestamp=t, trusted_packet_sequence_id=1, power_rails=PowerRails(
        energy_data=[{"index": i, "timestamp_ms": t // 1_000_000, "energy": e}
                     for i, e in enumerate(energies)]))
    assert _same(pa.energy_data(t, list(enumerate(energies))), expect)
    expect = TracePacket(timestamp=t, trusted_packet_sequence_id=1, battery=BatteryCounters(
        charge_counter_uah=charge, capacity_percent=pct, current_ua=current, voltage_uv=4_200_000))
    got = pa.battery(t, charge, pct, current, 4_200_000)
    assert _same(got, expect)


# ------------------------------------------------------------------ the run's trace

def _ftrace(trace: Trace, kind: str) -> list[tuple[int, int, object]]:
    """(bundle cpu, timestamp, event payload) of every ftrace event of ``kind``."""
    return [(p.ftrace_events.cpu, e.timestamp, getattr(e, kind))
            for p in trace.packet if p.HasField("ftrace_events")
            for e in p.ftrace_events.event if e.HasField(kind)]


def test_sequence_flags_and_ids(trace: Trace) -> None:
    """One trusted sequence: its first packet clears incremental state; packets that use
    interned data say they need it; every packet carries the sequence id."""
    first = trace.packet[0]
    assert first.first_packet_on_sequence
    assert first.sequence_flags == TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    assert all(p.trusted_packet_sequence_id == 1 for p in trace.packet)
    for p in trace.packet:
        if p.HasField("interned_data") or (p.HasField("track_event") and p.track_event.name_iid):
            assert p.sequence_flags & TracePacket.SEQ_NEEDS_INCREMENTAL_STATE


def test_cpu_frequency_per_cpu_in_khz(trace: Trace) -> None:
    """``cpufreq.little`` (1804.8 MHz) becomes one cpu_frequency event per CPU of sd865's little
    cluster (0-3), in kHz, written once since it never changes."""
    events = _ftrace(trace, "cpu_frequency")
    assert sorted((e.cpu_id, e.state, t) for _, t, e in events) == [(c, 1_804_800, 0) for c in range(4)]


def test_thermal_zones_in_millidegrees(trace: Trace, synthetic_run: SyntheticRun) -> None:
    zones = defaultdict(list)
    for _, t, e in _ftrace(trace, "thermal_temperature"):
        zones[e.thermal_zone].append((t, e.temp, e.temp_prev, e.id))
    assert set(zones) == {"cpu-big", "skin"}
    big = zones["cpu-big"]
    assert len(big) == synthetic_run.n_samples
    assert big[0] == (0, 30_000, 30_000, big[0][3]) and big[1][1:3] == (34_000, 30_000)
    assert big[-1][1] == 30_000 + 4_000 * (synthetic_run.n_samples - 1)
    assert len({z[0][3] for z in zones.values()}) == 2      # one id per zone


def test_rails_described_before_energy_in_uws(trace: Trace, synthetic_run: SyntheticRun) -> None:
    rails = [p.power_rails for p in trace.packet if p.HasField("power_rails")]
    first_data = next(i for i, r in enumerate(rails) if r.energy_data)
    descs = [d for r in rails[:first_data] for d in r.rail_descriptor]
    assert [d.rail_name for d in descs] == list(RAILS) and [d.index for d in descs] == list(range(len(RAILS)))
    assert not any(r.rail_descriptor for r in rails[first_data:])
    series = defaultdict(list)
    for p in trace.packet:
        for e in p.power_rails.energy_data:
            series[descs[e.index].rail_name].append((p.timestamp, e.timestamp_ms, e.energy))
    n = synthetic_run.n_samples
    big = series["cpu_big"]
    assert len(big) == n and big[0][2] == 0
    assert [e for _, _, e in big] == sorted(e for _, _, e in big)
    assert all(ms == t // 1_000_000 for t, ms, _ in big)
    # uWs: 3 W for 0.1 s is 300,000 uWs, times 1, 1.1, 1.2 in turn
    assert big[1][2] == round(3000.0 * 1.1 * 1e3 * SAMPLE_S)


def test_battery_counters_in_android_units(trace: Trace, synthetic_run: SyntheticRun) -> None:
    batt = [(p.timestamp, p.battery) for p in trace.packet if p.HasField("battery")]
    assert len(batt) == synthetic_run.n_samples
    t, b = batt[1]
    assert (b.charge_counter_uah, b.capacity_percent, b.current_ua, b.voltage_uv) == (
        3_999_990, 100.0, -900_001, 4_349_900)


def test_threads_scheduled_on_their_cpus(trace: Trace, synthetic_run: SyntheticRun) -> None:
    """Each big core runs its thread (tid 100+N, the op slices' thread) in runs of back-to-back
    ops: swapper -> thread at the start, thread -> swapper at the end, cpu_idle around them."""
    switches = defaultdict(list)
    for cpu, t, e in _ftrace(trace, "sched_switch"):
        switches[cpu].append((t, e.prev_pid, e.next_pid, e.next_comm))
    assert set(switches) == set(BIG_CORES)
    for cpu, evs in switches.items():
        evs.sort()
        assert [e[1:3] for e in evs[:2]] == [(0, 100 + cpu), (100 + cpu, 0)]
        assert evs[0][3] == f"cpu{cpu}"
        assert len(evs) % 2 == 0 and len(evs) == 2 * 4   # one run of five ops per batch
    idle = [(t, e.state) for cpu, t, e in _ftrace(trace, "cpu_idle") if e.cpu_id == 4]
    assert sorted(idle)[:2] == [(50_000_000, pa.IDLE_EXIT), (250_000_000, 0)]


def test_sched_writer_merges_back_to_back_ops() -> None:
    w = pa.SchedWriter()
    assert w.op(2, 0, 10) == b"" and w.op(2, 10, 20) == b""
    closed = w.op(2, 30, 40)
    evs = Trace.FromString(closed).packet[0].ftrace_events.event
    assert [(e.timestamp, e.WhichOneof("event")) for e in evs] == [
        (0, "cpu_idle"), (0, "sched_switch"), (20, "sched_switch"), (20, "cpu_idle")]
    assert len(Trace.FromString(w.close()).packet) == 1 and w.close() == b""


def test_unknown_soc_keeps_plain_counters(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text('{"soc": "no-such-soc"}')
    assert pa.cluster_cpus(tmp_path) == {}
    cols = pa.android_columns(["t_s", "cpufreq.little", "power.gpu_uws", "batt.voltage_mv"], {})
    assert cols.freq == [] and cols.taken == {2, 3}
