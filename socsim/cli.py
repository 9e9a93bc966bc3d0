"""``socsim``: run | op | compare | sweep | list | validate | report | cache.

Exit codes: 0 success, 2 bad input (one-screen message naming file, field, value), 1 internal
error (with its cause).  Output files are written atomically: on error nothing is left behind.
"""
from __future__ import annotations

import os
import stat
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from socsim.errors import InputError, OutputError

err_console = Console(stderr=True, highlight=False)
out_console = Console(highlight=False)
if not out_console.is_terminal and "COLUMNS" not in os.environ:
    # piped or redirected: rich would fold tables to 80 columns; let them keep their width
    out_console = Console(highlight=False, width=200)


class Terminated(BaseException):
    """Raised by the SIGTERM handler, so a terminated command unwinds like an interrupted one
    (temporary files and directories removed) and exits 143 (128 + SIGTERM)."""


def _on_sigterm(signum, frame):  # pragma: no cover - exercised in a subprocess
    # once: a second SIGTERM (``timeout`` signals the process group too) must not interrupt the
    # unwinding and the "terminated" message of the first
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


class SocsimGroup(click.Group):
    """Maps socsim's errors to exit codes: InputError -> 2, anything else -> 1; SIGINT -> 130
    and SIGTERM -> 143, after cleaning up."""

    def invoke(self, ctx):
        import signal
        try:
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
        except ValueError:  # not the main thread: leave signals alone
            previous = None
        try:
            return self._invoke(ctx)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def _invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except Terminated:
            err_console.print("terminated")
            sys.exit(143)
        except InputError as e:
            # the message quotes user input ('[/x]', "socsim[ray]"): never read it as markup
            err_console.print(f"[bold red]error:[/] {escape(e.render())}", markup=True, soft_wrap=True)
            cause = _underlying(e)
            if cause is not None and os.environ.get("SOCSIM_DEBUG"):
                # a plugin's own exception behind the error: its author needs the failing line
                traceback.print_exception(cause)
            sys.exit(2)
        except OutputError as e:
            # the environment refused an output (a full disk, permissions): exit 1, not a bug
            err_console.print(f"[bold red]error:[/] {escape(str(e))}", markup=True, soft_wrap=True)
            sys.exit(1)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit):
            raise
        except KeyboardInterrupt:
            err_console.print("interrupted")
            sys.exit(130)
        except Exception as e:  # internal error: say so, with the cause
            err_console.print(f"[bold red]internal error:[/] {escape(f'{type(e).__name__}: {e}')}", markup=True,
                              soft_wrap=True)
            if os.environ.get("SOCSIM_DEBUG"):
                traceback.print_exc()
            else:
                err_console.print("(set SOCSIM_DEBUG=1 for the traceback)")
            sys.exit(1)


def _underlying(e: BaseException) -> BaseException | None:
    """The first exception behind an InputError that is not one itself (a plugin's own, which
    the error reports by name), following causes and contexts (re-raising with more detail
    keeps the original there); None if there is none."""
    seen = set()
    x = e.__cause__ or e.__context__
    while x is not None and id(x) not in seen:
        if not isinstance(x, InputError):
            return x
        seen.add(id(x))
        x = x.__cause__ or x.__context__
    return None


@click.group(cls=SocsimGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="socsim")
def main() -> None:
    """Cycle-approximate mobile SoC simulator for on-device DNN training."""


def _write_atomic(path: str, data: str | bytes, field: str = "--json") -> None:
    """Write ``data`` to ``path`` through a temporary file renamed into place ('-': stdout).

    A symlink's target gets the file (the link stays); an existing device or FIFO is written
    in place, never replaced (:func:`socsim.api.output_target`).  The file gets the permissions
    ``open()`` would give it (mkstemp makes 0600): an existing file's, else 0666 less the umask.
    """
    from socsim.api import _make_parents, _remove_dirs, file_mode, output_target

    if path == "-":
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
        else:
            sys.stdout.write(data)
        return
    if Path(path).is_dir():
        raise InputError("is a directory", field=field, value=path)
    p, in_place = output_target(path)
    mode_w = "wb" if isinstance(data, bytes) else "w"
    if in_place:
        try:
            with open(p, mode_w) as f:
                f.write(data)
        except OSError as e:
            raise InputError(f"cannot write to it: {e.strerror or e}", field=field, value=path) from None
        return
    created = _make_parents(p, field, path)
    tmp = None
    done = False
    try:
        mode = stat.S_IMODE(p.stat().st_mode) if p.is_file() else file_mode()
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
        with os.fdopen(fd, mode_w) as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, p)
        done = True
    except OSError as e:
        raise InputError(f"cannot write the file: {e.strerror or e}", field=field, value=path) from None
    finally:
        if not done:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
            _remove_dirs(created)


