"""The trace's counters and CPU placement in the forms Android's data sources write them.

Perfetto's importer turns these packets into its Android tables (docs/trace.md has the mapping
and the importer rules each one follows):

- ``cpufreq.<cluster>`` (MHz) -> ftrace ``cpu_frequency`` events, one per CPU of the cluster, in
  kHz (``linux.ftrace``, ``power/cpu_frequency``);
- ``power.<rail>_uws`` -> the ``android.power`` data source's ``PowerRails``: one
  ``RailDescriptor`` per rail (before any sample), then ``EnergyData`` samples of cumulative
  energy in uWs;
- ``batt.charge_uah``, ``batt.capacity_pct``, ``batt.current_ua``, ``batt.voltage_mv`` ->
  ``BatteryCounters`` (charge uAh, percent, current uA, voltage uV);
- ``<zone> Temperature`` (deg C) -> ftrace ``thermal_temperature`` events (milli-degrees C);
- op slices on ``cpuN`` -> ftrace ``sched_switch`` and ``cpu_idle`` events on CPU N, so the UI
  shows each training thread on its CPU as on a phone.

Packets are hand-encoded (the field numbers below are the perfetto package's protos; tests
check every packet against the protobuf classes).  Everything streams: a row or a run of ops
becomes its packets at once.
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

from socsim.errors import InputError
from socsim.report.perfetto_encode import SEQUENCE_ID, _key, _sub, _varint

#: the idle task's comm (pid 0), as the kernel names it in sched_switch
IDLE_COMM = "swapper"
#: cpu_idle state for "left idle" (the kernel writes PWR_EVENT_EXIT, (u32)-1)
IDLE_EXIT = 0xFFFFFFFF
_U64 = (1 << 64) - 1
_pack_float = struct.Struct("<f").pack

# field numbers (perfetto protos): TracePacket ftrace_events 1, power_rails 40, battery 38,
# timestamp 8, trusted_packet_sequence_id 10; FtraceEventBundle cpu 1, event 2; FtraceEvent
# timestamp 1, pid 2, sched_switch 4, cpu_frequency 11, cpu_idle 13, thermal_temperature 341;
# PowerRails rail_descriptor 1, energy_data 2; RailDescriptor index 1, rail_name 2,
# subsys_name 3, sampling_rate 4; EnergyData index 1, timestamp_ms 2, energy 3; BatteryCounters
# charge_counter_uah 1, capacity_percent 2, current_ua 3, voltage_uv 7
_TS, _SEQ = _key(8, 0), _key(10, 0) + _varint(SEQUENCE_ID)


def _int(field: int, value: int) -> bytes:
    """A varint field; negative int32/int64 values as their 64-bit two's complement."""
    return _key(field, 0) + _varint(value & _U64)


def _str(field: int, value: str) -> bytes:
    return _sub(field, value.encode())


def packet(t_ns: int, field: int, payload: bytes) -> bytes:
    """A framed TracePacket at ``t_ns`` on socsim's sequence holding ``payload`` as ``field``."""
    body = _TS + _varint(t_ns) + _SEQ + _sub(field, payload)
    return _sub(1, body)


def ftrace_event(t_ns: int, pid: int, field: int, payload: bytes) -> bytes:
    """An FtraceEvent (an entry of FtraceEventBundle.event)."""
    return _sub(2, _int(1, t_ns) + _int(2, pid) + _sub(field, payload))


def ftrace_bundle(t_ns: int, cpu: int, events: bytes) -> bytes:
    """A TracePacket of one FtraceEventBundle from ``cpu``'s ring buffer."""
    return packet(t_ns, 1, _int(1, cpu) + events)


def cpu_frequency(t_ns: int, cpu: int, khz: int) -> bytes:
    return ftrace_event(t_ns, 0, 11, _int(1, khz) + _int(2, cpu))


def cpu_idle(t_ns: int, cpu: int, state: int) -> bytes:
    return ftrace_event(t_ns, 0, 13, _int(1, state) + _int(2, cpu))


