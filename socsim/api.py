"""The Python API: ``socsim.run`` and ``socsim.compare``.  The CLI is a thin layer over these,
so notebooks, sweeps and tests use the same path as the command line."""
from __future__ import annotations

import json
import errno
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from socsim.errors import InputError, OutputError
from socsim.jsonio import dump_json, json_default  # noqa: F401  (re-exported: socsim.api.dump_json)
from socsim.spec import Origins, SocSpec, Workload, load_soc
from socsim.spec import load_workload_located, resolve_workload, workload_from_dict_located


@dataclass
class RunResult:
    """A finished run: the summary (a dict, the summary JSON) and where its files are."""

    summary: dict[str, Any]
    out_dir: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the files this run wrote into ``out_dir`` (names, in :data:`OUTPUT_NAMES` order)
    files: list[str] = field(default_factory=list)

    def timeseries(self):
        """(columns, array) of the sampled time series (needs ``out=``)."""
        from socsim.report.events import read_timeseries

        if self.out_dir is None:
            raise ValueError("run without out= keeps no time series; pass out=DIR")
        return read_timeseries(self.out_dir)


def _resolve_soc(soc: str | Path | SocSpec) -> SocSpec:
    return soc if isinstance(soc, SocSpec) else load_soc(soc)


def _load(workload: str | Path | dict | Workload, overrides, scheduler: str | None = None,
          **labels: str) -> tuple[Workload, str, Origins]:
    """The validated workload, the name errors give for it, and where its fields came from."""
    if isinstance(workload, Workload):
        if overrides or scheduler:
            wl, origins = workload_from_dict_located(workload.model_dump(), workload.name, overrides=overrides,
                                                     scheduler=scheduler, **labels)
            return wl, workload.name, origins
        return workload, workload.name, Origins(workload.name, None)
    if isinstance(workload, dict):
        name = str(workload.get("name", "<workload>"))
        wl, origins = workload_from_dict_located(workload, name, overrides=overrides, scheduler=scheduler,
                                                 **labels)
        return wl, name, origins
    path = resolve_workload(workload)
    wl, origins = load_workload_located(path, overrides, scheduler=scheduler, **labels)
    return wl, str(path), origins


def _normalise_overrides(overrides: list[str] | dict | None) -> list[str] | dict:
    return list(overrides) if isinstance(overrides, (list, tuple)) else dict(overrides or {})


def prepare(workload: str | Path | dict | Workload, *, overrides: list[str] | dict | None = None,
            scheduler: str | None = None, **labels: str):
    """Load ``workload`` with ``overrides`` and instantiate its scheduler (validated options).

    ``scheduler`` replaces ``scheduler.name``; the file's ``scheduler.options`` then apply only if
    it is the file's own scheduler, while ``scheduler.options.*`` overrides always apply.
    Returns ``(workload, name for errors, scheduler instance, origins)``; raises InputError.
    """
    from socsim.sched.registry import create

    wl, wl_file, origins = _load(workload, _normalise_overrides(overrides), scheduler, **labels)
    try:
        sched = create(wl.scheduler.name, wl.scheduler.options, file=wl_file)
        check_mode(wl, sched, wl_file)
    except InputError as e:
        raise origins.locate(e) from None
    return wl, wl_file, sched, origins


#: the built-in schedulers that run ``mode: inference`` (a scheduler says so in its ``modes``)
INFERENCE_SCHEDULERS = ("mnn-fp32", "mnn-int8", "tflite-fp32", "pytorch", "mnn-fp32-gpu")


def check_mode(wl: Workload, sched: Any, wl_file: str) -> None:
    """An InputError (field ``mode``) when the workload's mode is one the scheduler does not
    run: a scheduler runs training only unless its ``modes`` names the mode."""
    modes = getattr(sched, "modes", ("train",))
    if wl.mode not in modes:
        name = getattr(sched, "name", type(sched).__name__)
        raise InputError(f"scheduler {name} runs training only; mode inference runs under "
                         f"{', '.join(INFERENCE_SCHEDULERS)}", file=wl_file, field="mode", value=wl.mode)


def _located(e: InputError, workload, wl_file: str, origins: Origins) -> InputError:
    """An engine's or scheduler's complaint about the workload, naming the file and line."""
    if e.file is None and isinstance(workload, (str, Path)):
        e = type(e)(e.message, file=wl_file, field=e.field, value=e.value, line=e.line, origin=e.origin)
    return origins.locate(e)


