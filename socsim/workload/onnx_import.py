"""ONNX import: an ``.onnx`` file -> a :class:`Model` of socsim's layer kinds, which the training
graph lowers exactly as it lowers the zoo's models (so every scheduler and precision works on it).

Each ONNX node whose inputs include an activation becomes a layer (:data:`SUPPORTED` lists the
op types); nodes that only compute on constants or shapes (Shape, Gather of a shape, Constant,
...) are evaluated by ONNX shape inference and cost nothing.  Initializers read as weights
(Conv W and B, Gemm/MatMul B and C, BatchNormalization and LayerNormalization scale and bias,
an embedding table) are the trainable parameters; BatchNormalization's running mean and variance
are buffers, as in PyTorch.  An op that socsim cannot cost raises a ModelError naming the node
and its type; nothing is dropped silently.  Patterns that the exporters spell in several nodes
are recognised: MatMul + Add(bias) is one linear layer, Sigmoid + Mul(x, .) is SiLU, Reshape +
Transpose(0, 2, 1, 3, 4) + Reshape is ShuffleNet's channel shuffle, a Softmax or LogSoftmax on
the graph's output is the loss's own softmax.  docs/guide.md ("Your own model") lists what maps
to what.
"""
from __future__ import annotations

import hashlib
from dataclasses import replace
from functools import lru_cache
from math import prod
from pathlib import Path
from typing import Any, Callable

from socsim.workload import onnx_graph
from socsim.workload.model import Layer, Model, ModelError
from socsim.workload.onnx_graph import OnnxGraph, shape_of

#: ONNX op types the importer maps to socsim layers
SUPPORTED: tuple[str, ...] = (
    "Conv", "Gemm", "MatMul", "BatchNormalization", "LayerNormalization", "Relu", "Clip",
    "HardSwish", "Sigmoid", "Gelu", "Softmax", "LogSoftmax", "Add", "Sum", "Mul", "Concat",
    "Split", "Slice", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "MaxPool",
    "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "Dropout", "Identity",
    "Cast", "Gather", "Div", "Sub", "Resize", "Tanh", "LeakyRelu")
#: ops that never touch an activation's values (their outputs are shapes or constants)
_META = frozenset({"Shape", "Size", "Constant", "ConstantOfShape"})


def _attrs(node: Any) -> dict[str, Any]:
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


