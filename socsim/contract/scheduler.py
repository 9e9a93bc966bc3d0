"""What a scheduler is, and every method the engine calls on it, declared once.

A scheduler is a class with

* ``name``: the name users select (``scheduler: {name: ...}`` or ``--scheduler``);
* ``Options``: a pydantic model of its options (validated from YAML / ``--set``);
* ``plan(ctx) -> Plan``: decide placement, core set, operating points and micro-batching before
  the run.  It may profile ops through ``ctx.profile`` (the cost model), as the real systems
  profile on the phone;
* optional runtime hooks, each returning a new :class:`Plan` to switch to, or ``None`` to keep
  the current one, and ``summary_extra()``.

The methods of :class:`BaseScheduler` marked with :func:`hookspec` are the hooks: :data:`HOOKS`
(their names, in the order declared) and :data:`HOOK_SPECS` are derived from them, and the
registry wraps exactly those of a plugin (``socsim.sched.registry.guarded``), so adding a hook is
one method here plus its line in docs/plugins.md.  Schedulers are registered under the
entry-point group ``socsim.schedulers``; the built-ins are registered the same way.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict

from socsim.contract.context import PlanContext, RunContext
from socsim.contract.events import BatchRecord, InterferenceEvent, ThermalEvent
from socsim.contract.plan import Plan

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class HookSpec:
    """One method the engine calls on a scheduler.  ``runtime``: called during the batches with
    a RunContext (its failure is reported with the batch and simulated time); ``batch_arg``: its
    second argument is the batch it is called for; ``doc``: when it is called."""

    name: str
    runtime: bool
    batch_arg: bool
    doc: str


def hookspec(*, runtime: bool, batch_arg: bool = False) -> Callable[[F], F]:
    """Mark a method of :class:`BaseScheduler` as a hook the engine calls (see :class:`HookSpec`)."""
    def mark(f: F) -> F:
        f.__socsim_hook__ = (runtime, batch_arg)  # type: ignore[attr-defined]
        return f
    return mark


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


@runtime_checkable
class Scheduler(Protocol):
    """The least a scheduler plugin is: a name, an options model and ``plan``."""

    name: ClassVar[str]
    Options: ClassVar[type[BaseModel]]

    def plan(self, ctx: PlanContext) -> Plan: ...


class BaseScheduler(ABC):
    """Convenience base: stores validated options, hooks do nothing; ``plan`` is abstract."""

    name: ClassVar[str] = "base"
    Options: ClassVar[type[BaseModel]] = NoOptions
    #: precision the scheduler trains with; None = the workload's ``precision``
    precision: ClassVar[str | None] = None
    description: ClassVar[str] = ""
    #: how the scheduler keeps to a memory budget ("it re-splits ..."); None: it does not plan for
    #: one (the console's note on a run over budget names the schedulers that do)
    memory_budget_plan: ClassVar[str | None] = None

    def __init__(self, options: BaseModel | None = None) -> None:
        self.options = options if options is not None else self.Options()

    @hookspec(runtime=False)
    @abstractmethod
    def plan(self, ctx: PlanContext) -> Plan:
        """Decide how every batch runs (placement, cores, operating points, micro-batching)."""

    @hookspec(runtime=True, batch_arg=True)
    def on_batch_start(self, ctx: RunContext, batch: int) -> Plan | None:
        """Before each batch; ``ctx.stop(reason)`` here declines the batch."""
        return None

    @hookspec(runtime=True, batch_arg=True)
    def on_batch_end(self, ctx: RunContext, batch: int, record: BatchRecord) -> Plan | None:
        """After each batch, with what it took (:class:`BatchRecord`)."""
        return None

    @hookspec(runtime=True)
    def on_thermal_trip(self, ctx: RunContext, event: ThermalEvent) -> Plan | None:
        """A thermal zone crosses a trip point (:class:`ThermalEvent`, with the new caps)."""
        return None

    @hookspec(runtime=True)
    def on_memory_pressure(self, ctx: RunContext, budget_bytes: int) -> Plan | None:
        """A step of ``environment.memory_budget_mb`` takes effect; inside a batch, the hook may
        finish that batch with another plan (``ctx.continue_batch``)."""
        return None

    @hookspec(runtime=True)
    def on_interference(self, ctx: RunContext, event: InterferenceEvent) -> Plan | None:
        """A foreground app (``environment.foreground_load``) starts or ends."""
        return None

    @hookspec(runtime=False)
    def summary_extra(self) -> dict[str, Any]:
        """Extra fields for the run summary (``scheduler_info``)."""
        return {}


#: every hook, by name, in the order declared on :class:`BaseScheduler`
HOOK_SPECS: dict[str, HookSpec] = {
    name: HookSpec(name, f.__socsim_hook__[0], f.__socsim_hook__[1], (f.__doc__ or "").strip())
    for name, f in vars(BaseScheduler).items() if hasattr(f, "__socsim_hook__")
}
#: the methods of a scheduler the engine calls (plan, then the runtime hooks, then summary_extra)
HOOKS: tuple[str, ...] = tuple(HOOK_SPECS)
