"""The time series ends with one row at the end of the run, never two rows closer than the
trace's nanosecond (Perfetto would show two values at one timestamp)."""
from __future__ import annotations

import csv
import json

import socsim


def test_a_last_window_under_a_nanosecond_is_one_row(tmp_path):
    # this period leaves the run's end 0.3 ns after the last sampling boundary
    socsim.run("sd865", "quickstart", overrides=["output.sample_ms=5.805065604613572", "batches=30"],
               out=tmp_path, reports=False)
    with open(tmp_path / "timeseries.csv", newline="") as f:
        header, *rows = list(csv.reader(f))
    ns = [round(float(r[0]) * 1e9) for r in rows]
    assert len(set(ns)) == len(ns)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert float(rows[-1][0]) == summary["sim_time_s"] or abs(float(rows[-1][0]) - summary["sim_time_s"]) < 1e-8
    # the cumulative rail counters end at the summary's rail energies
    for rail, j in summary["energy_j"]["rails"].items():
        col = header.index(f"power.{rail}_uws")
        assert abs(float(rows[-1][col]) * 1e-6 - j) < 1e-6, rail
