"""The compiled kernels' one-time step: numba compiles socsim's kernels (the cache simulation,
the thermal scan, the report encoders) on their first call and keeps the machine code in its
on-disk cache (every kernel is ``cache=True``); the first run on a new machine pays that once
(tens of seconds, docs/performance.md, First run), every later run loads it.

:func:`warmup` does the step ahead (``socsim warmup``): a two-batch quick-start run with every
output, which calls the kernels a run and its reports call, and one FC step long enough for the
cache model's periodic driver (hier_period).  A marker file in socsim's cache
directory (:func:`marker`) says the step was done for this code, this numba and this numba cache
location, so the CLI can say "compiling kernels once" while it is not (:func:`compiled`).  The
marker is advice for a message only: a kernel numba has not cached is compiled either way.

:func:`prefetch` shortens a cold first run where a CPU is free: a child process compiles the
cache model's driver (``hier_numba.run_steps`` and the write-back LRU loop it calls, about half
of the quick-start's compile) into numba's on-disk cache while this process builds the graph and
compiles the stream generator; :func:`await_prefetch`, called before the driver's first call
(through socsim.hw.kernel_wait), waits for the child, and the driver is then loaded from the
cache; meanwhile this process compiles the engine's small kernels, or, with a second free CPU,
a second child has.  The machine code is the same either way (numba compiles the same
signatures; outputs are byte-identical); a child that fails or is not started only means this
process compiles those kernels itself.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import subprocess
import sys
from pathlib import Path

from socsim.hostcpus import free_cpus, usable_cpus

_PKG = Path(__file__).resolve().parent

#: the modules that hold numba kernels (their sources key the marker: a changed kernel compiles again)
KERNEL_MODULES = (
    "hw/cache/hier_fifo.py", "hw/cache/hier_numba.py", "hw/cache/hier_period.py", "hw/cache/sim_lru_wb.py",
    "hw/cache/sim_numba.py", "hw/cache/streams_numba.py",
    "hw/thermal_scan.py", "engine/pieces_kernel.py", "hw/battery_kernel.py", "report/csv_format.py", "report/perfetto_android_kernel.py",
    "report/perfetto_counters.py", "report/perfetto_encode.py",
)

#: the run :func:`warmup` does: the quick-start (workloads/quickstart.yaml) for two batches
WARMUP_SOC = "sd865"
WARMUP_WORKLOAD = dict(name="warmup", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=32,
                       batches=2, precision="fp32", scheduler={"name": "mnn-fp32", "options": {}},
                       cpu={"cores": "big4", "governor": "schedutil", "freq": "max"}, seed=0)


#: what a run says before its kernels compile (socsim.api.run's notify, the CLI's stderr)
COMPILE_NOTE = ("compiling kernels once (the first run on this machine, some seconds; "
                "`socsim warmup` does it ahead) ...")


def _numba_version() -> str:
    """numba's version, read without importing numba (a cold run checks the marker first)."""
    try:
        from importlib.metadata import version
        return version("numba")
    except Exception:   # noqa: BLE001 -- no installed metadata: ask numba itself
        import numba
        return numba.__version__


def _digest() -> str:
    h = hashlib.sha256()
    for part in (_numba_version(), sys.version, str(_PKG), os.environ.get("NUMBA_CACHE_DIR", "")):
        h.update(part.encode() + b"\0")
    for rel in KERNEL_MODULES:
        try:
            h.update((_PKG / rel).read_bytes())
        except OSError:
            h.update(rel.encode())
    return h.hexdigest()[:16]


def marker() -> Path:
    """The file that says this code's kernels are compiled in numba's cache."""
    from socsim.paths import cache_dir

    return cache_dir() / f"kernels-{_digest()}.ok"


def compiled() -> bool:
    """Whether :func:`warmup` (or a finished run) compiled this code's kernels on this machine."""
    try:
        return marker().is_file()
    except OSError:
        return False


def mark_compiled() -> None:
    """Leave the marker (a cache directory that cannot be written is no error: the message
    then repeats, nothing else changes)."""
    try:
        m = marker()
        if not m.is_file():
            m.parent.mkdir(parents=True, exist_ok=True)
            m.write_text("socsim's numba kernels are compiled in numba's cache for this code\n")
    except OSError:
        pass


#: the child processes compiling kernels (:func:`prefetch`), until they are awaited
_children: list[subprocess.Popen] = []
_prefetched = False   # one set of children per process at most

#: how long a run waits for a child before compiling the kernels itself (the child then is
#: killed; numba writes each cache file whole, under a temporary name, then renames it, so
#: nothing half-written is read).  Far above the ~5 CPU s it takes (docs/performance.md, First run).
PREFETCH_TIMEOUT_S = 300.0


def _driver_cached() -> bool:
    """Whether numba's on-disk cache already holds a compiled cache-model driver for this code
    (its index, read as numba reads it: a stale source stamp reads as empty); the marker
    (:func:`compiled`) where numba's cache cannot be read so."""
    try:
        from socsim.hw.cache import hier_numba
        return bool(hier_numba.run_steps._cache._cache_file._load_index())
    except Exception:   # noqa: BLE001 -- numba's cache internals moved: fall back to the marker
        return compiled()


