"""timeseries.csv of a long run is bounded (output.sample_rows): past that many rows a row stands
for a group of consecutive samples (grouped as batches.csv groups batches, by row index), with
the group's first states and its time-weighted means; the run's last row stays its own; a series
no longer than sample_rows is written exactly as before, whatever blocks it came in."""
from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from socsim.report.events import StreamRecorder, batch_group, batch_rows, interval_mean
from socsim.report.perfetto import write_perfetto
from socsim.report.timeseries import load_timeseries

from test_perfetto_trace import decode

COLUMNS = ["power.cpu_uws", "power.cpu_mw", "cpufreq.big", "skin-therm Temperature", "batt.current_ua",
           "batt.voltage_mv", "mem.used_bytes", "batch"]


def _series(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n samples: increasing times, a power mean per interval and its cumulative energy."""
    rng = np.random.default_rng(seed)
    t = np.concatenate([[0.0], np.cumsum(rng.choice([0.1, 0.1, 0.05, 0.0], n - 1))]) if n else np.zeros(0)
    mw = rng.uniform(100, 3000, n).round(3)
    dt = np.diff(np.append(t, t[-1] if n else 0.0))
    uws = np.concatenate([[0.0], np.cumsum(mw[:-1] * dt[:-1] * 1e3)]) if n else np.zeros(0)
    vals = np.column_stack([uws, mw, rng.choice([1800.0, 2400.0], n), 30 + t / 100,
                            rng.uniform(-9e5, -1e5, n).round(1), rng.uniform(3700, 4300, n).round(2),
                            np.full(n, 1e8), np.floor(t * 3)])
    return t, vals.reshape(n, len(COLUMNS))


def _record(path, t, vals, limit, splits=()) -> str:
    path.mkdir(parents=True, exist_ok=True)
    rec = StreamRecorder(path, sample_rows=limit)
    cuts = sorted({0, len(t), *[s for s in splits if 0 < s < len(t)]})
    for a, b in zip(cuts, cuts[1:]):
        if b - a == 1:
            rec.sample(float(t[a]), dict(zip(COLUMNS, vals[a])))   # the row-at-a-time path too
        else:
            rec.samples(COLUMNS, t[a:b], vals[a:b])
    rec.close()
    return (path / "timeseries.csv").read_text()


def _rows(text: str) -> np.ndarray:
    return np.array([[float(x) for x in r] for r in list(csv.reader(text.splitlines()))[1:]]).reshape(-1, 9)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 400), limit=st.integers(2, 60), seed=st.integers(0, 99),
       splits=st.lists(st.integers(1, 399), max_size=6))
def test_groups_keep_states_energy_and_the_last_row(tmp_path_factory, n, limit, seed, splits):
    t, vals = _series(n, seed)
    d = tmp_path_factory.mktemp("s")
    text = _record(d / "a", t, vals, limit, splits)
    # the same text whatever blocks the samples came in
    assert text == _record(d / "b", t, vals, limit)
    out = _rows(text)
    full = np.column_stack([t, vals])
    assert len(out) == (n if n <= limit else batch_rows(n - 1, limit) + 1)
    # the first sample_rows rows as they were; the last row is the run's last sample
    k = min(n, limit)
    np.testing.assert_array_equal(out[:k], _rows(_record(d / "c", t, vals, None))[:k])
    assert out[-1, 0] == pytest.approx(t[-1], rel=1e-11) and out[-1, 1] == pytest.approx(vals[-1, 0], rel=1e-11)
    # every row starts a group: its t_s and states are that sample's
    starts = [r for r in range(n - 1) if r < limit or batch_group(r, limit)[0] == r] + [n - 1]
    starts = sorted(set(starts))
    assert len(starts) == len(out)
    states = [0] + [1 + i for i, c in enumerate(COLUMNS) if not interval_mean(c)]
    np.testing.assert_allclose(out[:, states], full[starts][:, states], rtol=1e-11)
    # the area under each mean column (a rail's energy, the charge drawn) is kept
    for col in [1 + i for i, c in enumerate(COLUMNS) if interval_mean(c)]:
        area_in = float(np.sum(full[:-1, col] * np.diff(full[:, 0])))
        area_out = float(np.sum(out[:-1, col] * np.diff(out[:, 0])))
        assert math.isclose(area_out, area_in, rel_tol=1e-9, abs_tol=1e-6)


def test_a_series_within_the_limit_is_written_as_before(tmp_path):
    t, vals = _series(300, 1)
    assert _record(tmp_path / "a", t, vals, 300, [7, 150]) == _record(tmp_path / "b", t, vals, None)
    assert _record(tmp_path / "c", t, vals, 299) == _record(tmp_path / "d", t, vals, None)  # the last: its own
    assert _record(tmp_path / "e", t, vals, 290) != _record(tmp_path / "f", t, vals, None)


def test_seven_hours_at_100_ms_keep_about_half_their_rows():
    # 10,000,000 quick-start batches: ~265,000 samples; the default keeps 100,000 at full rate
    assert 130_000 < batch_rows(265_000 - 1, 100_000) + 1 < 140_000
    assert batch_rows(88_430 - 1, 100_000) + 1 == 88_430     # the longest shipped series seen (a Swan run's)


def test_the_trace_draws_the_grouped_rows(tmp_path):
    t, vals = _series(200, 2)
    _record(tmp_path, t, vals, 40)
    ts = load_timeseries(tmp_path)
    write_perfetto(tmp_path, tmp_path / "t.perfetto-trace")
    tr = decode(tmp_path / "t.perfetto-trace")
    # a counter's samples are the grouped rows' (where its value changes), ending at the last sample
    assert len(ts) == batch_rows(199, 40) + 1 < 100
    rows = [(round(x * 1e9), float(v)) for x, v in zip(ts.t_s, ts.column("power.cpu_mw"))]
    expect = [r for k, r in enumerate(rows) if k == 0 or r[1] != rows[k - 1][1]]
    if expect[-1] != rows[-1]:
        expect.append(rows[-1])   # a value repeated at the last sample spans the run
    assert tr.counters["power.cpu_mw"] == expect
    assert expect[-1][0] == round(t[-1] * 1e9)


def test_the_defaults_leave_every_shipped_workload_as_it_was():
    """The thresholds sit above every workload in workloads/ (the golden outputs, scripts/golden.sh,
    stay byte for byte): batches below batch_rows and trace_every x trace_limit; their longest
    time series (a Swan run's: 17,551 to 88,430 rows as the thermal and power models moved) below sample_rows."""
    from pathlib import Path

    from socsim.api import prepare
    from socsim.spec.workload import Output

    out = Output()
    assert out.sample_rows is not None and out.sample_rows > 88_430   # with a margin
    root = Path(__file__).resolve().parents[2] / "workloads"
    totals = {w.name: prepare(str(w))[0].total_batches for w in sorted(root.glob("*.yaml"))}
    assert len(totals) >= 20
    assert max(totals.values()) <= min(out.batch_rows or 0, out.trace_every * (out.trace_limit or 0))


def test_a_run_past_sample_rows_reports_what_a_run_with_every_sample_reports(tmp_path):
    """Through the CLI: the summary does not depend on how timeseries.csv groups its samples, the
    grouped series keeps each rail's energy, and its trace and report are written."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
    from cli_helpers import run_outs, write_workload

    outs = run_outs(tmp_path, write_workload(tmp_path, batches=150), "output.sample_rows", ("null", "12"),
                    "--set", "output.sample_ms=1")
    assert (outs["null"] / "summary.json").read_text() == (outs["12"] / "summary.json").read_text()
    full, grouped = load_timeseries(outs["null"]), load_timeseries(outs["12"])
    assert len(full) > 40 and len(grouped) == batch_rows(len(full) - 1, 12) + 1 < len(full)
    for c in full.select("power.", "_mw"):
        area = [float(np.sum(s.column(c)[:-1] * np.diff(s.t_s))) for s in (full, grouped)]
        assert math.isclose(area[1], area[0], rel_tol=1e-9, abs_tol=1e-9), c
    np.testing.assert_array_equal(grouped.values[-1], full.values[-1])
    decode(outs["12"] / "trace.perfetto-trace")
    assert (outs["12"] / "report.html").stat().st_size > 0
