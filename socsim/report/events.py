"""What the engine emits while it runs, and the on-disk form writers read back.

The engine never formats a report: it calls a Recorder (``socsim.engine.recorder``, PyMTL-style:
tracing is a pass over events, not code sprinkled through the model).  :class:`StreamRecorder` streams the
events to CSV files in a run directory so hour-long runs stay small in memory; the report
writers (summary, Perfetto, HTML) read those files back, which is also how ``socsim report DIR``
regenerates reports.

Files in a run directory:

``ops.csv``         one row per slice: track,name,kind,batch,phase,start_s,dur_s
                    tracks: ``cpu<N>`` (one per core), ``dsp``, ``gpu``, ``fastrpc``, ``engine``
                    (graph preparation, DVFS switches); phase forward|error_grad|weight_grad|
                    update|rpc|prep|switch
``events.csv``      instants: t_s,track,name,detail (thermal trips, throttling, memory pressure)
``timeseries.csv``  one row per sample, from t_s = 0 and at the end of the run (values to 12
                    significant digits): t_s then counters, named as Android names them:
                    ``power.<rail>_uws`` (cumulative rail energy, micro-watt-seconds),
                    ``power.<rail>_mw`` (mean power from t_s to the next row),
                    ``cpufreq.<cluster>`` (MHz), ``<zone> Temperature`` (deg C),
                    ``thermal.<node>_c``, ``batt.charge_uah``, ``batt.capacity_pct``,
                    ``batt.current_ua`` and ``batt.voltage_mv`` (means from t_s to the next
                    row), ``mem.used_bytes``, ``batch``.  A row holds the state at t_s and
                    what holds from t_s to the next row, as a Perfetto counter does
                    (docs/modeling.md, Sampled counters)
``batches.csv``     one row per batch: batch,start_s,time_s,energy_j,plan (a config switch
                    the batch paid before its ops included: the rows add up to the run)
``summary.json``    the summary (docs/architecture.md, Contracts)
"""
from __future__ import annotations

import csv
import math
import io
from pathlib import Path

import numpy as np

from socsim.engine.recorder import NullRecorder, Recorder  # noqa: F401  (the port the writers implement)
from socsim.errors import InputError
# "%.12g" rows of timeseries.csv (numba kernel and its Python reference), re-exported here
from socsim.report.csv_format import format_rows, format_rows_py  # noqa: F401

OPS_COLUMNS = ("track", "name", "kind", "batch", "phase", "start_s", "dur_s")
EVENT_COLUMNS = ("t_s", "track", "name", "detail")
BATCH_COLUMNS = ("batch", "start_s", "time_s", "energy_j", "plan")

#: errors a malformed run file raises while it is parsed (bad field counts, numbers, encoding)
PARSE_ERRORS = (ValueError, TypeError, KeyError, IndexError, csv.Error)


def malformed(path: Path | str, line: int | None, cause: BaseException | str,
              columns: tuple[str, ...] | None = None) -> InputError:
    """The bad-input error for a run-directory file that does not parse (exit 2): it names the
    file and, where known, the line; ``columns`` are the fields a row should have.  A cause that
    is already socsim's bad-input error (raised inside the parse) is returned as it is."""
    if isinstance(cause, InputError):
        return cause
    text = cause if isinstance(cause, str) else (str(cause) or type(cause).__name__)
    if isinstance(cause, KeyError):
        text = f"missing column {cause}"
    elif isinstance(cause, UnicodeDecodeError):
        text, line = f"not UTF-8 text (byte {cause.object[cause.start:cause.start + 1]!r})", None
    expect = f" (a row is {','.join(columns)})" if columns else ""
    return InputError(f"malformed run file, not as socsim wrote it: {text}{expect}", file=str(path),
                      line=line or None)


def timeseries_header(path: Path | str, first_line: str | None) -> list[str]:
    """The columns of timeseries.csv from its first line ([] for an empty file: a recorder that
    never sampled leaves one); a first line that does not start with socsim's ``t_s`` column is
    not a socsim time series (bad input, exit 2)."""
    if not first_line:
        return []
    header = next(csv.reader([first_line]), None)
    if not header or header[0] != "t_s":
        raise malformed(path, 1, f"the header's first column is t_s; it starts {(header or [''])[0][:40]!r}")
    return header


def _clean(text: str) -> str:
    """Names go into unquoted CSV fields: no separators or line breaks."""
    return text.replace(",", ";").replace("\n", " ").replace("\r", " ")


def _quoted(text: str) -> str:
    """A CSV field as the csv module writes it (quoted only where it must be): plan labels keep
    their commas, so batches.csv, events.csv and the summary name a plan alike."""
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _fmt(x: float) -> str:
    # repr-exact and deterministic: the same run gives byte-identical files
    return repr(float(x))


