"""Liveness analysis of an op list: how much memory a training step holds while each op runs.

Model of memory (what a framework without recomputation allocates):

- persistent state, allocated for the whole run: the parameters and one gradient buffer per
  parameter at the update's dtype, plus optimizer state (none for plain SGD, the optimizer of
  all the seed systems' CNN training);
- tensors: every non-persistent op output is allocated when the op runs and freed after the
  last op that lists it in ``inputs``.  Forward outputs that a backward op reads therefore live
  across the whole forward/backward gap (the saved activations); the model input lives until
  its last reader (the first layer's weight gradient).

``live[i]`` counts everything allocated while op i runs: its inputs and its output included.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from socsim.workload.costs import is_persistent
from socsim.workload.ops import Op

INPUT = "input"  # the tensor name of the model input


def persistent_bytes(ops: tuple[Op, ...], optimizer_state_per_param_byte: float = 0.0) -> int:
    """Parameters + gradients (+ optimizer state) held for the whole run."""
    weights = sum(op.weight_bytes for op in ops if op.phase == "update")
    return int(weights * (2 + optimizer_state_per_param_byte))


def live_bytes(ops: tuple[Op, ...], input_bytes: int) -> np.ndarray:
    """Bytes allocated while each op runs (int64 array, one entry per op)."""
    n = len(ops)
    index = {op.name: i for i, op in enumerate(ops)}
    size = np.fromiter((0 if is_persistent(op) else op.out_bytes for op in ops), np.int64, n)
    last = np.arange(n, dtype=np.int64)
    input_last = -1
    for j, op in enumerate(ops):
        for t in op.inputs:
            i = index.get(t)
            if i is not None:
                last[i] = j  # j only grows, so this is the last reader
            elif t == INPUT:
                input_last = j
    diff = np.zeros(n + 1, dtype=np.int64)
    diff[:n] += size
    np.add.at(diff, last + 1, -size)
    live = np.cumsum(diff[:n])
    if input_last >= 0:
        live[: input_last + 1] += input_bytes
    return live + persistent_bytes(ops)


def mark_saved(ops: list[Op]) -> tuple[Op, ...]:
    """Set ``saved_bytes`` of every forward op whose output a later phase reads."""
    phase = {op.name: op.phase for op in ops}
    saved = {t for op in ops if op.phase != "forward" for t in op.inputs
             if phase.get(t) == "forward"}
    out: list[Op] = []
    for op in ops:
        want = op.out_bytes if op.name in saved and not is_persistent(op) else 0
        out.append(op if op.saved_bytes == want else replace(op, saved_bytes=want))
    return tuple(out)
