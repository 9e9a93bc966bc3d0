"""Report writers of a run directory: what ``socsim run --out DIR`` and ``socsim report DIR`` call.

Each output is written to a temporary name in the same directory, and all are renamed into
place once all are written, so a crash, a malformed input file or a concurrent reader never
leaves or sees a half-written trace or page (or a new trace beside an old page).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from socsim.report.html import write_html
from socsim.report.perfetto import write_perfetto
from socsim.errors import InputError
from socsim.report.timeseries import to_parquet

TRACE_NAME = "trace.perfetto-trace"
HTML_NAME = "report.html"


def _tmp_name(out: Path) -> Path:
    return out.with_name(f".{out.name}.tmp")


#: the recorder's files a report is drawn from, and what is missing without each
INPUTS = {
    "ops.csv": "no op slices (core tracks) in the trace and no op timeline",
    "batches.csv": "no batches track; per-batch figures come from the op slices",
    "events.csv": "no instants (throttling, trips) in the trace or charts",
    "timeseries.csv": "no counter tracks (power, frequency, temperature, battery) and no time-series charts",
}


def missing_inputs(run_dir: Path) -> list[str]:
    """One warning per recorder file missing from ``run_dir``, naming it and what is lost."""
    return [f"{Path(run_dir) / name} is missing: {lost}" for name, lost in INPUTS.items()
            if not (Path(run_dir) / name).exists()]


def _html_from_summary(run_dir: Path, out: Path, batch: int | None, phone: object = None,
                       phone_name: str = "") -> object:
    """write_html, with a summary.json whose values are not what socsim wrote (a number where
    a table was, a string where a number was) as bad input naming the file, not a crash.  The
    csv files are checked where they are parsed (socsim.report.events ``malformed``)."""
    try:
        return write_html(run_dir, out, batch, phone, phone_name)
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as e:
        if isinstance(e, InputError):
            raise
        raise InputError(f"summary.json is not as socsim wrote it ({type(e).__name__}: {e}); re-run the "
                         "workload to get a fresh run directory", file=str(run_dir / "summary.json")) from e


def write_reports(run_dir: Path, trace: bool = True, html: bool = True,
                  batch_for_timeline: int | None = None,
                  phone_trace: Path | str | None = None) -> list[Path]:
    """Write ``trace.perfetto-trace``, ``report.html`` and, when pyarrow is installed,
    ``timeseries.parquet`` into ``run_dir``; returns the paths written, in that order.

    ``run_dir`` must hold the files of :class:`socsim.report.events.StreamRecorder` (ops.csv,
    events.csv, timeseries.csv) and the summary.json; missing ones give empty tracks/charts
    (:func:`missing_inputs` names them), a malformed one is an InputError naming the file and
    line.  Every output is written to a temporary name first and all are renamed into place only
    when all succeeded: on an error the directory's previous reports are untouched.

    ``phone_trace`` (a phone's Perfetto trace) draws its measured curves beside the simulated
    ones in report.html; it is read before anything is written (a file that is not a trace is
    an InputError naming it).
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"run directory not found: {run_dir}")
    phone, phone_name = None, ""
    if phone_trace is not None:
        from socsim.report.trace_reader import read_trace
        phone, phone_name = read_trace(phone_trace, "").series, Path(phone_trace).name
    jobs: list[tuple[Path, Callable[[Path], object]]] = []
    if trace:
        jobs.append((run_dir / TRACE_NAME, lambda p: write_perfetto(run_dir, p)))
    if html:
        jobs.append((run_dir / HTML_NAME, lambda p: _html_from_summary(run_dir, p, batch_for_timeline,
                                                                     phone, phone_name)))
    jobs.append((run_dir / "timeseries.parquet", lambda p: to_parquet(run_dir, p)))
    done: list[Path] = []
    try:
        for out, write in jobs:
            tmp = _tmp_name(out)
            if write(tmp) is not None or tmp.exists():
                done.append(out)
        # a target that cannot be replaced (a directory in its place) stops all of them, before
        # any is renamed: the directory's reports stay as they were, all or none
        for out in done:
            if out.is_dir():
                raise IsADirectoryError(21, "a directory is in the way of the report", str(out))
        for out in done:
            os.replace(_tmp_name(out), out)
    finally:
        for out, _ in jobs:
            _tmp_name(out).unlink(missing_ok=True)
    return done
