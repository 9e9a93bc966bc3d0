"""The training graph of one batch: forward, loss, backward and update operators.

Execution order (what a framework's autograd does): the forward ops in topological order ending
with the softmax-cross-entropy loss; then, layer by layer in reverse, the error-gradient op(s)
and the weight-gradient op (no error gradient towards the model input, so the first layer has
none); gradients of tensors read by several layers are summed first (concatenated for a channel
split); finally one ``sgd_update`` per layer with parameters.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from math import prod
from typing import Callable

import numpy as np

from socsim.workload import lower, memory
from socsim.workload.costs import BYTES, is_persistent
from socsim.workload.model import Model, ModelError
from socsim.workload.ops import PHASES, Op, as_inference, as_training_step


@dataclass(frozen=True, slots=True)
class LayerOps:
    """Which ops (indices into ``TrainingGraph.ops``) belong to one layer, per phase."""

    name: str
    forward: tuple[int, ...]
    error_grad: tuple[int, ...]
    weight_grad: tuple[int, ...]
    update: tuple[int, ...]

    @property
    def all(self) -> tuple[int, ...]:
        return tuple(sorted(self.forward + self.error_grad + self.weight_grad + self.update))


@dataclass(frozen=True, eq=False)
class TrainingGraph:
    """One training step of ``model`` at ``batch`` in ``precision``.

    ``ops`` is a tuple (graphs are memoised and shared, so they are immutable).  Memory
    figures come from :mod:`socsim.workload.memory`.
    """

    model: Model
    batch: int
    precision: str
    ops: tuple[Op, ...]
    #: "train" (the whole step) or "inference" (its forward ops alone: :func:`forward_only`)
    mode: str = "train"
    _cache: dict = field(default_factory=dict, repr=False)
    # the precision pass that made this graph from the FP32 one (None for FP32): with_batch
    # applies it again (socsim.workload.precision sets it; this module does not import it)
    rewrite: Callable[["TrainingGraph"], "TrainingGraph"] | None = field(default=None, repr=False)

    @property
    def model_name(self) -> str:
        return self.model.name

    @cached_property
    def input_bytes(self) -> int:
        """The batch of input samples (FP32 pixels; int32 token ids for BERT)."""
        return self.batch * prod(self.model.layers[0].shape) * BYTES["fp32"]

    @cached_property
    def param_count(self) -> int:
        """Trainable parameters (as updated: NITI drops BN's, Octo adds LAC's)."""
        return sum(op.p["n"] for op in self.ops if op.phase == "update")

    @cached_property
    def param_bytes(self) -> int:
        """Bytes of the parameters at the dtype they are updated in."""
        return sum(op.weight_bytes for op in self.ops if op.phase == "update")

    @cached_property
    def forward_macs(self) -> int:
        """Multiply-accumulates of the forward pass of the whole batch."""
        return sum(op.macs for op in self.ops if op.phase == "forward")

    @cached_property
    def total_macs(self) -> int:
        return sum(op.macs for op in self.ops)

    @cached_property
    def total_flops(self) -> int:
        """Non-MAC arithmetic of the step (element-wise ops, reductions, updates)."""
        return sum(op.flops for op in self.ops)

    def macs_by_phase(self) -> dict[str, int]:
        out = dict.fromkeys(PHASES, 0)
        for op in self.ops:
            out[op.phase] += op.macs
        return out

    def live_bytes(self) -> np.ndarray:
        """Bytes allocated while each op runs (weights, gradients, optimizer state, saved
        activations and transient tensors); a read-only int64 array."""
        if "live" not in self._cache:
            live = memory.live_bytes(self.ops, self.input_bytes)
            if self.mode == "inference":   # no update ops to count the weights: held once, no gradients
                live = live + sum(op.weight_bytes for op in self.ops)
            live.flags.writeable = False
            self._cache["live"] = live
        return self._cache["live"]

    @property
    def peak_memory_bytes(self) -> int:
        return int(self.live_bytes().max())

    @cached_property
    def persistent_bytes(self) -> int:
        """Parameters + gradients + optimizer state."""
        return memory.persistent_bytes(self.ops)

    @cached_property
    def saved_bytes(self) -> int:
        """Activations kept from the forward pass for the backward pass."""
        return sum(op.saved_bytes for op in self.ops)

    @cached_property
    def layers(self) -> tuple[LayerOps, ...]:
        """Per-layer op indices, in order of each layer's first op."""
        groups: dict[str, dict[str, list[int]]] = {}
        for i, op in enumerate(self.ops):
            groups.setdefault(op.layer, defaultdict(list))[op.phase].append(i)
        return tuple(LayerOps(name, *(tuple(g[p]) for p in PHASES)) for name, g in groups.items())

    @cached_property
    def index(self) -> dict[str, int]:
        """Op name -> position in ``ops``."""
        return {op.name: i for i, op in enumerate(self.ops)}

    def layer_ops(self, layer: str) -> list[Op]:
        return [op for op in self.ops if op.layer == layer]

    def with_batch(self, batch: int) -> "TrainingGraph":
        """The same model and precision at another batch size (memoised)."""
        base = training_graph(self.model, batch)
        g = base if self.rewrite is None else self.rewrite(base)
        return forward_only(g) if self.mode == "inference" else g


