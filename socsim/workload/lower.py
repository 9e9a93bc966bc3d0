"""Lowering of one layer to its FP32 operators: the forward op and the backward ops.

Conventions the rest of the package relies on:

- an op's output tensor is named by the op; ``inputs`` lists the tensors it reads, the incoming
  gradient first for backward ops, then the forward tensors the backward pass needs (a conv's
  input for its weight gradient, a ReLU's output for its mask, ...) - liveness analysis and
  ``saved_bytes`` are derived from these edges;
- an error-gradient op carries ``grad_of=<tensor>`` (the forward tensor whose gradient it
  produces); weight-gradient and update ops write persistent buffers (``persistent=1``).
"""
from __future__ import annotations

from math import prod

from socsim.workload.costs import OpFactory
from socsim.workload.model import Layer
from socsim.workload.opkinds import unary_layer
from socsim.workload.ops import Op


#: binary element-wise layer kinds (broadcasting), each lowered to the op kind of its name
BINARY = ("mul", "div", "sub")


def _n(layer: Layer, batch: int) -> int:
    return batch * prod(layer.shape)


def forward(layer: Layer, ins: tuple[str, ...], in_layers: tuple[Layer, ...],
            batch: int) -> Op | None:
    """The forward op of ``layer`` reading tensors ``ins``; None for views."""
    f, a, k, name = OpFactory(layer.name, batch), layer.a, layer.kind, layer.name
    n = _n(layer, batch)
    if k == "conv2d":
        g = a["groups"]
        dw = g > 1 and g == a["cin"]
        x, y = batch * a["cin"] * a["h"] * a["w"], batch * a["cout"] * a["oh"] * a["ow"]
        w = layer.param_count
        p = {key: a[key] for key in ("cin", "h", "w", "cout", "kh", "kw", "stride", "pad",
                                     "pad_w", "groups", "oh", "ow")}
        macs = y * (a["cin"] // g) * a["kh"] * a["kw"]
        return f.op(name, "dwconv2d" if dw else "conv2d", "forward", dict(batch=batch, **p),
                    read=x + w, write=y, weight=w, macs=macs, flops=y * a["bias"], inputs=ins)
    if k == "linear":
        m, kk, nn = batch * a["rows"], a["k"], a["n"]
        return f.op(name, "gemm", "forward", dict(batch=batch, count=1, m=m, k=kk, n=nn),
                    read=m * kk + layer.param_count, write=m * nn, weight=layer.param_count,
                    macs=m * kk * nn, flops=m * nn * a["bias"], inputs=ins,
                    attrs={"role": "forward"})
    if k == "matmul":
        c, m, kk, nn = batch * a["count"], a["m"], a["k"], a["n"]
        return f.op(name, "gemm", "forward", dict(batch=batch, count=c, m=m, k=kk, n=nn),
                    read=c * (m * kk + kk * nn), write=c * m * nn, macs=c * m * kk * nn,
                    inputs=ins, attrs={"role": "forward"})
    if k in ("maxpool", "avgpool"):
        p = {key: a[key] for key in ("c", "h", "w", "k", "kw", "stride", "pad", "oh", "ow")}
        return f.op(name, k, "forward", dict(batch=batch, **p), read=batch * a["c"] * a["h"]
                    * a["w"], write=n, flops=n * a["k"] * a["kw"], inputs=ins)
    if k in ("add", "concat"):
        read = sum(_n(src, batch) for src in in_layers)
        return f.op(name, k, "forward", dict(batch=batch, n=n, n_in=len(ins)), read=read,
                    write=n, flops=(len(ins) - 1) * n if k == "add" else 0, inputs=ins)
    if k in BINARY:
        # a constant operand (attr ``const``: its elements) is read once per batch
        read = sum(_n(src, batch) for src in in_layers) + a.get("const", 0)
        return f.op(name, k, "forward", dict(batch=batch, n=n, n_in=len(ins)), read=read, write=n, flops=n,
                    inputs=ins)
    if k == "resize":
        x = _n(in_layers[0], batch)
        return f.op(name, k, "forward", dict(batch=batch, n=n, n_in=x, linear=a["linear"]), read=x, write=n,
                    flops=7 * n if a["linear"] else 0, inputs=ins)
    if k == "batchnorm":
        return f.op(name, k, "forward", dict(batch=batch, c=a["c"], n=n),
                    read=n + layer.param_count, write=n, weight=layer.param_count, inputs=ins)
    if k == "layernorm":
        return f.op(name, k, "forward", dict(batch=batch, d=a["d"], n=n),
                    read=n + layer.param_count, write=n, weight=layer.param_count, inputs=ins)
    if unary_layer(k):
        attrs = {"variant": f"{k}{a['cap']}"} if a.get("cap") else None  # ReLU6: relu6
        return f.op(name, k, "forward", _ew_params(layer, batch), read=n, write=n,
                    inputs=ins, attrs=attrs)
    if k == "embedding":
        t, d = a["t"], a["d"]
        return f.op(name, k, "forward", dict(batch=batch, t=t, d=d, vocab=a["vocab"]),
                    read=batch * t * (d + 1), write=n, weight=layer.param_count, inputs=ins)
    if k == "softmax_ce":
        return f.op(name, k, "forward", dict(batch=batch, n=n, classes=a["classes"]),
                    read=n + batch, write=n, inputs=ins)
    if k in ("view", "select"):
        return None
    raise ValueError(f"no forward lowering for layer kind {k!r}")


def _ew_params(layer: Layer, batch: int) -> dict[str, int]:
    p = dict(batch=batch, n=_n(layer, batch))
    if layer.kind == "channel_shuffle":
        c, h, w = layer.shape
        p.update(c=c, h=h, w=w, groups=layer.a["groups"])
    return p


def backward(layer: Layer, ins: tuple[str, ...], in_layers: tuple[Layer, ...], out: str,
             dy: str, need_dx: tuple[bool, ...], batch: int) -> tuple[list[Op], list[str | None]]:
    """Backward ops of ``layer`` given its output gradient ``dy``.

    ``out`` is the layer's own forward tensor, ``need_dx[i]`` whether input i needs a gradient.
    Returns the ops (error gradients before weight gradients) and, per input, the name of the
    tensor holding that input's gradient contribution (None where none flows).
    """
    f, a, k, name = OpFactory(layer.name, batch), layer.a, layer.kind, layer.name
    n = _n(layer, batch)
    ops: list[Op] = []
    grads: list[str | None] = [None] * len(ins)
    nx = [_n(src, batch) for src in in_layers]

    def dgrad(i: int, kind: str, params: dict[str, int], read: int, extra: tuple[str, ...] = (),
              **kw) -> None:
        if need_dx[i]:
            attrs = {"grad_of": layer.inputs[i], **kw.pop("attrs", {})}
            op = f.op(f"{name}.dgrad{i if len(ins) > 1 else ''}", kind, "error_grad", params,
                      read=read, write=nx[i], inputs=(dy, *extra), attrs=attrs, **kw)
            ops.append(op)
            grads[i] = op.name

    if k == "conv2d":
        fwd = forward(layer, ins, in_layers, batch)
        assert fwd is not None
        w, x = layer.param_count, nx[0]
        base = fwd.kind
        dgrad(0, f"{base}_dgrad", fwd.p, read=n + w, macs=fwd.macs, weight=w)
        ops.append(f.op(f"{name}.wgrad", f"{base}_wgrad", "weight_grad", fwd.p, read=x + n,
                        write=w, weight=w, macs=fwd.macs, flops=n * a["bias"],
                        inputs=(dy, ins[0]), persistent=True))
    elif k == "linear":
        m, kk, nn, w = batch * a["rows"], a["k"], a["n"], layer.param_count
        dgrad(0, "gemm", dict(batch=batch, count=1, m=m, k=nn, n=kk), read=m * nn + w,
              macs=m * kk * nn, weight=w, attrs={"role": "dgrad"})
        ops.append(f.op(f"{name}.wgrad", "gemm", "weight_grad",
                        dict(batch=batch, count=1, m=nn, k=m, n=kk), read=m * (nn + kk),
                        write=w, weight=w, macs=m * kk * nn, flops=m * nn * a["bias"],
                        inputs=(dy, ins[0]), persistent=True, attrs={"role": "wgrad"}))
    elif k == "matmul":
        c, m, kk, nn = batch * a["count"], a["m"], a["k"], a["n"]
        macs = c * m * kk * nn
        dgrad(0, "gemm", dict(batch=batch, count=c, m=m, k=nn, n=kk), read=c * (m * nn + nn * kk),
              extra=(ins[1],), macs=macs, attrs={"role": "dgrad"})
        bm, bn = (nn, kk) if a["transpose_b"] else (kk, nn)
        dgrad(1, "gemm", dict(batch=batch, count=c, m=bm, k=m, n=bn), read=c * (m * nn + m * kk),
              extra=(ins[0],), macs=macs, attrs={"role": "dgrad"})
    elif k in ("maxpool", "avgpool"):
        extra = (ins[0], out) if k == "maxpool" else ()
        fl = n * a["k"] * a["kw"]
        dgrad(0, f"{k}_bwd", forward(layer, ins, in_layers, batch).p,  # type: ignore[union-attr]
              read=n + (nx[0] + n if k == "maxpool" else 0), extra=extra, flops=fl)
    elif k in ("batchnorm", "layernorm"):
        phase = "error_grad" if need_dx[0] else "weight_grad"
        p = dict(batch=batch, n=n, **({"c": a["c"]} if k == "batchnorm" else {"d": a["d"]}))
        # One kernel computes dx and the affine gradients (as cuDNN's and MNN's do).
        op = f.op(f"{name}.bwd", f"{k}_bwd", phase, p, read=2 * n + layer.param_count, write=n,
                  weight=layer.param_count, inputs=(dy, ins[0]),
                  attrs={"grad_of": layer.inputs[0]} if need_dx[0] else None)
        ops.append(op)
        grads[0] = op.name if need_dx[0] else None
    elif unary := unary_layer(k):
        # the backward op reads dy and the tensor its kind saves (GELU x; ReLU, softmax y)
        saved = {"input": (ins[0],), "output": (out,), "": ()}[unary.saves]
        dgrad(0, unary.grad, _ew_params(layer, batch), read=(1 + len(saved)) * n, extra=saved)
    elif k in BINARY:
        for i in range(len(ins)):
            others = tuple(t for j, t in enumerate(ins) if j != i)
            other_n = sum(nx[j] for j in range(len(ins)) if j != i) + a.get("const", 0)
            reduce = n - nx[i]   # the adds that sum dy back to a broadcast input's shape
            first = (i == 0) != bool(a.get("rev"))   # the minuend or the dividend
            if k == "sub" and first and not reduce:
                grads[i] = dy if need_dx[i] else None   # a - b: da is dy itself
                continue
            if k == "sub":
                extra, read, fl = (), n, n + reduce                     # -dy
            elif k == "mul":
                extra, read, fl = others, n + other_n, n + reduce       # dy * b
            elif first:
                extra, read, fl = others, n + other_n, n + reduce       # dy / b
            else:
                extra, read, fl = (out, *others), 2 * n + other_n, 3 * n + reduce   # -dy * y / b
            dgrad(i, f"{k}_bwd", dict(batch=batch, n=n, n_out=nx[i]), read=read, extra=extra, flops=fl)
    elif k == "resize":
        dgrad(0, "resize_bwd", dict(batch=batch, n=n, n_out=nx[0], linear=a["linear"]), read=n,
              flops=8 * n if a["linear"] else n)
    elif k == "select":
        dgrad(0, "slice", dict(batch=batch, t=a["t"], d=a["d"]), read=n)
    elif k == "embedding":
        ops.append(f.op(f"{name}.wgrad", "embedding_bwd", "weight_grad",
                        dict(batch=batch, t=a["t"], d=a["d"], vocab=a["vocab"]),
                        read=n + batch * a["t"], write=n, weight=layer.param_count,
                        inputs=(dy, ins[0]), persistent=True))
    elif k == "softmax_ce":
        dgrad(0, "softmax_ce_bwd", dict(batch=batch, n=n, classes=a["classes"]), read=n + batch)
        # the loss is its own gradient seed: dy is the loss op's output (the probabilities)
    elif k in ("add", "concat", "view"):  # the gradient passes through (as views of dy)
        grads = [dy if need else None for need in need_dx]
    else:
        raise ValueError(f"no backward lowering for layer kind {k!r}")
    return ops, grads


def accumulate(tensor: str, layer: str, parts: list[str], split: bool, batch: int,
               n: int) -> Op:
    """Sum (or, for a channel split, concatenate) the gradient contributions of a tensor with
    several consumers - what autograd does when a tensor feeds more than one layer."""
    f = OpFactory(layer, batch)
    if split:
        return f.op(f"{tensor}.grad_concat", "concat", "error_grad",
                    dict(batch=batch, n=n, n_in=len(parts)), read=n, write=n, flops=0,
                    inputs=tuple(parts), attrs={"grad_of": tensor, "role": "grad_accum"})
    return f.op(f"{tensor}.grad_sum", "add", "error_grad", dict(batch=batch, n=n, n_in=len(parts)),
                read=len(parts) * n, write=n, flops=(len(parts) - 1) * n, inputs=tuple(parts),
                attrs={"grad_of": tensor, "role": "grad_accum"})


def update(layer: Layer, grad_ops: list[str], batch: int) -> Op:
    """Plain SGD on the layer's parameters (no momentum state): w -= lr * g, in place."""
    w = layer.param_count
    return OpFactory(layer.name, batch).op(
        f"{layer.name}.update", "sgd_update", "update", dict(n=w), read=2 * w, write=w,
        weight=w, inputs=tuple(grad_ops), persistent=True)