def _stdout_alias(path: str | None) -> str | None:
    """'-' for a path that is this process's stdout (``/dev/stdout``, ``/proc/self/fd/1``, or the
    file stdout is redirected to), so that it gets what '-' gets: the output alone, no table
    printed into it.  Anything else is returned as given."""
    if not path or path == "-":
        return path
    try:
        if os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno())):
            return "-"
    except (OSError, ValueError, AttributeError):
        pass
    return path


def _check_outputs(**paths: str | None) -> None:
    """Fail before any simulation when an output file could not be written (bad input, exit 2);
    an empty path (``--json ''``, often an unset shell variable) is an error, not "no output"."""
    from socsim.api import check_writable

    for field, path in paths.items():
        if path is not None and not path.strip():
            raise InputError("empty path; give a file name, or '-' for stdout" if field != "out"
                             else "empty path; give a directory name", field="--" + field.replace("_", "-"),
                             value=path)
        if path and path != "-" and field != "out" and path.endswith(os.sep):
            raise InputError("names a directory (ends in '/'); give a file, or '-' for stdout",
                             field="--" + field.replace("_", "-"), value=path)
        if path and path != "-" and field != "out":
            check_writable(path, "--" + field.replace("_", "-"))


def _check_distinct(out: str | None = None, **paths: str | None) -> None:
    """Exit 2 when two outputs name the same target: ``--json`` and ``--trace`` the same file,
    both stdout ('-'), the ``--out`` directory itself or a file ``--out`` writes there."""
    from socsim.api import OUTPUT_NAMES

    def target(path: str) -> str:
        return "stdout" if path == "-" else os.path.realpath(path)

    given = [("--" + k.replace("_", "-"), v) for k, v in paths.items() if v]
    if paths.get("trace") == "-" and sys.stdout.isatty():
        raise InputError("the Perfetto trace is binary: redirect stdout to a file, or give a path",
                         field="--trace", value="-")
    def discard(path: str) -> bool:   # /dev/null: any number of outputs may be thrown away there
        return path != "-" and os.path.realpath(path) == os.devnull

    for i, (fa, a) in enumerate(given):
        for fb, b in given[:i]:
            if target(a) == target(b) and not discard(a):
                what = "both write to stdout" if a == "-" else "name the same file"
                raise InputError(f"{fb} and {fa} {what}; give each output its own target", field=fa, value=a)
    if out is None:
        return
    out_real = os.path.realpath(out)
    own = {os.path.join(out_real, n): n for n in OUTPUT_NAMES}
    for f, a in given:
        if a == "-":
            continue
        t = target(a)
        if t == out_real or out_real.startswith(t.rstrip(os.sep) + os.sep):
            raise InputError(f"is the --out directory {out} (or contains it); give {f} a file of its own",
                             field=f, value=a)
        if t in own:
            raise InputError(f"--out {out} writes {own[t]} there; give {f} another path", field=f, value=a)


class _Progress:
    """A rich progress bar that appears only once a run has taken more than ``after_s``.

    Until the first batch is done the bar says the run is planning (a scheduler profiling its
    choices through the cost model can take a minute on a large model with a cold profile
    store); a timer thread puts it up, so a long plan shows as planning, not as a hang."""

    def __init__(self, label: str, enabled: bool, after_s: float = 2.0, unit: str = "batches",
                 waiting: str = "planning") -> None:
        self.label = label
        self.waiting = waiting
        # a progress bar is for a person at a terminal: piped or redirected, stderr gets nothing
        self.enabled = enabled and err_console.is_terminal
        self.after_s = after_s
        self.unit = unit
        self.t0 = time.perf_counter()
        self.bar = None
        self.task = None
        self.lock = threading.Lock()
        self.closed = False
        self.timer = None
        if self.enabled:
            self.timer = threading.Timer(after_s, self._planning)
            self.timer.daemon = True
            self.timer.start()

    def _start(self, description: str, total: int | None) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TextColumn(self.unit), TimeRemainingColumn(), console=err_console, transient=True)
        bar.start()
        self.task = bar.add_task(description, total=total)
        self.bar = bar

    def _planning(self) -> None:
        with self.lock:
            if self.bar is None and not self.closed:
                self._start(f"{self.label}: {self.waiting}", None)

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        with self.lock:
            if self.bar is None:
                if time.perf_counter() - self.t0 < self.after_s or done >= total:
                    return
                self._start(self.label, total)
            self.bar.update(self.task, description=self.label, total=total, completed=done)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            if self.timer is not None:
                self.timer.cancel()
            if self.bar is not None:
                self.bar.stop()


@main.command()
@click.option("--soc", required=True, help="SoC name from soc_specs/ or a path to a spec YAML")
@click.argument("workload")
@click.option("--scheduler", default=None,
              help="scheduler name (overrides scheduler.name; another scheduler than the file's gets its "
                   "default options, not the file's scheduler.options)")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="override a workload field by dotted path (scheduler.options.* apply to the scheduler run)")
