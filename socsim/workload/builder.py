"""A small network-construction DSL with shape inference.

The zoo's model definitions call these methods the way a PyTorch ``forward`` calls modules; each
call appends one :class:`Layer`, computes its per-sample output shape and parameter count, and
raises :class:`ModelError` (field ``input``) when the input is too small for a layer.
"""
from __future__ import annotations

from contextlib import contextmanager
from math import ceil, prod
from typing import Iterator

from socsim.workload.model import Layer, Model, ModelError
from socsim.workload.opkinds import lookup

Pair = int | tuple[int, int]


def _pair(v: Pair) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def window_out(size: int, k: int, stride: int, pad: int) -> int:
    """Output length of a convolution or pooling window (floor mode, as PyTorch's default)."""
    return (size + 2 * pad - k) // stride + 1


class NetBuilder:
    """Builds one :class:`Model`; tensors are referred to by layer name."""

    def __init__(self, model: str, input_shape: tuple[int, ...], num_classes: int,
                 input_tensor: tuple[int, ...] | None = None) -> None:
        """``input_tensor`` is the per-sample shape of the ``input`` layer when it differs
        from the user-facing ``input_shape`` (BERT: token ids ``(T,)`` for input ``(T, H)``)."""
        self.model = model
        self.input_shape = tuple(input_shape)
        self.num_classes = num_classes
        self._layers: list[Layer] = []
        self._shapes: dict[str, tuple[int, ...]] = {}
        self._prefix: list[str] = []
        self._add("input", "input", (), tuple(input_tensor or self.input_shape))

    # -- bookkeeping -------------------------------------------------------------------------
    @contextmanager
    def scope(self, name: str) -> Iterator[None]:
        """Prefix the names of the layers built inside (``layer1.0.conv1``)."""
        self._prefix.append(name)
        try:
            yield
        finally:
            self._prefix.pop()

    def _add(self, kind: str, base: str, inputs: tuple[str, ...], shape: tuple[int, ...],
             attrs: dict[str, int] | None = None, params: int = 0) -> str:
        name = ".".join([*self._prefix, base])
        if name in self._shapes:  # repeated base names inside one scope: conv, conv_1, ...
            i = 1
            while f"{name}_{i}" in self._shapes:
                i += 1
            name = f"{name}_{i}"
        attr_pairs = tuple(sorted((k, int(v)) for k, v in (attrs or {}).items()))
        self._layers.append(Layer(name, kind, inputs, tuple(shape), attr_pairs, params))
        self._shapes[name] = tuple(shape)
        return name

    def shape(self, x: str) -> tuple[int, ...]:
        return self._shapes[x]

    def _too_small(self, layer: str, out: tuple[int, ...]) -> ModelError:
        dims = "x".join(str(d) for d in self.input_shape)
        got = "x".join(str(d) for d in out)
        return ModelError("input", self.input_shape,
                          f"input {dims} is too small for {self.model}: layer "
                          f"'{'.'.join([*self._prefix, layer])}' would output {got} (empty)")

    # -- convolutional layers ----------------------------------------------------------------
    def conv(self, x: str, cout: int, k: Pair, stride: int = 1, pad: Pair = 0, groups: int = 1,
             bias: bool = False, name: str = "conv") -> str:
        """2-D convolution; ``groups == cin == cout`` is a depthwise convolution."""
        cin, h, w = self.shape(x)
        kh, kw = _pair(k)
        ph, pw = _pair(pad)
        oh, ow = window_out(h, kh, stride, ph), window_out(w, kw, stride, pw)
        if oh <= 0 or ow <= 0:
            raise self._too_small(name, (cout, oh, ow))
        assert cin % groups == 0 and cout % groups == 0, (name, cin, cout, groups)
        params = cout * (cin // groups) * kh * kw + (cout if bias else 0)
        attrs = dict(cin=cin, h=h, w=w, cout=cout, kh=kh, kw=kw, stride=stride, pad=ph,
                     pad_w=pw, groups=groups, oh=oh, ow=ow, bias=int(bias))
        return self._add("conv2d", name, (x,), (cout, oh, ow), attrs, params)

    def bn(self, x: str, name: str = "bn") -> str:
        c = self.shape(x)[0]
        return self._add("batchnorm", name, (x,), self.shape(x), dict(c=c), 2 * c)

    def relu(self, x: str, name: str = "relu", cap: int = 0) -> str:
        """ReLU; ``cap=6`` is ReLU6 (MobileNet-v2)."""
        return self._add("relu", name, (x,), self.shape(x), dict(cap=cap))

    def conv_bn_relu(self, x: str, cout: int, k: Pair, stride: int = 1, pad: Pair = 0,
                     groups: int = 1, name: str = "conv", cap: int = 0,
                     act: bool = True) -> str:
        """The conv-BN-ReLU unit of most CNNs, named ``<name>.conv/.bn/.relu``."""
        with self.scope(name):
            y = self.bn(self.conv(x, cout, k, stride, pad, groups))
            return self.relu(y, cap=cap) if act else y

    def _pool(self, kind: str, x: str, k: Pair, stride: int, pad: int, name: str,
              global_: bool = False) -> str:
        c, h, w = self.shape(x)
        kh, kw = _pair(k)
        oh, ow = window_out(h, kh, stride, pad), window_out(w, kw, stride, pad)
        if oh <= 0 or ow <= 0:
            raise self._too_small(name, (c, oh, ow))
        attrs = dict(c=c, h=h, w=w, k=kh, kw=kw, stride=stride, pad=pad, oh=oh, ow=ow,
                     is_global=int(global_))
        return self._add(kind, name, (x,), (c, oh, ow), attrs)

    def maxpool(self, x: str, k: int, stride: int, pad: int = 0, name: str = "maxpool") -> str:
        return self._pool("maxpool", x, k, stride, pad, name)

    def avgpool(self, x: str, k: int, stride: int, pad: int = 0, name: str = "avgpool") -> str:
        return self._pool("avgpool", x, k, stride, pad, name)

    def global_avgpool(self, x: str, name: str = "avgpool") -> str:
        _, h, w = self.shape(x)
        return self._pool("avgpool", x, (h, w), 1, 0, name, global_=True)

    def adaptive_avgpool(self, x: str, oh: int, ow: int, name: str = "avgpool") -> str:
        """PyTorch's AdaptiveAvgPool2d((oh, ow)): identity when the map already has that size,
        otherwise modelled as one pooling with the largest adaptive window."""
        c, h, w = self.shape(x)
        if (h, w) == (oh, ow):
            return x
        if (oh, ow) == (1, 1):
            return self.global_avgpool(x, name)
        kh, kw = ceil(h / oh), ceil(w / ow)
        attrs = dict(c=c, h=h, w=w, k=kh, kw=kw, stride=max(1, h // oh), pad=0, oh=oh, ow=ow,
                     is_global=0)
        return self._add("avgpool", name, (x,), (c, oh, ow), attrs)

    # -- data movement -----------------------------------------------------------------------
    def add(self, *xs: str, name: str = "add") -> str:
        assert len({self.shape(x) for x in xs}) == 1, [self.shape(x) for x in xs]
        return self._add("add", name, tuple(xs), self.shape(xs[0]), dict(n_in=len(xs)))

    def concat(self, xs: list[str], name: str = "concat") -> str:
        """Concatenate along channels (dim 0 of the per-sample shape)."""
        rest = {self.shape(x)[1:] for x in xs}
        assert len(rest) == 1, [self.shape(x) for x in xs]
        c = sum(self.shape(x)[0] for x in xs)
        return self._add("concat", name, tuple(xs), (c, *rest.pop()), dict(n_in=len(xs)))

    def channel_shuffle(self, x: str, groups: int, name: str = "shuffle") -> str:
        return self._add("channel_shuffle", name, (x,), self.shape(x), dict(groups=groups))

    def chunk(self, x: str, start: int, stop: int, name: str = "split") -> str:
        """Channels [start, stop) as a view (``torch.chunk``): no data moves forward."""
        s = self.shape(x)
        return self._add("view", name, (x,), (stop - start, *s[1:]),
                         dict(start=start, stop=stop, split=1))

    def flatten(self, x: str, name: str = "flatten") -> str:
        return self._add("view", name, (x,), (prod(self.shape(x)),))

    def reshape(self, x: str, shape: tuple[int, ...], name: str = "reshape") -> str:
        assert prod(shape) == prod(self.shape(x)), (shape, self.shape(x))
        return self._add("view", name, (x,), shape)

    def transpose(self, x: str, shape: tuple[int, ...], name: str = "transpose") -> str:
        """A permutation that materialises a copy (``permute(...).contiguous()``)."""
        assert prod(shape) == prod(self.shape(x))
        return self._add("transpose", name, (x,), shape)

    def select(self, x: str, name: str = "select") -> str:
        """Token 0 of a (T, D) sequence (BERT's [CLS]); a strided view forward."""
        t, d = self.shape(x)
        return self._add("select", name, (x,), (d,), dict(t=t, d=d))

    # -- dense and sequence layers -----------------------------------------------------------
    def linear(self, x: str, out: int, bias: bool = True, name: str = "fc") -> str:
        """Fully connected layer over the last dimension."""
        s = self.shape(x)
        rows, k = prod(s[:-1]), s[-1]
        attrs = dict(rows=rows, k=k, n=out, bias=int(bias))
        params = k * out + (out if bias else 0)
        return self._add("linear", name, (x,), (*s[:-1], out), attrs, params)

    def matmul(self, a: str, b: str, transpose_b: bool, name: str = "matmul") -> str:
        """Batched matmul without weights (attention): (G, m, k) @ (G, k, n) or @ (G, n, k)^T."""
        g, m, k = self.shape(a)
        bg, b1, b2 = self.shape(b)
        n = b1 if transpose_b else b2
        assert bg == g and (b2 if transpose_b else b1) == k
        attrs = dict(count=g, m=m, k=k, n=n, transpose_b=int(transpose_b))
        return self._add("matmul", name, (a, b), (g, m, n), attrs)

    def layernorm(self, x: str, name: str = "ln") -> str:
        d = self.shape(x)[-1]
        return self._add("layernorm", name, (x,), self.shape(x), dict(d=d), 2 * d)

    def gelu(self, x: str, name: str = "gelu") -> str:
        return self._add("gelu", name, (x,), self.shape(x))

    def unary(self, x: str, kind: str, name: str | None = None) -> str:
        """A unary element-wise layer of ``kind``: any op kind with a ``grad`` in
        :mod:`socsim.workload.opkinds` (relu, gelu, ...); it lowers to one op of that kind and its
        backward to one ``grad`` op.  An unknown kind raises UnknownOpKind naming it."""
        if not lookup(kind).grad:
            raise ValueError(f"op kind {kind!r} is not a unary element-wise layer kind: it has no "
                             f"grad in socsim.workload.opkinds")
        return self._add(kind, name or kind, (x,), self.shape(x))

    def softmax(self, x: str, name: str = "softmax") -> str:
        return self._add("softmax", name, (x,), self.shape(x), dict(d=self.shape(x)[-1]))

    def embedding(self, ids: str, vocab: int, dim: int, name: str = "embedding") -> str:
        (t,) = self.shape(ids)
        return self._add("embedding", name, (ids,), (t, dim), dict(vocab=vocab, d=dim, t=t),
                         vocab * dim)

    # -- the end -----------------------------------------------------------------------------
    def build(self, logits: str, variant: str) -> Model:
        """Append the softmax-cross-entropy loss on ``logits`` and freeze the model; ``variant``
        names the published definition used (e.g. ``torchvision``, ``cifar``)."""
        (classes,) = self.shape(logits)
        self._add("softmax_ce", "loss", (logits,), (classes,), dict(classes=classes))
        return Model(self.model, self.input_shape, self.num_classes, variant,
                     tuple(self._layers))