def _umask() -> int:
    """The process umask (read without changing it where /proc allows)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """Permissions of a new output file: what ``open()`` would give (0666 less the umask)."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    """Permissions of a new output directory: what ``mkdir`` would give (0777 less the umask)."""
    return 0o777 & ~_umask()


def _chmod_tree(root: Path) -> None:
    """Give a directory made by mkdtemp (0700) and its files the modes mkdir/open would have."""
    fm, dm = file_mode(), dir_mode()
    for dirpath, _dirnames, filenames in os.walk(root):
        os.chmod(dirpath, dm)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), fm)


def output_target(path: str | Path) -> tuple[Path, bool]:
    """Where an output file goes, and whether it is written in place.

    An existing device or FIFO (``/dev/null``, a named pipe, ``/dev/stdout`` on a pipe) is
    opened and written as it is (True): replacing it would turn it into a regular file.  Anything
    else is written atomically (False) at the path with its symlinks resolved, so a link keeps
    pointing at the file it names and that file gets the output.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError:   # not there yet (or a dangling link)
        mode = None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        return path, True
    return Path(os.path.realpath(path)), False


def check_writable(path: str | Path, field: str) -> None:
    """Raise InputError (naming ``field`` and ``path``) unless the output can be written at ``path``
    (see :func:`output_target`).

    Missing parent directories are created for the probe and removed again, so a check that
    passes or fails leaves nothing behind.
    """
    given = str(path)
    if Path(path).is_dir():
        raise InputError("is a directory", field=field, value=given)
    path, in_place = output_target(path)
    if in_place:
        if not os.access(path, os.W_OK):
            raise InputError("cannot write to it: permission denied", field=field, value=given)
        return
    created = _make_parents(path, field, given)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise InputError(f"cannot write a file in {path.parent}: {e.strerror or e}", field=field,
                         value=given) from None
    finally:
        _remove_dirs(created)


def _make_parents(path: Path, field: str, given: str | None = None) -> list[Path]:
    """Create the missing parents of ``path``; returns the directories made (outermost first).
    Errors name ``given`` (the path as the user typed it), else ``path``."""
    value = str(path) if given is None else given
    missing: list[Path] = []
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"{parent} is not a directory", field=field, value=value)
    created: list[Path] = []
    try:
        for d in reversed(missing):
            d.mkdir()
            created.append(d)
    except OSError as e:
        _remove_dirs(created)
        raise InputError(f"cannot create directory {d}: {e.strerror or e}", field=field,
                         value=value) from None
    return created


def _remove_dirs(created: list[Path]) -> None:
    for d in reversed(created):
        try:
            d.rmdir()
        except OSError:
            pass


#: The files a run writes into ``--out DIR`` (timeseries.parquet only when pyarrow is installed).
#: Only these names are ever replaced or removed in DIR; anything else there is left alone.
OUTPUT_NAMES = ("summary.json", "timeseries.csv", "ops.csv", "batches.csv", "events.csv",
                "trace.perfetto-trace", "report.html", "timeseries.parquet")


def _check_out_names(out: Path) -> None:
    """An existing ``out`` must not hold a directory (or other non-file) under one of socsim's
    output names: socsim replaces only files it could have written."""
    for name in OUTPUT_NAMES:
        p = out / name
        if p.is_symlink() or not p.exists():
            continue
        if not p.is_file():
            raise InputError(f"{p} exists and is not a file; socsim replaces only its own output files "
                             "there (move it away or choose another directory)", field="--out", value=str(out))


def _sorted_names(names) -> list[str]:
    order = {n: i for i, n in enumerate(OUTPUT_NAMES)}
    return sorted(names, key=lambda n: (order.get(n, len(order)), n))


