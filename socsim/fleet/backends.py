"""Where independent runs go (a fleet round's clients, a sweep's points): this process, a local
process pool, or a Ray cluster.

Every backend's ``map(work, progress, fn)`` returns ``fn`` of each item of ``work`` in order,
calls ``progress(done, total)`` as each finishes and keeps at most ``jobs`` runs in flight.  The
default ``fn`` runs a fleet's :class:`Job`, retried once and then reported as ``{"error": ...}``
(never dropped).  ``fn`` must be a module-level function (it is pickled) and its items content
(SoC spec and workload), so a Ray worker on another machine needs socsim and the plugins the
workloads name, not the files.
"""
from __future__ import annotations

import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable

from socsim.errors import InputError
from socsim.fleet.jobs import Job, run_job

Progress = Callable[[int, int], None]
Task = Callable[[Any], dict[str, Any]]
Stop = Callable[[dict[str, Any]], None]


def _attempt(job: Job) -> dict[str, Any]:
    """Run ``job``, once more if it fails; an error the second time is returned, not raised."""
    for tries in (1, 2):
        try:
            return run_job(job)
        except Exception as e:   # noqa: BLE001 - any failure of a client's run is reported per client
            if tries == 2:
                return {"error": f"{type(e).__name__}: {e}"}
    raise AssertionError("unreachable")



def _worker_init() -> None:
    """In a pool worker: SIGTERM kills it outright (the parent, not the worker, cleans up), and
    on Linux the worker gets SIGTERM when its parent dies, so a killed sweep leaves no orphans."""
    import signal
    import sys

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C reaches the parent, which stops the pool
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
            if os.getppid() == 1:           # the parent died before prctl took effect
                os._exit(1)
        except (OSError, AttributeError):
            pass


class Local:
    """This process (``jobs`` 1) or a pool of ``jobs`` worker processes, kept across rounds."""

    def __init__(self, jobs: int = 1) -> None:
        self.jobs = jobs
        self._pool: ProcessPoolExecutor | None = None

    def map(self, work: list, progress: Progress | None = None, fn: Task | None = None,
            stop: Stop | None = None) -> list[dict[str, Any]]:
        """``fn`` (default: a fleet job's run) of each item of ``work``, in order; ``stop`` is
        called on each result as it comes back and may raise to end the map there."""
        task = fn or _attempt
        if self.jobs <= 1 or len(work) <= 1:
            out = []
            for i, j in enumerate(work):
                out.append(task(j))
                if stop:
                    stop(out[-1])
                if progress:
                    progress(i + 1, len(work))
            return out
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=_worker_init)
        pool = self._pool
        return _stream(work, lambda j: pool.submit(task, j), _wait_futures, self.jobs * 2, progress, stop=stop)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def abort(self) -> None:
        """Stop now (an error, Ctrl-C, SIGTERM): cancel what is queued, end the running workers."""
        if self._pool is None:
            return
        workers = list((getattr(self._pool, "_processes", None) or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None
        for w in workers:
            if w.is_alive():
                w.terminate()


def _wait_futures(pending: list[Future]) -> tuple[list[Future], list[Future]]:
    done, rest = wait(pending, return_when=FIRST_COMPLETED)
    return list(done), list(rest)


def _stream(work: list, submit: Callable[[Any], Any], wait_some: Callable, cap: int,
            progress: Progress | None, get: Callable[[Any], dict] = lambda f: f.result(),
            stop: Stop | None = None) -> list[dict[str, Any]]:
    """Submit ``work`` keeping at most ``cap`` in flight, collect each result as it finishes."""
    out: list[dict[str, Any] | None] = [None] * len(work)
    index: dict[Any, int] = {}
    pending: list[Any] = []
    nxt = done = 0
    while done < len(work):
        while nxt < len(work) and len(pending) < cap:
            h = submit(work[nxt])
            index[h] = nxt
            pending.append(h)
            nxt += 1
        finished, pending = wait_some(pending)
        for h in finished:
            res = out[index.pop(h)] = get(h)
            if stop:
                stop(res)
            done += 1
            if progress:
                progress(done, len(work))
    return out   # type: ignore[return-value]


def _source_root() -> Path:
    """The directory that holds the imported ``socsim`` package (and ``isa``)."""
    import socsim
    return Path(socsim.__file__).resolve().parent.parent


class Ray:
    """A Ray cluster: ``address`` None starts a local instance; ``auto`` or ``ray://host:port``
    connects to a running cluster, which gets socsim's code as content (``py_modules``)."""

    def __init__(self, jobs: int = 1, address: str | None = None, num_cpus: int | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise InputError('Ray is not installed (from the socsim checkout: pip install -e ".[ray]")',
                             field="--backend", value="ray") from None
        self.ray = ray
        self.jobs = jobs
        root = _source_root()
        if address is None:
            # a local instance: its workers import this socsim from the source tree
            env = {"env_vars": {"PYTHONPATH": os.pathsep.join(
                [str(root)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}}
        else:
            env = {"py_modules": [str(root / "socsim"), str(root / "isa")]}
        self._started = not ray.is_initialized()
        if self._started:
            try:
                ray.init(address=address, num_cpus=num_cpus if address is None else None,
                         include_dashboard=False, runtime_env=env, logging_level="ERROR",
                         log_to_driver=False)
            except (ConnectionError, ValueError, RuntimeError) as e:
                raise InputError(f"cannot reach the Ray cluster: {e}", field="--address", value=address) from None
        self._remotes: dict[Task, Any] = {}

    def map(self, work: list, progress: Progress | None = None, fn: Task | None = None,
            stop: Stop | None = None) -> list[dict[str, Any]]:
        """``fn`` (default: a fleet job's run) of each item of ``work``, in order, streamed back
        as they finish (``stop`` as for :meth:`Local.map`)."""
        ray = self.ray
        task = fn or _attempt
        remote = self._remotes.get(task)
        if remote is None:
            remote = self._remotes[task] = ray.remote(max_retries=0)(task)

        def wait_some(pending: list) -> tuple[list, list]:
            return ray.wait(pending, num_returns=1)

        return _stream(work, lambda j: remote.remote(j), wait_some, max(1, self.jobs), progress, ray.get, stop)

    def close(self) -> None:
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()

    def abort(self) -> None:
        """Stop now: the tasks in flight are cancelled with the instance this run started."""
        self.close()


def backend(name: str, jobs: int = 1, address: str | None = None) -> Local | Ray:
    """The backend ``name`` (local or ray)."""
    if name == "local":
        if address is not None:
            raise InputError("--address is for --backend ray", field="--address", value=address)
        return Local(jobs)
    if name == "ray":
        return Ray(jobs, address)
    raise InputError("expected local or ray", field="--backend", value=name)