def check_batch(batch: object) -> int:
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ModelError("batch", batch, "batch size must be a positive integer")
    return int(batch)


def training_graph(model: Model, batch: int) -> TrainingGraph:
    """The FP32 training graph of one batch (memoised per model object and batch)."""
    return _training_graph(model, check_batch(batch))


@lru_cache(maxsize=64)  # a graph is ~1 kB per op; keep the cache bounded
def _training_graph(model: Model, batch: int) -> TrainingGraph:
    # its forward ops marked as a training step's (socsim.workload.ops.TRAIN_STEP_ATTR)
    return TrainingGraph(model, batch, "fp32", memory.mark_saved(as_training_step(_lower(model, batch))))


def _lower(model: Model, batch: int) -> list[Op]:
    layers = model.layers[1:]
    alias: dict[str, str] = {"input": memory.INPUT}   # layer -> tensor (op) name
    req: dict[str, bool] = {"input": False}           # does the tensor need a gradient?
    consumers: dict[str, list[str]] = defaultdict(list)
    fwd: list[Op] = []
    for layer in layers:
        ins = tuple(alias[i] for i in layer.inputs)
        for i in layer.inputs:
            consumers[i].append(layer.name)
        req[layer.name] = layer.param_count > 0 or any(req[i] for i in layer.inputs)
        op = lower.forward(layer, ins, tuple(model.layer(i) for i in layer.inputs), batch)
        if op is None:
            alias[layer.name] = ins[0]
        else:
            fwd.append(op)
            alias[layer.name] = op.name

    bwd: list[Op] = []
    parts: dict[str, list[str]] = defaultdict(list)   # layer -> gradient contributions
    grad_ops: dict[str, list[str]] = defaultdict(list)
    for layer in reversed(layers):
        if layer.kind == "softmax_ce":
            dy = alias[layer.name]
        elif not parts[layer.name]:
            continue
        elif len(parts[layer.name]) == 1:
            dy = parts[layer.name][0]
        else:
            split = all(model.layer(c).a.get("split") for c in consumers[layer.name])
            acc = lower.accumulate(layer.name, layer.name, parts[layer.name], split, batch,
                                   batch * layer.numel)
            bwd.append(acc)
            dy = acc.name
        ins = tuple(alias[i] for i in layer.inputs)
        ops, grads = lower.backward(layer, ins, tuple(model.layer(i) for i in layer.inputs),
                                    alias[layer.name], dy, tuple(req[i] for i in layer.inputs),
                                    batch)
        bwd.extend(ops)
        grad_ops[layer.name] = [op.name for op in ops if is_persistent(op)]
        for i, g in zip(layer.inputs, grads):
            if g is not None:
                parts[i].append(g)

    # a gradient summed from several contributions: only the sum is ``grad_of`` the tensor
    summed = {op.attr("grad_of") for op in bwd if op.attr("role") == "grad_accum"}
    bwd = [_as_part(op) if op.attr("grad_of") in summed and op.attr("role") != "grad_accum"
           else op for op in bwd]
    upd = [lower.update(layer, grad_ops[layer.name], batch) for layer in layers
           if layer.param_count > 0]
    return fwd + bwd + upd


def _as_part(op: Op) -> Op:
    attrs = tuple(("grad_part", v) if k == "grad_of" else (k, v) for k, v in op.attrs)
    return replace(op, attrs=attrs)


@lru_cache(maxsize=64)
def forward_only(graph: TrainingGraph) -> TrainingGraph:
    """The inference graph of ``graph``: its forward ops alone (the last one, the loss layer's
    softmax, stands for the output softmax), nothing saved for a backward pass, the ops unmarked
    as a training step's (their weights are constants: socsim.workload.ops.TRAIN_STEP_ATTR)
    (memoised)."""
    if graph.mode == "inference":
        return graph
    ops = memory.mark_saved([as_inference(op) for op in graph.ops if op.phase == "forward"])
    return TrainingGraph(graph.model, graph.batch, graph.precision, ops, mode="inference",
                         rewrite=graph.rewrite)
