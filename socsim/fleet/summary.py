"""The fleet summary: round times, participation, dropped clients and why, energy per client and
in total, the battery drain distribution, and the energy of each baseline scheduler against the
clients' own (docs/fleets.md, Outputs)."""
from __future__ import annotations

from typing import Any

import numpy as np

from socsim.fleet.rounds import FleetRun
from socsim.fleet.spec import FleetSpec

#: a client's row statuses: it trained and uploaded (late, under stragglers: wait), or not and why
TRAINED = ("completed", "straggler")
DROPPED = ("deadline", "battery", "temperature", "failed")


def dist(values: list[float]) -> dict[str, float]:
    """count, mean and the quantiles of ``values`` (all 0 for none)."""
    if not values:
        return {"count": 0, "mean": 0.0, "min": 0.0, "p10": 0.0, "p50": 0.0, "p90": 0.0, "max": 0.0}
    a = np.asarray(values, float)
    q = np.quantile(a, [0.1, 0.5, 0.9])
    return {"count": int(a.size), "mean": _r(a.mean()), "min": _r(a.min()), "p10": _r(q[0]), "p50": _r(q[1]),
            "p90": _r(q[2]), "max": _r(a.max())}


def _r(x: float) -> float:
    """9 significant digits: the same figures whatever order sums ran in."""
    return float(f"{float(x):.9g}")


def build_summary(spec: FleetSpec, run: FleetRun, model_bytes: int) -> dict[str, Any]:
    rows = run.clients
    trained = [r for r in rows if r["status"] in TRAINED]
    per_client: dict[int, dict[str, float]] = {}
    for r in rows:
        pc = per_client.setdefault(r["client"], {"energy_j": 0.0, "drain": 0.0, "phone": r["phone"]})
        pc["energy_j"] += r["energy_j"]
        pc["drain"] += r["soc_start"] - r["soc_end"]
    phones = sorted({r["phone"] for r in rows} | {p.soc for p in spec.population.phones})
    summary: dict[str, Any] = {
        "fleet": spec.name, "seed": spec.seed, "clients": spec.population.clients,
        "rounds": len(run.rounds), "clients_per_round": spec.plan.clients_per_round,
        "deadline_s": spec.plan.deadline_s, "stragglers": spec.plan.stragglers, "model_bytes": model_bytes,
        "round_wall_s": [_r(x["wall_s"]) for x in run.rounds],
        "round_time_s": dist([x["wall_s"] for x in run.rounds]),
        "fleet_time_s": _r(sum(x["wall_s"] for x in run.rounds) + spec.plan.interval_s * max(0, len(run.rounds) - 1)),
        "participation": {
            "selected": len(rows), "trained": len(trained),
            "rate": _r(len(trained) / len(rows)) if rows else 0.0,
            "per_round": [x["completed"] + x["straggler"] for x in run.rounds],
            "clients_ever_trained": len({r["client"] for r in trained}),
        },
        "dropped": {s: sum(1 for r in rows if r["status"] == s) for s in DROPPED},
        "dropped_clients": [{"round": r["round"], "client": r["client"], "reason": r["status"]}
                            for r in rows if r["status"] in DROPPED],
        "energy_j": {
            "total": _r(sum(r["energy_j"] for r in rows)), "training": _r(sum(r["train_energy_j"] for r in rows)),
            "radio": _r(sum(r["radio_energy_j"] for r in rows)),
            "phone": _r(sum(r["phone_energy_j"] for r in rows)),
            "per_client": dist([v["energy_j"] for v in per_client.values()]),
        },
        "battery_drain": dist([v["drain"] for v in per_client.values()]),
        "per_phone": {p: {"clients": sum(1 for v in per_client.values() if v["phone"] == p),
                          "trained": sum(1 for r in trained if r["phone"] == p),
                          "energy_j": _r(sum(v["energy_j"] for v in per_client.values() if v["phone"] == p)),
                          "compute_s": dist([r["compute_s"] for r in trained if r["phone"] == p])}
                      for p in phones},
        "vs_baselines": _vs_baselines(spec, run, trained),
        "engine_runs": run.engine_runs, "client_runs": run.job_lookups, "failures": run.failures,
    }
    return summary


def _vs_baselines(spec: FleetSpec, run: FleetRun, trained: list[dict]) -> dict[str, Any]:
    """For each baseline: the training energy the trained clients spent, and would have spent
    under it with the same inputs, and how many would have missed the deadline under it."""
    out = {}
    for label in run.baselines:
        rows = [r for r in trained if r.get(f"energy_j[{label}]") is not None]
        own = sum(r["train_energy_j"] for r in rows)
        base = sum(r[f"energy_j[{label}]"] for r in rows)
        late = sum(1 for r in rows
                   if r["download_s"] + r[f"compute_s[{label}]"] + r["upload_s"] > spec.plan.deadline_s)
        out[label] = {"clients": len(rows), "energy_j": _r(own), "baseline_energy_j": _r(base),
                      "saving": _r(1.0 - own / base) if base > 0 else 0.0, "baseline_would_miss_deadline": late}
    return out