def sched_switch(t_ns: int, prev: tuple[str, int], next_: tuple[str, int], prev_state: int) -> bytes:
    """``prev`` and ``next_`` are (comm, pid); prio 120 (a normal task, as the kernel writes)."""
    body = (_str(1, prev[0]) + _int(2, prev[1]) + _int(3, 120) + _int(4, prev_state)
            + _str(5, next_[0]) + _int(6, next_[1]) + _int(7, 120))
    return ftrace_event(t_ns, prev[1], 4, body)


def thermal_temperature(t_ns: int, zone_id: int, zone: str, milli_c: int, prev_milli_c: int) -> bytes:
    return ftrace_event(t_ns, 0, 341, _int(1, zone_id) + _int(2, milli_c) + _int(3, prev_milli_c)
                        + _str(4, zone))


def rail_descriptors(rails: list[tuple[str, str]], sampling_ms: int) -> bytes:
    """The PowerRails packet naming the rails (rail_name, subsys_name), indices in order."""
    body = b"".join(_sub(1, _int(1, i) + _str(2, name) + _str(3, subsys) + _int(4, sampling_ms))
                    for i, (name, subsys) in enumerate(rails))
    return packet(0, 40, body)


def energy_data(t_ns: int, energies: list[tuple[int, int]]) -> bytes:
    """A PowerRails packet of (rail index, cumulative uWs) samples at ``t_ns``."""
    ms = t_ns // 1_000_000
    return packet(t_ns, 40, b"".join(_sub(2, _int(1, i) + _int(2, ms) + _int(3, e))
                                     for i, e in energies))


def battery(t_ns: int, charge_uah: int | None, capacity_pct: float | None, current_ua: int | None,
            voltage_uv: int | None) -> bytes:
    """A BatteryCounters packet with the counters given (None: left out)."""
    body = b""
    if charge_uah is not None:
        body += _int(1, charge_uah)
    if capacity_pct is not None:
        body += _key(2, 5) + _pack_float(capacity_pct)
    if current_ua is not None:
        body += _int(3, current_ua)
    if voltage_uv is not None:
        body += _int(7, voltage_uv)
    return packet(t_ns, 38, body)


# ------------------------------------------------------------------ what a run maps to

_BATTERY = {"batt.charge_uah": 0, "batt.capacity_pct": 1, "batt.current_ua": 2, "batt.voltage_mv": 3}


def cluster_cpus(run_dir: Path) -> dict[str, tuple[int, ...]]:
    """The CPUs of each cluster of the run's SoC (summary.json's ``soc``); {} when the SoC is
    not one socsim can load (its cpufreq columns then stay plain counters)."""
    from socsim.spec import load_soc
    try:
        soc = json.loads((Path(run_dir) / "summary.json").read_text()).get("soc")
        spec = load_soc(soc)
    except (OSError, ValueError, InputError, TypeError, AttributeError):
        return {}
    return {c.name: tuple(c.core_ids) for c in spec.cpu.clusters}


@dataclass
class AndroidColumns:
    """Which timeseries.csv columns go out in Android's forms, by their index in the row."""

    freq: list[tuple[int, tuple[int, ...]]]     # (column, CPUs of its cluster)
    rails: list[tuple[int, str]]                # (column, rail name)
    battery: list[tuple[int, int]]              # (column, slot in _BATTERY order)
    zones: list[tuple[int, str]]                # (column, thermal zone)

    @property
    def taken(self) -> set[int]:
        return ({c for c, _ in self.freq} | {c for c, _ in self.rails}
                | {c for c, _ in self.battery} | {c for c, _ in self.zones})