class _Importer:
    """Walks the nodes in order, appending layers; ``alias`` maps a tensor to the layer that
    holds it (views and identities alias their input's layer)."""

    def __init__(self, g: OnnxGraph, name: str, input_shape: tuple[int, ...], classes: int):
        self.g, self.name, self.classes, self.input_shape = g, name, classes, input_shape
        self.layers: list[Layer] = []
        self.alias: dict[str, str] = {g.input_name: "input"}
        self.names: set[str] = set()
        self.consumers: dict[str, int] = {}
        for node in g.nodes:
            for t in node.input:
                self.consumers[t] = self.consumers.get(t, 0) + 1
        self._add(None, "input", (), shape_of(g, g.nodes[0], g.input_name)[1:], name="input")

    # -- helpers -----------------------------------------------------------------------------
    def fail(self, node: Any, message: str, value: object = None) -> ModelError:
        return ModelError("model", self.g.path if value is None else value,
                          f"{self.g.where(node)}: {message}")

    def is_data(self, t: str) -> bool:
        return t in self.alias

    def data_inputs(self, node: Any) -> list[str]:
        return [t for t in node.input if t and self.is_data(t)]

    def per_sample(self, node: Any, t: str) -> tuple[int, ...]:
        return shape_of(self.g, node, t)[1:]

    def layer_of(self, t: str) -> Layer:
        name = self.alias[t]
        return next(layer for layer in reversed(self.layers) if layer.name == name)

    def weight(self, node: Any, i: int, what: str) -> tuple[int, ...] | None:
        """The shape of input ``i`` of ``node`` when it is a weight (an initializer); None when
        the node has no such input; an error when it is computed at run time."""
        if len(node.input) <= i or not node.input[i]:
            return None
        t = node.input[i]
        if t in self.g.weights:
            return self.g.weights[t]
        raise self.fail(node, f"its {what} ({t!r}) is computed at run time, not an initializer; "
                        "socsim costs weights held as initializers", t)

    def const(self, node: Any, i: int) -> Any:
        if len(node.input) <= i or not node.input[i]:
            return None
        return self.g.consts.get(node.input[i])

    def _add(self, node: Any, kind: str, inputs: tuple[str, ...], shape: tuple[int, ...],
             attrs: dict[str, int] | None = None, params: int = 0, name: str = "") -> str:
        base = name or (node.name if node is not None and node.name else
                        f"{node.op_type}_{len(self.layers)}")
        out, i = base, 1
        while out in self.names:
            out, i = f"{base}_{i}", i + 1
        self.names.add(out)
        pairs = tuple(sorted((k, int(v)) for k, v in (attrs or {}).items()))
        self.layers.append(Layer(out, kind, inputs, tuple(shape), pairs, params))
        return out

    def emit(self, node: Any, kind: str, ins: list[str], attrs: dict[str, int] | None = None,
             params: int = 0, shape: tuple[int, ...] | None = None) -> None:
        """One layer for ``node``; its first output holds the layer's tensor."""
        out = node.output[0]
        s = shape if shape is not None else self.per_sample(node, out)
        self.alias[out] = self._add(node, kind, tuple(self.alias[t] for t in ins), s, attrs,
                                    params)

    def same(self, node: Any, src: str) -> None:
        """``node``'s output is ``src`` (an identity)."""
        self.alias[node.output[0]] = self.alias[src]

    # -- the walk ----------------------------------------------------------------------------
    def run(self) -> Model:
        outs = self.g.output_names
        if len(outs) != 1:
            raise ModelError("model", self.g.path, f"{self.g.path}: the graph has {len(outs)} "
                             f"outputs {outs}; socsim trains a model with one output (the logits)")
        final_softmax = {n.output[0]: n for n in self.g.nodes
                         if n.op_type in ("Softmax", "LogSoftmax") and n.output[0] in outs}
        for node in self.g.nodes:
            data = self.data_inputs(node)
            if node.op_type in _META or not data:
                continue   # shape and constant arithmetic: ONNX shape inference evaluated it
            if node.output and node.output[0] in final_softmax:
                self.same(node, data[0])   # the loss's softmax
                continue
            handler = _HANDLERS.get(node.op_type)
            if handler is None:
                raise self.fail(node, "socsim cannot cost this op (no op kind maps to it; "
                                f"supported ONNX ops: {', '.join(SUPPORTED)}; "
                                "docs/adding-an-op-kind.md)", node.op_type)
            handler(self, node, data)
        return self.finish(outs[0])

    def finish(self, out: str) -> Model:
        logits = self.alias.get(out)
        if logits is None:
            raise ModelError("model", self.g.path, f"{self.g.path}: the output {out!r} does not "
                             "depend on the input")
        shape = self.layer_of(out).shape
        if len(shape) != 1:
            raise ModelError("model", list(shape), f"{self.g.path}: the output {out!r} has "
                             f"per-sample shape {list(shape)}; socsim's loss (softmax cross-entropy) "
                             "needs logits shaped (classes,)")
        if shape[0] != self.classes:
            raise ModelError("num_classes", self.classes, f"{self.g.path} outputs {shape[0]} "
                             f"classes; set num_classes: {shape[0]} in the workload")
        self._add(None, "softmax_ce", (logits,), shape, dict(classes=shape[0]), name="loss")
        self._drop_dead_views()
        return Model(self.name, self.input_shape, self.classes, "onnx", tuple(self.layers))

    def _drop_dead_views(self) -> None:
        while True:
            used = {i for layer in self.layers for i in layer.inputs}
            dead = [layer for layer in self.layers if layer.kind == "view" and layer.name not in used]
            if not dead:
                return
            self.layers = [layer for layer in self.layers if layer not in dead]


# -- handlers: one per ONNX op type --------------------------------------------------------------
Handler = Callable[[_Importer, Any, list[str]], None]


