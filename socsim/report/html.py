"""Self-contained HTML report of a run directory: summary table and inline SVG charts.

No external URLs, scripts or fonts: charts are drawn with matplotlib's SVG backend (no pyplot,
so no global figure state) and inlined.  Every chart sits in an element with a stable id
(``chart-energy-by-rail``, ``chart-power``, ``chart-temperature``, ``chart-cpufreq``,
``chart-per-batch``, ``chart-timeline``) so tests and users can find it.  The same run directory
gives a byte-identical page.
"""
from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path
from typing import Any, Iterable

import matplotlib
import matplotlib.patches
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

from socsim.errors import InputError
from socsim.hw import units
from socsim.report.events import BATCH_COLUMNS, OPS_COLUMNS, PARSE_ERRORS, malformed, read_events
from socsim.report.timeseries import TimeSeries, energy_between_j, envelope, load_timeseries

MAX_POINTS = 2000
_SUMMARY_ORDER = ("soc", "workload", "scheduler", "batches", "sim_time_s", "per_batch", "energy_j",
                  "thermal", "placement", "memory", "wall_time_s", "socsim_version")
_PHASE_COLOURS = {"forward": "#4878d0", "error_grad": "#ee854a", "weight_grad": "#d65f5f",
                  "update": "#6acc64", "rpc": "#956cb4", "prep": "#8c613c", "switch": "#82c6e2"}
_CSS = """body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}#summary td{max-width:60em;overflow-wrap:anywhere}
td.num{text-align:right;font-variant-numeric:tabular-nums}.chart svg{width:100%;height:auto}
.empty{color:#888;font-style:italic}h2{margin-top:1.5em;border-bottom:1px solid #ddd}
.notes{background:#fff4d6;border:1px solid #e0b84c;padding:0.5em 1em}"""


def track_order(track: str) -> tuple[int, int, str]:
    """Canonical track order: the host's cores cpu0..cpuN, the other units (dsp, gpu, ...), the
    hand-over tracks (fastrpc) and engine, then the rest by name."""
    core = units.core_of_track(track)
    if core is not None:
        return (0, core, "")
    others = units.accelerators()
    fixed = tuple(dict.fromkeys([*(u.name for u in others), *(u.handover.track for u in others if u.handover),
                                 "engine"]))
    return (1, fixed.index(track), "") if track in fixed else (2, 0, track)


# ---------------------------------------------------------------- data gathering

def per_batch(run_dir: Path, ts: TimeSeries, extents: dict[int, list[float]] | None = None,
              max_rows: int | None = None) -> list[tuple[int, float, float, float]]:
    """(batch, start_s, time_s, energy_j) rows: from batches.csv if the engine wrote rows, else
    from the extent of each batch's op slices (``extents`` from :func:`scan_ops`) with energy
    from the cumulative rail counters.  ``max_rows``: a file of more rows is read into compact
    arrays and returned as the means of ``max_rows`` equal-count buckets (at each bucket's first
    batch), so a long run's chart costs bounded memory."""
    from array import array

    path = Path(run_dir) / "batches.csv"
    if path.exists():
        cols = (array("q"), array("d"), array("d"), array("d"))
        b_, s_, t_, e_ = (c.append for c in cols)
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            try:
                # a row that sums a group of batches (a long run's "batches" column) is drawn
                # as the group's mean batch, at its first batch
                for r in reader:
                    n = int(r.get("batches") or 1)
                    if n < 1:
                        raise ValueError(f"batches {n} must be at least 1")
                    b_(int(r["batch"]))
                    s_(float(r["start_s"]))
                    t_(float(r["time_s"]) / n)
                    e_(float(r["energy_j"]) / n if r.get("energy_j") not in (None, "") else float("nan"))
            except PARSE_ERRORS as e:
                raise malformed(path, reader.line_num, e, BATCH_COLUMNS) from None
        if len(cols[0]) and max_rows is not None and len(cols[0]) > max_rows:
            b, st, tm, en = (np.frombuffer(c, dtype=np.int64 if c.typecode == "q" else np.float64) for c in cols)
            starts = np.linspace(0, len(b), max_rows + 1).astype(int)[:-1]
            counts = np.diff(np.append(starts, len(b)))
            return [(int(b[i]), float(st[i]), float(m), float(x)) for i, m, x in
                    zip(starts, np.add.reduceat(tm, starts) / counts, np.add.reduceat(en, starts) / counts)]
        if len(cols[0]):
            return list(zip(*(c.tolist() for c in cols)))
    if extents is None:
        extents = scan_ops(run_dir, None)[0]
    batches = sorted(extents)
    lo = np.array([extents[b][0] for b in batches])
    hi = np.array([extents[b][1] for b in batches])
    energy = energy_between_j(ts, lo, hi)
    return [(b, float(lo[i]), float(hi[i] - lo[i]), float(energy[i])) for i, b in enumerate(batches)]