def _publish(tmp: Path, out: Path) -> list[str]:
    """Move the files of the finished run in ``tmp`` into ``out``; returns their names.

    A new ``out`` is ``tmp`` renamed (atomic).  An existing one gets socsim's files one by one:
    a file of the same name (a previous run's) is replaced, a socsim output name this run did
    not write (a stale ``timeseries.parquet``) is removed, every other file is left alone.  The
    files replaced are kept aside until all moved, and put back if any move fails (or the
    process is interrupted), so ``out`` ends up with either the old files or the new ones.
    """
    names = _sorted_names(p.name for p in tmp.iterdir())
    if not out.exists():
        try:
            os.replace(tmp, out)
            return names
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not out.is_dir():
                raise
    _check_out_names(out)
    aside = Path(tempfile.mkdtemp(prefix=".old.", dir=tmp))
    old: list[str] = []   # names moved from out to aside
    new: list[str] = []   # names moved from tmp to out
    try:
        for name in OUTPUT_NAMES:
            if os.path.lexists(out / name):
                os.replace(out / name, aside / name)
                old.append(name)
        for name in names:
            os.replace(tmp / name, out / name)
            new.append(name)
    except BaseException:
        for name in reversed(new):
            try:
                os.replace(out / name, tmp / name)
            except OSError:
                pass
        for name in reversed(old):
            try:
                os.replace(aside / name, out / name)
            except OSError:
                pass
        raise
    return names


#: The file in a run's temporary directory naming the process that writes it ("<pid> <host>"),
#: so a later run into the same place can tell a killed run's leftovers from a live run's.
OWNER_FILE = ".socsim-owner"

#: Estimated output above which a run says so before it starts (bytes): 1 GB
OUTPUT_WARN_BYTES = 10**9
# rough bytes per row, measured on the quick-start run: an ops.csv row and its trace slices,
# a batches.csv row
_OP_ROW_BYTES, _BATCH_ROW_BYTES = 250, 80


def _host() -> str:
    return os.uname().nodename


def _pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def remove_stale_temps(where: Path, name: str) -> list[str]:
    """Remove the temporary directories ``.<name>.XXXXXXXX`` in ``where`` whose owner process
    (:data:`OWNER_FILE`) is gone on this host: a run killed with SIGKILL (or a machine that lost
    power) leaves one; returns a note per directory removed."""
    notes = []
    try:
        entries = list(where.glob(f".{name}.*"))
    except OSError:
        return notes
    for d in sorted(entries):
        owner = d / OWNER_FILE
        try:
            pid_text, host = owner.read_text().split()[:2]
            pid = int(pid_text)
        except (OSError, ValueError):
            continue   # not socsim's, or a run that has not written its owner yet: left alone
        if host != _host() or _pid_alive(pid):
            continue
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
        shutil.rmtree(d, ignore_errors=True)
        if not d.exists():
            notes.append(f"removed {d}, the unfinished output of a run that was killed (pid {pid}, "
                         f"{size / 2**20:.1f} MiB)")
    return notes


def _estimate_note(wl: Workload, ops_per_batch: int) -> str | None:
    """A note when the run's output files are estimated above :data:`OUTPUT_WARN_BYTES`."""
    from socsim.report.events import batch_rows, kept_batches

    n = wl.total_batches
    traced = kept_batches(n, wl.output.trace_batches, wl.output.trace_every, wl.output.trace_limit)
    est = traced * ops_per_batch * _OP_ROW_BYTES + batch_rows(n, wl.output.batch_rows) * _BATCH_ROW_BYTES
    if est <= OUTPUT_WARN_BYTES:
        return None
    return (f"note: this run's output is estimated at {est / 1e9:.1f} GB (op slices of {traced:,} of its "
            f"{n:,} batches, {ops_per_batch} ops each, and {batch_rows(n, wl.output.batch_rows):,} batches.csv rows); "
            "output.trace_batches, trace_every and trace_limit bound the op detail, output.batch_rows the rows")


def _salvage(tmp: Path, out: Path, summary: dict, failures: list[tuple[str, OSError]]) -> list[str]:
    """After an output could not be written: drop the run's bulky files (freeing the space a
    full disk needs), and put summary.json alone into ``out``; returns what was kept there."""
    for f in tmp.iterdir():
        if f.name != OWNER_FILE:
            try:
                f.unlink() if not f.is_dir() else shutil.rmtree(f)
            except OSError:
                pass
    try:
        (tmp / "summary.json").write_text(dump_json(summary))
        (tmp / OWNER_FILE).unlink(missing_ok=True)
        _chmod_tree(tmp)
        return [str(out / n) for n in _publish(tmp, out)]
    except OSError as e:
        failures.append((str(out / "summary.json"), e))
        return []