def _conv(im: _Importer, node: Any, data: list[str]) -> None:
    w = im.weight(node, 1, "weight W")
    if w is None or len(w) != 4:
        raise im.fail(node, f"only 2-D convolutions are supported (weight shape {w})", w)
    a = _attrs(node)
    cin, h, wd = im.per_sample(node, data[0])
    cout, oh, ow = im.per_sample(node, node.output[0])
    kh, kw = w[2], w[3]
    sh, sw = a.get("strides", [1, 1])
    if sh != sw:
        raise im.fail(node, f"unequal strides {[sh, sw]} are not supported", [sh, sw])
    dh, dw = a.get("dilations", [1, 1])
    pads = list(a.get("pads", [0, 0, 0, 0]))
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        pads = [max(0, (o - 1) * sh + d * (k - 1) + 1 - s) // 2
                for o, d, k, s in ((oh, dh, kh, h), (ow, dw, kw, wd))] * 2
    groups = int(a.get("group", 1))
    b = im.weight(node, 2, "bias B")
    params = prod(w) + (prod(b) if b else 0)
    attrs = dict(cin=cin, h=h, w=wd, cout=cout, kh=kh, kw=kw, stride=sh, pad=pads[0],
                 pad_w=pads[1], groups=groups, oh=oh, ow=ow, bias=int(b is not None))
    if (dh, dw) != (1, 1):
        attrs["dilation"] = dh if dh == dw else 0
        if dh != dw:
            raise im.fail(node, f"unequal dilations {[dh, dw]} are not supported", [dh, dw])
    im.emit(node, "conv2d", data[:1], attrs, params)


def _linear(im: _Importer, node: Any, x: str, k: int, n: int, bias: int) -> None:
    s = im.per_sample(node, x)
    im.emit(node, "linear", [x], dict(rows=prod(s[:-1]), k=k, n=n, bias=int(bias > 0)),
            k * n + bias)


def _gemm(im: _Importer, node: Any, data: list[str]) -> None:
    a = _attrs(node)
    if a.get("transA", 0):
        raise im.fail(node, "Gemm with transA=1 is not supported", "transA")
    if len(data) > 1:
        _matmul(im, node, data)
        return
    w = im.weight(node, 1, "weight B")
    assert w is not None
    n, k = (w[0], w[1]) if a.get("transB", 0) else (w[1], w[0])
    c = im.weight(node, 2, "bias C")
    _linear(im, node, data[0], k, n, prod(c) if c else 0)


def _matmul(im: _Importer, node: Any, data: list[str]) -> None:
    if len(data) == 1:
        w = im.weight(node, 1, "weight B")
        if w is None or len(w) != 2 or node.input[0] != data[0]:
            raise im.fail(node, f"a MatMul with a constant operand must be x @ W with W 2-D (got "
                          f"{w})", w)
        _linear(im, node, data[0], w[0], w[1], 0)
        return
    sa, sb = im.per_sample(node, data[0]), im.per_sample(node, data[1])
    if len(sa) < 2 or sa[:-2] != sb[:-2] or sa[-1] != sb[-2]:
        raise im.fail(node, f"batched MatMul of per-sample shapes {list(sa)} and {list(sb)} is not "
                      "supported (equal leading dimensions needed)", [list(sa), list(sb)])
    im.emit(node, "matmul", data, dict(count=prod(sa[:-2]), m=sa[-2], k=sa[-1], n=sb[-1],
                                       transpose_b=0))


def _add(im: _Importer, node: Any, data: list[str]) -> None:
    consts = [t for t in node.input if t and t not in data]
    if consts:   # MatMul's bias, folded into its linear layer
        src = im.layer_of(data[0])
        c = im.g.shapes.get(consts[0])
        if (len(data) == 1 and src.kind == "linear" and not src.a["bias"] and c is not None
                and prod(c) == src.a["n"] and im.consumers.get(data[0], 0) == 1):
            i = next(j for j, layer in enumerate(im.layers) if layer.name == src.name)
            attrs = tuple((k, 1 if k == "bias" else v) for k, v in src.attrs)
            im.layers[i] = replace(src, attrs=attrs, param_count=src.param_count + prod(c))
            im.same(node, data[0])
            return
        raise im.fail(node, "an Add of a constant tensor is supported only as the bias of the "
                      "MatMul before it", consts[0])
    shapes = {im.per_sample(node, t) for t in data}
    if len(shapes) != 1:
        raise im.fail(node, f"broadcasting {node.op_type} of shapes {sorted(shapes)} is not "
                      "supported", sorted(shapes))
    im.emit(node, "add", data, dict(n_in=len(data)))


def _mul(im: _Importer, node: Any, data: list[str]) -> None:
    if len(data) == 2:  # x * sigmoid(x): SiLU, as torch exports nn.SiLU
        for x, s in (data, data[::-1]):
            layer = im.layer_of(s)
            if (layer.kind == "sigmoid" and layer.inputs == (im.alias[x],)
                    and im.consumers.get(s, 0) == 1 and im.layers[-1] is layer):
                im.layers.pop()
                im.names.discard(layer.name)
                im.emit(node, "silu", [x])
                return
    _binary("mul")(im, node, data)


