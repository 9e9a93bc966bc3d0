"""FastRPC: the synchronous CPU<->DSP call, and DSP graph preparation.

A switch of execution between CPU and DSP costs one invoke round trip, plus moving the tensors
that cross: buffers not allocated as shared (ION) memory are copied by the kernel driver, and
shared buffers need cache maintenance proportional to their size (hw:fastrpc notes).  The
copy rate is calibrated so a switch in VGG-class training costs what Mandheling measured
(pub:cpu_dsp_switch_ms); the invoke and maintenance terms come from rpcperf on sm8250.
"""
from __future__ import annotations

from typing import Sequence

from socsim.spec.soc import FastRpc
from socsim.workload.ops import Op

MB = 1 << 20


def _tensor_sizes(ops: Sequence[Op]) -> dict[str, int]:
    """Bytes of the tensor each op writes (micro-batch copies of one op add up to the tensor)."""
    size: dict[str, int] = {}
    for op in ops:
        size[op.name] = size.get(op.name, 0) + int(op.out_bytes)
    return size


def _external_bytes(op: Op, size: dict[str, int]) -> int:
    """What ``op`` reads from tensors no op of the batch produces (the app's input batch):
    its activation operands minus the produced ones."""
    known = sum(size.get(i, 0) for i in op.inputs)
    return max(int(op.bytes_read) - int(op.weight_bytes) - known, 0)


def expected_crossings(ops: Sequence[Op]) -> list[int]:
    """Bytes a CPU<->DSP switch right before each of ``ops`` is expected to move, for a placement
    not yet known (the co-scheduling DP's switch cost): the tensors produced before op ``i``
    that the first op from ``i`` on reading any of them consumes.  An op that reads none (a
    weight rotation ahead of its deconvolution) defers to the ops after it.  Weights are not
    counted: they live on the DSP once its graph is prepared."""
    size = _tensor_sizes(ops)
    first: dict[str, int] = {}
    for j, op in enumerate(ops):
        first.setdefault(op.name, j)
    out = []
    for i in range(len(ops)):
        moved = 0
        for op in ops[i:]:
            moved = sum(size[t] for t in set(op.inputs) if first.get(t, i) < i)
            if any(t not in size for t in op.inputs):   # the input batch, held by the app on the CPU
                moved += _external_bytes(op, size)
            if moved:
                break
        out.append(moved)
    return out


def switch_s(rpc: FastRpc, bytes_crossing: int, shared_buffers: bool = False, host_speed: float = 1.0) -> float:
    """Time of one CPU<->DSP switch moving ``bytes_crossing`` bytes of tensors.

    ``shared_buffers``: tensors live in ION buffers (zero copy) and only need cache maintenance;
    otherwise the driver duplicates them between the two memory spaces (Mandheling's case).
    ``host_speed``: how fast the calling core runs host code (socsim.hw.host.host_speed).  The
    duplication is host code on the calling thread (the driver's copy and the runtime's layout
    conversion: ``copy_gbs``, ~40 MB/s, is ~60 cycles a byte at 2.4 GHz, far from any memory
    bound), and ``copy_gbs`` was calibrated with Mandheling's default host, sd865's A77 at
    2419.2 MHz (socsim.hw.host.HOST_REF, speed 1), so on another host it scales with that
    core's speed.  The invoke and the cache maintenance are rpcperf's figures on a core it does
    not state: not scaled.
    """
    if not host_speed > 0:
        raise ValueError(f"host_speed must be positive, got {host_speed}")
    mb = bytes_crossing / MB
    t = rpc.invoke_us * 1e-6 + rpc.cache_maint_us_per_mb * 1e-6 * mb
    if not shared_buffers:
        t += bytes_crossing / (rpc.copy_gbs * 1e9) / host_speed
    return t


def graph_prep_s(rpc: FastRpc, n_ops: int, bytes_allocated: int) -> float:
    """Preparing a DSP compute graph: allocate DSP memory, build operator references."""
    return (rpc.graph_prep_us_per_op * n_ops + rpc.graph_prep_us_per_mb * bytes_allocated / MB) * 1e-6
