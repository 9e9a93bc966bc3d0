"""The op-by-op rewriting that the precision algorithms (:mod:`socsim.workload.niti`,
:mod:`socsim.workload.octo`) share: a :class:`Rewriter` keeps the renaming of tensors consistent
so that liveness and ``saved_bytes`` stay exact."""
from __future__ import annotations

from dataclasses import replace

from socsim.workload import memory
from socsim.workload.costs import BYTES, OpFactory, elems
from socsim.workload.graph import TrainingGraph
from socsim.workload.ops import Op


class Rewriter:
    """Emits translated ops and tracks what each source tensor is now called.

    ``t(name)`` is the current name of a source tensor; ``emit`` appends an op and records the
    dtype and size of its output; ``derive`` makes a new op from a source op at another dtype,
    recomputing bytes from the source's element counts.
    """

    def __init__(self, graph: TrainingGraph) -> None:
        self.graph = graph
        self.out: list[Op] = []
        self.rename: dict[str, str] = {}
        self.dtype: dict[str, str] = {memory.INPUT: "fp32"}
        self.size: dict[str, int] = {memory.INPUT: graph.input_bytes // BYTES["fp32"]}
        self.cache: dict[tuple[str, str], str] = {}

    def t(self, name: str) -> str:
        return self.rename.get(name, name)

    def ins(self, op: Op) -> tuple[str, ...]:
        return tuple(self.t(i) for i in op.inputs)

    def emit(self, op: Op) -> Op:
        self.out.append(op)
        self.dtype[op.name] = op.attr("out_dtype") or op.dtype
        self.size[op.name] = elems(op, "write")
        return op

    def keep(self, op: Op) -> Op:
        """Emit a source op unchanged except for renamed inputs."""
        return self.emit(replace(op, inputs=self.ins(op)))

    def drop(self, op: Op, to: str) -> None:
        """Leave an op out; its output is now the (source) tensor ``to``."""
        self.rename[op.name] = self.t(to)

    def derive(self, src: Op, *, name: str | None = None, kind: str | None = None,
               dtype: str, out_dtype: str | None = None, inputs: tuple[str, ...],
               read: int | None = None, write: int | None = None, weight: int | None = None,
               persistent: bool | None = None, attrs: dict[str, str] | None = None) -> Op:
        """A copy of ``src`` at ``dtype`` (element counts kept unless given)."""
        base = {k: v for k, v in src.attrs if k not in ("persistent", "out_dtype")}
        if persistent is None:
            persistent = src.attr("persistent") == "1"
        return self.emit(OpFactory(src.layer, self.graph.batch).op(
            name or src.name, kind or src.kind, src.phase, src.p,
            read=elems(src, "read") if read is None else read,
            write=elems(src, "write") if write is None else write,
            weight=elems(src, "weight") if weight is None else weight,
            macs=src.macs, flops=src.flops, inputs=inputs, dtype=dtype, out_dtype=out_dtype,
            persistent=persistent, attrs={**base, **(attrs or {})}))

    def new(self, layer: str, name: str, kind: str, phase: str, params: dict[str, int], *,
            read: int, write: int, inputs: tuple[str, ...], dtype: str,
            out_dtype: str | None = None, **kw) -> Op:
        """A new op (quantize, reducemax, ...) costed by its kind's ``flops_per_elem``."""
        return self.emit(OpFactory(layer, self.graph.batch).op(
            name, kind, phase, params, read=read, write=write, inputs=inputs, dtype=dtype,
            out_dtype=out_dtype, **kw))

    def convert(self, tensor: str, to: str, layer: str, phase: str) -> str:
        """``tensor`` as ``to`` (int8 or fp32), inserting one quantize/dequantize per tensor."""
        have = self.dtype.get(tensor, "fp32")
        if have == to or (to == "fp32" and have not in ("int8", "int32")):
            return tensor
        key = (tensor, to)
        if key not in self.cache:
            n = self.size[tensor]
            kind = "quantize" if to == "int8" else "dequantize"
            op = self.new(layer, f"{tensor}.{kind}", kind, phase,
                          dict(batch=self.graph.batch, n=n), read=n, write=n,
                          inputs=(tensor,), dtype=have, out_dtype=to)
            self.cache[key] = op.name
        return self.cache[key]
