"""Plan-building pieces shared by schedulers (one way to do a thing)."""
from __future__ import annotations

from typing import Iterable

from socsim.contract.plan import Plan, Step


def all_on(graph, unit: str) -> tuple[Step, ...]:
    """Every op of the graph on one unit, in graph order."""
    return tuple(Step(op, unit) for op in graph.ops)


def step_memory(graph) -> tuple[int, ...] | None:
    """Memory in use while each op of ``graph`` runs (liveness analysis of the graph)."""
    live = getattr(graph, "live_bytes", None)
    if live is None:
        return None
    arr = live() if callable(live) else live
    return tuple(int(x) for x in arr)


def single_unit_plan(graph, unit: str, cores: tuple[int, ...], label: str, **kw) -> Plan:
    """Every op of ``graph`` on ``unit`` (CPU ops on ``cores``), with the graph's memory and
    batch; ``kw`` sets any other Plan field, and overrides the ones derived from the graph
    (``micro_batches``, ``peak_memory_bytes``, ``step_memory``)."""
    fields = dict(steps=all_on(graph, unit), cpu_cores=cores, micro_batches=(graph.batch,),
                  peak_memory_bytes=int(graph.peak_memory_bytes), step_memory=step_memory(graph),
                  label=label)
    return Plan(**{**fields, **kw})


def units_of(steps: Iterable[Step]) -> set[str]:
    """The units the steps run on."""
    return {s.unit for s in steps}
