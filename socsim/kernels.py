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
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

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
COMPILE_NOTE = ("compiling kernels once (the first run on this machine, up to a minute; "
                "`socsim warmup` does it ahead) ...")


def _digest() -> str:
    import numba

    h = hashlib.sha256()
    for part in (numba.__version__, sys.version, str(_PKG), os.environ.get("NUMBA_CACHE_DIR", "")):
        h.update(part.encode() + b"\0")
    for rel in KERNEL_MODULES:
        try:
            h.update((_PKG / rel).read_bytes())
        except OSError:
            h.update(rel.encode())
    return h.hexdigest()[:16]


def marker() -> Path:
    """The file that says this code's kernels are compiled in numba's cache."""
    from socsim.hw.profile_store import cache_dir

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
