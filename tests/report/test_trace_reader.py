"""A phone's trace, built with the perfetto package's TraceProtoBuilder in the forms Android
writes (atrace markers, ftrace cpu_frequency/thermal events in their own sequences, the
android.power and battery data sources), read back exactly."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from socsim.errors import InputError
from socsim.report.perfetto import write_perfetto
from socsim.report.trace_reader import read_trace

from report_synthetic import RAILS, SyntheticRun
from tests.fidelity.phone_trace import RAIL_NAMES, phone_trace

_durs = st.lists(st.integers(1, 10**9), min_size=1, max_size=6)


@settings(max_examples=25, deadline=None)
@given(_durs, st.lists(st.sampled_from([300_000, 1_804_800, 2_419_200]), min_size=1, max_size=5),
       st.lists(st.integers(0, 10**12), min_size=2, max_size=5))
def test_phone_trace_recovered_exactly(tmp_path_factory: pytest.TempPathFactory, durs: list[int],
                                       khzs: list[int], energies: list[int]) -> None:
    batches, t = [], 1_000
    for d in durs:
        batches.append((t, t + d))
        t += d + 500
    end = t
    step = end // len(khzs)
    freqs = [(k * step, 4, khz) for k, khz in enumerate(khzs)]
    energies.sort()
    energy = [(k * (end // len(energies)), [e, 2 * e, 3 * e]) for k, e in enumerate(energies)]
    trace = phone_trace(batches, freqs, energy, [(0, 4_000_000), (end, 3_999_000)],
                        [(10, "skin-therm", 31_500), (end, "skin-therm", 33_250)])
    path = tmp_path_factory.mktemp("phone") / "phone.perfetto-trace"
    path.write_bytes(trace)
    m = read_trace(path, "train_step")
    # atrace and TrackEvent slices of the same name: each batch twice, in start order
    assert m.slices_s == [d / 1e9 for d in durs for _ in (0, 1)]
    expect: dict[int, float] = {}
    for k, (ts, _, khz) in enumerate(freqs):
        nxt = freqs[k + 1][0] if k + 1 < len(freqs) else end
        expect[khz] = expect.get(khz, 0.0) + (nxt - ts) / 1e9
    assert m.freq_residency_s[4] == pytest.approx(expect, rel=1e-12)
    span = energies[-1] - energies[0]
    assert m.rail_energy_uws == {RAIL_NAMES[0]: span, RAIL_NAMES[1]: 2 * span, RAIL_NAMES[2]: 3 * span}
    assert m.battery_discharge_uah == 1_000
    assert m.peak_temp_c == {"skin-therm": 33.25}


def test_socsim_trace_reads_back(synthetic_run: SyntheticRun, tmp_path: Path) -> None:
    """socsim's own trace is a phone's trace too: its batch slices, rails and zones read back."""
    out = tmp_path / "t.perfetto-trace"
    write_perfetto(synthetic_run.path, out)
    m = read_trace(out, "batch 1")
    assert len(m.slices_s) == 1
    assert set(m.rail_energy_uws) == set(RAILS) and m.rail_energy_uws["cpu_big"] > 0
    assert set(m.freq_residency_s) == {0, 1, 2, 3}
    assert m.freq_residency_s[0] == {1_804_800: pytest.approx(m.span_s)}
    assert m.battery_discharge_uah == 10 * (synthetic_run.n_samples - 1)
    assert m.peak_temp_c["cpu-big"] == 30.0 + 4.0 * (synthetic_run.n_samples - 1)


@pytest.mark.parametrize("data, message", [
    (b"\x12\x00", "not a Perfetto trace"),
    (b"\x0a\x05ab", "truncated"),
    (b"\x0a\x02\xff\xff", "does not decode"),
])
def test_bad_traces_name_the_file(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "bad.perfetto-trace"
    path.write_bytes(data)
    with pytest.raises(InputError, match=message) as e:
        read_trace(path, "x")
    assert e.value.file == str(path)


def test_energy_before_descriptor_is_refused(tmp_path: Path) -> None:
    b = TraceProtoBuilder()
    b.add_packet().power_rails.energy_data.add(index=0, energy=5)
    path = tmp_path / "t.perfetto-trace"
    path.write_bytes(b.serialize())
    with pytest.raises(InputError, match="before its descriptor"):
        read_trace(path, "x")