def scan_ops(run_dir: Path, batch: int | None) -> tuple[dict[int, list[float]], int | None, list]:
    """One streaming pass over ops.csv: per-batch [start_s, end_s], the batch shown on the
    timeline (``batch``, else 1 if present, else the lowest) and its (track, name, phase,
    start_s, dur_s) slices."""
    extents: dict[int, list[float]] = {}
    wanted: list = []           # slices of ``batch``, or of batch 1 when batch is None
    low_b: int | None = None    # lowest batch other than 1, and its slices
    low: list = []
    path = Path(run_dir) / "ops.csv"
    if path.exists():
        with open(path, newline="") as f:
            reader = csv.reader(f)
            try:
                next(reader, None)
                for track, name, _kind, b, phase, start_s, dur_s in reader:
                    bi, t0, dur = int(b), float(start_s), float(dur_s)
                    e = extents.get(bi)
                    if e is None:
                        extents[bi] = [t0, t0 + dur]
                    else:
                        if t0 < e[0]:
                            e[0] = t0
                        if t0 + dur > e[1]:
                            e[1] = t0 + dur
                    item = (track, name, phase, t0, dur)
                    if bi == (1 if batch is None else batch):
                        wanted.append(item)
                    elif batch is None and (low_b is None or bi <= low_b):
                        if bi != low_b:
                            low_b, low = bi, []
                        low.append(item)
            except PARSE_ERRORS as e:
                raise malformed(path, reader.line_num, e, OPS_COLUMNS) from None
    if batch is None and 1 not in extents:
        return extents, low_b, low
    return extents, (1 if batch is None else batch), wanted


# ---------------------------------------------------------------- charts

