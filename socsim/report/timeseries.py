"""Time-series helpers over a run directory: loading, Parquet export, envelopes for plots.

timeseries.csv itself is written by :class:`socsim.report.events.StreamRecorder`; this module
only reads it back (for the HTML report) and converts it.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class TimeSeries:
    """Samples of a run: ``t_s`` (n,) and ``values`` (n, len(columns)) without the time column."""

    columns: tuple[str, ...]
    t_s: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.t_s)

    def column(self, name: str) -> np.ndarray:
        return self.values[:, self.columns.index(name)]

    def select(self, prefix: str = "", suffix: str = "") -> list[str]:
        """Column names starting with ``prefix`` and ending with ``suffix``, in file order."""
        return [c for c in self.columns if c.startswith(prefix) and c.endswith(suffix)]


def load_timeseries(run_dir: Path) -> TimeSeries:
    """Read ``run_dir/timeseries.csv`` (an empty TimeSeries when missing or empty;
    InputError when it is not a socsim time series)."""
    path = Path(run_dir) / "timeseries.csv"
    empty = TimeSeries((), np.zeros(0), np.zeros((0, 0)))
    if not path.exists():
        return empty
    from socsim.report.events import PARSE_ERRORS, malformed, timeseries_header

    try:
        with open(path, newline="") as f:
            header = timeseries_header(path, f.readline())
        if not header:
            return empty
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy warns on a header-only file
            data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, dtype=float)
        data = data.reshape(-1, len(header))
    except PARSE_ERRORS as e:
        m = re.search(r"at row (\d+)", str(e))   # numpy counts data rows from 0
        raise malformed(path, int(m.group(1)) + 2 if m else None, e) from None
    # values is a view into the one array read (a copy would double the peak memory of a long
    # run's report: 53,000 rows x 40 columns is 17 MB); a column of either is strided alike
    return TimeSeries(tuple(header[1:]), data[:, 0].copy(), data[:, 1:])


def to_parquet(run_dir: Path, out: Path | None = None) -> Path | None:
    """Write ``timeseries.parquet`` beside timeseries.csv (or to ``out``) when pyarrow is
    importable.

    Returns the written path, or None when pyarrow is absent or there is no time series.
    """
    try:
        import pyarrow
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq
    except ImportError:
        return None
    src = Path(run_dir) / "timeseries.csv"
    if not src.exists() or src.stat().st_size == 0:
        return None
    try:
        table = pacsv.read_csv(src)
    except pyarrow.ArrowInvalid as e:
        from socsim.report.events import malformed
        raise malformed(src, None, str(e)) from None
    if out is not None:
        pq.write_table(table, out)
        return Path(out)
    out = src.with_suffix(".parquet")
    tmp = out.with_name(out.name + ".tmp")
    pq.write_table(table, tmp)
    tmp.replace(out)
    return out


def envelope(t: np.ndarray, y: np.ndarray, max_points: int = 2000
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t, mean, min, max) of ``y`` in at most ``max_points`` equal-count buckets, for plots.

    A series that fits is returned as is (min = max = mean).  Longer ones (an hour at 100 ms is
    36,000 samples) become a mean line plus a min/max band, so throttling dips and temperature
    peaks stay visible while the SVG stays light.
    """
    n = len(t)
    if n <= max_points:
        return t, y, y, y
    edges = np.linspace(0, n, max_points + 1).astype(int)
    starts = edges[:-1]
    counts = np.diff(edges)
    mean = np.add.reduceat(y, starts) / counts
    t_mid = np.add.reduceat(t, starts) / counts
    return t_mid, mean, np.minimum.reduceat(y, starts), np.maximum.reduceat(y, starts)


def energy_between_j(ts: TimeSeries, t0_s: np.ndarray, t1_s: np.ndarray) -> np.ndarray:
    """Whole-phone energy over each [t0_s, t1_s] from the cumulative ``power.*_uws`` rail
    counters (linear interpolation between samples); NaN when there are no rail counters."""
    t0_s, t1_s = np.asarray(t0_s, dtype=float), np.asarray(t1_s, dtype=float)
    cols = ts.select("power.", "_uws")
    if not cols or len(ts) == 0:
        return np.full(t0_s.shape, np.nan)
    total_uws = ts.values[:, [ts.columns.index(c) for c in cols]].sum(axis=1)
    t = ts.t_s
    if t[0] > 0:  # the counters are cumulative from the start of the run
        t, total_uws = np.concatenate(([0.0], t)), np.concatenate(([0.0], total_uws))
    return (np.interp(t1_s, t, total_uws) - np.interp(t0_s, t, total_uws)) * 1e-6