@click.option("--out", default=None,
              help="directory for summary.json, trace, time series and report.html (other files there are "
                   "left alone; a previous run's files are replaced)")
@click.option("--json", "json_path", default=None, help="write the summary JSON here ('-' for stdout)")
@click.option("--trace", "trace_path", default=None, help="write the Perfetto trace here ('-' for stdout)")
@click.option("--quiet", is_flag=True, help="no console table or progress")
@click.option("--deterministic", is_flag=True, help="report wall_time_s as 0 (byte-identical summaries)")
def run(soc, workload, scheduler, sets, out, json_path, trace_path, quiet, deterministic):
    """Simulate training WORKLOAD (a YAML file) on a SoC."""
    from socsim import kernels

    cold = not kernels.compiled()   # api.run says so once the input is valid (kernels.COMPILE_NOTE)
    if cold:   # the kernels' children start before this process imports numba (socsim.kernels.prefetch)
        kernels.prefetch()
    from socsim.api import dump_json, run as api_run
    from socsim.report.console import notes_to_print, summary_table

    json_path, trace_path = _stdout_alias(json_path), _stdout_alias(trace_path)
    _check_outputs(out=out, json=json_path, trace=trace_path)
    _check_distinct(out, json=json_path, trace=trace_path)
    out_dir = out
    tmp_dir = None
    if trace_path and not out_dir:
        tmp_dir = tempfile.mkdtemp(prefix=".socsim-run.")
        out_dir = str(Path(tmp_dir) / "run")
    to_stdout = "-" in (json_path, trace_path)
    prog = _Progress(f"{Path(workload).stem} on {soc}", enabled=not quiet and not to_stdout,
                     waiting="compiling kernels once, then planning" if cold else "planning")

    def notify(msg: str) -> None:
        if quiet and msg == kernels.COMPILE_NOTE:
            return
        err_console.print(escape(msg), soft_wrap=True)

    try:
        try:
            res = api_run(soc, workload, overrides=list(sets), scheduler=scheduler, out=out_dir, progress=prog,
                          deterministic=deterministic, reports=True, notify=notify)
        except OutputError as e:
            # the simulation finished but its files could not all be written: the result is
            # still shown (and kept in summary.json where the disk allowed) before the error
            if e.result is not None and not quiet and not to_stdout:
                out_console.print(summary_table(e.result.summary, deterministic=deterministic))
            raise
        finally:
            prog.close()
        if trace_path:
            _write_atomic(trace_path, (Path(out_dir) / "trace.perfetto-trace").read_bytes(), "--trace")
        if json_path:
            _write_atomic(json_path, dump_json(res.summary))
    finally:
        if tmp_dir:
            import shutil
            shutil.rmtree(tmp_dir, ignore_errors=True)
    run_notes = notes_to_print(res.summary, quiet)
    if not quiet and not to_stdout:
        out_console.print(summary_table(res.summary, deterministic=deterministic))
        for note in run_notes:
            out_console.print(escape(note))
        if out:
            out_console.print(escape(f"wrote {out if out.endswith('/') else out + '/'} ({', '.join(res.files)})"))
    else:  # a run that left part of the training step out says so even when quiet
        for note in run_notes:
            err_console.print(escape(note), soft_wrap=True)


@main.command()
def warmup():
    """Compile socsim's kernels once (numba's on-disk cache), so the first run is fast.

    Optional: without it the first run compiles them (some seconds, in parallel where a CPU is free) and says so."""

    err_console.print("compiling kernels once (a two-batch quick-start run and one long FC step) ...", soft_wrap=True)
    from socsim.api import warmup as _warmup

    took = _warmup()
    out_console.print(f"kernels compiled and cached in {took:.1f} s; later runs load them")