def _svg(fig: Figure, salt: str) -> str:
    """Figure as inline SVG markup: deterministic ids, text kept as text, no XML prolog."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    # namespaces are implied for inline SVG in HTML; dropping them leaves no URL in the page
    return re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)


def _figure(height_in: float = 3.4) -> tuple[Figure, Any]:
    fig = Figure(figsize=(10, height_in), layout="constrained")
    return fig, fig.add_subplot()


def _mark_throttling(ax: Any, events: list[dict]) -> None:
    """Ticks along the top of the plot at each trip (magenta) and throttle (red) event, plus a
    full-height line per event when there are few enough to read."""
    for prefix, colour in (("trip", "magenta"), ("throttle", "red")):
        ts = [e["t_s"] for e in events if e["name"].startswith(prefix)]
        if not ts:
            continue
        x = ax.get_xaxis_transform()
        ax.vlines(ts, 0.94, 1.0, transform=x, colors=colour, linewidth=1.2, label=prefix)
        if len(ts) <= 30:
            ax.vlines(ts, 0, 0.94, transform=x, colors=colour, linestyles="dashed",
                      linewidth=0.7, alpha=0.7)


def _plot_series(ax: Any, t: np.ndarray, y: np.ndarray, steps: bool = False, **style: Any) -> None:
    tm, mean, lo, hi = envelope(t, y, MAX_POINTS)
    line, = ax.plot(tm, mean, drawstyle="steps-post" if steps else "default", **style)
    if lo is not hi:
        ax.fill_between(tm, lo, hi, color=line.get_color(), alpha=0.25, linewidth=0)


def _lines_chart(ts: TimeSeries, cols: list[str], ylabel: str, events: list[dict],
                 total: bool = False, steps: bool = False, strip: str = "") -> Figure | None:
    """Time-series lines (bucket means with a min/max band when long), optionally their sum,
    with throttling marked.  ``strip`` is removed from the column names in the legend."""
    if not cols or len(ts) == 0:
        return None
    fig, ax = _figure()
    for c in cols:
        _plot_series(ax, ts.t_s, ts.column(c), steps, linewidth=1, label=c.replace(strip, ""))
    if total and len(cols) > 1:
        s = ts.values[:, [ts.columns.index(c) for c in cols]].sum(axis=1)
        _plot_series(ax, ts.t_s, s, steps, color="black", linewidth=1.4, label="total")
    _mark_throttling(ax, events)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def _energy_by_rail(summary: dict, ts: TimeSeries) -> Figure | None:
    rails = dict((summary.get("energy_j") or {}).get("rails") or {})
    if not rails and len(ts):
        rails = {c[len("power."):-len("_uws")]: float(ts.column(c)[-1]) * 1e-6
                 for c in ts.select("power.", "_uws")}
    if not rails:
        return None
    fig, ax = _figure(3.0)
    names = list(rails)
    bars = ax.bar(names, [float(rails[n]) for n in names], color="#4878d0")
    ax.bar_label(bars, fmt=lambda v: f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}", fontsize=8)
    ax.set_ylabel("energy (J)")
    ax.tick_params(axis="x", labelrotation=20)
    return fig


def _per_batch_chart(rows: list[tuple[int, float, float, float]]) -> Figure | None:
    if not rows:
        return None
    fig, ax = _figure()
    b = np.array([r[0] for r in rows])
    marker = {"marker": "o", "markersize": 3} if len(rows) <= 100 else {}
    ax.plot(b, [r[2] for r in rows], color="#4878d0", label="time (s)", **marker)
    ax.set_xlabel("batch")
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_ylabel("time per batch (s)", color="#4878d0")
    energy = np.array([r[3] for r in rows])
    if np.isfinite(energy).any():
        ax2 = ax.twinx()
        ax2.plot(b, energy, color="#d65f5f", label="energy (J)", **marker)
        ax2.set_ylabel("energy per batch (J)", color="#d65f5f")
    ax.grid(alpha=0.3)
    return fig


def _timeline_chart(slices: list, batch: int | None) -> Figure | None:
    if not slices:
        return None
    tracks = sorted({s[0] for s in slices}, key=track_order)
    fig = Figure(figsize=(10, 0.9 + 0.32 * len(tracks)), layout="constrained")
    ax = fig.add_subplot()
    t0 = min(s[3] for s in slices)
    for y, track in enumerate(tracks):
        mine = [s for s in slices if s[0] == track]
        ax.broken_barh([((s[3] - t0) * 1e3, s[4] * 1e3) for s in mine], (y - 0.4, 0.8),
                       facecolors=[_PHASE_COLOURS.get(s[2], "#999999") for s in mine],
                       edgecolor="white", linewidth=0.3)
    ax.set_yticks(range(len(tracks)), tracks)
    ax.invert_yaxis()
    ax.set_xlabel(f"time since start of batch {batch} (ms)")
    used = sorted({s[2] for s in slices})
    handles = [matplotlib.patches.Patch(color=_PHASE_COLOURS.get(p, "#999999"), label=p) for p in used]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


# ---------------------------------------------------------------- simulated vs measured

#: the charts of a phone trace beside the simulation (``--phone-trace``)
PHONE_CHART_IDS = ("chart-vs-cpufreq", "chart-vs-power", "chart-vs-temperature")


def _vs_axes(ylabel: str) -> tuple[Figure, Any]:
    fig, ax = _figure()
    ax.set_xlabel("time (s): simulated from the run's start, measured from the trace's first timestamp")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    return fig, ax


def _measured(ax: Any, t: list[float], y: list[float], end_s: float, colour: str, label: str,
              steps: bool) -> None:
    """A measured curve, dashed; a step curve holds its last value to the trace's end."""
    if not t:
        return
    t_a, y_a = np.asarray(t, float), np.asarray(y, float)
    if steps and end_s > t_a[-1]:
        t_a, y_a = np.append(t_a, end_s), np.append(y_a, y_a[-1])
    _plot_series(ax, t_a, y_a, steps, color=colour, linestyle="--", linewidth=1.2, label=label)


def _legend(ax: Any) -> None:
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _vs_cpufreq(ts: TimeSeries, phone: Any, clusters: dict[str, tuple[int, ...]]) -> Figure | None:
    """Each cluster's simulated frequency and the measured frequency of its first CPU in the
    trace (one colour per cluster); CPUs of no cluster of the run's SoC on their own."""
    cols = ts.select("cpufreq") if len(ts) else []
    if not cols and not phone.freq_khz:
        return None
    fig, ax = _vs_axes("frequency (MHz)")
    shown: set[int] = set()
    for k, c in enumerate(cols):
        name = c[len("cpufreq."):]
        colour = f"C{k % 10}"
        _plot_series(ax, ts.t_s, ts.column(c), True, color=colour, linewidth=1, label=f"{name} (simulated)")
        cpu = next((n for n in clusters.get(name, ()) if n in phone.freq_khz), None)
        if cpu is not None:
            shown.update(clusters[name])
            t, khz = phone.freq_khz[cpu]
            _measured(ax, t, [v / 1000 for v in khz], phone.end_s, colour, f"{name} (measured, cpu{cpu})", True)
    for k, cpu in enumerate(n for n in phone.freq_khz if n not in shown):
        t, khz = phone.freq_khz[cpu]
        _measured(ax, t, [v / 1000 for v in khz], phone.end_s, f"C{(len(cols) + k) % 10}",
                  f"cpu{cpu} (measured)", True)
    _legend(ax)
    return fig


