"""Arithmetic and traffic conventions shared by the lowering and the precision passes.

MACs count only multiply-accumulates of convolutions and matrix products (the convention of
thop/fvcore and of the figures the tests compare against).  Everything else is ``flops``: one
per elementary operation of the textbook algorithm, per element, as tabulated below.  Bytes are
element counts times the dtype's width.
"""
from __future__ import annotations

from socsim.workload.ops import Op, make_params

BYTES: dict[str, int] = {"fp32": 4, "fp16": 2, "int32": 4, "int8": 1}

# Operations per element.  Batch-norm/layer-norm forward: mean 1, variance 3, normalise 2,
# scale-shift 2; backward: recompute x_hat 2, the two reductions 3, the dx formula 5.  GELU:
# the tanh approximation (Hendrycks & Gimpel 2016) has 9 operations, its derivative about 14.
# Softmax: max 1, subtract 1, exp 1, sum 1, divide 1; backward y * (dy - sum(dy * y)) = 4.
# Softmax-cross-entropy adds the log and the pick of the label; its gradient is p - onehot,
# scaled by 1/batch.  Plain SGD: w -= lr * g (2); requant: shift and saturate (2); quantize:
# scale, stochastic-rounding add, round, clamp (4); PRC clip: min/max and the 95% interval (4).
# Octo's LAC (SEEDS.md 5) outputs y + alpha * mu + beta: 3 operations (multiply, two adds) per
# output element if delta_hat were formed per element, so "lac": 1 counts only the add of
# delta_hat to the conv output -- an undercount (by up to 3x) for any op that relies on this
# default.  socsim.workload.octo passes its LAC op's flops explicitly (n + 2 x per-sample
# elements: delta_hat is shaped like one sample's output, formed once per batch and added to
# each of the n elements), so the table entry is a known approximation that Octo's graphs do
# not use.
FLOPS_PER_ELEM: dict[str, int] = {
    "batchnorm": 8, "batchnorm_bwd": 10, "layernorm": 8, "layernorm_bwd": 10,
    "relu": 1, "relu_bwd": 1, "gelu": 9, "gelu_bwd": 14, "softmax": 5, "softmax_bwd": 4,
    "softmax_ce": 6, "softmax_ce_bwd": 2, "sgd_update": 2, "embedding_bwd": 1,
    "reducemax": 1, "requant_dynamic": 2, "requant_static": 2, "quantize": 4, "dequantize": 1,
    "clip": 4, "lac": 1, "lac_bwd": 3,
}


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
        ``flops`` defaults to :data:`FLOPS_PER_ELEM` times the elements written."""
        if flops is None:
            flops = FLOPS_PER_ELEM.get(kind, 0) * write
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
