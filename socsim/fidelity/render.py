"""A fidelity report (:func:`socsim.fidelity.evaluate`) as console tables and as Markdown."""
from __future__ import annotations

from typing import Any

from rich.table import Table


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}%"


def _signed(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f}%"


def _tau(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def _time(x: float | None) -> str:
    """Seconds, or ms below a second."""
    if x is None:
        return "-"
    return f"{x:.3g} s" if x >= 1 else f"{x * 1000:.3g} ms"


ROW_HEAD = ("row", "config", "measured time", "simulated", "error", "measured energy", "simulated", "error",
            "power error")
RATIO_HEAD = ("ratio", "measured", "simulated", "error")


def _row_cells(r: dict[str, Any]) -> tuple[str, ...]:
    energy = r.get("measured_energy_j")
    return (r["id"], r["config"], _time(r["measured_time_s"]), _time(r["simulated_time_s"]),
            _signed(r["time_error_pct"]), f"{energy:.3g} J" if energy is not None else "-",
            f"{r['simulated_energy_j']:.3g} J" if energy is not None else "-", _signed(r.get("energy_error_pct")),
            _signed(r.get("power_error_pct")))


def _ratio_cells(q: dict[str, Any]) -> tuple[str, ...]:
    err = _signed(q["error_pct"])
    return (q["name"], _num(q["measured"]), _num(q["simulated"]),
            f"{err} (contradicted, not counted)" if "contradicted" in q else err)


def _ratio_n(t: dict[str, Any]) -> str:
    """The ratios counted, and those the phone's own measurements contradict (with the MAPE
    over every ratio)."""
    if not t.get("n_contradicted"):
        return str(t["n"])
    return f"{t['n']} (+{t['n_contradicted']} contradicted: MAPE {_pct(t['ratio_mape_all_pct'])} with them)"


def summary_rows(report: dict[str, Any]) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """(absolute tables' lines, ratio tables' lines) of the summary."""
    absolute, ratios = [], []
    for t in report["tables"]:
        if t["compare"] == "absolute":
            absolute.append((t["name"], str(t["n"]), _pct(t["time_mape_pct"]), _pct(t["energy_mape_pct"]),
                             _pct(t.get("power_mape_pct")), _tau(t["time_tau"]), _tau(t["energy_tau"]),
                             _tau(t.get("power_tau")), _resolved_cell(t), "; ".join(t["worst"])))
        else:
            ratios.append((t["name"], _ratio_n(t), _pct(t["ratio_mape_pct"]), _tau(t["ratio_tau"]),
                           "; ".join(t["worst"][:3])))
    return absolute, ratios


def _resolved_cell(t: dict[str, Any]) -> str:
    """The energies' tau over the pairs the measurements resolve, and the resolution (or the
    times' where the table has no energies); "-" without either."""
    res = t.get("resolution") or {}
    if t.get("energy_tau_resolved") is not None:
        return f"{_tau(t['energy_tau_resolved'])} (±{res['energy_j']:g} J)"
    if t.get("time_tau_resolved") is not None:
        return f"time {_tau(t['time_tau_resolved'])} (±{res['time_s']:g} s)"
    return "-"


# power: each row's average power E / t, measured against simulated (independent of the time's error);
# resolved: the tau over the pairs whose measured values differ by more than the file's last digit
# (socsim.fidelity.metrics.kendall_tau_b_resolved), beside the target's tau, not in its place
ABS_HEAD = ("table", "n", "time MAPE", "energy MAPE", "power MAPE", "tau time", "tau energy", "tau power",
            "tau energy, resolved pairs", "worst rows")
RATIOS_HEAD = ("ratio table", "n", "ratio MAPE", "tau", "worst ratios")


def console_tables(report: dict[str, Any], all_rows: bool = False) -> list[Table]:
    """The summary, then each table's worst rows (every row with ``all_rows``) or its ratios."""
    out = []
    absolute, ratios = summary_rows(report)
    for head, lines, title in ((ABS_HEAD, absolute, "measured vs simulated"),
                               (RATIOS_HEAD, ratios, "ratios between runs, measured vs simulated")):
        if lines:
            t = Table(*head, title=f"socsim fidelity: {report['file']} ({title})")
            for line in lines:
                t.add_row(*line)
            out.append(t)
    for table in report["tables"]:
        if table["compare"] == "absolute":
            by_id = {r["id"]: r for r in table["rows"]}
            shown = table["rows"] if all_rows else [by_id[i] for i in table["worst"]]
            t = Table(*ROW_HEAD, title=f"{table['name']}: {'every row' if all_rows else 'worst rows'}")
            for r in shown:
                t.add_row(*_row_cells(r))
        else:
            what = ("measured vs simulated" if table["compare"] == "quantities"
                    else "time of the first run over the second")
            t = Table(*(("quantity",) + RATIO_HEAD[1:] if table["compare"] == "quantities" else RATIO_HEAD),
                      title=f"{table['name']}: {what}")
            for q in table["ratios"]:
                t.add_row(*_ratio_cells(q))
        out.append(t)
    if report["skipped"]:
        t = Table("skipped", "why", title="not simulated")
        for s in report["skipped"]:
            t.add_row(s["what"], s["reason"])
        out.append(t)
    return out


def _md_table(head: tuple[str, ...], lines: list[tuple[str, ...]]) -> list[str]:
    esc = [[c.replace("|", "\\|") for c in line] for line in [head, *lines]]
    return ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(x) + " |" for x in esc[1:]]


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: the summary, every row and ratio, what was skipped, the notes."""
    out = [f"`socsim fidelity {report['file']}` ({report['source']}; {report['batches_per_row']} batches per row)", ""]
    absolute, ratios = summary_rows(report)
    if absolute:
        out += _md_table(ABS_HEAD, absolute) + [""]
    if ratios:
        out += _md_table(RATIOS_HEAD, ratios) + [""]
    for table in report["tables"]:
        if table["compare"] == "absolute":
            out += [f"{table['name']}, every row:", ""] + _md_table(ROW_HEAD, [_row_cells(r) for r in table["rows"]])
        else:
            out += [f"{table['name']} (time of the first run over the second):", ""]
            out += _md_table(RATIO_HEAD, [_ratio_cells(q) for q in table["ratios"]])
        out.append("")
    if report["skipped"]:
        out += ["Not simulated:", ""] + [f"- {s['what']}: {s['reason']}" for s in report["skipped"]] + [""]
    if report["notes"]:
        out += ["Notes:", ""] + [f"- {n}" for n in report["notes"]] + [""]
    return "\n".join(out)
