"""`socsim report DIR` on a damaged run directory: a file that does not parse is bad input
(exit 2, naming the file and line) and the old reports stay; a missing file is a warning naming
it.  The trace's counter tracks are named as the timeseries.csv columns."""
from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

import socsim
from socsim.cli import main
from socsim.report.perfetto_android import android_columns, cluster_cpus

LENET = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=3)


@pytest.fixture(scope="module")
def good_run(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("good") / "run"
    socsim.run("sd865", LENET, out=d, deterministic=True)
    return d


@pytest.fixture
def run_dir(good_run, tmp_path) -> Path:
    d = tmp_path / "run"
    shutil.copytree(good_run, d)
    return d


def _report(d: Path):
    return CliRunner().invoke(main, ["report", str(d)])


def _lines(p: Path) -> int:
    return len(p.read_text().splitlines())


@pytest.mark.parametrize("name, junk", [
    ("ops.csv", "garbage,,,\n"),
    ("ops.csv", "cpu4,conv,conv2d,x,forward,0.1,0.2\n"),
    ("events.csv", "1.0,thermal\n"),
    ("batches.csv", "7,0.5\n"),
    ("batches.csv", "7,zero,0.1,0.2,p\n"),
    ("ops.csv", "cpu4,conv1,conv2d,0,forward,-1,0.0001\n"),   # hung the trace writer once
    ("ops.csv", "cpu4,conv1,conv2d,0,forward,1e308,inf\n"),
    ("timeseries.csv", "1,2,x\n"),
    ("timeseries.csv", None),   # a bad number in a full-width row
])
def test_malformed_csv_exits_2_naming_file_and_line(run_dir, name, junk):
    p = run_dir / name
    if junk is None:
        header = p.read_text().splitlines()[0].split(",")
        junk = ",".join(["9.9"] + ["oops"] * (len(header) - 1)) + "\n"
    with open(p, "a") as f:
        f.write(junk)
    trace_before = (run_dir / "trace.perfetto-trace").read_bytes()
    html_before = (run_dir / "report.html").read_bytes()
    r = _report(run_dir)
    assert r.exit_code == 2, r.output
    assert f"{p}:{_lines(p)}:" in r.output and "malformed" in r.output
    assert (run_dir / "trace.perfetto-trace").read_bytes() == trace_before
    assert (run_dir / "report.html").read_bytes() == html_before
    assert not list(run_dir.glob(".*"))


@pytest.mark.parametrize("text, line", [("{\n", 2), ('{"soc": "sd865",\n "x": }\n', 2), ("[1, 2]\n", 1)])
def test_bad_summary_json_exits_2_naming_it(run_dir, text, line):
    (run_dir / "summary.json").write_text(text)
    r = _report(run_dir)
    assert r.exit_code == 2, r.output
    assert f"{run_dir / 'summary.json'}:{line}:" in r.output


@pytest.mark.parametrize("text, what", [("junk,stuff\n1,2\n", "'junk'"), (" \n", "' '"),
                                        ("hello world\n", "'hello world'")])
def test_timeseries_that_is_not_socsims_exits_2(run_dir, text, what):
    """A timeseries.csv without socsim's t_s header is not read as an empty series."""
    p = run_dir / "timeseries.csv"
    p.write_text(text)
    html_before = (run_dir / "report.html").read_bytes()
    r = _report(run_dir)
    assert r.exit_code == 2, r.output
    assert f"{p}:1:" in r.output and "t_s" in r.output and what in r.output
    assert r.output.count("malformed") == 1
    assert (run_dir / "report.html").read_bytes() == html_before
    assert not list(run_dir.glob(".*"))


def test_missing_timeseries_is_a_warning(run_dir):
    (run_dir / "timeseries.csv").unlink()
    r = _report(run_dir)
    assert r.exit_code == 0, r.output
    assert "warning:" in r.stderr and str(run_dir / "timeseries.csv") in r.stderr
    assert "counter tracks" in r.stderr
    assert r.stdout.count("wrote ") == 2


def test_intact_run_dir_reports_without_warnings(run_dir):
    r = _report(run_dir)
    assert r.exit_code == 0 and r.stderr == ""


def test_trace_counters_are_named_as_the_csv_columns(good_run):
    with open(good_run / "timeseries.csv", newline="") as f:
        columns = next(csv.reader(f))[1:]
    trace = Trace.FromString((good_run / "trace.perfetto-trace").read_bytes())
    counters = {p.track_descriptor.name: p.track_descriptor.parent_uuid for p in trace.packet
                if p.HasField("track_descriptor") and p.track_descriptor.HasField("counter")}
    android = android_columns(["t_s", *columns], cluster_cpus(good_run)).taken
    assert android   # frequencies, rails, battery and zones go out in Android's forms (docs/trace.md)
    assert sorted(counters) == sorted(c for i, c in enumerate(columns, 1) if i not in android)
    assert any(p.HasField("ftrace_events") for p in trace.packet)
    groups = {p.track_descriptor.uuid: p.track_descriptor.name for p in trace.packet
              if p.HasField("track_descriptor")}
    assert {groups[counters[c]] for c in columns if c.startswith("thermal.")} == {"Thermal"}


@pytest.mark.parametrize("change", [{"energy_j": 5, "thermal": None}])
def test_summary_with_wrong_types_exits_2(run_dir, change):
    import json
    p = run_dir / "summary.json"
    s = json.loads(p.read_text())
    s.update(change)
    p.write_text(json.dumps(s))
    html_before = (run_dir / "report.html").read_bytes()
    r = _report(run_dir)
    assert r.exit_code == 2, r.output
    assert "summary.json" in r.output and "not as socsim wrote it" in r.output
    assert (run_dir / "report.html").read_bytes() == html_before
