"""Reading an ONNX file into a statically shaped graph: load and check it, pin its input to the
workload's per-sample shape (batch 1), and run ONNX shape inference so every tensor has a shape.

Every failure is a :class:`ModelError` on the field ``model`` that names the file and, where one
is at fault, the node (name and op type) or tensor and the value: a missing, truncated or
malformed file, a missing external-data file, an input the workload does not pin or pins to the
wrong size, a tensor whose shape stays dynamic.  The weights' values are never read (only their
shapes are costed), so external data is checked for presence and size, not loaded.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socsim.workload.model import ModelError


def _onnx() -> Any:
    """The ``onnx`` package, or a ModelError saying how to install it."""
    try:
        import onnx
    except ImportError:
        raise ModelError("model", "onnx", "importing an ONNX model needs the onnx package: "
                         "pip install 'socsim[onnx]'") from None
    return onnx


@dataclass
class OnnxGraph:
    """A shape-inferred ONNX graph.  ``shapes`` holds every tensor's full shape (batch first,
    batch pinned to 1); ``consts`` the values of small constant tensors (initializers and
    Constant nodes, as numpy arrays; external-data tensors are absent); ``weights`` the shapes of
    every initializer; ``unknown`` the tensors whose shapes stayed dynamic."""

    path: str
    nodes: list[Any]
    input_name: str
    output_names: list[str]
    shapes: dict[str, tuple[int, ...]]
    weights: dict[str, tuple[int, ...]]
    consts: dict[str, Any] = field(default_factory=dict)
    unknown: dict[str, list[int | str | None]] = field(default_factory=dict)

    def where(self, node: Any) -> str:
        """``file: node 'name' (OpType)`` for messages."""
        return f"{self.path}: node {node.name or '(unnamed)'!r} ({node.op_type})"


def _fail(path: str, message: str, value: object = None) -> ModelError:
    return ModelError("model", path if value is None else value, f"{path}: {message}")


def _check_external(path: Path, model: Any) -> None:
    """Every external-data file a tensor names exists beside the model and is long enough."""
    onnx = _onnx()
    from onnx.external_data_helper import ExternalDataInfo, _get_all_tensors
    for t in _get_all_tensors(model):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = ExternalDataInfo(t)
        target = path.parent / info.location
        if not target.is_file():
            raise _fail(str(path), f"tensor {t.name!r} keeps its data in {info.location!r}, which "
                        f"is missing (looked for {target})", info.location)
        need = (info.offset or 0) + (info.length or 0)
        if info.length and os.path.getsize(target) < need:
            raise _fail(str(path), f"tensor {t.name!r}: external-data file {info.location!r} holds "
                        f"{os.path.getsize(target)} bytes, {need} needed (truncated?)", info.location)


def load(path: Path) -> Any:
    """The ModelProto in ``path`` (external data checked, not loaded), checked by onnx.checker."""
    onnx = _onnx()
    p = str(path)
    if not path.is_file():
        raise _fail(p, "no such ONNX file")
    try:
        model = onnx.load(p, load_external_data=False)
    except Exception as e:  # DecodeError and friends: a truncated or corrupt protobuf
        raise _fail(p, f"not a readable ONNX model (truncated or corrupt?): {type(e).__name__}: "
                    f"{e}") from None
    if not model.graph.node:
        raise _fail(p, "not an ONNX model with a graph (empty or not ONNX?)")
    _check_external(path, model)
    try:
        onnx.checker.check_model(p)   # by path: external data resolves beside the file
    except Exception as e:
        raise _fail(p, f"the ONNX checker rejects it: {e}") from None
    return model


def _dims(vi: Any) -> list[int | str | None]:
    """A value_info's dims: an int, a symbolic name, or None when unknown."""
    out: list[int | str | None] = []
    for d in vi.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            out.append(int(d.dim_value))
        else:
            out.append(d.dim_param or None)
    return out


