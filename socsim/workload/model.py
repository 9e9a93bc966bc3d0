"""The layer-level model: a DAG of layers with per-sample output shapes.

A :class:`Model` is what the zoo builds and what :func:`socsim.workload.graph.training_graph`
lowers into operators.  Shapes are per sample (no batch dimension): ``(C, H, W)`` for feature
maps, ``(F,)`` for vectors, ``(T, D)`` for token sequences, ``(heads, T, T)`` for attention
scores.  Layers are stored in topological order; the first is always the ``input`` layer and
the last the loss.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from math import prod

from socsim.workload.opkinds import KINDS, unary_layer

# Layer kinds and what they are.  ``view`` layers (flatten, channel split, token select) move
# no data in the forward pass; their tensors alias the input's.  Unary element-wise layers
# (relu, gelu, softmax, channel_shuffle, transpose, ...) are the op kinds with a ``grad`` in
# socsim.workload.opkinds: each lowers to one op of its kind and one of its ``grad``.
LAYER_KINDS: frozenset[str] = frozenset({
    "input", "conv2d", "linear", "batchnorm", "maxpool", "avgpool", "add", "concat", "layernorm",
    "matmul", "embedding", "view", "select", "softmax_ce", "mul", "div", "sub", "resize",
} | {k for k in KINDS if unary_layer(k)})


class ModelError(ValueError):
    """A model cannot be built or translated as asked.

    ``field`` names what was wrong (``model``, ``input``, ``num_classes``, ``batch``,
    ``precision``), ``value`` is the offending value and ``message`` says why, so the CLI can
    print one precise line.
    """

    def __init__(self, field: str, value: object, message: str) -> None:
        super().__init__(f"{field}={value!r}: {message}")
        self.field = field
        self.value = value
        self.message = message


@dataclass(frozen=True, slots=True)
class Layer:
    """One layer of a model.

    ``attrs`` holds the layer's integer hyper-parameters (kernel, stride, padding, groups, ...)
    as sorted pairs; ``param_count`` its trainable parameters (weights, bias, affine terms).
    """

    name: str
    kind: str
    inputs: tuple[str, ...]
    shape: tuple[int, ...]
    attrs: tuple[tuple[str, int], ...] = ()
    param_count: int = 0

    @property
    def a(self) -> dict[str, int]:
        """Hyper-parameters as a dict."""
        return dict(self.attrs)

    @property
    def numel(self) -> int:
        """Elements of the output per sample."""
        return prod(self.shape)


@dataclass(frozen=True, eq=False)
class Model:
    """A network instantiated for one input size and class count.

    Compared and hashed by identity: the zoo memoises construction, so one (name, input,
    classes) triple is one object, and graph memoisation can key on it cheaply.
    """

    name: str
    input_chw: tuple[int, ...]
    num_classes: int
    variant: str  # which published definition was used, e.g. "torchvision" or "cifar"
    layers: tuple[Layer, ...]
    _index: dict[str, Layer] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._index.update({layer.name: layer for layer in self.layers})

    def layer(self, name: str) -> Layer:
        return self._index[name]

    @cached_property
    def param_count(self) -> int:
        """Trainable parameters of the FP32 model."""
        return sum(layer.param_count for layer in self.layers)

    @cached_property
    def output_shape(self) -> tuple[int, ...]:
        """Shape of the logits (the loss layer's input)."""
        return self.layer(self.layers[-1].inputs[0]).shape

    def count(self, kind: str) -> int:
        """Number of layers of a kind (e.g. ``count("conv2d")`` for the paper's conv counts)."""
        return sum(1 for layer in self.layers if layer.kind == kind)
