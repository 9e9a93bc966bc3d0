"""Arithmetic and traffic conventions shared by the lowering and the precision passes.

MACs count only multiply-accumulates of convolutions and matrix products (the convention of
thop/fvcore and of the figures the tests compare against).  Everything else is ``flops``: one
per elementary operation of the textbook algorithm, per element, as the op-kinds table
(:mod:`socsim.workload.opkinds`, ``flops_per_elem``) lists them.  Bytes are element counts times
the dtype's width.
"""
from __future__ import annotations

from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op, make_params

BYTES: dict[str, int] = {"fp32": 4, "fp16": 2, "int32": 4, "int8": 1}

class OpFactory:
    """Makes the ops of one layer at one batch size, converting element counts to bytes."""

    __slots__ = ("layer", "batch")

    def __init__(self, layer: str, batch: int) -> None:
        self.layer = layer
        self.batch = batch

    def op(self, name: str, kind: str, phase: str, params: dict[str, int], *,
           read: int, write: int, macs: int = 0, flops: int | None = None, weight: int = 0,
           inputs: tuple[str, ...] = (), dtype: str = "fp32", out_dtype: str | None = None,
           persistent: bool = False, attrs: dict[str, str] | None = None) -> Op:
        """One op; ``read``/``write``/``weight`` are element counts at ``dtype`` (the output at
        ``out_dtype`` when given, e.g. int32 accumulators of an int8 convolution).
        ``persistent`` outputs go to parameter or gradient buffers, not to a new tensor.
        ``flops`` defaults to the kind's ``flops_per_elem`` times the elements written (read, for
        a reduction); an unknown ``kind`` raises :class:`socsim.workload.opkinds.UnknownOpKind`."""
        entry = lookup(kind)
        if flops is None:
            flops = entry.flops_per_elem * (read if entry.reduces else write)
        width = BYTES[dtype]
        out_width = BYTES[out_dtype or dtype]
        extra = dict(attrs or {})
        if persistent:
            extra["persistent"] = "1"
        if out_dtype and out_dtype != dtype:
            extra["out_dtype"] = out_dtype
        return Op(name=name, kind=kind, phase=phase,  # type: ignore[arg-type]
                  layer=self.layer, dtype=dtype,  # type: ignore[arg-type]
                  params=make_params(**params), macs=int(macs), flops=int(flops),
                  bytes_read=int(read) * width, bytes_written=int(write) * out_width,
                  weight_bytes=int(weight) * width, out_bytes=int(write) * out_width,
                  inputs=tuple(inputs), attrs=tuple(sorted(extra.items())))


def elems(op: Op, which: str) -> int:
    """Elements an op reads (``read``), writes (``write``) or holds as weights (``weight``)."""
    out = op.attr("out_dtype") or op.dtype
    if which == "read":
        return op.bytes_read // BYTES[op.dtype]
    if which == "write":
        return op.bytes_written // BYTES[out]
    return op.weight_bytes // BYTES[op.dtype]


def is_persistent(op: Op) -> bool:
    """Does the op write into a parameter or gradient buffer (not a fresh tensor)?"""
    return op.attr("persistent") == "1"