def _vs_power(ts: TimeSeries, phone: Any) -> Figure | None:
    """The simulated rails' total power (black) and each rail, and the measured rails (dashed;
    their total in black when they were sampled together).  The phone's rails are its own
    (ODPM names), so rails are not paired by name."""
    cols = ts.select("power.", "_mw") if len(ts) else []
    rails = {r: tp for r, tp in phone.rail_power_mw.items() if tp[0]}
    if not cols and not rails:
        return None
    fig, ax = _vs_axes("power (mW)")
    for k, c in enumerate(cols):
        _plot_series(ax, ts.t_s, ts.column(c), True, color=f"C{k % 10}", linewidth=0.8,
                     label=f"{c[len('power.'):-len('_mw')]} (simulated)")
    if len(cols) > 1:
        total = ts.values[:, [ts.columns.index(c) for c in cols]].sum(axis=1)
        _plot_series(ax, ts.t_s, total, True, color="black", linewidth=1.4, label="total (simulated)")
    for k, (rail, (t, p)) in enumerate(rails.items()):
        _measured(ax, t, p, phone.end_s, f"C{(len(cols) + k) % 10}", f"{rail} (measured)", True)
    times = [tuple(t) for t, _ in rails.values()]
    if len(rails) > 1 and len(set(times)) == 1:
        total = np.sum([p for _, p in rails.values()], axis=0)
        _measured(ax, list(times[0]), list(total), phone.end_s, "black", "total (measured)", True)
    _legend(ax)
    return fig


def _vs_temperature(ts: TimeSeries, phone: Any) -> Figure | None:
    """Simulated and measured zone temperatures, one colour per zone name (a zone the phone
    and the SoC spec name alike is drawn in one colour, solid and dashed)."""
    cols = [c for c in ts.columns if c.endswith(" Temperature")] if len(ts) else []
    zones = list(dict.fromkeys([c[:-len(" Temperature")] for c in cols] + list(phone.temp_c)))
    if not zones:
        return None
    fig, ax = _vs_axes("temperature (C)")
    for k, zone in enumerate(zones):
        colour = f"C{k % 10}"
        if f"{zone} Temperature" in cols:
            _plot_series(ax, ts.t_s, ts.column(f"{zone} Temperature"), False, color=colour,
                         linewidth=1, label=f"{zone} (simulated)")
        if zone in phone.temp_c:
            t, c = phone.temp_c[zone]
            _measured(ax, t, c, phone.end_s, colour, f"{zone} (measured)", True)
    _legend(ax)
    return fig


def _phone_sections(run_dir: Path, ts: TimeSeries, phone: Any, name: str) -> str:
    from socsim.report.perfetto_android import cluster_cpus

    head = (f"<h2>Simulated and measured: {html.escape(name)}</h2>"
            '<p>Solid lines: this run; dashed: the phone\'s trace.</p>\n')
    return head + "".join((
        _section("chart-vs-cpufreq", "CPU frequency, simulated and measured",
                 _vs_cpufreq(ts, phone, cluster_cpus(run_dir))),
        _section("chart-vs-power", "Rail power, simulated and measured", _vs_power(ts, phone)),
        _section("chart-vs-temperature", "Temperature, simulated and measured",
                 _vs_temperature(ts, phone))))


# ---------------------------------------------------------------- page

def _flatten(d: dict, prefix: str = "") -> Iterable[tuple[str, Any]]:
    """(dotted key, value) of every non-dict value; the docs/architecture.md summary keys come first at
    the top level, then any others in file order."""
    keys = list(d)
    if not prefix:
        keys = [k for k in _SUMMARY_ORDER if k in d] + [k for k in d if k not in _SUMMARY_ORDER]
    for k in keys:
        if isinstance(d[k], dict):
            yield from _flatten(d[k], f"{prefix}{k}.")
        else:
            yield prefix + str(k), d[k]


# a list or mapping longer than this is cut, saying so (summary.json holds it whole)
_MAX_VALUE_CHARS = 2000


def _format(v: Any) -> tuple[str, bool]:
    """A summary value as the page shows it: JSON spellings (true, null), numbers to 6
    significant digits (an OPP of 2419.2 MHz stays 2419.2), lists and mappings as JSON."""
    if isinstance(v, bool) or v is None:
        return json.dumps(v), False
    if isinstance(v, int):
        return f"{v:,}", True
    if isinstance(v, float):
        return f"{v:.6g}", True
    if isinstance(v, str):
        return v, False
    text = json.dumps(v)
    if len(text) > _MAX_VALUE_CHARS:
        text = text[:_MAX_VALUE_CHARS] + f" ... ({len(text) - _MAX_VALUE_CHARS:,} more characters in summary.json)"
    return text, False


