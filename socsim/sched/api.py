"""The scheduler plugin API: the one place that declares what a scheduler is and may react to.

A scheduler is a class with

* ``name``: the name users select (``scheduler: {name: ...}`` or ``--scheduler``);
* ``Options``: a pydantic model of its options (validated from YAML / ``--set``);
* ``plan(ctx) -> Plan``: decide placement, core set, operating points and micro-batching before
  the run.  It may profile ops through ``ctx.profile`` (the cost model), as the real systems
  profile on the phone;
* optional hooks, called by the engine at runtime, each returning a new :class:`Plan` to switch
  to, or ``None`` to keep the current one:
  ``on_batch_start(ctx, batch)``, ``on_batch_end(ctx, batch, record)``,
  ``on_thermal_trip(ctx, event)``, ``on_memory_pressure(ctx, budget_bytes)``,
  ``on_interference(ctx, event)``.

Schedulers are registered under the entry-point group ``socsim.schedulers``; the built-ins are
registered exactly the same way (see pyproject.toml).  Subclass :class:`BaseScheduler` to get
no-op hooks; a plugin class that only follows the protocol gets them from the registry
(``socsim.sched.registry.guarded``), which also reports a plugin's exceptions as its own.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from socsim.workload.ops import Op

if TYPE_CHECKING:  # pragma: no cover
    from socsim.engine.context import PlanContext, RunContext

Unit = str  # a registered compute unit's name (socsim.hw.units: "cpu", "dsp", "gpu", ...)


@dataclass(frozen=True, slots=True)
class Step:
    """One op of a batch placed on a unit.  ``label`` tags micro-batch or recompute copies."""

    op: Op
    unit: Unit
    label: str = ""


@dataclass(frozen=True, eq=False)
class Plan:
    """How one training batch runs.

    steps               ops in execution order with their unit (one CPU/DSP/GPU op at a time)
    cpu_cores           cores that run CPU ops (multi-threaded across them)
    cpu_freq_mhz        fixed per-cluster frequencies (userspace), or None to use the governor
    governor            override of the workload's governor, or None
    dsp_graph           "per_batch": prepare the DSP graph every batch; "reuse": once; "none"
    cpu_graph_prep_s    per-batch framework graph preparation on the CPU (TFLite re-prepares)
    prep_overheads      other per-batch overheads on the host core: (name, seconds) pairs
                        (e.g. re-preparing the DSP subgraphs evicted under a memory budget)
    shared_buffers      DSP tensors in ION buffers (cache maintenance only, no copies)
    micro_batches       how the mini-batch is split (for reports); (batch,) if not split
    peak_memory_bytes   peak training memory of this plan
    step_memory         memory in use while each step runs (None: peak throughout)
    label               a short name for reports ("big2@max", "dp: 12 switches")
    notes               anything the scheduler wants in the summary (JSON-serialisable)
    """

    steps: tuple[Step, ...]
    cpu_cores: tuple[int, ...]
    cpu_freq_mhz: tuple[tuple[str, float], ...] | None = None
    governor: str | None = None
    dsp_graph: Literal["per_batch", "reuse", "none"] = "none"
    dsp_graph_bytes: int = 0
    cpu_graph_prep_s: float = 0.0
    prep_overheads: tuple[tuple[str, float], ...] = ()
    shared_buffers: bool = False
    micro_batches: tuple[int, ...] = ()
    peak_memory_bytes: int = 0
    step_memory: tuple[int, ...] | None = None
    label: str = ""
    notes: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # lists where tuples are meant ([4, 5] for the cores) are what a plugin writes first;
        # the engine hashes these fields, so they are made tuples here (other types are left
        # for check_plan to refuse with a message)
        for name in ("steps", "cpu_cores", "micro_batches", "step_memory"):
            v = getattr(self, name)
            if isinstance(v, list):
                object.__setattr__(self, name, tuple(v))
        for name in ("cpu_freq_mhz", "prep_overheads"):   # (name, value) pairs
            v = getattr(self, name)
            if isinstance(v, list) or (isinstance(v, tuple) and any(isinstance(x, list) for x in v)):
                object.__setattr__(self, name, tuple(tuple(x) if isinstance(x, list) else x for x in v))

    def count(self, unit: str) -> int:
        return sum(1 for s in self.steps if s.unit == unit)

    @property
    def switches(self) -> int:
        """CPU<->DSP (and CPU<->GPU) transitions between the plan's steps.

        The engine's count (``placement.switches`` of the summary) also counts the batch's start
        on the host CPU when the first step is on an accelerator: a DSP-only plan makes one
        FastRPC call into the DSP every batch, and a GPU-only plan counts the same way, so both
        report 1 switch per batch where this property gives 0."""
        n = 0
        for a, b in zip(self.steps, self.steps[1:]):
            if a.unit != b.unit:
                n += 1
        return n


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """What the engine tells ``on_batch_end`` about a finished batch."""

    batch: int
    start_s: float
    time_s: float
    energy_j: float
    plan_label: str
    interference: bool


@dataclass(frozen=True, slots=True)
class ThermalEvent:
    t_s: float
    zone: str
    temp_c: float
    trip: int          # index of the trip point crossed
    rising: bool
    caps_mhz: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class InterferenceEvent:
    t_s: float
    cores: tuple[int, ...]
    utilization: float
    started: bool
    name: str


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


@runtime_checkable
class Scheduler(Protocol):
    name: ClassVar[str]
    Options: ClassVar[type[BaseModel]]

    def plan(self, ctx: "PlanContext") -> Plan: ...


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

    @abstractmethod
    def plan(self, ctx: "PlanContext") -> Plan:
        """Decide how every batch runs (placement, cores, operating points, micro-batching)."""

    def on_batch_start(self, ctx: "RunContext", batch: int) -> Plan | None:
        return None

    def on_batch_end(self, ctx: "RunContext", batch: int, record: BatchRecord) -> Plan | None:
        return None

    def on_thermal_trip(self, ctx: "RunContext", event: ThermalEvent) -> Plan | None:
        return None

    def on_memory_pressure(self, ctx: "RunContext", budget_bytes: int) -> Plan | None:
        return None

    def on_interference(self, ctx: "RunContext", event: InterferenceEvent) -> Plan | None:
        return None

    def summary_extra(self) -> dict[str, Any]:
        """Extra fields for the run summary (``scheduler_info``)."""
        return {}