class _UnitChoice(click.Choice):
    """A choice of the registered compute units (socsim.hw.units), read when click first needs
    them: the registry is not imported with the CLI."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from socsim.hw.units import names
        return names()

    @choices.setter
    def choices(self, value) -> None:   # click.Choice.__init__ sets it; the registry decides
        pass


@main.command()
@click.option("--soc", required=True, help="SoC name from soc_specs/ or a path to a spec YAML")
@click.option("--unit", type=_UnitChoice(), default="cpu", show_default=True)
@click.argument("kind")
@click.option("--batch", type=int, default=1, show_default=True)
@click.option("--in", "in_shape", default="64x32x32", show_default=True, help="CxHxW of the input (or N for element-wise)")
@click.option("--out-channels", type=int, default=None, help="output channels of a convolution; default: the input's")
@click.option("--kernel", type=int, default=3, show_default=True)
@click.option("--stride", type=int, default=1, show_default=True)
@click.option("--pad", type=int, default=None, help="default: same padding")
@click.option("--dtype", type=click.Choice(["fp32", "int8"]), default=None, help="default: int8 on dsp, fp32 elsewhere")
@click.option("--cores", default=None, help="core set for --unit cpu  [default: big1]")
@click.option("--freq", default=None, help="max|mid|min (the unit's OPPs) or MHz; default: the top OPP, the training clock on the DSP")
@click.option("--no-batch-padding", is_flag=True, help="DSP: do not pad batches as Hexagon NN does")
@click.option("--staging", type=click.Choice(["l2", "vtcm_dma"]), default=None,
              help="DSP: how HVX reaches activations (default: the SoC's dsp.activation_staging)")
@click.option("--json", "json_path", default=None, help="also write the result as JSON to this file ('-': stdout)")
def op(soc, unit, kind, batch, in_shape, out_channels, kernel, stride, pad, dtype, cores, freq,
       no_batch_padding, staging, json_path):
    """Time one operator on one unit, like a profiler on the phone.

    KIND: conv2d, conv2d_dgrad, conv2d_wgrad, dwconv2d, dwconv2d_dgrad, dwconv2d_wgrad, maxpool,
    avgpool, gemm, or an element-wise op (relu, add, quantize, ...; an unknown KIND lists them)."""
    from socsim.api import dump_json
    from socsim.report.console import op_table
    from socsim.tools.op import time_op

    json_path = _stdout_alias(json_path)
    _check_outputs(json=json_path)
    res = time_op(soc, unit, kind, batch=batch, in_shape=in_shape, out_channels=out_channels, kernel=kernel,
                  stride=stride, pad=pad, dtype=dtype, cores=cores, freq=freq,
                  batch_padding=not no_batch_padding, staging=staging)
    if json_path:
        _write_atomic(json_path, dump_json(res))
    if json_path != "-":
        out_console.print(op_table(res))


def _name_list(text: str, option: str) -> list[str]:
    """A comma-separated list of names; an empty entry (``a,,b``, a trailing comma) or none at
    all is an error naming ``option``, as an empty ``--grid`` value is."""
    names = [x.strip() for x in text.split(",")]
    if not any(names):
        raise InputError("no names given", field=option, value=text)
    if not all(names):
        raise InputError("an empty name in the list (names are separated by ',')", field=option, value=text)
    return names


_SOC_HELP = "SoC name from soc_specs/ or a path to a spec YAML"
_SET_HELP = ("override a workload field by dotted path; scheduler.options.* apply to every scheduler run "
             "(the file's own options only to the file's scheduler)")
_JSON_HELP = "write the results as JSON here ('-' for stdout)"
_QUIET_HELP = "no console table or progress"
_DET_HELP = "report wall_time_s as 0 (byte-identical summaries)"


@main.command()
@click.option("--soc", required=True, help=_SOC_HELP)
@click.argument("workload")
@click.option("--schedulers", required=True,
              help="comma-separated scheduler names; ratios are to the first.  The workload's "
                   "scheduler.options go to its own scheduler only, the others get their defaults")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("--json", "json_path", default=None, help=_JSON_HELP)
@click.option("--quiet", is_flag=True, help=_QUIET_HELP)
@click.option("--deterministic", is_flag=True, help=_DET_HELP)
@click.option("--out", "out_dir", default=None, hidden=True)   # not an option of compare: say what is
def compare(soc, workload, schedulers, sets, json_path, quiet, deterministic, out_dir):
    """Run WORKLOAD under several schedulers on the same SoC, side by side."""
    if out_dir is not None:
        raise InputError("compare writes no run directory: --json FILE keeps every run's summary; "
                         "socsim run --out DIR --scheduler NAME writes one run's files", field="--out", value=out_dir)
    from socsim.api import compare as api_compare, dump_json
    from socsim.report.console import compare_table, notes_to_print

    names = _name_list(schedulers, "--schedulers")
    json_path = _stdout_alias(json_path)
    _check_outputs(json=json_path)
    prog = _Progress("compare", enabled=not quiet and json_path != "-")
    try:
        runs = api_compare(soc, workload, names, overrides=list(sets), deterministic=deterministic,
                           progress=lambda name, b, n: prog(b, n))
    finally:
        prog.close()
    if json_path:
        from socsim.report.summary import compare_report
        _write_atomic(json_path, dump_json(compare_report(runs)))
    # as run does: the notes on stdout with the table; with the JSON on stdout, on stderr;
    # under --quiet only a plan that left part of the training step out
    run_notes = [n for r in runs for n in notes_to_print(r, quiet)]
    if not quiet and json_path != "-":
        out_console.print(compare_table(runs))
        for note in run_notes:
            out_console.print(escape(note))
    else:
        for note in run_notes:
            err_console.print(escape(note), soft_wrap=True)


@main.command()
@click.option("--soc", required=True, help="comma-separated SoC names or spec paths (a fleet of phones)")
@click.argument("workload")
@click.option("--schedulers", default=None,
              help="comma-separated scheduler names (default: the workload's).  The workload's "
                   "scheduler.options go to its own scheduler only, the others get their defaults")
@click.option("--grid", multiple=True, metavar="KEY=V1,V2",
              help="sweep a workload field (a --set path) over values, parsed as YAML; separate them with "
                   "';' when they are lists: --grid 'input=[1,28,28];[1,32,32]'.  One --grid per field; one value "
                   "(--grid batches=5) sets the field for every point, as run's --set does")
@click.option("--jobs", type=int, default=1, show_default=True,
              help="local: parallel processes; ray: points in flight")
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local process pool, or Ray (install the extra from the socsim checkout: "
                   "pip install -e \".[ray]\")")
@click.option("--address", default=None,
              help="with --backend ray: a running cluster, auto or ray://host:port (default: a local instance)")
@click.option("--json", "json_path", default=None, help=_JSON_HELP)
@click.option("--quiet", is_flag=True, help=_QUIET_HELP)
@click.option("--deterministic", is_flag=True, help=_DET_HELP)
@click.option("--skip-infeasible", is_flag=True,
              help="a point that cannot run on its phone (a DSP scheduler on a phone without a DSP, a memory "
                   "budget below what the model needs there, ...) is listed as skipped, with why, instead of "
                   "stopping the sweep (exit 2 only when no point can run)")
@click.option("--set", "sets", multiple=True, hidden=True)   # not an option of sweep: say what is
def sweep(soc, workload, schedulers, grid, jobs, backend, address, json_path, quiet, deterministic, skip_infeasible,
          sets):
    """Run WORKLOAD over SoCs x schedulers x --grid values (process pool, or Ray)."""
    if sets:
        key = sets[0].split("=", 1)[0]
        raise InputError(f"sweep has no --set: --grid {sets[0]} (one value) sets {key!r} for every point",
                         field="--set", value=sets[0])
    from socsim.api import dump_json, prepare
    from socsim.report.console import sweep_table
    from socsim.spec import load_soc
    from socsim.sweep import parse_grid, points, sweep as do_sweep

    if not 1 <= jobs <= 1024:
        raise InputError("must be 1 to 1024 (processes started at once; more than the points or the "
                         "cores gains nothing)", field="--jobs", value=jobs)
    if backend == "ray":
        import importlib.util
        if importlib.util.find_spec("ray") is None:
            # not "pip install socsim": an unrelated project owns that name on PyPI
            raise InputError('Ray is not installed; install socsim\'s ray extra from the socsim checkout: '
                             'pip install -e ".[ray]"', field="--backend", value="ray")
    socs = _name_list(soc, "--soc")
    scheds = _name_list(schedulers, "--schedulers") if schedulers is not None else None
    grid_values = parse_grid(list(grid))
    json_path = _stdout_alias(json_path)
    _check_outputs(json=json_path)
    # every SoC, scheduler (with its options) and grid value is checked before the first run
    for s in socs:
        load_soc(s)
    seen = set()
    for p in points(socs[:1], scheds or [None], grid_values):
        key = repr((p.scheduler, p.overrides))   # values may be lists (unhashable)
        if key not in seen:
            seen.add(key)
            prepare(workload, overrides=dict(p.overrides), scheduler=p.scheduler, set_label="--grid",
                    scheduler_label="--schedulers")
    prog = _Progress("sweep", enabled=not quiet and json_path != "-", after_s=0.5, unit="points",
                     waiting="running the first point")
    try:
        rows = do_sweep(workload, socs, scheds, grid_values, jobs, backend, deterministic, prog,
                        skip_infeasible=skip_infeasible, address=address)
    finally:
        prog.close()
    if json_path:
        _write_atomic(json_path, dump_json({"points": rows}))
    # as run and compare do; a note many points share is printed once, naming the points
    sweep_notes = _point_notes(rows, quiet)
    if not quiet and json_path != "-":
        out_console.print(sweep_table(rows))
        for note in sweep_notes:
            out_console.print(escape(note))
    else:
        for note in sweep_notes:
            err_console.print(escape(note), soft_wrap=True)


def _point_notes(rows: list[dict], quiet: bool, show: int = 3) -> list[str]:
    """The notes of a sweep's points, each once, with the points it holds for."""
    from socsim.report.console import notes_to_print

    where: dict[str, list[str]] = {}
    for r in rows:
        pt = r["point"]
        label = " ".join([pt["soc"], str(pt["scheduler"] or "-"), *(f"{k}={v}" for k, v in pt["set"].items())])
        said = [f"skipped: {r['skipped']}"] if "skipped" in r else notes_to_print(r["summary"], quiet)
        for n in said:
            where.setdefault(n, []).append(label)
    out = []
    for n, labels in where.items():
        if len(labels) == len(rows) and len(rows) > 1:
            out.append(f"{n} (every point)")
        else:
            more = f", ... ({len(labels)} points)" if len(labels) > show else ""
            out.append(f"{n} (point{'s' if len(labels) > 1 else ''}: {', '.join(labels[:show])}{more})")
    return out


