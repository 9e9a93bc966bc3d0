"""Parameter sweeps and fleets of simulated phones.

A sweep is the cross product of SoCs, schedulers and ``--grid`` values; each point is an
independent run, executed in this process, a local process pool (default) or on Ray
(``backend="ray"``, when Ray is installed): the backends fleets use (socsim.fleet.backends).
Results come back in the order of the points, whatever order they finish in.
"""
from __future__ import annotations

import itertools
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from socsim.errors import InputError, PluginError


@dataclass(frozen=True)
class Point:
    soc: str
    scheduler: str | None
    overrides: tuple[tuple[str, Any], ...]
    # the scheduler the point runs when it names none (the grid's scheduler.name, else the
    # workload's): shown in labels and skipped rows, never passed on to the run
    default_scheduler: str | None = None

    @property
    def shown_scheduler(self) -> str | None:
        return self.scheduler or self.default_scheduler

    @property
    def label(self) -> str:
        return " ".join(str(x) for x in (self.soc, self.shown_scheduler,
                                         *(f"{k}={v}" for k, v in self.overrides)) if x is not None and x != "")


def _grid_values(key: str, text: str, item: str) -> list[Any]:
    """The values of one ``--grid key=...``: comma-separated, or semicolon-separated when a value
    is a YAML list or mapping (the text holds ``[``, ``{`` or ``;``).  Each value is parsed as
    YAML, as ``--set`` parses its value (``16`` -> 16, ``[1,28,28]`` -> a list)."""
    from socsim.spec import _parse_scalar

    sep = ";" if any(c in text for c in "[{;") else ","
    raw = text.split(sep)
    if any(x.strip() == "" for x in raw):
        where = "an empty value" if len(raw) > 1 else "no value"
        raise InputError(f"{where} in the list (values are separated by '{sep}'"
                         + ("" if sep == ";" else "; use ';' when values are lists such as [1,28,28]")
                         + ")", field="--grid", value=item)
    return [_parse_scalar(x.strip()) for x in raw]


def parse_grid(items: list[str]) -> dict[str, list[Any]]:
    """``["batch_size=16,32", "cpu.cores=big2,big4", "input=[1,28,28];[3,32,32]"]`` ->
    {key: [values]}, values parsed as YAML (16 is an int).  Values are separated by commas, or by
    semicolons when any value is a list or mapping.  A key given twice, an empty value or a
    missing ``=`` is an error (InputError naming ``--grid``)."""
    grid: dict[str, list[Any]] = {}
    for item in items:
        if "=" not in item:
            raise InputError("expected key=v1,v2,...", field="--grid", value=item)
        k, v = item.split("=", 1)
        k = k.strip()
        if not k:
            raise InputError("expected key=v1,v2,... (the key is empty)", field="--grid", value=item)
        if k in grid:
            raise InputError(f"'{k}' is given twice; list all its values in one --grid {k}=v1,v2,...",
                             field="--grid", value=item)
        grid[k] = _grid_values(k, v, item)
    return grid


def points(socs: list[str], schedulers: list[str | None], grid: dict[str, list[Any]]) -> list[Point]:
    keys = sorted(grid)
    combos = list(itertools.product(*(grid[k] for k in keys))) if keys else [()]
    return [Point(s, sch, tuple(zip(keys, c))) for s in socs for sch in schedulers for c in combos]


def _grid_overrides(grid: dict[str, list[Any]] | None) -> dict[str, list[Any]]:
    """A grid given with string values (the API's older form) parsed like ``--grid`` values."""
    from socsim.spec import _parse_scalar

    return {k: [_parse_scalar(v) if isinstance(v, str) else v for v in vals] for k, vals in (grid or {}).items()}


def as_sweep_error(e: InputError) -> InputError:
    """A point's error as the sweep's options name it: a run's ``--set`` and ``--scheduler`` are
    the sweep's ``--grid`` and ``--schedulers``."""
    names = {"--set": "--grid", "overrides": "--grid", "--scheduler": "--schedulers"}
    if e.origin not in names and e.field not in names:
        return e
    return type(e)(e.message, file=e.file, field=names.get(e.field, e.field), value=e.value, line=e.line,
                   origin=names.get(e.origin, e.origin))


@dataclass(frozen=True)
class PointJob:
    """One sweep point as content: the SoC spec and the workload file's text travel with it (a
    Ray worker on another machine needs neither file), with the path it was read from."""

    point: Point
    soc: Any                 # SocSpec
    workload_path: str
    workload_text: str
    deterministic: bool
    skip_infeasible: bool


@contextmanager
def _workload_file(job: PointJob) -> Iterator[str]:
    """The workload's path: the original where this machine has it unchanged, else its text
    written to a temporary file of the same name (files it names beside it are not shipped)."""
    p = Path(job.workload_path)
    try:
        if p.is_file() and p.read_text() == job.workload_text:
            yield str(p)
            return
    except OSError:
        pass
    with tempfile.TemporaryDirectory(prefix="socsim-sweep-") as d:
        q = Path(d) / p.name
        q.write_text(job.workload_text)
        yield str(q)