def _run_model(soc, workload, model: Any, example_input: Any, *, overrides, **kw) -> RunResult:
    """``run`` with ``model`` (a name, a path or a torch module) in place of the workload's."""
    from socsim.workload.model import ModelError
    from socsim.workload.torch_import import export_module, is_module

    if isinstance(overrides, dict):
        sets: list[str] = [f"{k}={json.dumps(v)}" for k, v in overrides.items()]
    else:
        sets = list(overrides or [])
    if not is_module(model):
        if not isinstance(model, (str, Path)):
            raise InputError("expected a model name, an .onnx path or a torch.nn.Module", field="model",
                             value=type(model).__name__)
        return run(soc, workload, overrides=[*sets, f"model={json.dumps(str(model))}"], **kw)
    with tempfile.TemporaryDirectory(prefix="socsim-torch-") as d:
        try:
            path, dims = export_module(model, example_input, Path(d) / f"{type(model).__name__}.onnx")
        except ModelError as e:
            raise InputError(e.message, field=e.field, value=e.value) from None
        return run(soc, workload, overrides=[*sets, f"model={json.dumps(str(path))}",
                                             f"input={json.dumps(list(dims))}"], **kw)


def run(soc: str | Path | SocSpec, workload: str | Path | dict | Workload, *,
        overrides: list[str] | dict | None = None, scheduler: str | None = None,
        out: str | Path | None = None, progress: Callable[[int, int], None] | None = None,
        deterministic: bool = False, reports: bool = True, scheduler_label: str | None = None,
        model: Any = None, example_input: Any = None, notify: Callable[[str], None] | None = None) -> RunResult:
    """Simulate ``workload`` on ``soc``.

    ``model``: train this model instead of the workload's: a zoo or plugin name, an ``.onnx``
    path, or a ``torch.nn.Module`` (the ``torch`` extra; it is exported to ONNX for inputs shaped
    like ``example_input``, a tensor with the batch first, whose per-sample shape becomes the
    workload's ``input``).

    ``overrides``: ``--set`` style ``key=value`` strings or a dict of dotted paths.
    ``scheduler``: run this scheduler instead of the workload's ``scheduler.name``; the file's
    ``scheduler.options`` belong to the file's scheduler, so another one gets its defaults
    (``scheduler.options.*`` in ``overrides`` always apply).  ``out``: a directory for
    summary.json, the time series, the Perfetto trace and the HTML report (:data:`OUTPUT_NAMES`).
    The run is written to a temporary directory first; only a finished run's files are moved
    into ``out``, replacing files of the same names and leaving any other file there alone (on
    any error ``out`` is unchanged).  ``deterministic``: report ``wall_time_s`` as 0 so summaries
    are byte-identical across runs.  ``scheduler_label``: where errors say ``scheduler`` came
    from (default ``--scheduler``; ``compare`` passes ``--schedulers``).  ``notify``: called with
    notes for the user before the run (a killed run's temporary folder removed, a huge output
    estimated).  An output the environment refuses (a full disk) raises :class:`OutputError`
    with the result and what was kept (``summary.json``).
    """
    from socsim import kernels
    from socsim.engine.sim import Engine
    from socsim.report.events import StreamRecorder
    from socsim.report.invariants import check_summary
    from socsim.report.summary import build_summary

    if model is not None:
        return _run_model(soc, workload, model, example_input, overrides=overrides, scheduler=scheduler,
                          out=out, progress=progress, deterministic=deterministic, reports=reports,
                          scheduler_label=scheduler_label, notify=notify)
    say = notify or (lambda _msg: None)
    spec = _resolve_soc(soc)
    labels = {"scheduler_label": scheduler_label} if scheduler_label else {}
    wl, wl_file, sched, origins = prepare(workload, overrides=overrides, scheduler=scheduler, **labels)
    if not kernels.compiled():
        kernels.prefetch()   # a cold run: the cache model's driver compiles alongside (socsim.kernels)

    tmp: Path | None = None
    created: list[Path] = []
    recorder = None
    files: list[str] = []
    if out is not None:
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise InputError("output path exists and is not a directory", field="--out", value=str(out))
        if out.is_dir():
            _check_out_names(out)
            where = out   # an existing directory (even '.'): the run is written inside it
        else:
            created = _make_parents(out, "--out")
            where = out.parent
        stem = out.resolve().name or 'out'
        for note in remove_stale_temps(where, stem):
            say(note)
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f".{stem}.", dir=where))
            (tmp / OWNER_FILE).write_text(f"{os.getpid()} {_host()}\n")
        except OSError as e:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            _remove_dirs(created)
            raise InputError(f"cannot create a temporary directory in {where}: {e.strerror or e}",
                             field="--out", value=str(out)) from None
        recorder = StreamRecorder(tmp, wl.output.trace_batches, wl.output.trace_every, wl.output.trace_limit,
                                  wl.output.batch_rows, wl.total_batches, wl.output.sample_rows)
    try:
        try:
            engine = Engine(spec, wl, sched, recorder, progress, file=wl_file)
            if recorder is not None:
                note = _estimate_note(wl, len(engine.pctx.graph().ops))
                if note:
                    say(note)
            cold = not kernels.compiled()
            if cold:   # numba compiles them on their first call: say so, or the first run looks hung
                say(kernels.COMPILE_NOTE)
            stats = engine.run()
            if cold:
                kernels.mark_compiled()
            summary = build_summary(spec, wl, sched, engine, stats, deterministic=deterministic)
        except InputError as e:
            raise _located(e, workload, wl_file, origins) from None
        check_summary(summary, spec_file=None if isinstance(soc, SocSpec) else str(soc))
        if tmp is not None:
            # summary.json first (small): a full disk still leaves the result
            failures: list[tuple[str, OSError]] = []
            try:
                recorder.close()
            except OSError as e:
                failures.append((str(tmp), e))
            failures += [(str(out / p.name), e) for p, e in recorder.failures]
            try:
                if not failures:
                    (tmp / "summary.json").write_text(dump_json(summary))
                if reports and not failures:
                    from socsim.report.writers import write_reports
                    write_reports(tmp)
            except OSError as e:
                failures.append((str(out / Path(e.filename).name) if e.filename else str(out), e))
            if failures:
                kept = _salvage(tmp, out, summary, failures)
                path, e = failures[0]
                res = RunResult(summary=summary, out_dir=out, files=[Path(k).name for k in kept])
                raise OutputError(e.strerror or str(e), path=path, kept=kept, result=res)
            (tmp / OWNER_FILE).unlink()
            _chmod_tree(tmp)  # mkdtemp made it 0700: give it the modes mkdir would have
            try:
                files = _publish(tmp, out)
            except OSError as e:
                raise OutputError(f"moving the run's files into the output directory: {e.strerror or e}",
                                  path=str(out), result=RunResult(summary=summary)) from None
            if tmp.exists() and tmp != out:
                shutil.rmtree(tmp, ignore_errors=True)
            tmp = None
    finally:
        if recorder is not None:
            try:
                recorder.close()
            except Exception:
                pass
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
            _remove_dirs(created)
    return RunResult(summary=summary, out_dir=Path(out) if out is not None else None, files=files)


