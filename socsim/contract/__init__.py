"""The scheduler contract: everything a scheduler author reads, in one package.

* :mod:`~socsim.contract.plan`: :class:`Plan`, :class:`Step`, the units;
* :mod:`~socsim.contract.events`: what the runtime hooks are told (:class:`BatchRecord`,
  :class:`ThermalEvent`, :class:`InterferenceEvent`);
* :mod:`~socsim.contract.scheduler`: :class:`BaseScheduler`, whose marked methods are the hooks
  (:data:`HOOKS`, declared once);
* :mod:`~socsim.contract.context`: the :class:`PlanContext` and :class:`RunContext` Protocols the
  engine implements;
* :mod:`~socsim.contract.checks`: :func:`check_plan`, what the engine accepts;
  :mod:`~socsim.contract.coverage`: :func:`plan_coverage`;
* :mod:`~socsim.contract.precision`: :func:`run_precision`;
* re-exported for plugins: :class:`Op` (what a step runs), :class:`ScheduleError` and
  :class:`InputError` (what a plugin raises for an infeasible plan or a bad input);
* helpers: :mod:`~socsim.contract.builders` (:func:`single_unit_plan`),
  :mod:`~socsim.contract.cores` (core sets, operating points), :mod:`~socsim.contract.dvfs`
  (the CPU governors, as the engine runs them).

docs/plugins.md walks through it.  The engine and the schedulers import it; it imports neither.
"""
from __future__ import annotations

from socsim.contract.builders import all_on, single_unit_plan, step_memory, units_of
from socsim.contract.checks import check_plan
from socsim.contract.context import PlanContext, RunContext
from socsim.contract.cores import (UNKNOWN_CORE_SET, big_cores, clusters_of, core_set_error, is_core_set_name,
                                   little_cores, pick_opp)
from socsim.contract.coverage import plan_coverage, short_plan_note
from socsim.contract.events import BatchRecord, InterferenceEvent, ThermalEvent
from socsim.contract.plan import DSP_GRAPH_MODES, Plan, Step, Unit
from socsim.contract.precision import run_precision
from socsim.contract.scheduler import HOOK_SPECS, HOOKS, BaseScheduler, HookSpec, NoOptions, Scheduler, hookspec
from socsim.errors import InputError, ScheduleError
from socsim.workload.ops import Op

__all__ = [
    "BaseScheduler", "BatchRecord", "DSP_GRAPH_MODES", "HOOKS", "HOOK_SPECS", "HookSpec", "InputError",
    "InterferenceEvent", "NoOptions", "Op", "Plan", "PlanContext", "RunContext", "ScheduleError", "Scheduler", "Step", "ThermalEvent",
    "UNKNOWN_CORE_SET", "Unit", "all_on", "big_cores", "check_plan", "clusters_of", "core_set_error",
    "hookspec", "is_core_set_name", "little_cores", "pick_opp", "plan_coverage", "run_precision",
    "short_plan_note", "single_unit_plan", "step_memory", "units_of",
]