def _pin_input(path: str, model: Any, per_sample: tuple[int, ...]) -> str:
    """Fix the one graph input's shape to (1, *per_sample); returns its name."""
    inits = {t.name for t in model.graph.initializer}
    inputs = [vi for vi in model.graph.input if vi.name not in inits]
    if len(inputs) != 1:
        raise _fail(path, f"socsim trains models with one input tensor; this graph has "
                    f"{len(inputs)}: {[vi.name for vi in inputs]}")
    vi = inputs[0]
    dims = _dims(vi)
    if not vi.type.tensor_type.HasField("shape") or len(dims) != 1 + len(per_sample):
        raise _fail(path, f"input {vi.name!r} has shape {dims} (batch first): the workload's "
                    f"per-sample input needs {max(len(dims) - 1, 0)} dimensions, it gives "
                    f"{list(per_sample)}", list(per_sample))
    if isinstance(dims[0], int) and dims[0] != 1:
        raise _fail(path, f"input {vi.name!r} has a fixed batch of {dims[0]}; export the model "
                    "with batch 1 or a dynamic batch dimension", dims)
    for i, (d, want) in enumerate(zip(dims[1:], per_sample), 1):
        if isinstance(d, int) and d != want:
            raise _fail(path, f"input {vi.name!r} has {d} in dimension {i}, the workload's input "
                        f"{list(per_sample)} says {want}", list(per_sample))
    shape = vi.type.tensor_type.shape
    for d, want in zip(shape.dim, (1, *per_sample)):
        d.Clear()
        d.dim_value = want
    return vi.name


def read(path: Path, per_sample: tuple[int, ...]) -> OnnxGraph:
    """Load ``path``, pin its input to ``per_sample`` (batch 1) and infer every tensor's shape."""
    onnx = _onnx()
    from onnx import numpy_helper
    p = str(path)
    model = load(path)
    input_name = _pin_input(p, model, per_sample)
    del model.graph.value_info[:]  # inferred afresh from the pinned input
    for out in model.graph.output:  # a declared symbolic output shape must not block inference
        out.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True,
                                                     data_prop=True)
    except Exception as e:
        raise _fail(p, f"shape inference failed for input {list(per_sample)}: {e}",
                    list(per_sample)) from None
    g = inferred.graph
    shapes: dict[str, tuple[int, ...]] = {}
    unknown: dict[str, list[int | str | None]] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = _dims(vi)
        if all(isinstance(d, int) for d in dims):
            shapes[vi.name] = tuple(int(d) for d in dims)  # type: ignore[arg-type]
        else:
            unknown[vi.name] = dims
    weights = {t.name: tuple(int(d) for d in t.dims) for t in g.initializer}
    consts: dict[str, Any] = {}
    for t in g.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL and _small(t):
            consts[t.name] = numpy_helper.to_array(t)
    for node in g.node:
        if node.op_type == "Constant" and node.output:
            attr = next((a for a in node.attribute if a.name == "value"), None)
            if attr is not None:
                consts[node.output[0]] = numpy_helper.to_array(attr.t)
    shapes.update({k: v for k, v in weights.items() if k not in shapes})
    return OnnxGraph(p, list(g.node), input_name, [o.name for o in g.output], shapes, weights,
                     consts, unknown)


def _small(t: Any) -> bool:
    """A tensor small enough to hold as a constant (shape vectors, clip bounds, split sizes)."""
    n = 1
    for d in t.dims:
        n *= int(d)
    return n <= 64


def shape_of(graph: OnnxGraph, node: Any, tensor: str) -> tuple[int, ...]:
    """The static shape of ``tensor`` (read or written by ``node``), or the ModelError that says
    it stays dynamic."""
    s = graph.shapes.get(tensor)
    if s is not None:
        return s
    dims = graph.unknown.get(tensor)
    what = f"has shape {dims}" if dims is not None else "has no inferred shape"
    raise _fail(graph.path, f"node {node.name or '(unnamed)'!r} ({node.op_type}): tensor "
                f"{tensor!r} {what}: a dynamic shape the workload's input does not pin (export "
                "the model with static shapes apart from the batch)", tensor)
