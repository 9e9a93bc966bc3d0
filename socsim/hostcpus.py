"""The host machine's CPUs as a run sees them: how many this process may run on, and how many the
1-minute load average leaves free beside it.  Used by the first run's compiling children
(socsim.kernels) and by the costing workers (socsim.engine.oracle): one rule for both
(docs/performance.md, First run and Cold planning)."""
from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask; ``os.cpu_count`` where there is none)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def free_cpus() -> int:
    """The CPUs beside this process's own that other work leaves free: the CPUs less one, less
    the whole part of the 1-minute load average; on a busy machine a child would only take
    turns with this process and add its start-up to the run (docs/performance.md, First run)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return max(0, usable_cpus() - 1 - int(load))
