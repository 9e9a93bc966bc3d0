"""The fleet's self-contained HTML report: the summary's figures and inline SVG histograms of
round times, energy per client and battery drain (no scripts, no external files)."""
from __future__ import annotations

import html
from typing import Any

import numpy as np


def histogram_svg(values: list[float], title: str, unit: str, bins: int = 20) -> str:
    """A bar chart of ``values`` in ``bins`` equal bins, as an inline SVG element."""
    w, h, pad = 480, 200, 30
    esc = html.escape
    if not values:
        return f"<figure><figcaption>{esc(title)}: no values</figcaption></figure>"
    a = np.asarray(values, float)
    lo, hi = float(a.min()), float(a.max())
    counts, edges = np.histogram(a, bins=bins, range=(lo, hi if hi > lo else lo + 1.0))
    top = max(int(counts.max()), 1)
    bw = (w - 2 * pad) / bins
    bars = "".join(
        f'<rect x="{pad + i * bw:.1f}" y="{h - pad - (h - 2 * pad) * c / top:.1f}" width="{bw - 1:.1f}" '
        f'height="{(h - 2 * pad) * c / top:.1f}" fill="#4a7bb7"><title>{edges[i]:.4g}-{edges[i + 1]:.4g} '
        f'{esc(unit)}: {c}</title></rect>' for i, c in enumerate(counts))
    axis = (f'<text x="{pad}" y="{h - 8}" font-size="11">{lo:.4g}</text>'
            f'<text x="{w - pad}" y="{h - 8}" font-size="11" text-anchor="end">{hi:.4g} {esc(unit)}</text>'
            f'<text x="4" y="{pad - 8}" font-size="11">{top}</text>')
    return (f'<figure><figcaption>{esc(title)} (n={a.size})</figcaption><svg xmlns="http://www.w3.org/2000/svg" '
            f'width="{w}" height="{h}" role="img">{bars}{axis}</svg></figure>')


def _table(rows: list[list[Any]], head: list[str]) -> str:
    esc = html.escape
    return ("<table><tr>" + "".join(f"<th>{esc(x)}</th>" for x in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{esc(str(x))}</td>" for x in r) + "</tr>" for r in rows) + "</table>")


def report_html(summary: dict[str, Any], rounds: list[dict], clients: list[dict]) -> str:
    """The report page of a fleet run."""
    per_client_e: dict[int, float] = {}
    drain: dict[int, float] = {}
    for r in clients:
        per_client_e[r["client"]] = per_client_e.get(r["client"], 0.0) + r["energy_j"]
        drain[r["client"]] = drain.get(r["client"], 0.0) + (r["soc_start"] - r["soc_end"]) * 100
    s = summary
    part = s["participation"]
    facts = [["clients", s["clients"]], ["rounds", s["rounds"]], ["clients per round", s["clients_per_round"]],
             ["deadline (s)", s["deadline_s"]], ["selected / trained", f"{part['selected']} / {part['trained']}"],
             ["participation", f"{part['rate']:.1%}"], ["fleet time (s)", s["fleet_time_s"]],
             ["energy total (J)", s["energy_j"]["total"]], ["of it radio (J)", s["energy_j"]["radio"]],
             ["engine runs / client runs", f"{s['engine_runs']} / {s['client_runs']}"]]
    dropped = [[k, v] for k, v in s["dropped"].items()]
    phones = [[p, v["clients"], v["trained"], v["energy_j"], v["compute_s"]["p50"]] for p, v in s["per_phone"].items()]
    base = [[k, v["clients"], v["energy_j"], v["baseline_energy_j"], f"{v['saving']:.1%}",
             v["baseline_would_miss_deadline"]] for k, v in s["vs_baselines"].items()]
    rnd = [[x["round"], x["available"], x["selected"], x["completed"] + x["straggler"], x["wall_s"], x["energy_j"]]
           for x in rounds]
    body = [f"<h1>Fleet {html.escape(s['fleet'])}</h1>", _table(facts, ["", ""]),
            "<h2>Dropped clients</h2>", _table(dropped, ["reason", "client rounds"]),
            "<h2>Phones</h2>", _table(phones, ["phone", "clients", "trained", "energy (J)", "median compute (s)"])]
    if base:
        body += ["<h2>Against baseline schedulers (same clients, same inputs)</h2>",
                 _table(base, ["baseline", "clients", "energy (J)", "baseline energy (J)", "saving",
                               "baseline would miss the deadline"])]
    body += ["<h2>Distributions</h2>",
             histogram_svg([x["wall_s"] for x in rounds], "round wall time", "s"),
             histogram_svg(list(per_client_e.values()), "energy per client, all rounds", "J"),
             histogram_svg(list(drain.values()), "battery drain per client, all rounds", "% of charge"),
             "<h2>Rounds</h2>", _table(rnd, ["round", "available", "selected", "trained", "wall (s)", "energy (J)"])]
    style = ("body{font-family:sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}figure{display:inline-block;margin:1em}")
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>fleet {html.escape(s['fleet'])}</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")
