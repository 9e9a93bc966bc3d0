"""FastRPC: the synchronous CPU<->DSP call, and DSP graph preparation.

A switch of execution between CPU and DSP costs one invoke round trip, plus moving the tensors
that cross: buffers not allocated as shared (ION) memory are copied by the kernel driver, and
shared buffers need cache maintenance proportional to their size (hw:fastrpc notes).  The
copy rate is calibrated so a switch in VGG-class training costs what Mandheling measured
(pub:cpu_dsp_switch_ms); the invoke and maintenance terms come from rpcperf on sm8250.
"""
from __future__ import annotations

from socsim.spec.soc import FastRpc
from socsim.workload.ops import Op

MB = 1 << 20


def crossing_bytes(op: Op) -> int:
    """Bytes a CPU<->DSP switch right before ``op`` moves: the op's activation inputs (its
    operands minus its weights, which live on the DSP side once prepared)."""
    return max(op.bytes_read - op.weight_bytes, 0)


def invoke_s(rpc: FastRpc) -> float:
    """One FastRPC round trip without buffers."""
    return rpc.invoke_us * 1e-6


def switch_s(rpc: FastRpc, bytes_crossing: int, shared_buffers: bool = False) -> float:
    """Time of one CPU<->DSP switch moving ``bytes_crossing`` bytes of tensors.

    ``shared_buffers``: tensors live in ION buffers (zero copy) and only need cache maintenance;
    otherwise the driver duplicates them between the two memory spaces (Mandheling's case).
    """
    mb = bytes_crossing / MB
    t = rpc.invoke_us * 1e-6 + rpc.cache_maint_us_per_mb * 1e-6 * mb
    if not shared_buffers:
        t += bytes_crossing / (rpc.copy_gbs * 1e9)
    return t


def graph_prep_s(rpc: FastRpc, n_ops: int, bytes_allocated: int) -> float:
    """Preparing a DSP compute graph: allocate DSP memory, build operator references."""
    return (rpc.graph_prep_us_per_op * n_ops + rpc.graph_prep_us_per_mb * bytes_allocated / MB) * 1e-6
