"""What a scheduler hands the engine: a :class:`Plan` of :class:`Step` s, each an op on a unit."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from socsim.workload.ops import Op

#: a registered compute unit's name (socsim.hw.units: "cpu", "dsp", "gpu", and any a plugin adds)
Unit = str
#: how a plan with DSP steps prepares the DSP's graph
DSP_GRAPH_MODES: tuple[str, ...] = ("per_batch", "reuse", "none")


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
        # for check_plan to refuse with a message, socsim.contract.checks)
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