def _summary_table(summary: dict) -> str:
    rows = []
    for key, value in _flatten(summary):
        text, num = _format(value)
        cls = ' class="num"' if num else ""
        rows.append(f"<tr><th>{html.escape(key)}</th><td{cls}>{html.escape(text)}</td></tr>")
    return '<table id="summary">' + "".join(rows) + "</table>" if rows else \
        '<p class="empty">no summary.json</p>'


def _section(chart_id: str, title: str, fig: Figure | None) -> str:
    body = _svg(fig, chart_id) if fig is not None else '<p class="empty">no data</p>'
    return f'<h2>{html.escape(title)}</h2><div class="chart" id="{chart_id}">{body}</div>\n'


def read_summary(path: Path) -> dict:
    """A run's summary.json as a dict; InputError (file and line) when it is not a JSON object."""
    try:
        summary = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON ({e.msg}, column {e.colno}); a run's summary.json is the JSON "
                         "object socsim run wrote", file=str(path), line=e.lineno) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text ({e.reason})", file=str(path)) from None
    if not isinstance(summary, dict):
        raise InputError(f"expected a JSON object, got {type(summary).__name__}", file=str(path), line=1)
    return summary


def _notes(summary: dict) -> str:
    """What the console says beside the summary (a plan that left ops out, a precision the
    scheduler does not train in, a memory budget not kept), above everything else."""
    from socsim.report.console import notes

    try:
        found = notes(summary) if summary else []
    except (KeyError, TypeError):   # a summary from another version: no notes rather than no report
        found = []
    if not found:
        return ""
    return "<div class=\"notes\">" + "".join(f"<p>{html.escape(n)}</p>" for n in found) + "</div>\n"


def render_html(run_dir: Path, batch_for_timeline: int | None = None, phone: Any = None,
                phone_name: str = "") -> str:
    """The report page of the run in ``run_dir`` as a string; ``phone`` (the
    :class:`~socsim.report.trace_reader.TraceSeries` of a phone's trace named ``phone_name``)
    adds its curves beside the simulated ones."""
    run_dir = Path(run_dir)
    summary = read_summary(run_dir / "summary.json") if (run_dir / "summary.json").exists() else {}
    ts = load_timeseries(run_dir)
    events = read_events(run_dir)
    extents, chosen, slices = scan_ops(run_dir, batch_for_timeline)
    temps = [c for c in ts.columns if c.endswith(" Temperature")]
    title = " / ".join(str(summary[k]) for k in ("soc", "workload", "scheduler") if k in summary) \
        or run_dir.resolve().name
    parts = [
        f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>socsim {html.escape(title)}"
        f"</title><style>{_CSS}</style></head><body><h1>socsim run: {html.escape(title)}</h1>\n",
        _notes(summary),
        "<h2>Summary</h2>" + _summary_table(summary) + "\n",
        _section("chart-energy-by-rail", "Energy by rail", _energy_by_rail(summary, ts)),
        _section("chart-power", "Rail power over time",
                 _lines_chart(ts, ts.select("power.", "_mw"), "power (mW)", events, total=True,
                              steps=True, strip="power.")),  # each row: the mean to the next row
        _section("chart-temperature", "Temperature over time",
                 _lines_chart(ts, temps, "temperature (C)", events, strip=" Temperature")),
        _section("chart-cpufreq", "CPU frequency over time",
                 _lines_chart(ts, ts.select("cpufreq"), "frequency (MHz)", events, steps=True,
                              strip="cpufreq.")),
        _section("chart-per-batch", "Time and energy per batch",
                 _per_batch_chart(per_batch(run_dir, ts, extents, MAX_POINTS))),
        _section("chart-timeline", f"Op timeline, batch {chosen}", _timeline_chart(slices, chosen)),
        _phone_sections(run_dir, ts, phone, phone_name) if phone is not None else "",
        "</body></html>\n",
    ]
    return "".join(parts)


def write_html(run_dir: Path, out_path: Path, batch_for_timeline: int | None = None,
               phone: Any = None, phone_name: str = "") -> None:
    """Write the self-contained HTML report of ``run_dir`` to ``out_path``."""
    Path(out_path).write_text(render_html(run_dir, batch_for_timeline, phone, phone_name),
                              encoding="utf-8")