def validate_on_soc(soc: str | Path | SocSpec, workload: str | Path | dict | Workload, *,
                    overrides: list[str] | dict | None = None, scheduler: str | None = None) -> dict[str, Any]:
    """Everything ``run`` checks before the first batch, without running any batch (``socsim
    validate --soc``).

    Resolves the scheduler, builds the engine (foreground cores checked against the SoC) and asks
    the scheduler for its plan through the engine's plan context, then checks the plan against the
    SoC (:func:`socsim.contract.check_plan`), so SoC-dependent errors (a core the SoC lacks, a
    Sage budget below its minimum, a DSP plan on a SoC without one) raise InputError as they
    would at run time.  Returns a short description
    of the first plan.
    """
    from socsim.contract import check_plan, plan_coverage, short_plan_note
    from socsim.engine.sim import Engine

    spec = _resolve_soc(soc)
    wl, wl_file, sched, origins = prepare(workload, overrides=overrides, scheduler=scheduler)
    try:
        engine = Engine(spec, wl, sched, None, None, file=wl_file)
        plan = sched.plan(engine.pctx)
        check_plan(plan, spec, scheduler=wl.scheduler.name, hook="plan()", batch_size=wl.batch_size,
                   input_shape=wl.input)
    except InputError as e:
        raise _located(e, workload, wl_file, origins) from None
    from socsim.hw.units import names as unit_names
    ops = {u: sum(1 for st in plan.steps if st.unit == u) for u in unit_names()}
    frac, missing = plan_coverage(plan, engine.pctx.graph())
    short = short_plan_note(plan, "plan()", wl.scheduler.name, missing) if missing else None
    return {"soc": spec.name, "workload": wl.name, "scheduler": wl.scheduler.name, "label": plan.label,
            "cpu_cores": list(plan.cpu_cores), "ops": ops,
            "micro_batches": list(plan.micro_batches) if plan.micro_batches else [wl.batch_size],
            "work_fraction": min(frac, 1.0), "short_plan": short}


