"""Parameter sweeps and fleets of simulated phones.

A sweep is the cross product of SoCs, schedulers and ``--set`` values; each point is an
independent run, executed in a local process pool (default) or on Ray (``backend="ray"``, when
Ray is installed).  Results come back in the order of the points, whatever order they finish in.
"""
from __future__ import annotations

import itertools
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from socsim.errors import InputError


@dataclass(frozen=True)
class Point:
    soc: str
    scheduler: str | None
    overrides: tuple[tuple[str, Any], ...]

    @property
    def label(self) -> str:
        sets = " ".join(f"{k}={v}" for k, v in self.overrides)
        return f"{self.soc} {self.scheduler or ''} {sets}".strip()


def parse_grid(items: list[str]) -> dict[str, list[str]]:
    """``["batch_size=16,32", "cpu.cores=big2,big4"]`` -> {key: [values]}."""
    grid: dict[str, list[str]] = {}
    for item in items:
        if "=" not in item:
            raise InputError("expected key=v1,v2,...", field="--grid", value=item)
        k, v = item.split("=", 1)
        vals = [x for x in v.split(",") if x != ""]
        if not k or not vals:
            raise InputError("expected key=v1,v2,...", field="--grid", value=item)
        grid[k.strip()] = vals
    return grid


def points(socs: list[str], schedulers: list[str | None], grid: dict[str, list[str]]) -> list[Point]:
    keys = sorted(grid)
    combos = list(itertools.product(*(grid[k] for k in keys))) if keys else [()]
    return [Point(s, sch, tuple(zip(keys, c))) for s in socs for sch in schedulers for c in combos]


def _run_point(args: tuple[Point, str, bool]) -> dict[str, Any]:
    from socsim.api import run

    point, workload, deterministic = args
    res = run(point.soc, workload, overrides=dict(point.overrides), scheduler=point.scheduler,
              deterministic=deterministic)
    return {"point": {"soc": point.soc, "scheduler": point.scheduler, "set": dict(point.overrides)},
            "summary": res.summary}


def sweep(workload: str | Path, socs: list[str], schedulers: list[str | None] | None = None,
          grid: dict[str, list[str]] | None = None, jobs: int = 1, backend: str = "local",
          deterministic: bool = False, progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """Run every point of the sweep; returns ``[{"point": ..., "summary": ...}, ...]`` in order."""
    from socsim.api import _resolve_workload
    from socsim.spec import load_soc

    for s in socs:
        load_soc(s)  # fail fast on an unknown SoC
    pts = points(socs, schedulers or [None], grid or {})
    for p in pts[:1]:
        _resolve_workload(str(workload), dict(p.overrides))  # fail fast on a bad path or value
    work = [(p, str(workload), deterministic) for p in pts]
    if backend == "ray":
        try:
            import ray
        except ImportError:
            raise InputError('Ray is not installed (from the socsim checkout: pip install -e ".[ray]")', field="--backend",
                             value="ray") from None
        ray.init(ignore_reinit_error=True, include_dashboard=False)
        remote = ray.remote(_run_point)
        return ray.get([remote.remote(w) for w in work])
    if backend != "local":
        raise InputError("expected local or ray", field="--backend", value=backend)
    out: list[dict[str, Any]] = []
    if jobs <= 1:
        for i, w in enumerate(work):
            out.append(_run_point(w))
            if progress:
                progress(i + 1, len(work))
        return out
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        for i, r in enumerate(ex.map(_run_point, work)):
            out.append(r)
            if progress:
                progress(i + 1, len(work))
    return out