def _broadcasts(s: tuple[int, ...], out: tuple[int, ...]) -> bool:
    """Whether per-sample shape ``s`` broadcasts to ``out`` (numpy's rules, right-aligned)."""
    return len(s) <= len(out) and all(a in (1, b) for a, b in zip(reversed(s), reversed(out)))


def _binary(kind: str) -> Handler:
    """Mul, Div, Sub of activations and constants, numpy-broadcast: a constant operand (an
    initializer or a Constant) is data the op reads, not a trainable parameter."""
    def handler(im: _Importer, node: Any, data: list[str]) -> None:
        if len(node.input) != 2:
            raise im.fail(node, f"expected 2 inputs, got {len(node.input)}", len(node.input))
        out = im.per_sample(node, node.output[0])
        for t in data:
            s = im.per_sample(node, t)
            if not _broadcasts(s, out):
                raise im.fail(node, f"input {t!r} of per-sample shape {list(s)} does not broadcast to the "
                              f"output's {list(out)}", list(s))
        const = sum(prod(im.g.shapes.get(t) or (1,)) for t in node.input if t not in data)
        # a constant first operand (c - x, c / x): the activation is the subtrahend or divisor
        rev = int(node.input[0] not in data)
        im.emit(node, kind, data, dict(const=const, rev=rev))
    return handler


def _resize(im: _Importer, node: Any, data: list[str]) -> None:
    mode = _attrs(node).get("mode", b"nearest")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("nearest", "linear"):
        raise im.fail(node, f"Resize mode {mode!r} is not supported (nearest or linear)", mode)
    s, out = im.per_sample(node, data[0]), im.per_sample(node, node.output[0])
    if len(s) != 3 or s[0] != out[0]:
        raise im.fail(node, f"a Resize of the spatial dimensions of a (C, H, W) tensor is supported; "
                      f"got {list(s)} -> {list(out)}", [list(s), list(out)])
    im.emit(node, "resize", data[:1], dict(linear=int(mode == "linear")))


def _unary(kind: str) -> Handler:
    def handler(im: _Importer, node: Any, data: list[str]) -> None:
        im.emit(node, kind, data[:1])
    return handler


def _relu(im: _Importer, node: Any, data: list[str]) -> None:
    im.emit(node, "relu", data[:1], dict(cap=0))


def _clip(im: _Importer, node: Any, data: list[str]) -> None:
    a = _attrs(node)
    lo, hi = a.get("min"), a.get("max")
    if len(node.input) > 1:   # opset 11+: bounds are inputs
        lo, hi = (None if (v := im.const(node, i)) is None else float(v) for i in (1, 2))
        for i in (1, 2):
            if len(node.input) > i and node.input[i] and im.const(node, i) is None:
                raise im.fail(node, "a Clip bound computed at run time is not supported",
                              node.input[i])
    if lo == 0 and (hi is None or float(hi).is_integer()):
        im.emit(node, "relu", data[:1], dict(cap=0 if hi is None else int(hi)))
        return
    raise im.fail(node, f"Clip({lo}, {hi}) is supported only as ReLU or ReLU-n (min 0, an integer "
                  "max)", [lo, hi])


def _norm(kind: str) -> Handler:
    def handler(im: _Importer, node: Any, data: list[str]) -> None:
        s = im.per_sample(node, data[0])
        scale = im.weight(node, 1, "scale")
        bias = im.weight(node, 2, "bias")
        params = prod(scale or (0,)) + prod(bias or (0,))
        if kind == "batchnorm":
            im.emit(node, kind, data[:1], dict(c=s[0]), params)
            return
        if _attrs(node).get("axis", -1) not in (-1, len(s)):
            raise im.fail(node, "LayerNormalization over more than the last axis is not "
                          "supported", _attrs(node).get("axis"))
        im.emit(node, kind, data[:1], dict(d=s[-1]), params)
    return handler


def _softmax(im: _Importer, node: Any, data: list[str]) -> None:
    s = im.per_sample(node, data[0])
    if _attrs(node).get("axis", -1) not in (-1, len(s)):
        raise im.fail(node, "a Softmax over an axis other than the last is not supported",
                      _attrs(node).get("axis"))
    if node.op_type == "LogSoftmax":
        raise im.fail(node, "a LogSoftmax inside the graph is not supported (on the output it "
                      "is the loss's)", node.op_type)
    im.emit(node, "softmax", data[:1], dict(d=s[-1]))


