"""batches.csv of a long run is bounded (output.batch_rows): past that many batches a row sums a
group of consecutive batches, the group doubling each time the run doubles; a run no longer than
batch_rows writes a row per batch exactly as before, and the report writers draw both forms."""
from __future__ import annotations

import csv
import math

import pytest
from hypothesis import given, settings, strategies as st

from socsim.report.events import StreamRecorder, batch_group, batch_rows
from socsim.report.html import per_batch
from socsim.report.perfetto import write_perfetto
from socsim.report.timeseries import load_timeseries

from test_perfetto_trace import decode


def _groups(total: int, limit: int | None) -> list[tuple[int, int]]:
    groups: list[tuple[int, int]] = []
    for b in range(total):
        first, size = batch_group(b, limit)
        assert first <= b < first + size
        if not groups or groups[-1][0] != first:
            groups.append((first, size))
    return groups


@settings(max_examples=40, deadline=None)
@given(total=st.integers(0, 5000), limit=st.one_of(st.none(), st.integers(1, 300)))
def test_groups_tile_the_run_and_batch_rows_counts_them(total, limit):
    groups = _groups(total, limit)
    # consecutive, no gap, no overlap (the last group may be cut by the end of the run)
    assert all(a[0] + a[1] == b[0] for a, b in zip(groups, groups[1:]))
    assert batch_rows(total, limit) == len(groups)
    if limit is not None and total > limit:
        # a row per batch below the limit, then about limit / 4 rows per doubling
        assert groups[:limit] == [(b, 1) for b in range(limit)]
        assert len(groups) <= limit + (limit / 4 + 1) * (math.log2(total / limit) + 1)


def test_two_million_batches_write_about_two_hundred_thousand_rows():
    assert batch_rows(2_000, 100_000) == 2_000          # every workload in workloads/: unchanged
    assert 190_000 < batch_rows(2_000_000, 100_000) < 220_000
    assert batch_rows(2_000_000, None) == 2_000_000


def _record(tmp_path, total: int, limit: int | None, stop: int | None = None):
    rec = StreamRecorder(tmp_path, batch_rows=limit, total_batches=total)
    t = 0.0
    for b in range(stop if stop is not None else total):
        rec.batch(b, t, 0.5 + (b % 3) * 0.25, 2.0 + b % 5, "big4" if b % 7 else "big4, 2.4 GHz")
        t += 0.5 + (b % 3) * 0.25
    rec.close()
    with open(tmp_path / "batches.csv", newline="") as f:
        return list(csv.DictReader(f)), (tmp_path / "batches.csv").read_text()


@pytest.mark.parametrize("stop", [None, 53])
def test_grouped_rows_add_up_to_the_run(tmp_path, stop):
    rows, text = _record(tmp_path, 100, 8, stop)
    n = stop or 100
    assert text.splitlines()[0] == "batch,start_s,time_s,energy_j,plan,batches"
    assert sum(int(r["batches"]) for r in rows) == n
    assert len(rows) == batch_rows(n, 8)
    assert math.isclose(sum(float(r["time_s"]) for r in rows), sum(0.5 + (b % 3) * 0.25 for b in range(n)))
    assert math.isclose(sum(float(r["energy_j"]) for r in rows), sum(2.0 + b % 5 for b in range(n)))
    assert all(float(b["start_s"]) + float(b["time_s"]) == pytest.approx(float(c["start_s"]))
               for b, c in zip(rows, rows[1:]))
    grouped = [r for r in rows if int(r["batches"]) > 1]
    assert grouped and all(r["plan"] in ("big4", "big4 | big4, 2.4 GHz", "big4, 2.4 GHz | big4") for r in grouped)


def test_a_run_within_the_limit_writes_a_row_per_batch_as_before(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, limited = _record(tmp_path / "a", 100, 100)
    _, unlimited = _record(tmp_path / "b", 100, None)
    assert limited == unlimited
    assert limited.splitlines()[0] == "batch,start_s,time_s,energy_j,plan"
    assert len(limited.splitlines()) == 101


def test_trace_and_report_draw_grouped_rows(tmp_path):
    rows, _ = _record(tmp_path, 100, 8)
    write_perfetto(tmp_path, tmp_path / "t.perfetto-trace")
    names = [n for n, *_ in decode(tmp_path / "t.perfetto-trace").slices["batches"]]
    expect = [f"batch {r['batch']}" if r["batches"] == "1"
              else f"batches {r['batch']}-{int(r['batch']) + int(r['batches']) - 1}" for r in rows]
    assert names == expect
    drawn = per_batch(tmp_path, load_timeseries(tmp_path))
    assert [d[0] for d in drawn] == [int(r["batch"]) for r in rows]
    # a group is drawn as its mean batch
    assert all(math.isclose(d[2], float(r["time_s"]) / int(r["batches"])) for d, r in zip(drawn, rows))


def test_a_run_past_batch_rows_reports_what_a_run_with_every_row_reports(tmp_path):
    """The summary does not depend on how batches.csv groups its rows, and the grouped file sums to it."""
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
    from cli_helpers import run_outs, write_workload

    outs = run_outs(tmp_path, write_workload(tmp_path, batches=150), "output.batch_rows", ("null", "16"))
    assert (outs["null"] / "summary.json").read_text() == (outs["16"] / "summary.json").read_text()
    full = list(csv.DictReader(open(outs["null"] / "batches.csv", newline="")))
    grouped = list(csv.DictReader(open(outs["16"] / "batches.csv", newline="")))
    assert len(full) == 150 and len(grouped) == batch_rows(150, 16) < 60
    for col in ("time_s", "energy_j"):
        assert math.isclose(sum(float(r[col]) for r in grouped), sum(float(r[col]) for r in full), rel_tol=1e-12)
    summary = json.loads((outs["16"] / "summary.json").read_text())
    assert summary["batches"] == 150 and (outs["16"] / "trace.perfetto-trace").stat().st_size > 0


def test_a_long_per_batch_chart_is_bucketed(tmp_path):
    """More rows than the chart's points: the means of equal buckets, summing to the same time."""
    rows, _ = _record(tmp_path, 1000, None)
    ts = load_timeseries(tmp_path)
    full = per_batch(tmp_path, ts)
    assert per_batch(tmp_path, ts, None, 1000) == full and len(full) == 1000
    few = per_batch(tmp_path, ts, None, 10)
    assert [r[0] for r in few] == list(range(0, 1000, 100))
    assert math.isclose(sum(r[2] * 100 for r in few), sum(r[2] for r in full))
