"""The Python API: ``socsim.run`` and ``socsim.compare``.  The CLI is a thin layer over these,
so notebooks, sweeps and tests use the same path as the command line."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from socsim import __version__
from socsim.errors import InputError
from socsim.spec import SocSpec, Workload, load_soc, load_workload, workload_from_dict
from socsim.spec import apply_overrides


@dataclass
class RunResult:
    """A finished run: the summary (a dict, the summary JSON) and where its files are."""

    summary: dict[str, Any]
    out_dir: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def timeseries(self):
        """(columns, array) of the sampled time series (needs ``out=``)."""
        from socsim.report.events import read_timeseries

        if self.out_dir is None:
            raise ValueError("run without out= keeps no time series; pass out=DIR")
        return read_timeseries(self.out_dir)


def _resolve_soc(soc: str | Path | SocSpec) -> SocSpec:
    return soc if isinstance(soc, SocSpec) else load_soc(soc)


def _resolve_workload(workload: str | Path | dict | Workload, overrides) -> tuple[Workload, str]:
    if isinstance(workload, Workload):
        if overrides:
            return workload_from_dict(apply_overrides(workload.model_dump(), overrides)), workload.name
        return workload, workload.name
    if isinstance(workload, dict):
        data = apply_overrides(workload, overrides) if overrides else workload
        return workload_from_dict(data), str(workload.get("name", "<workload>"))
    path = Path(workload)
    if not path.exists() and (Path(__file__).parent.parent / "workloads" / f"{workload}.yaml").exists():
        path = Path(__file__).parent.parent / "workloads" / f"{workload}.yaml"
    return load_workload(path, overrides), str(path)


def run(soc: str | Path | SocSpec, workload: str | Path | dict | Workload, *,
        overrides: list[str] | dict | None = None, scheduler: str | None = None,
        out: str | Path | None = None, progress: Callable[[int, int], None] | None = None,
        deterministic: bool = False, reports: bool = True) -> RunResult:
    """Simulate ``workload`` on ``soc``.

    ``overrides``: ``--set`` style ``key=value`` strings or a dict of dotted paths.
    ``scheduler``: shorthand for ``scheduler.name``.  ``out``: a directory for summary.json,
    the time series, the Perfetto trace and the HTML report (written atomically: on any error
    nothing is left there).  ``deterministic``: report ``wall_time_s`` as 0 so summaries are
    byte-identical across runs.
    """
    from socsim.engine.sim import Engine
    from socsim.report.events import StreamRecorder
    from socsim.report.summary import build_summary
    from socsim.sched.registry import create

    ov = list(overrides) if isinstance(overrides, (list, tuple)) else dict(overrides or {})
    if scheduler:
        if isinstance(ov, list):
            ov.append(f"scheduler.name={scheduler}")
        else:
            ov["scheduler.name"] = scheduler
    spec = _resolve_soc(soc)
    wl, wl_file = _resolve_workload(workload, ov)
    sched = create(wl.scheduler.name, wl.scheduler.options, file=wl_file)

    tmp: Path | None = None
    recorder = None
    if out is not None:
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise InputError("output path exists and is not a directory", field="--out", value=str(out))
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        recorder = StreamRecorder(tmp, wl.output.trace_batches, wl.output.trace_every)
    try:
        engine = Engine(spec, wl, sched, recorder, progress, file=wl_file)
        try:
            stats = engine.run()
        except InputError as e:
            if e.file is None:  # a scheduler's complaint about the workload: name the file
                e.file = wl_file if isinstance(workload, (str, Path)) else None
                raise type(e)(e.message, file=e.file, field=e.field, value=e.value, line=e.line) from None
            raise
        summary = build_summary(spec, wl, sched, engine, stats, deterministic=deterministic)
        if tmp is not None:
            (tmp / "summary.json").write_text(dump_json(summary))
            if reports:
                from socsim.report.writers import write_reports
                write_reports(tmp)
            if out.exists():
                shutil.rmtree(out)
            os.replace(tmp, out)
            tmp = None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return RunResult(summary=summary, out_dir=Path(out) if out is not None else None)


def compare(soc: str | Path | SocSpec, workload: str | Path | dict | Workload, schedulers: list[str], *,
            overrides: list[str] | dict | None = None, deterministic: bool = False,
            progress: Callable[[str, int, int], None] | None = None) -> list[dict[str, Any]]:
    """Run the same workload on the same SoC under each scheduler; summaries in that order."""
    if not schedulers:
        raise InputError("no schedulers given", field="--schedulers", value="")
    out = []
    for name in schedulers:
        cb = (lambda b, n, _name=name: progress(_name, b, n)) if progress else None
        out.append(run(soc, workload, overrides=overrides, scheduler=name, deterministic=deterministic,
                       progress=cb).summary)
    return out


def dump_json(obj: Any) -> str:
    """Deterministic JSON (sorted keys, repr floats)."""
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"