def _pool(im: _Importer, node: Any, data: list[str]) -> None:
    a = _attrs(node)
    kind = "maxpool" if "Max" in node.op_type else "avgpool"
    c, h, w = im.per_sample(node, data[0])
    out = im.per_sample(node, node.output[0])
    if node.op_type.startswith("Global"):
        im.emit(node, kind, data[:1], dict(c=c, h=h, w=w, k=h, kw=w, stride=1, pad=0, oh=1,
                                           ow=1, is_global=1))
        return
    if len(node.output) > 1 and node.output[1]:
        raise im.fail(node, "MaxPool's indices output is not supported", node.output[1])
    kh, kw = a["kernel_shape"]
    sh, sw = a.get("strides", [1, 1])
    pads = list(a.get("pads", [0, 0, 0, 0]))
    if sh != sw or any(d != 1 for d in a.get("dilations", [1, 1])):
        raise im.fail(node, f"pooling with strides {[sh, sw]} and dilations "
                      f"{a.get('dilations')} is not supported (equal strides, no dilation)")
    if (kh, kw, sh, *pads) == (1, 1, 1, 0, 0, 0, 0):
        im.same(node, data[0])   # a 1x1 window, stride 1: an identity (adaptive pooling to size)
        return
    _, oh, ow = out
    im.emit(node, kind, data[:1], dict(c=c, h=h, w=w, k=kh, kw=kw, stride=sh, pad=pads[0],
                                       oh=oh, ow=ow, is_global=0))


def _reduce_mean(im: _Importer, node: Any, data: list[str]) -> None:
    axes = _attrs(node).get("axes")
    if axes is None and (v := im.const(node, 1)) is not None:
        axes = [int(x) for x in v.reshape(-1)]
    s = im.per_sample(node, data[0])
    if len(s) != 3 or sorted(int(x) % 4 for x in axes or ()) != [2, 3]:
        raise im.fail(node, "ReduceMean is supported over the spatial axes [2, 3] of an NCHW "
                      "tensor (global average pooling)", axes)
    c, h, w = s
    im.emit(node, "avgpool", data[:1], dict(c=c, h=h, w=w, k=h, kw=w, stride=1, pad=0, oh=1,
                                            ow=1, is_global=1))


def _view(im: _Importer, node: Any, data: list[str]) -> None:
    ins, out = shape_of(im.g, node, data[0]), shape_of(im.g, node, node.output[0])
    if not out or out[0] != 1 or prod(ins) != prod(out):
        raise im.fail(node, f"a {node.op_type} from {list(ins)} to {list(out)} moves the batch "
                      "dimension; socsim's layers keep it first", list(out))
    if node.op_type == "Flatten" and _attrs(node).get("axis", 1) != 1:
        raise im.fail(node, "Flatten with axis other than 1 is not supported",
                      _attrs(node).get("axis"))
    im.emit(node, "view", data[:1])


def _transpose(im: _Importer, node: Any, data: list[str]) -> None:
    perm = [int(p) for p in _attrs(node).get("perm", [])]
    if not perm or perm[0] != 0:
        raise im.fail(node, f"a Transpose with perm {perm} moves the batch dimension", perm)
    src = im.layer_of(data[0])
    nxt = [n for n in im.g.nodes if node.output[0] in n.input]
    if perm == [0, 2, 1, 3, 4] and src.kind == "view" and len(src.shape) == 4 and len(nxt) == 1 \
            and nxt[0].op_type == "Reshape":
        base = next(layer for layer in im.layers if layer.name == src.inputs[0])
        g, cg, h, w = src.shape
        if base.shape == (g * cg, h, w) and im.per_sample(nxt[0], nxt[0].output[0]) == base.shape:
            # ShuffleNet's channel shuffle: view (g, c/g) -> transpose -> view back
            im.alias[node.output[0]] = im._add(node, "channel_shuffle", (base.name,), base.shape,
                                               dict(groups=g))
            return
    im.emit(node, "transpose", data[:1])


def _concat(im: _Importer, node: Any, data: list[str]) -> None:
    axis = int(_attrs(node).get("axis", 1))
    if axis == 0 or len(data) != len([t for t in node.input if t]):
        raise im.fail(node, "Concat along the batch axis, or of constants, is not supported", axis)
    im.emit(node, "concat", data, dict(n_in=len(data)))