def _run_point(job: PointJob) -> dict[str, Any]:
    from socsim.api import run

    point = job.point
    try:
        with _workload_file(job) as workload:
            res = run(job.soc, workload, overrides=dict(point.overrides), scheduler=point.scheduler,
                      deterministic=job.deterministic)
    except InputError as e:
        e = as_sweep_error(e)
        # a broken plugin is broken at every point: skipping would hide it behind "infeasible"
        if job.skip_infeasible and not isinstance(e, PluginError):
            return {"point": {"soc": point.soc, "scheduler": point.shown_scheduler, "set": dict(point.overrides)},
                    "skipped": str(e)}
        # which point of the sweep failed (the same error may hold at one SoC and not another)
        raise type(e)(f"{e.message} (sweep point: {point.label})", file=e.file, field=e.field, value=e.value,
                      line=e.line, origin=e.origin) from None
    # the scheduler that ran (the workload's own when the sweep names none)
    return {"point": {"soc": point.soc, "scheduler": point.scheduler or res.summary.get("scheduler"),
                      "set": dict(point.overrides)},
            "summary": res.summary}


def _point_task(job: PointJob) -> dict[str, Any]:
    """:func:`_run_point` as a backend task: its InputError comes back as a value (re-raised by
    the sweep as it was raised), so every backend reports it alike."""
    try:
        return _run_point(job)
    except InputError as e:
        return {"raise": e}


def sweep(workload: str | Path, socs: list[str], schedulers: list[str | None] | None = None,
          grid: dict[str, list[str]] | None = None, jobs: int = 1, backend: str = "local",
          deterministic: bool = False, progress: Callable[[int, int], None] | None = None,
          skip_infeasible: bool = False, address: str | None = None) -> list[dict[str, Any]]:
    """Run every point of the sweep; returns ``[{"point": ..., "summary": ...}, ...]`` in order.

    A point whose run is bad input for its phone (a DSP scheduler on a phone without a DSP, a
    memory budget below what the model needs there, ...) stops the sweep with that InputError,
    naming the point; with ``skip_infeasible`` it is returned as ``{"point": ..., "skipped":
    "<the error>"}`` instead and the sweep goes on, unless every point is skipped (an InputError
    quoting the first point's).

    ``backend`` local (``jobs`` processes) or ray (``address`` None: a local instance; ``auto`` or
    ``ray://host:port``: a running cluster; ``jobs`` points in flight): the backends of
    :mod:`socsim.fleet.backends`, with the same results.  Points travel as content (the SoC
    spec and the workload's text)."""
    from socsim.api import prepare
    from socsim.spec import load_soc

    for s in socs:
        load_soc(s)  # fail fast on an unknown SoC
    pts = points(socs, schedulers or [None], _grid_overrides(grid))
    for p in pts[:1]:
        # fail fast on a bad path or value
        prepare(str(workload), overrides=dict(p.overrides), scheduler=p.scheduler, set_label="--grid",
                scheduler_label="--schedulers")
    if any(p.scheduler is None for p in pts):
        try:
            own: str | None = prepare(str(workload))[0].scheduler.name
        except InputError:   # valid only with the grid's values: name what the grid names
            own = None
        pts = [p if p.scheduler else replace(p, default_scheduler=dict(p.overrides).get("scheduler.name", own))
               for p in pts]
    specs = {name: load_soc(name) for name in socs}
    text = Path(workload).read_text()
    work = [PointJob(p, specs[p.soc], str(workload), text, deterministic, skip_infeasible) for p in pts]
    from socsim.fleet.backends import backend as make_backend

    # no more workers than points: a pool forks all of its workers up front
    runner = make_backend(backend, max(1, min(jobs, len(work))), address)
    try:
        rows = runner.map(work, progress, _point_task, stop=_raised)
    except BaseException:
        # an error, Ctrl-C or SIGTERM: do not wait for the points still running
        runner.abort()
        raise
    runner.close()
    return _all_skipped_is_an_error(rows, work)


def _raised(row: dict[str, Any]) -> None:
    """A point's InputError, raised as the point raised it (the sweep stops at it)."""
    if "raise" in row:
        raise row["raise"]


def _all_skipped_is_an_error(rows: list[dict[str, Any]], work: list[PointJob]) -> list[dict[str, Any]]:
    """A sweep in which no point could run is an error (InputError quoting the first point's)."""
    if rows and all("skipped" in r for r in rows):
        raise InputError(f"no point of the sweep can run; the first: {rows[0]['skipped']} "
                         f"(sweep point: {work[0].point.label})")
    return rows
