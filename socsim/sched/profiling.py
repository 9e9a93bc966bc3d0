"""Profiling helpers shared by schedulers: per-op latencies through the cost model, and what a
CPU<->DSP switch moves, as the engine charges it."""
from __future__ import annotations

from typing import Sequence

from socsim.hw.fastrpc import expected_crossings
from socsim.workload.ops import Op


def latencies(ctx, ops: Sequence[Op], unit: str, cores: tuple[int, ...] | None = None,
              freq: str | float | dict = "max") -> list[float]:
    """Latency of every op on ``unit`` (seconds; ``inf`` where the unit cannot run it).  CPU ops
    run on ``cores`` at ``freq``; DSP ops at the workload's DSP clock."""
    if unit == "cpu":
        return [ctx.profile(op, "cpu", cores=cores, freq=freq) for op in ops]
    return [ctx.profile(op, unit) for op in ops]


def switch_costs(ctx, ops: Sequence[Op], shared_buffers: bool = False, host_speed: float = 1.0) -> list[float]:
    """Cost of a CPU<->DSP switch right before each op (FastRPC moving the tensors the ops
    after the switch read, socsim.hw.fastrpc.expected_crossings), called from a host core of
    ``host_speed`` (socsim.hw.host.host_speed)."""
    return [ctx.switch_s(b, shared_buffers, host_speed=host_speed) for b in expected_crossings(ops)]


def governed_freqs(ctx, cores: tuple[int, ...], cpu_busy_s: float, batch_s: float) -> dict[str, float] | str | None:
    """The per-cluster frequency the workload's governor settles at for a plan that keeps its
    CPU cores busy ``cpu_busy_s`` of the ``batch_s`` in which the CPU side is active (batch
    time minus time waiting on the DSP/GPU, as the engine's schedutil measures it).  ``None``
    where the governor does not depend on load."""
    from socsim.contract.cores import clusters_of
    from socsim.contract.dvfs import SCHEDUTIL_HEADROOM, ceil_opp

    gov = ctx.workload.cpu.governor
    if gov == "performance":
        return "max"
    if gov == "powersave":
        return "min"
    if gov == "userspace":
        return ctx.workload.cpu.freq
    util = min(1.0, cpu_busy_s / batch_s) if batch_s > 0 else 1.0
    return {c.name: ceil_opp(c, SCHEDUTIL_HEADROOM * c.max_mhz * util) for c in clusters_of(ctx.soc, cores)}
