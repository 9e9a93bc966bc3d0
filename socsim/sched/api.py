"""The scheduler plugin API's old home: it re-exports :mod:`socsim.contract`'s names so plugins
written against ``socsim.sched.api`` keep working.  New code imports ``socsim.contract``."""
from __future__ import annotations

from socsim.contract import (BaseScheduler, BatchRecord, InterferenceEvent, NoOptions, Plan,  # noqa: F401
                             PlanContext, RunContext, Scheduler, Step, ThermalEvent, Unit)
