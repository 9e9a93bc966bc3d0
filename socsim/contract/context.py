"""What a scheduler is handed: the planning view of a run (:class:`PlanContext`, for ``plan``)
and its live state (:class:`RunContext`, for the runtime hooks).  The engine implements both
(``socsim.engine.context``); schedulers depend on these Protocols only."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from socsim.spec.soc import SocSpec
from socsim.spec.workload import Workload
from socsim.workload.ops import Op

if TYPE_CHECKING:  # pragma: no cover
    from socsim.contract.plan import Plan

FreqSetting = Any   # "max" | "mid" | "min" | MHz | {cluster: either}


@runtime_checkable
class PlanContext(Protocol):
    """The planning view: the specs, the training graph and the cost model (docs/plugins.md, 2)."""

    soc: SocSpec
    workload: Workload
    rng: np.random.Generator
    #: what ``graph()`` translates to by default: the scheduler's precision, else the workload's
    precision: str

    def graph(self, precision: str | None = None, batch: int | None = None) -> Any:
        """The (precision-translated) training graph of one batch, memoised."""

    def precision_of(self, plan: Plan) -> str | None:
        """The precision of the graph ``plan``'s steps were taken from (None: of no graph built)."""

    def cores(self, spec: str | list[int] | tuple[int, ...] | None = None, default: str = "big4",
              field: str | None = None) -> tuple[int, ...]:
        """Core ids of a core-set name or list; None: the workload's ``cpu.cores``."""

    def freqs(self, cores: tuple[int, ...], setting: FreqSetting = "max") -> tuple[tuple[str, float], ...]:
        """Per-cluster operating points of the clusters ``cores`` span, for ``Plan.cpu_freq_mhz``."""

    def profile(self, op: Op, unit: str, cores: tuple[int, ...] | None = None,
                freq: FreqSetting = "max", dsp_mhz: float | None = None) -> float:
        """Latency of ``op`` on ``unit`` in seconds (inf if the unit cannot run it)."""

    def estimate(self, plan: Plan, freq: FreqSetting | None = None, temp_c: float | None = None,
                 first_batch: bool = False) -> tuple[float, float]:
        """(time_s, energy_j) of one batch of ``plan`` on the idle phone."""

    def estimate_switch(self, plan: Plan, freq: FreqSetting | None = None,
                        temp_c: float | None = None, after: Plan | None = None) -> tuple[float, float]:
        """(time_s, energy_j) of the CPU configuration switch before a batch of ``plan``, run at
        the operating point of the batch of ``after`` it follows (default ``plan``'s own)."""

    def prefetch(self, plans: Any, freq: FreqSetting | None = None) -> None:
        """Cost ahead, in parallel where that pays, what :meth:`estimate` of ``plans`` will ask for."""

    def busy_s(self, plan: Plan, freqs: dict[str, float]) -> tuple[dict[str, float], float]:
        """Busy seconds per unit and cluster of one batch of ``plan`` at ``freqs``, and its duration."""

    def idle_power_w(self) -> float:
        """The idle phone's power (every rail's idle draw), in watts."""

    @property
    def dsp_mhz(self) -> float:
        """The DSP clock training runs at."""

    def switch_s(self, bytes_crossing: int, shared_buffers: bool = False, unit: str = "dsp") -> float:
        """One hand-over between the CPU and ``unit`` moving ``bytes_crossing`` bytes (inf without it)."""

    def memory_budget_bytes(self, t_s: float = 0.0) -> int | None:
        """The workload's memory budget at ``t_s`` (None: no budget then)."""


@runtime_checkable
class RunContext(Protocol):
    """Live state handed to runtime hooks; read it, and change the run by returning a Plan
    (docs/plugins.md, section 3, says what each field reads in each hook)."""

    plan_ctx: PlanContext
    now_s: float
    batch: int
    temps_c: dict[str, float]
    battery_soc: float
    battery_temp_c: float
    charging: bool
    caps_mhz: dict[str, float]
    interference_cores: tuple[int, ...]
    plan: Any
    stop_requested: str | None
    step_in_progress: int | None

    @property
    def soc(self) -> SocSpec:
        """The SoC's spec."""

    @property
    def workload(self) -> Workload:
        """The workload's spec."""

    def continue_batch(self, plan: Plan) -> None:
        """Finish the batch in progress with ``plan`` (only from ``on_memory_pressure``)."""

    def stop(self, reason: str) -> None:
        """End the run: before this batch from ``on_batch_start``, after it from other hooks."""
