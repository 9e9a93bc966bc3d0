"""NITI integer training as Mandheling runs it (docs/seeds.md section 1, mixed-precision abstraction).

Rewrites, per FP32 op:

- conv / depthwise conv / GEMM -> INT8 op with int32 accumulators + ``reducemax`` (the largest
  |value|, whose bit width minus 7 is the shift) + ``requant_dynamic`` (re-read the int32 tensor,
  shift to int8).  Mandheling's self-adaptive rescaling later swaps the pair for
  ``requant_static`` on batches that reuse the last scale (:func:`static_rescale`).
- conv error gradient -> ``weight_rotate`` (flip the kernel, swap in/out channels) + INT8
  transposed conv (``conv2d_dgrad``) + ``slice`` (crop the transposed conv's full output to the
  input size where padding or stride make them differ) + reducemax + requant.
- conv weight gradient -> ``transpose`` of the saved activation and of the error (batch becomes
  the reduction dimension of ConvBackpropFilter's im2col GEMM) + INT8 ``conv2d_wgrad`` +
  reducemax + requant into the int8 gradient.  Linear layers transpose the error likewise.
- ReLU, max/avg-pool, add, concat, channel shuffle and their gradients -> INT8.
- batch-norm and its gradient and update disappear: NITI networks have no BN; the per-layer
  power-of-two rescale does the normalising (Wang et al., "NITI", TPAMI 2022).
- weights are int8 and updated in int8 (``sgd_update`` at int8).
- ops NITI does not define (layer-norm, GELU, softmax, embeddings, the loss) stay FP32, with a
  ``dequantize``/``quantize`` wherever a tensor crosses between the domains.
"""
from __future__ import annotations

from dataclasses import replace

from socsim.workload.graph import TrainingGraph
from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op
from socsim.workload.rewriter import Rewriter


def rewrite(graph: TrainingGraph) -> list[Op]:
    """The NITI ops of an FP32 graph; each op's kind says what happens to it (``niti`` and
    ``is_mac`` in :mod:`socsim.workload.opkinds`)."""
    rw = Rewriter(graph)
    bn_layers = {op.layer for op in graph.ops if lookup(op.kind).niti == "drop"}
    int8_layers: set[str] = set()
    for op in graph.ops:
        kind = lookup(op.kind)
        if kind.niti == "drop" or (op.phase == "update" and op.layer in bn_layers):
            rw.drop(op, op.inputs[0] if op.inputs else op.name)
        elif kind.is_mac:
            _mac(rw, op)
            if op.weight_bytes:
                int8_layers.add(op.layer)
        elif kind.niti == "int8":
            ins = tuple(rw.convert(t, "int8", op.layer, op.phase) for t in rw.ins(op))
            rw.rename[op.name] = rw.derive(op, dtype="int8", inputs=ins).name
        elif op.phase == "update" and op.layer in int8_layers:
            rw.derive(op, dtype="int8", inputs=rw.ins(op))
        else:
            ins = tuple(rw.convert(t, "fp32", op.layer, op.phase) for t in rw.ins(op))
            rw.derive(op, dtype=op.dtype, inputs=ins)
    return rw.out


def _mac(rw: Rewriter, op: Op) -> None:
    """An INT8 multiply-accumulate op with its rescale, plus the layout ops it needs."""
    b, p, phase, layer = rw.graph.batch, op.p, op.phase, op.layer
    ins = [rw.convert(t, "int8", layer, phase) for t in rw.ins(op)]
    dgrad = lookup(op.kind).backward == "dgrad"  # a transposed convolution
    if dgrad:
        w = op.weight_bytes // 4
        rot = rw.new(layer, f"{op.name}.weight_rotate", "weight_rotate", phase,
                     dict(cout=p["cout"], cin=p["cin"] // p["groups"], kh=p["kh"], kw=p["kw"]),
                     read=w, write=w, inputs=(), dtype="int8", weight=w)
        ins.append(rot.name)
    wgrad = op.phase == "weight_grad"
    if wgrad:  # the im2col GEMM of the weight gradient reduces over batch: transpose operands
        ins = [rw.new(layer, f"{op.name}.transpose{i}", "transpose", phase,
                      dict(batch=b, n=rw.size[t]), read=rw.size[t], write=rw.size[t],
                      inputs=(t,), dtype="int8").name
               for i, t in enumerate(ins)]
    write = None
    if dgrad:
        # a transposed conv writes (o-1)*s + k per dimension; padding is cropped off after
        full = b * p["cin"] * ((p["oh"] - 1) * p["stride"] + p["kh"]) * \
            ((p["ow"] - 1) * p["stride"] + p["kw"])
        write = full if full != b * p["cin"] * p["h"] * p["w"] else None
    main = rw.derive(op, dtype="int8", out_dtype="int32", inputs=tuple(ins), write=write,
                     persistent=False, attrs={"acc": "int32"})
    src = main
    if write is not None:
        n = b * p["cin"] * p["h"] * p["w"]
        src = rw.new(layer, f"{op.name}.slice", "slice", phase, dict(batch=b, n=n), read=n,
                     write=n, inputs=(main.name,), dtype="int32")
    n = rw.size[src.name]
    rmax = rw.new(layer, f"{op.name}.reducemax", "reducemax", phase, dict(batch=b, n=n),
                  read=n, write=1, inputs=(src.name,), dtype="int32")
    rq = rw.new(layer, f"{op.name}.requant", "requant_dynamic", phase, dict(batch=b, n=n),
                read=n, write=n, inputs=(src.name, rmax.name), dtype="int32", out_dtype="int8",
                persistent=wgrad, attrs={k: v for k, v in op.attrs if k == "grad_of"})
    rw.rename[op.name] = rq.name


def static_rescale(graph: TrainingGraph) -> list[Op]:
    """The NITI ops of a batch that reuses the last scales: each reducemax + requant_dynamic
    pair becomes one single-pass ``requant_static`` (docs/seeds.md 1, self-adaptive rescaling)."""
    out: list[Op] = []
    for op in graph.ops:
        if op.kind == "reducemax" and op.name.endswith(".reducemax"):
            continue
        if op.kind == "requant_dynamic":
            op = replace(op, kind="requant_static", inputs=op.inputs[:1])
        out.append(op)
    return out
