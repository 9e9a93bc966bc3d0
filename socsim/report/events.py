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
                    (docs/modeling.md, Sampled counters).  Past ``output.sample_rows``
                    rows a row stands for a group of consecutive samples, grouped as
                    :func:`batch_group` groups batches (by row index): its t_s and states are
                    the group's first sample's, its means (:func:`interval_mean`) are
                    time-weighted over the group; the run's last row is always its own
``batches.csv``     one row per batch: batch,start_s,time_s,energy_j,plan (a config switch
                    the batch paid before its ops included: the rows add up to the run).  A
                    run longer than ``output.batch_rows`` batches has a sixth column,
                    ``batches``: past that many batches a row sums a group of consecutive
                    batches (:func:`batch_group`; batch is the group's first, start_s its
                    start, time_s and energy_j its sums, plan its distinct plans joined by
                    " | "), so the file stays bounded (docs/guide.md, Limits and errors)
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


def keeps_batch(batch: int, first: int, every: int, limit: int | None) -> bool:
    """Whether op slices are kept for ``batch``: the ``first`` batches, then every ``every``-th;
    past ``every`` x ``limit`` batches the interval doubles each time the run doubles in length
    (batches [2^(j-1), 2^j) x every x limit keep every (every x 2^j)-th), so a run of B batches
    keeps about first + limit x (1 + log2(B / (every x limit)) / 2) batches.  ``limit`` None:
    every ``every``-th batch to the end (output.trace_limit: null)."""
    if batch < first:
        return True
    if limit is None:
        return batch % every == 0
    j = (batch // (every * limit)).bit_length()
    return batch % (every << j) == 0


def kept_batches(total: int, first: int, every: int, limit: int | None) -> int:
    """How many of ``total`` batches :func:`keeps_batch` keeps (counted per section, not by
    iterating: ``total`` may be 10^8)."""
    def multiples(m: int, a: int, b: int) -> int:   # multiples of m in [a, b)
        return max(0, -(-b // m) - -(-a // m)) if b > a else 0

    n = min(first, total)
    if limit is None:
        return n + multiples(every, first, total)
    span, j = every * limit, 0
    while True:
        a, b = (0, span) if j == 0 else (span << (j - 1), span << j)
        if a >= total:
            return n
        n += multiples(every << j, max(a, first), min(b, total))
        j += 1


def batch_group(batch: int, limit: int | None) -> tuple[int, int]:
    """(first batch, size) of the batches.csv row that holds ``batch``: a row per batch below
    ``limit``; batches [limit x 2^(j-1), limit x 2^j) go in groups of 2^(j+1) counted from that
    section's start (the last group of a section may be shorter), so each doubling of the run
    adds about limit / 4 rows.  ``limit`` None: a row per batch."""
    if limit is None or batch < limit:
        return batch, 1
    j = (batch // limit).bit_length()
    lo, hi = limit << (j - 1), limit << j
    size = 2 << j
    first = lo + (batch - lo) // size * size
    return first, min(size, hi - first)


def batch_rows(total: int, limit: int | None) -> int:
    """How many batches.csv rows a run of ``total`` batches writes (:func:`batch_group`)."""
    if limit is None or total <= limit:
        return total
    n, j = limit, 1
    while (limit << (j - 1)) < total:
        lo, hi = limit << (j - 1), min(limit << j, total)
        n += -(-(hi - lo) // (2 << j))
        j += 1
    return n


def interval_mean(column: str) -> bool:
    """Whether a timeseries.csv column is a mean over the interval from its row to the next
    (``power.<rail>_mw``, ``batt.current_ua``, ``batt.voltage_mv``); the others are states at
    the row's t_s (cumulative energies, frequencies, temperatures, charge, memory, batch)."""
    return (column.startswith("power.") and column.endswith("_mw")) or column in ("batt.current_ua",
                                                                                 "batt.voltage_mv")


def merge_samples(rows: np.ndarray, t_end: float, means: np.ndarray) -> np.ndarray:
    """One timeseries.csv row for the consecutive sample rows ``rows`` (t_s first) whose last
    interval ends at ``t_end``: the first row's t_s and states, and for the ``means`` columns
    (indices into a row) the time-weighted mean over [rows[0].t_s, t_end], so the area under a
    power counter (the rail's energy) is kept; a group that spans no time keeps its first row."""
    out = rows[0].copy()
    dt = np.diff(np.append(rows[:, 0], t_end))
    span = float(dt.sum())
    if span > 0 and len(means):
        out[means] = (rows[:, means] * dt[:, None]).sum(axis=0) / span
    return out


class _Guarded:
    """A recorder's output file whose write errors (a full disk, a vanished directory) do not
    stop the run: the first is kept in ``failures`` and the file writes nothing more, so the
    simulation finishes and its summary is still reported (socsim.api.run says what was lost)."""

    def __init__(self, path: Path, mode: str, buffering: int, failures: list) -> None:
        self.path = path
        self.failures = failures
        self.f = open(path, mode, newline="" if "b" not in mode else None, buffering=buffering)

    def write(self, data) -> None:
        if self.f is None:
            return
        try:
            self.f.write(data)
        except OSError as e:
            self._fail(e)

    def _fail(self, e: OSError) -> None:
        self.failures.append((self.path, e))
        f, self.f = self.f, None
        try:
            f.close()
        except OSError:
            pass

    def close(self) -> None:
        if self.f is None:
            return
        try:
            self.f.close()
        except OSError as e:
            self.f = None
            self.failures.append((self.path, e))
        self.f = None


class StreamRecorder:
    """Streams slices, instants and samples to CSV files in ``directory``.

    ``max_slice_batches`` bounds the op slices kept (the first N batches, then every
    ``slice_every``-th batch) so a 100k-batch run's trace stays openable.  Samples are
    formatted a block at a time by :func:`format_rows`; rows given one at a time
    (:meth:`sample`) are gathered into blocks of :attr:`ROWS_PER_BLOCK` first (a few MB).
    """

    wants_slices = True
    ROWS_PER_BLOCK = 4096

    def __init__(self, directory: Path, max_slice_batches: int = 200, slice_every: int = 50,
                 slice_limit: int | None = 1000, batch_rows: int | None = None,
                 total_batches: int | None = None, sample_rows: int | None = None) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        #: (path, OSError) of each file that could not be written to the end (a full disk)
        self.failures: list[tuple[Path, OSError]] = []
        d, fails = self.directory, self.failures
        self._ops = _Guarded(d / "ops.csv", "w", 1 << 20, fails)
        self._events = _Guarded(d / "events.csv", "w", 1 << 16, fails)
        self._ts = _Guarded(d / "timeseries.csv", "wb", 1 << 20, fails)
        self._batches = _Guarded(d / "batches.csv", "w", 1 << 16, fails)
        # a run longer than ``batch_rows`` batches sums groups of batches into a row (batch_group),
        # with a ``batches`` column; a shorter one (or one of unknown length) has a row per batch
        self._group_limit = batch_rows if (batch_rows is not None and total_batches is not None
                                           and total_batches > batch_rows) else None
        self._group: list | None = None   # [first, start_s, time_s, energy_j, plans, size, seen]
        self._batches.write("batch,start_s,time_s,energy_j,plan" +
                            (",batches\n" if self._group_limit is not None else "\n"))
        self._ops.write(",".join(OPS_COLUMNS) + "\n")
        self._events.write(",".join(EVENT_COLUMNS) + "\n")
        self._last_event_t = -math.inf
        self._events_unordered = False  # an instant was recorded after a later one (see close)
        self._ts_columns: list[str] | None = None
        self._ts_rows: list[list[float]] = []      # rows of sample() not yet written
        # past ``sample_rows`` rows, samples are merged in groups (merge_samples; batch_group by
        # row index): rows seen so far, the pending group's rows and the row index it ends before
        self._sample_limit = sample_rows
        self._ts_seen = 0
        self._ts_pending: list[np.ndarray] = []
        self._ts_pending_end = 0
        self._ts_means = np.zeros(0, np.intp)
        self._names: dict[str, str] = {}            # name -> _clean(name)
        self.max_slice_batches = max_slice_batches
        self.slice_every = slice_every
        self.slice_limit = slice_limit

    def keeps_batch(self, batch: int) -> bool:
        """Whether ``batch``'s op slices are written (:func:`keeps_batch`)."""
        return keeps_batch(batch, self.max_slice_batches, self.slice_every, self.slice_limit)

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
        self._ts_means = np.array([1 + i for i, c in enumerate(self._ts_columns) if interval_mean(c)], np.intp)

    def _flush_rows(self) -> None:
        if self._ts_rows:
            self._write_rows(np.array(self._ts_rows, dtype=np.float64))
            self._ts_rows = []

    def _write_rows(self, block: np.ndarray) -> None:
        """Sample rows (t_s first) in order: the first ``sample_rows`` as they are, the later
        ones into their groups (a group is written once the next one's first row ends it)."""
        limit, n0 = self._sample_limit, self._ts_seen
        self._ts_seen += len(block)
        k = len(block) if limit is None else max(0, min(len(block), limit - n0))
        if k:
            self._ts.write(format_rows(block[:k]))
        i = k
        while i < len(block):
            r = n0 + i
            if self._ts_pending and r >= self._ts_pending_end:
                self._write_group(float(block[i, 0]))
            if not self._ts_pending:
                first, size = batch_group(r, limit)
                self._ts_pending_end = first + size
            take = min(len(block) - i, self._ts_pending_end - r)
            self._ts_pending.append(block[i:i + take])
            i += take

    def _write_group(self, t_end: float) -> None:
        rows = np.vstack(self._ts_pending)
        self._ts_pending = []
        self._ts.write(format_rows(merge_samples(rows, t_end, self._ts_means)[None, :]))

    def _close_group(self) -> None:
        """The pending group at the end of the run: its rows but the last merged, and the run's
        last row (the state at its end) as it is."""
        if not self._ts_pending:
            return
        rows = np.vstack(self._ts_pending)
        self._ts_pending = [rows[:-1]] if len(rows) > 1 else []
        if self._ts_pending:
            self._write_group(float(rows[-1, 0]))
        self._ts.write(format_rows(rows[-1:]))

    def samples(self, columns: list[str], t_s, values) -> None:
        """A block of samples: ``values`` is (len(t_s) x len(columns)).  Same text as
        :meth:`sample` row by row ("%.12g", see :func:`format_rows`)."""
        if self._ts_columns is None:
            self._ts_header(columns)
        elif list(columns) != self._ts_columns:
            raise ValueError("time-series columns changed during a run")
        self._flush_rows()
        self._write_rows(np.column_stack([np.asarray(t_s, np.float64), np.asarray(values, np.float64)]))

    def sample(self, t_s: float, values: dict[str, float]) -> None:
        if self._ts_columns is None:
            self._ts_header(list(values))
        self._ts_rows.append([float(t_s), *(float(values[c]) for c in self._ts_columns)])
        if len(self._ts_rows) >= self.ROWS_PER_BLOCK:
            self._flush_rows()

    def batch(self, batch: int, start_s: float, time_s: float, energy_j: float, plan: str) -> None:
        if self._group_limit is None:
            self._batches.write(f"{batch},{_fmt(start_s)},{_fmt(time_s)},{_fmt(energy_j)},{_quoted(plan)}\n")
            return
        g = self._group
        if g is None or batch >= g[0] + g[5]:
            self._flush_group()
            first, size = batch_group(batch, self._group_limit)
            g = self._group = [first, start_s, 0.0, 0.0, [], size, 0]
        g[2] += time_s
        g[3] += energy_j
        if plan not in g[4]:
            g[4].append(plan)
        g[6] += 1
        if batch == g[0] + g[5] - 1:
            self._flush_group()

    def _flush_group(self) -> None:
        g, self._group = self._group, None
        if g is not None:
            self._batches.write(f"{g[0]},{_fmt(g[1])},{_fmt(g[2])},{_fmt(g[3])},{_quoted(' | '.join(g[4]))},"
                                f"{g[6]}\n")

    def close(self) -> None:
        if getattr(self, "_closed", False):
            return
        self._closed = True
        try:
            self._flush_rows()
            self._close_group()
            self._flush_group()
        finally:
            for f in (self._ops, self._events, self._ts, self._batches):
                f.close()
        if self._events_unordered and not self.failures:
            # some instants are known only once their batch is done (where memory went over
            # the budget): put events.csv in time order, ties in the order recorded
            path = self.directory / "events.csv"
            try:
                with open(path, newline="") as f:
                    header, *rows = list(csv.reader(f))
                rows.sort(key=lambda row: float(row[0]))
                with open(path, "w", newline="") as f:
                    csv.writer(f, lineterminator="\n").writerows([header, *rows])
            except OSError as e:
                self.failures.append((path, e))


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