def compare(soc: str | Path | SocSpec, workload: str | Path | dict | Workload, schedulers: list[str], *,
            overrides: list[str] | dict | None = None, deterministic: bool = False,
            progress: Callable[[str, int, int], None] | None = None) -> list[dict[str, Any]]:
    """Run the same workload on the same SoC under each scheduler; summaries in that order.

    Every scheduler name and its options are checked before the first run.  The workload's
    ``scheduler.options`` go to the workload's own scheduler only; the others get their defaults
    (``scheduler.options.*`` in ``overrides`` go to all of them).
    """
    if not schedulers:
        raise InputError("no schedulers given", field="--schedulers", value="")
    spec = _resolve_soc(soc)
    twice = sorted({n for n in schedulers if schedulers.count(n) > 1})
    if twice:
        raise InputError(f"scheduler given more than once: {', '.join(twice)} (a run is deterministic: "
                         "the same scheduler gives the same row)", field="--schedulers", value=",".join(schedulers))
    for name in schedulers:
        prepare(workload, overrides=overrides, scheduler=name, scheduler_label="--schedulers")
    forked = _compare_forked(spec, workload, schedulers, overrides, deterministic)
    if forked is not None:
        return forked
    out = []
    for name in schedulers:
        cb = (lambda b, n, _name=name: progress(_name, b, n)) if progress else None
        out.append(run(spec, workload, overrides=overrides, scheduler=name, deterministic=deterministic,
                       progress=cb, scheduler_label="--schedulers").summary)
    return out


def _compare_forked(spec: SocSpec, workload, schedulers: list[str], overrides, deterministic: bool) -> list | None:
    """The runs of :func:`compare` in forked processes, one scheduler each, when
    ``SOCSIM_JOBS`` (socsim.engine.oracle.parallel_jobs: by default the CPUs the load leaves
    free, and none beside another thread such as a progress bar) allows two or more; None
    otherwise, or when anything goes wrong there (the runs are then made here, in order, and
    an error is raised as it would be).  A run is deterministic and its own: its summary is the
    one this process would make (the costs it does not share with the other runs are computed
    again in its worker)."""
    from socsim.engine.oracle import parallel_jobs

    jobs = min(parallel_jobs(), len(schedulers))
    if jobs < 2:
        return None
    try:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor
        from functools import partial

        with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("fork")) as ex:
            return list(ex.map(partial(_compare_one, spec, workload, overrides, deterministic), schedulers))
    except Exception:
        return None


def _compare_one(spec: SocSpec, workload, overrides, deterministic: bool, scheduler: str) -> dict[str, Any]:
    """One scheduler's summary in a :func:`_compare_forked` worker."""
    return run(spec, workload, overrides=overrides, scheduler=scheduler, deterministic=deterministic,
               scheduler_label="--schedulers").summary


def warmup() -> float:
    """Compile the kernels a run and its reports call (a two-batch quick-start run with every
    output, into a temporary directory, then one FC step long enough for the cache model's
    periodic driver and one element-wise op long enough for its ring path); returns the seconds
    it took."""
    import tempfile
    import time

    from socsim import kernels

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="socsim-warmup-") as d:
        run(kernels.WARMUP_SOC, dict(kernels.WARMUP_WORKLOAD), out=Path(d) / "run", deterministic=True)
    # the cache model's periodic driver and ring path, which the quick-start's small FC layers
    # and element-wise steps do not reach
    from socsim.hw.memory import warm_periodic_driver, warm_ring_driver
    from socsim.spec import load_soc
    warm_periodic_driver(load_soc(kernels.WARMUP_SOC))
    warm_ring_driver(load_soc(kernels.WARMUP_SOC))
    kernels.mark_compiled()
    return time.perf_counter() - t0