def android_columns(header: list[str], clusters: dict[str, tuple[int, ...]]) -> AndroidColumns:
    """Sort the columns of a timeseries.csv header into Android's data sources."""
    cols = AndroidColumns([], [], [], [])
    for i, name in enumerate(header):
        if name.startswith("cpufreq.") and name[8:] in clusters:
            cols.freq.append((i, clusters[name[8:]]))
        elif name.startswith("power.") and name.endswith("_uws"):
            cols.rails.append((i, name[6:-4]))
        elif name in _BATTERY:
            cols.battery.append((i, _BATTERY[name]))
        elif name.endswith(" Temperature"):
            cols.zones.append((i, name[:-len(" Temperature")]))
    return cols


class AndroidCounters:
    """Turns timeseries.csv rows into Android packets, writing a value only when it changes
    (cumulative rail energy and the battery every row, as their data sources poll)."""

    def __init__(self, cols: AndroidColumns, sampling_ms: int = 100) -> None:
        self._cols = cols
        self._last: dict[int, float] = {}
        self._sampling_ms = sampling_ms

    def head(self) -> bytes:
        """The rail descriptors (the importer needs them before the first energy sample)."""
        if not self._cols.rails:
            return b""
        return rail_descriptors([(r, r.split(".")[0]) for _, r in self._cols.rails], self._sampling_ms)

    def row(self, fields: list[str]) -> bytes:
        """The packets of one row (``fields`` as in the CSV, t_s first)."""
        t_ns = round(float(fields[0]) * 1e9)
        out = []
        events = []
        last = self._last
        for col, cpus in self._cols.freq:
            v = float(fields[col])
            if last.get(col) != v:
                last[col] = v
                khz = round(v * 1000)
                events.extend(cpu_frequency(t_ns, cpu, khz) for cpu in cpus)
        for zone_id, (col, zone) in enumerate(self._cols.zones):
            v = round(float(fields[col]) * 1000)
            prev = last.get(col)
            if prev != v:
                last[col] = v
                events.append(thermal_temperature(t_ns, zone_id, zone, v, v if prev is None else int(prev)))
        if events:
            out.append(ftrace_bundle(t_ns, 0, b"".join(events)))
        if self._cols.rails:
            out.append(energy_data(t_ns, [(k, round(float(fields[c])))
                                          for k, (c, _) in enumerate(self._cols.rails)]))
        if self._cols.battery:
            vals: list = [None] * 4
            for col, slot in self._cols.battery:
                vals[slot] = float(fields[col])
            charge, pct, cur, mv = vals
            out.append(battery(t_ns, None if charge is None else round(charge), pct,
                               None if cur is None else round(cur),
                               None if mv is None else round(mv * 1000)))
        return b"".join(out)


class SchedWriter:
    """sched_switch / cpu_idle events of the training threads: the thread of track ``cpuN``
    (tid 100+N, the thread of the op slices, so Perfetto joins them) runs on CPU N while ops
    run there back to back, and the CPU idles between them."""

    def __init__(self) -> None:
        self._open: dict[int, list[int]] = {}    # cpu -> [start_ns, end_ns] of the run so far

    def op(self, cpu: int, t0: int, t1: int) -> bytes:
        """Take one op on ``cpu``; returns the packets of a run it closes (b"" else)."""
        run = self._open.get(cpu)
        if run is not None and t0 <= run[1]:
            run[1] = max(run[1], t1)
            return b""
        self._open[cpu] = [t0, t1]
        return b"" if run is None else self._run(cpu, run[0], run[1])

    def close(self) -> bytes:
        """The packets of every run still open, CPU by CPU."""
        out = b"".join(self._run(cpu, *run) for cpu, run in sorted(self._open.items()))
        self._open.clear()
        return out

    @staticmethod
    def _run(cpu: int, t0: int, t1: int) -> bytes:
        thread = (f"cpu{cpu}", 100 + cpu)
        idle = (IDLE_COMM, 0)
        events = (cpu_idle(t0, cpu, IDLE_EXIT) + sched_switch(t0, idle, thread, 0)
                  + sched_switch(t1, thread, idle, 1) + cpu_idle(t1, cpu, 0))
        return ftrace_bundle(t0, cpu, events)