@main.command()
@click.argument("run_dir")
@click.option("--phone-trace", default=None, metavar="TRACE",
              help="a phone's Perfetto trace: draw its CPU frequency, rail power and temperature "
                   "beside the simulated ones in report.html")
def report(run_dir, phone_trace):
    """Regenerate the trace and HTML report of a run directory (from socsim run --out)."""
    from socsim.report.html import read_summary
    from socsim.report.writers import missing_inputs, write_reports

    d = Path(run_dir)
    if not d.is_dir():
        raise InputError("not a directory", field="RUN_DIR", value=run_dir)
    if not (d / "summary.json").exists():
        raise InputError("not a socsim run directory (no summary.json)", field="RUN_DIR", value=run_dir)
    try:
        read_summary(d / "summary.json")
        for warning in missing_inputs(d):
            err_console.print(escape(f"warning: {warning}"), soft_wrap=True)
        written = write_reports(d, phone_trace=phone_trace)
    except OSError as e:
        raise InputError(f"cannot read or write a file of the run directory: {e.strerror or e}",
                         file=e.filename, field="RUN_DIR", value=run_dir) from None
    for p in written:
        out_console.print(escape(f"wrote {p}"))


@main.command("list")
@click.argument("what", type=click.Choice(["socs", "schedulers", "models", "workloads", "instructions", "precisions"]))
def list_cmd(what):
    """List SoCs, schedulers, models, workloads or emulated HVX instructions."""
    from socsim.report import console as c
    out_console.print(c.listing(what))


