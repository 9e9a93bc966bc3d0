"""The operator record of a training graph.

An :class:`Op` is one operator of one training step (forward, error-gradient, weight-gradient
or weight-update) with the shape parameters its cost model needs and the work and traffic it
implies.  Ops are immutable and hashable; ``signature`` is the memoisation key of cost models.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Phase = Literal["forward", "error_grad", "weight_grad", "update"]
DType = Literal["fp32", "int8", "int32", "fp16"]

PHASES: tuple[str, ...] = ("forward", "error_grad", "weight_grad", "update")


@dataclass(frozen=True, slots=True)
class Op:
    """One operator of the training graph.

    ``params`` holds the shape parameters as sorted (name, int) pairs, e.g. batch, cin, h, w,
    cout, kh, kw, stride, pad for a convolution.  ``macs`` counts multiply-accumulates, ``flops``
    the other arithmetic (element-wise, reductions).  Byte counts are for the op's own operands
    at its dtype, before any cache filtering.
    """

    name: str
    kind: str
    phase: Phase
    layer: str
    dtype: DType
    params: tuple[tuple[str, int], ...]
    macs: int = 0
    flops: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    weight_bytes: int = 0
    out_bytes: int = 0
    saved_bytes: int = 0
    inputs: tuple[str, ...] = ()
    attrs: tuple[tuple[str, str], ...] = field(default=())

    @property
    def p(self) -> dict[str, int]:
        """Shape parameters as a dict."""
        return dict(self.params)

    @property
    def signature(self) -> tuple:
        """What a cost model's result depends on (not the name or the layer)."""
        return (self.kind, self.dtype, self.params)

    @property
    def batch(self) -> int:
        return dict(self.params).get("batch", 1)

    def attr(self, key: str, default: str | None = None) -> str | None:
        return dict(self.attrs).get(key, default)


def make_params(**kw: int) -> tuple[tuple[str, int], ...]:
    """Canonical, hashable shape parameters."""
    return tuple(sorted((k, int(v)) for k, v in kw.items()))
