"""``socsim fidelity --trace`` end to end (in-process): a phone-like trace of two LeNet batches
against a simulated run of the same workload; bad input exits 2 naming the field."""
from __future__ import annotations

import json

from tests.e2e.cli_helpers import invoke, write_workload
from tests.fidelity.phone_trace import phone_trace

MS = 1_000_000


def test_trace_against_a_run(tmp_path):
    trace = tmp_path / "phone.perfetto-trace"
    trace.write_bytes(phone_trace(
        [(10 * MS, 14 * MS), (15 * MS, 19 * MS)], [(0, 4, 2_419_200), (12 * MS, 4, 1_804_800)],
        [(0, [0, 0, 0]), (20 * MS, [10_000, 20_000, 30_000])], [(0, 4_000_000), (20 * MS, 3_999_990)],
        [(0, "skin-therm", 30_000), (20 * MS, "skin-therm", 31_000)]))
    wl = write_workload(tmp_path)
    out = tmp_path / "r.json"
    res = invoke("fidelity", "--trace", str(trace), "--workload", str(wl), "--soc", "sd865",
                 "--slice", "train_step", "--json", str(out))
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    batches, run = report["tables"]
    # each batch is in the trace twice (atrace and TrackEvent): four measured rows, 4 ms each,
    # against the run's first two batches (the simulated run has as many batches as slices)
    assert batches["n"] == 4 and [r["measured_time_s"] for r in batches["rows"]] == [0.004] * 4
    assert all(r["simulated_time_s"] > 0 for r in batches["rows"])
    assert batches["rows"][0]["measured_energy_j"] == 0.06 / 4
    q = {x["name"]: x for x in run["ratios"]}
    assert q["rail energy, all rails (J)"]["measured"] == 0.06
    assert q["battery discharge (uAh)"]["measured"] == 10
    assert q["peak skin-therm (C)"]["measured"] == 31.0
    assert "cpu4 mean frequency (MHz)" in q and q["cpu4 mean frequency (MHz)"]["simulated"] > 0
    assert "train_step slices" in res.output


def test_trace_without_its_slices_or_soc(tmp_path):
    trace = tmp_path / "phone.perfetto-trace"
    trace.write_bytes(phone_trace([(0, MS)], [], [], [], []))
    wl = write_workload(tmp_path)
    res = invoke("fidelity", "--trace", str(trace), "--workload", str(wl))
    assert res.exit_code == 2 and "--soc" in res.output
    res = invoke("fidelity", "--trace", str(trace), "--workload", str(wl), "--soc", "sd865", "--slice", "nope")
    assert res.exit_code == 2 and "nope" in res.output and "--slice" in res.output
    res = invoke("fidelity")
    assert res.exit_code == 2 and "FILE" in res.output
