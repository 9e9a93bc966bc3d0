"""Time-series loading, downsampling for plots, per-batch energy and optional Parquet."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from socsim.report.events import StreamRecorder
from socsim.report.timeseries import energy_between_j, envelope, load_timeseries, to_parquet

from report_synthetic import SyntheticRun


def test_load_matches_csv(synthetic_run: SyntheticRun) -> None:
    ts = load_timeseries(synthetic_run.path)
    assert len(ts) == synthetic_run.n_samples
    assert ts.columns[0] == "power.cpu_big_uws" and "batch" in ts.columns
    assert ts.t_s[1] == pytest.approx(0.1)
    assert ts.column("cpu-big Temperature")[-1] == 30.0 + 4.0 * (synthetic_run.n_samples - 1)
    assert ts.select("power.", "_mw")[0] == "power.cpu_big_mw"


def test_load_missing_or_header_only(tmp_path: Path) -> None:
    assert len(load_timeseries(tmp_path)) == 0
    (tmp_path / "timeseries.csv").write_text("t_s,a\n")
    ts = load_timeseries(tmp_path)
    assert len(ts) == 0 and ts.columns == ("a",)


def test_envelope_bounds_points_and_keeps_extremes() -> None:
    t = np.arange(36_000) * 0.1
    y = np.sin(t / 50.0)
    y[12_345] = 9.0           # a one-sample spike must survive in the band
    tm, mean, lo, hi = envelope(t, y, 2000)
    assert len(tm) == len(mean) == len(lo) == len(hi) == 2000 and np.all(np.diff(tm) > 0)
    assert hi.max() == 9.0 and lo.min() == y.min() and np.all((lo <= mean) & (mean <= hi))
    assert mean.mean() == pytest.approx(y.mean(), rel=1e-9, abs=1e-12)
    short = envelope(t[:10], y[:10], 2000)
    assert all(len(a) == 10 for a in short) and short[2] is short[3]


def test_interp_energy_from_cumulative_counters(tmp_path: Path) -> None:
    rec = StreamRecorder(tmp_path)
    for k in range(1, 11):   # 1 W on one rail, 0.5 W on another, first sample at 0.1 s
        rec.sample(k * 0.1, {"power.a_uws": 1e6 * k * 0.1, "power.b_uws": 0.5e6 * k * 0.1})
    rec.close()
    ts = load_timeseries(tmp_path)
    assert energy_between_j(ts, [0.0, 0.25], [1.0, 0.75]) == pytest.approx([1.5, 0.75])
    assert np.isnan(energy_between_j(load_timeseries(tmp_path / "none"), [0.0], [1.0])).all()


def test_parquet_only_with_pyarrow(synthetic_run: SyntheticRun, tmp_path: Path) -> None:
    out = to_parquet(synthetic_run.path)
    if importlib.util.find_spec("pyarrow") is None:
        assert out is None
    else:
        import pyarrow.parquet as pq
        assert out is not None and pq.read_table(out).num_rows == synthetic_run.n_samples
        out.unlink()
    assert to_parquet(tmp_path) is None
