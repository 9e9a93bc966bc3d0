"""Report writers of a run directory: what ``socsim run --out DIR`` and ``socsim report DIR`` call.

Each output is written to a temporary name in the same directory and renamed into place, so a
crash or a concurrent reader never sees a half-written trace or page.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from socsim.report.html import write_html
from socsim.report.perfetto import write_perfetto
from socsim.report.timeseries import to_parquet

TRACE_NAME = "trace.perfetto-trace"
HTML_NAME = "report.html"


def _atomic(out: Path, write: Callable[[Path], None]) -> Path:
    """Run ``write(tmp)`` then rename tmp to ``out`` (same directory, so the rename is atomic)."""
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        write(tmp)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return out


def write_reports(run_dir: Path, trace: bool = True, html: bool = True,
                  batch_for_timeline: int | None = None) -> list[Path]:
    """Write ``trace.perfetto-trace``, ``report.html`` and, when pyarrow is installed,
    ``timeseries.parquet`` into ``run_dir``; returns the paths written, in that order.

    ``run_dir`` must hold the files of :class:`socsim.report.events.StreamRecorder` (ops.csv,
    events.csv, timeseries.csv) and the summary.json; missing ones give empty tracks/charts.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"run directory not found: {run_dir}")
    written: list[Path] = []
    if trace:
        written.append(_atomic(run_dir / TRACE_NAME, lambda p: write_perfetto(run_dir, p)))
    if html:
        written.append(_atomic(run_dir / HTML_NAME,
                               lambda p: write_html(run_dir, p, batch_for_timeline)))
    parquet = to_parquet(run_dir)
    if parquet is not None:
        written.append(parquet)
    return written