@main.command()
@click.argument("action", type=click.Choice(["show", "clear"]), default="show")
def cache(action):
    """Show or clear the store of op profiles kept between runs.

    A run simulates every op's access stream through the caches of each core set it costs, and
    times the HVX kernels of DSP ops on the emulator; the results are kept (SOCSIM_CACHE_DIR,
    default ~/.cache/socsim; SOCSIM_CACHE=off turns it off) so that running the same ops again
    skips that work.  Results are identical either way; clearing only costs time.
    """
    from socsim.hw import profile_store

    if action == "clear":
        removed = profile_store.clear()
        out_console.print(escape(f"removed {removed} store file(s) from {profile_store.cache_dir()}"))
        return
    st = profile_store.status()
    lines = [f"profile store: {'on' if st['enabled'] else 'off (SOCSIM_CACHE)'}", f"  directory  {st['dir']}"]
    for ns, f in st["files"].items():
        if f.get("damage"):
            held = f"DAMAGED: {f['damage']}; the next run moves it aside and rebuilds it (or: socsim cache clear)"
        elif f["exists"]:
            held = f"{max(f['entries'], 0)} entries"
        else:
            held = "not written yet: the next run that needs it will"
        lines.append(f"  {ns:<12} {f['file']} ({held})")
    lines.append(f"  all files  {st['bytes'] / 2**20:.1f} MiB")
    out_console.print(escape("\n".join(lines)))


@main.command()
@click.argument("file")
@click.option("--soc", default=None,
              help="also plan the workload on this SoC (name or spec path), as run would before its "
                   "first batch: catches errors that depend on the SoC")
@click.option("--scheduler", default=None, help="check the workload under this scheduler, as run --scheduler would")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="check the workload with this override, as run --set would")
def validate(file, soc, scheduler, sets):
    """Check a SoC spec or a workload YAML; prints what it is or the first error.

    With --soc, a workload is also planned on that SoC (scheduler resolved, training graph built,
    the scheduler's plan made and checked against the SoC, no batch run).  --set and --scheduler
    check the workload as run would read it with them.
    """
    from socsim.spec import load_soc, load_workload, looks_like_soc_spec, resolve_workload
    from socsim.spec.loader import load_yaml

    file = str(resolve_workload(file))
    data, _ = load_yaml(file)
    # a SoC spec has no model and names SoC blocks (a spec missing one of them is still a spec,
    # and its error is the missing block, not a workload's missing 'model')
    if looks_like_soc_spec(data):
        for opt, given in (("--soc", soc), ("--scheduler", scheduler), ("--set", sets[0] if sets else None)):
            if given is not None:
                raise InputError(f"{opt} applies to workloads; this file is a SoC spec", field=opt, value=given)
        from socsim.hw.units import accelerators
        spec = load_soc(file)
        out_console.print(escape(f"ok: SoC spec {spec.name} ({spec.marketing_name}), "
                                 f"{spec.cpu.core_count} cores in {len(spec.cpu.clusters)} clusters"
                                 + "".join(f", {u.part(spec)}" for u in accelerators() if u.present(spec))))
        return
    if soc is not None:
        load_soc(soc)  # an unknown SoC is reported before the workload's own errors
    from socsim.api import prepare
    from socsim.engine.context import build_graph
    if not sets and scheduler is None:
        load_workload(file)   # errors of the file alone, before its scheduler's
    # the scheduler and its options (errors with the line of the option, or naming --set)
    wl, wl_file, _, origins = prepare(file, overrides=list(sets), scheduler=scheduler)
    try:
        g = build_graph(wl.model, tuple(wl.input), wl.num_classes, wl.batch_size, wl.precision, wl_file)
    except InputError as e:   # a model error names the field: give its line, as a run does
        raise origins.locate(e) from None
    msg = (f"ok: workload {wl.name}: {wl.model} {wl.input} batch {wl.batch_size}, "
           f"{wl.total_batches} batches, {wl.precision}, scheduler {wl.scheduler.name}; "
           f"{len(g.ops)} ops per batch, {g.total_macs / 1e9:.2f} G MACs")
    if soc is not None:
        from socsim.api import validate_on_soc as check_plan
        info = check_plan(soc, file, overrides=list(sets), scheduler=scheduler)
        ops = info["ops"]
        steps = " / ".join(f"{u} {n}" for u, n in ops.items())
        msg += (f"; planned on {info['soc']}: {info['label'] or 'plan'}, {steps} steps (a split op runs one "
                f"step per part), cores {info['cpu_cores']}")
        if info["short_plan"]:
            err_console.print(escape(f"warning: {info['short_plan']}"), soft_wrap=True)
    out_console.print(escape(msg))