def _split(im: _Importer, node: Any, data: list[str]) -> None:
    axis = int(_attrs(node).get("axis", 0))
    s = shape_of(im.g, node, data[0])
    axis %= len(s)
    if axis == 0:
        raise im.fail(node, "Split along the batch axis is not supported", axis)
    start = 0
    for out in node.output:
        shape = shape_of(im.g, node, out)
        stop = start + shape[axis]
        im.alias[out] = im._add(node, "view", (im.alias[data[0]],), shape[1:],
                                dict(start=start, stop=stop, split=1))
        start = stop


def _slice(im: _Importer, node: Any, data: list[str]) -> None:
    ins, out = shape_of(im.g, node, data[0]), shape_of(im.g, node, node.output[0])
    cut = [i for i, (a, b) in enumerate(zip(ins, out)) if a != b]
    steps = im.const(node, 4)
    if len(cut) != 1 or cut[0] == 0 or (steps is not None and any(int(x) != 1 for x in steps)):
        raise im.fail(node, f"a Slice from {list(ins)} to {list(out)} is supported along one "
                      "non-batch axis with step 1", list(out))
    starts = im.const(node, 1)
    start = int(starts.reshape(-1)[0]) % ins[cut[0]] if starts is not None and starts.size == 1 \
        else 0
    im.emit(node, "view", data[:1], dict(start=start, stop=start + out[cut[0]], split=1))


def _identity(im: _Importer, node: Any, data: list[str]) -> None:
    im.same(node, data[0])


def _gather(im: _Importer, node: Any, data: list[str]) -> None:
    table = im.weight(node, 0, "embedding table")
    if table is None or len(table) != 2 or node.input[1] != data[0]:
        raise im.fail(node, "Gather is supported as an embedding look-up (a 2-D initializer "
                      "indexed by the input ids)", node.input[0])
    (t,) = im.per_sample(node, data[0])
    im.emit(node, "embedding", data, dict(vocab=table[0], d=table[1], t=t), prod(table))


_HANDLERS: dict[str, Handler] = {
    "Conv": _conv, "Gemm": _gemm, "MatMul": _matmul, "Add": _add, "Sum": _add, "Mul": _mul,
    "BatchNormalization": _norm("batchnorm"), "LayerNormalization": _norm("layernorm"),
    "Relu": _relu, "Clip": _clip, "HardSwish": _unary("hardswish"),
    "Sigmoid": _unary("sigmoid"), "Gelu": _unary("gelu"), "Softmax": _softmax,
    "LogSoftmax": _softmax, "MaxPool": _pool, "AveragePool": _pool, "GlobalAveragePool": _pool,
    "GlobalMaxPool": _pool, "ReduceMean": _reduce_mean, "Reshape": _view, "Flatten": _view,
    "Squeeze": _view, "Unsqueeze": _view, "Transpose": _transpose, "Concat": _concat,
    "Split": _split, "Slice": _slice, "Dropout": _identity, "Identity": _identity,
    "Cast": _identity, "Gather": _gather, "Div": _binary("div"), "Sub": _binary("sub"),
    "Resize": _resize, "Tanh": _unary("tanh"), "LeakyRelu": _unary("leaky_relu"),
}
assert set(_HANDLERS) == set(SUPPORTED)


def is_onnx(name: object) -> bool:
    """Whether a workload's ``model`` names an ONNX file (it ends in ``.onnx``)."""
    return isinstance(name, (str, Path)) and str(name).lower().endswith(".onnx")


def import_onnx(path: str | Path, input_shape: tuple[int, ...], num_classes: int,
                name: str | None = None) -> Model:
    """The model in ONNX file ``path`` for one sample shaped ``input_shape`` (memoised on the
    file's content): a ModelError (field ``model``, ``input`` or ``num_classes``) names what is
    wrong, with the node."""
    p = Path(path)
    try:
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
    except OSError:
        raise ModelError("model", str(path), f"{path}: no such ONNX file") from None
    return _import(str(p), digest, tuple(input_shape), num_classes, name or str(path))


@lru_cache(maxsize=32)
def _import(path: str, digest: str, input_shape: tuple[int, ...], classes: int,
            name: str) -> Model:
    g = onnx_graph.read(Path(path), input_shape)
    return _Importer(g, name, input_shape, classes).run()