def prefetch() -> bool:
    """Start compiling kernels in child processes when this run would compile them (numba's
    cache lacks the cache model's driver) and a CPU is free to do it alongside
    (:func:`socsim.hostcpus.free_cpus`): one child compiles the driver (:func:`compile_driver`); with a second
    free CPU another compiles the engine's kernels (:func:`compile_engine_kernels`; else this
    process does while it waits for the first).  Once per process, only in a main process (a
    sweep's or fleet's workers compile as before).  ``SOCSIM_PREFETCH``: ``auto`` (the default),
    ``off``, or ``on`` (as if every CPU were free).  Returns whether a child started."""
    global _prefetched
    if _prefetched:
        return False
    _prefetched = True
    free = _allowed()
    if not free or ("numba" in sys.modules and _driver_cached()):   # (else the child looks: numba is slow to import)
        return False
    for group in ("compile_driver", "compile_engine_kernels")[:free]:
        child = _spawn(f"_child_main({group!r})")
        if child is None:
            break
        _children.append(child)
    if _children:
        atexit.register(_stop_children)
        from socsim.hw import kernel_wait
        kernel_wait.add(await_prefetch)   # the cache model waits there before its driver's first call
    return bool(_children)


def _allowed() -> int:
    """How many children may start now (``SOCSIM_PREFETCH`` and :func:`socsim.hostcpus.free_cpus`; none in a
    worker process or where Python cannot name its own executable)."""
    import multiprocessing

    mode = os.environ.get("SOCSIM_PREFETCH", "auto").lower()
    if mode in ("off", "0", "no", "false") or multiprocessing.parent_process() is not None or not sys.executable:
        return 0
    return max(0, usable_cpus() - 1) if mode == "on" else free_cpus()


def _spawn(call: str) -> subprocess.Popen | None:
    """A child process that imports this socsim and calls ``kernels.<call>``."""
    code = f"import sys; sys.path.insert(0, {str(_PKG.parent)!r}); from socsim import kernels; kernels.{call}"
    try:
        return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, close_fds=True)
    except OSError:
        return None


def _child_main(group: str) -> None:
    """A child's work: nothing where numba's cache already holds the driver (the run loads
    everything), else ``group`` (:func:`compile_driver` or :func:`compile_engine_kernels`)."""
    if not _driver_cached():
        globals()[group]()


def await_prefetch() -> int | None:
    """Wait for the children of :func:`prefetch`, if any run (called before the cache model's
    driver is first called, so numba finds the kernels in its on-disk cache instead of
    compiling them); returns the worst exit status (None: no child was waited for)."""
    children = _children[:]
    del _children[:]
    if not children:
        return None
    if len(children) == 1 and children[0].poll() is None:
        try:   # this process would only wait: compile the engine's kernels meanwhile
            compile_engine_kernels()
        except Exception:   # noqa: BLE001 -- the run compiles them itself on their first call
            pass
    codes = []
    for child in children:
        try:
            codes.append(child.wait(timeout=PREFETCH_TIMEOUT_S))
        except subprocess.TimeoutExpired:
            child.kill()
            codes.append(child.wait())
    return max(codes, key=abs)


def _stop_children() -> None:
    """At exit (a run that ended before it needed the driver, an input error): stop the children."""
    children = _children[:]
    del _children[:]
    for child in children:
        if child.poll() is None:
            child.kill()
            child.wait()


def compile_driver() -> None:
    """The child's work (:func:`prefetch`): one step of two threads' streams through a small
    two-private-level, one-shared-level write-back LRU hierarchy, which compiles
    ``hier_numba.run_steps`` for the argument types every simulation passes it (the CPU's, the
    DSP's) and caches it on disk."""
    import numpy as np

    from socsim.hw.cache.geometry import CacheGeom
    from socsim.hw.cache.hierarchy import Hierarchy

    priv = (CacheGeom("L1D", 4096, 4, 64), CacheGeom("L2", 16384, 4, 64))
    hier = Hierarchy(private=priv, shared=(CacheGeom("L3", 65536, 8, 64),), threads=2,
                     stream_line_bytes=64, per_thread_private=(priv, priv))
    hier.run_steps(np.arange(8, dtype=np.int64), np.zeros(8, dtype=np.uint8),
                   np.array([0, 4, 8], dtype=np.int64), 1)


def compile_engine_kernels() -> None:
    """Compile the engine's small kernels a run calls after the op costing (the power sampling's
    pieces, the thermal network's modal steps, the battery's step and profile terms, the
    peaks), each for the
    argument types the engine passes (readonly where the engine's are), on tiny inputs; called
    by :func:`await_prefetch` while the child still compiles the cache model's driver, or by a
    child of its own (:func:`prefetch`)."""
    import numpy as np

    from socsim.engine.pieces_kernel import part_peaks, pieces, sample_offsets
    from socsim.hw.battery_kernel import profile_terms, step_currents
    from socsim.hw.thermal_scan import modal_steps, neg_rate_steps

    _, offs = sample_offsets(0.0, 0.5, 1.0, 1, 1.0)
    edges = np.array([0.0, 1.0])
    cum_dyn = np.zeros((2, 1))
    edges.flags.writeable = cum_dyn.flags.writeable = False   # the engine's templates are readonly
    pieces(offs, 0.0, edges, cum_dyn, 1.0, np.zeros(1), np.zeros(1))
    rates = np.ones(1)
    rates.flags.writeable = False   # the thermal network's rates are readonly
    neg_lt, _, _ = neg_rate_steps(np.ones(1), rates)
    modal_steps(np.zeros(1), np.ones((1, 1)), neg_lt, rates, np.zeros(1, np.bool_), np.ones(1), np.zeros((1, 1)))
    profile_terms(3.8, 0.1, np.ones(1), 0.0, 1.0)
    part_peaks(np.ones((1, 1)), np.ones((1, 1)), 0.0, np.zeros(1))
    step_currents(0.1, -20.0, 60.0, 2400.0, 25.0, np.zeros(2), np.ones(2), 0.5, 1.0, 1.0, 1.0, 4.4)