@main.command()
@click.argument("fleet_file", metavar="FLEET")
@click.option("--soc-mix", default=None, metavar="SOC=SHARE,...",
              help="replace the fleet's phones: e.g. sd865=0.6,sd888=0.4 (each runs population.scheduler)")
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option("--address", default=None, help="Ray cluster: auto or ray://host:port (default: a local instance)")
@click.option("--jobs", type=int, default=1, show_default=True,
              help="local: worker processes; ray: client runs in flight")
@click.option("--out", default=None, help="directory for fleet.json, rounds.csv, clients.csv, report.html")
@click.option("--json", "json_path", default=None, help="write the fleet summary JSON here ('-' for stdout)")
@click.option("--quiet", is_flag=True, help="no console table or progress")
def fleet(fleet_file, soc_mix, backend, address, jobs, out, json_path, quiet):
    """Simulate a federated FLEET (a fleet YAML): rounds of many phones' local training."""
    from socsim.api import dump_json
    from socsim.fleet import load_fleet, parse_soc_mix, run_fleet

    if not 1 <= jobs <= 1024:
        raise InputError("must be 1 to 1024", field="--jobs", value=jobs)
    json_path = _stdout_alias(json_path)
    _check_outputs(json=json_path)
    spec = load_fleet(fleet_file, parse_soc_mix(soc_mix) if soc_mix else None)
    prog = _Progress("fleet", enabled=not quiet and json_path != "-", after_s=0.5, unit="runs",
                     waiting="starting")

    def progress(r: int, done: int, total: int) -> None:
        prog.label = f"round {r + 1}/{spec.plan.rounds}"
        prog(done, total)

    try:
        res = run_fleet(fleet_file, soc_mix=parse_soc_mix(soc_mix) if soc_mix else None, backend=backend,
                        jobs=jobs, address=address, out=out, progress=progress)
    finally:
        prog.close()
    if json_path:
        _write_atomic(json_path, dump_json(res.summary))
    if not quiet and json_path != "-":
        s = res.summary
        p = s["participation"]
        lines = [f"fleet {s['fleet']}: {s['clients']} clients, {s['rounds']} rounds, "
                 f"{p['trained']}/{p['selected']} client rounds trained ({p['rate']:.1%}); "
                 f"round time median {s['round_time_s']['p50']:.3g} s; "
                 f"energy {s['energy_j']['total']:.6g} J (radio {s['energy_j']['radio']:.6g} J); "
                 f"{s['engine_runs']} engine runs for {s['client_runs']} client runs",
                 "dropped: " + ", ".join(f"{k} {v}" for k, v in s["dropped"].items())]
        lines += [f"vs {k}: saves {v['saving']:.1%} of the training energy ({v['energy_j']:.6g} J against "
                  f"{v['baseline_energy_j']:.6g} J)" for k, v in s["vs_baselines"].items()]
        if out:
            lines.append(f"wrote {out}/fleet.json, rounds.csv, clients.csv, report.html")
        for line in lines:
            out_console.print(escape(line))


@main.command()
@click.argument("file", required=False)
@click.option("--trace", "trace_path", default=None,
              help="a phone's Perfetto trace to compare with a run of --workload on --soc (docs/trace.md)")