class StreamRecorder:
    """Streams slices, instants and samples to CSV files in ``directory``.

    ``max_slice_batches`` bounds the op slices kept (the first N batches, then every
    ``slice_every``-th batch) so a 100k-batch run's trace stays openable.  Samples are
    formatted a block at a time by :func:`format_rows`; rows given one at a time
    (:meth:`sample`) are gathered into blocks of :attr:`ROWS_PER_BLOCK` first (a few MB).
    """

    wants_slices = True
    ROWS_PER_BLOCK = 4096

    def __init__(self, directory: Path, max_slice_batches: int = 200, slice_every: int = 50) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._ops = open(self.directory / "ops.csv", "w", newline="", buffering=1 << 20)
        self._events = open(self.directory / "events.csv", "w", newline="", buffering=1 << 16)
        self._ts = open(self.directory / "timeseries.csv", "wb", buffering=1 << 20)
        self._batches = open(self.directory / "batches.csv", "w", newline="", buffering=1 << 16)
        self._batches.write("batch,start_s,time_s,energy_j,plan\n")
        self._ops.write(",".join(OPS_COLUMNS) + "\n")
        self._events.write(",".join(EVENT_COLUMNS) + "\n")
        self._last_event_t = -math.inf
        self._events_unordered = False  # an instant was recorded after a later one (see close)
        self._ts_columns: list[str] | None = None
        self._ts_rows: list[list[float]] = []      # rows of sample() not yet written
        self._names: dict[str, str] = {}            # name -> _clean(name)
        self.max_slice_batches = max_slice_batches
        self.slice_every = slice_every

    def keeps_batch(self, batch: int) -> bool:
        return batch < self.max_slice_batches or batch % self.slice_every == 0

    def op_slice(self, track: str, name: str, kind: str, batch: int, phase: str,
                 start_s: float, dur_s: float) -> None:
        names = self._names
        n, k = names.get(name), names.get(kind)
        if n is None:
            n = names[name] = _clean(name)
        if k is None:
            k = names[kind] = _clean(kind)
        self._ops.write(f"{track},{n},{k},{batch},{phase},{_fmt(start_s)},{_fmt(dur_s)}\n")

    def instant(self, t_s: float, track: str, name: str, detail: str = "") -> None:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([_fmt(t_s), track, name, detail])
        self._events.write(buf.getvalue())
        if t_s < self._last_event_t:
            self._events_unordered = True
        self._last_event_t = max(self._last_event_t, t_s)

    def _ts_header(self, columns: list[str]) -> None:
        self._ts_columns = list(columns)
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(["t_s", *self._ts_columns])
        self._ts.write(buf.getvalue().encode())

    def _flush_rows(self) -> None:
        if self._ts_rows:
            self._ts.write(format_rows(np.array(self._ts_rows, dtype=np.float64)))
            self._ts_rows = []

    def samples(self, columns: list[str], t_s, values) -> None:
        """A block of samples: ``values`` is (len(t_s) x len(columns)).  Same text as
        :meth:`sample` row by row ("%.12g", see :func:`format_rows`)."""
        if self._ts_columns is None:
            self._ts_header(columns)
        elif list(columns) != self._ts_columns:
            raise ValueError("time-series columns changed during a run")
        self._flush_rows()
        self._ts.write(format_rows(np.column_stack([np.asarray(t_s, np.float64),
                                                    np.asarray(values, np.float64)])))

    def sample(self, t_s: float, values: dict[str, float]) -> None:
        if self._ts_columns is None:
            self._ts_header(list(values))
        self._ts_rows.append([float(t_s), *(float(values[c]) for c in self._ts_columns)])
        if len(self._ts_rows) >= self.ROWS_PER_BLOCK:
            self._flush_rows()

    def batch(self, batch: int, start_s: float, time_s: float, energy_j: float, plan: str) -> None:
        self._batches.write(f"{batch},{_fmt(start_s)},{_fmt(time_s)},{_fmt(energy_j)},{_quoted(plan)}\n")

    def close(self) -> None:
        try:
            self._flush_rows()
        finally:
            for f in (self._ops, self._events, self._ts, self._batches):
                f.close()
        if self._events_unordered:
            # some instants are known only once their batch is done (where memory went over
            # the budget): put events.csv in time order, ties in the order recorded
            path = self.directory / "events.csv"
            with open(path, newline="") as f:
                header, *rows = list(csv.reader(f))
            rows.sort(key=lambda row: float(row[0]))
            with open(path, "w", newline="") as f:
                csv.writer(f, lineterminator="\n").writerows([header, *rows])


def read_ops(directory: Path):
    """Yield op slices of a run directory as dicts (streaming); a malformed row is an
    InputError naming the file and line."""
    path = Path(directory) / "ops.csv"
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        try:
            for row in reader:
                if None in row or None in row.values():
                    raise ValueError(f"expected {len(OPS_COLUMNS)} fields")
                row["batch"] = int(row["batch"])
                row["start_s"] = float(row["start_s"])
                row["dur_s"] = float(row["dur_s"])
                yield row
        except PARSE_ERRORS as e:
            raise malformed(path, reader.line_num, e, OPS_COLUMNS) from None


def read_events(directory: Path) -> list[dict]:
    """The instants of events.csv ([] when there is none); a malformed row is an InputError."""
    path = Path(directory) / "events.csv"
    if not path.exists():
        return []
    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        try:
            for r in reader:
                if None in r or r.get("name") is None:
                    raise ValueError(f"expected {len(EVENT_COLUMNS)} fields")
                r["t_s"] = float(r["t_s"])
                rows.append(r)
        except PARSE_ERRORS as e:
            raise malformed(path, reader.line_num, e, EVENT_COLUMNS) from None
    return rows


def read_timeseries(directory: Path) -> tuple[list[str], "np.ndarray"]:
    """Columns and a float array (rows x columns) of a run's time series."""
    path = Path(directory) / "timeseries.csv"
    with open(path, newline="") as f:
        reader = csv.reader(f)
        try:
            header = next(reader, None)
            if header is None:
                return [], np.zeros((0, 0))
            rows = []
            for r in reader:
                if len(r) != len(header):
                    raise ValueError(f"a row has {len(r)} fields, the header {len(header)}")
                rows.append([float(x) for x in r])
        except PARSE_ERRORS as e:
            raise malformed(path, reader.line_num, e) from None
    return header, np.asarray(rows, dtype=float).reshape(len(rows), len(header))
