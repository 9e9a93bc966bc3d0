"""Clients simulated per wall second: the example fleet (examples/fleet/lenet_fleet.yaml, LeNet on
sd865/sd888/sd855) with every client available and selected, on the local pool and on a local Ray
instance; checks the two give the same results.  Prints wall and CPU seconds (this process and
its workers; the machine may be shared, so CPU seconds are the steadier figure).

    python benchmarks/fleet.py [--clients 1000] [--rounds 10] [--jobs 2] [--no-ray] [--no-baselines]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from socsim.fleet import load_fleet, run_fleet  # noqa: E402


def _cpu_s() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _spec(clients: int, rounds: int):
    spec = load_fleet(ROOT / "examples/fleet/lenet_fleet.yaml")
    pop = spec.population.model_copy(update={
        "clients": clients,
        "availability": spec.population.availability.model_copy(update={"window_hours": 24.0})})
    plan = spec.plan.model_copy(update={"rounds": rounds, "clients_per_round": clients})
    return spec.model_copy(update={"population": pop, "plan": plan})


def _timed(label: str, spec, **kw) -> dict:
    t, c = time.perf_counter(), _cpu_s()
    res = run_fleet(spec, **kw)
    wall, cpu = time.perf_counter() - t, _cpu_s() - c
    n = spec.population.clients * spec.plan.rounds
    s = res.summary
    print(f"{label}: {n} client rounds in {wall:.1f} s wall ({n / wall:.1f} clients/s), {cpu:.1f} CPU s "
          f"(this process and its pool workers; Ray's workers are not counted); "
          f"{s['engine_runs']} engine runs for {s['client_runs']} client runs", flush=True)
    return res.summary


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--no-baselines", action="store_true", help="leave out the example's two baseline schedulers")
    a = ap.parse_args()
    spec = _spec(a.clients, a.rounds)
    if a.no_baselines:
        spec = spec.model_copy(update={"baselines": []})
    print(f"fleet: {a.clients} clients x {a.rounds} rounds, all selected; {os.cpu_count()} CPUs", flush=True)
    local = _timed(f"local pool, {a.jobs} processes", spec, jobs=a.jobs)
    if a.no_ray:
        return
    try:
        import ray  # noqa: F401
    except ImportError:
        print("ray: not installed")
        return
    remote = _timed(f"local Ray instance, {a.jobs} in flight", spec, backend="ray", jobs=a.jobs)
    same = json.dumps(local, sort_keys=True) == json.dumps(remote, sort_keys=True)
    print(f"local pool and Ray summaries identical: {same}")


if __name__ == "__main__":
    main()