@click.option("--workload", default=None, help="with --trace: the workload the phone ran")
@click.option("--soc", default=None, help="with --trace: the SoC to simulate it on")
@click.option("--slice", "slice_name", default="batch", show_default=True,
              help="with --trace: the name of the trace's slices that are one batch each")
@click.option("--batches", type=int, default=None,
              help="batches simulated per row  [default: 2; a fixed configuration's per-batch figures settle from the first]")
@click.option("--sustained", "sustained_s", type=float, default=0.0,
              help="measure each row over this many seconds of training from a cold phone (its thermal "
                   "governor may cap the clocks meanwhile), averaging every batch  [default: 0, the first batches]")
@click.option("--json", "json_path", default=None, help="write the report as JSON here ('-' for stdout)")
@click.option("--markdown", "markdown_path", default=None,
              help="write the report as Markdown here ('-' for stdout; docs/validation.md's section is made so)")
@click.option("--rows", "all_rows", is_flag=True, help="print every row, not only each table's worst")
@click.option("--quiet", is_flag=True, help="no console tables or progress")
def fidelity(file, trace_path, workload, soc, slice_name, batches, sustained_s, json_path, markdown_path, all_rows,
             quiet):
    """Simulate every row of a measurement FILE (docs/fidelity.md) and compare with the phone.

    Per table: n, time and energy MAPE, Kendall tau-b of the orderings (time, energy) and the
    worst rows; for a table of ratios between runs (the ncnn benchmarks), each ratio's error.
    With --trace (no FILE): a phone's Perfetto trace against a run of --workload on --soc.
    """
    from socsim.api import dump_json
    from socsim.fidelity import DEFAULT_BATCHES, evaluate, load_measurements
    from socsim.fidelity.render import console_tables, markdown

    json_path, markdown_path = _stdout_alias(json_path), _stdout_alias(markdown_path)
    _check_outputs(json=json_path, markdown=markdown_path)
    _check_distinct(json=json_path, markdown=markdown_path)
    if batches is not None and batches < 1:
        raise InputError("must be at least 1", field="--batches", value=batches)
    if (file is None) == (trace_path is None):
        raise InputError("give a measurement FILE or --trace, one of them", field="FILE",
                         value=file or "")
    if trace_path is not None and sustained_s:
        raise InputError("--sustained applies to a measurement FILE's rows, not to --trace", field="--sustained",
                         value=sustained_s)
    if trace_path is not None and (workload is None or soc is None):
        raise InputError("--trace needs --workload and --soc", field="--workload" if workload is None else "--soc",
                         value="")
    to_stdout = "-" in (json_path, markdown_path)
    if trace_path is not None:
        from socsim.fidelity.trace_compare import compare_trace
        report = compare_trace(trace_path, workload, soc, slice_name)
    else:
        suite = load_measurements(file)
        prog = _Progress(f"fidelity {Path(file).name}", enabled=not quiet and not to_stdout, unit="runs",
                         waiting="simulating")
        try:
            report = evaluate(suite, batches or DEFAULT_BATCHES, progress=prog, sustained_s=sustained_s)
        finally:
            prog.close()
    if json_path:
        _write_atomic(json_path, dump_json(report))
    if markdown_path:
        _write_atomic(markdown_path, markdown(report), "--markdown")
    if not quiet and not to_stdout:
        for table in console_tables(report, all_rows):
            out_console.print(table)
        for note in report["notes"]:
            out_console.print(escape(f"note: {note}"), soft_wrap=True)


@main.group()
def spec():
    """Add a phone: the SoC spec's JSON Schema, an annotated template, a check with derived figures."""


@spec.command("schema")
def spec_schema():
    """Print the JSON Schema of a SoC spec (from socsim's pydantic models)."""
    from socsim.spec.template import schema
    click.echo(schema(), nl=False)


@spec.command("template")
@click.option("--from", "reference", default="sd888", show_default=True,
              help="the shipped SoC (or spec path) whose values fill the template")
@click.option("--name", default="myphone", show_default=True, help="the new spec's name")
def spec_template(reference, name):
    """Print an annotated SoC spec template: every field, its unit and where to look for it
    (socsim spec template > myphone.yaml; docs/adding-a-phone.md)."""
    from socsim.spec import load_soc
    from socsim.spec.template import template
    click.echo(template(load_soc(reference), name), nl=False)


@spec.command("check")
@click.argument("file")
def spec_check(file):
    """Validate a SoC spec and print the figures it implies (peak FLOP/s per cluster, DRAM
    bandwidth, DSP rate)."""
    from socsim.spec import load_soc
    from socsim.spec.template import derived
    s = load_soc(file)
    out_console.print(escape(f"ok: SoC spec {s.name} ({s.marketing_name}) from {file}"))
    from rich.table import Table
    t = Table("block", "derived figures", box=None)
    for what, value in derived(s):
        t.add_row(escape(what), escape(value))
    out_console.print(t)


if __name__ == "__main__":  # pragma: no cover
    main()
