"""Federated fleets: many simulated phones per training round (docs/fleets.md).

A fleet YAML names a population (phone models with shares, each with a scheduler; data sizes;
availability and charging windows) and a federated plan (rounds, selection, local work, a
deadline, what happens to stragglers and gated clients).  :func:`run_fleet` simulates it round by
round, each selected client's local training through the engine, on this process, a local
process pool or a Ray cluster, with identical results on each.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from socsim.fleet.backends import backend as make_backend
from socsim.fleet.population import make_clients
from socsim.fleet.rounds import Fleet, FleetRun
from socsim.fleet.spec import FleetSpec, load_fleet, parse_soc_mix
from socsim.fleet.summary import build_summary

__all__ = ["run_fleet", "load_fleet", "parse_soc_mix", "FleetSpec", "FleetResult"]


class FleetResult:
    """A simulated fleet: the summary (fleet.json), the per-round and per-client rows."""

    def __init__(self, summary: dict[str, Any], run: FleetRun) -> None:
        self.summary = summary
        self.rounds = run.rounds
        self.clients = run.clients


def run_fleet(fleet: str | Path | FleetSpec, *, soc_mix: dict[str, float] | None = None, backend: str = "local",
              jobs: int = 1, address: str | None = None, out: str | Path | None = None,
              progress: Callable[[int, int, int], None] | None = None) -> FleetResult:
    """Simulate ``fleet`` (a fleet YAML or a spec); ``backend`` local (``jobs`` processes) or ray
    (``address`` None: a local instance; ``auto`` or ``ray://host:port``: a cluster, ``jobs``
    runs in flight).  ``out``: write fleet.json, rounds.csv, clients.csv and report.html there."""
    from socsim.fleet.output import check_out, write_outputs

    spec = fleet if isinstance(fleet, FleetSpec) else load_fleet(fleet, soc_mix)
    if out is not None:
        check_out(Path(out))
    where = None if isinstance(fleet, FleetSpec) else fleet
    model = Fleet(spec, make_clients(spec, where))
    runner = make_backend(backend, jobs, address)
    try:
        run = model.simulate(runner, progress)
    finally:
        runner.close()
    summary = build_summary(spec, run, model.model_bytes)
    if out is not None:
        write_outputs(Path(out), summary, run.rounds, run.clients)
    return FleetResult(summary, run)
