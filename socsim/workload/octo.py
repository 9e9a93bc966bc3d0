"""Octo INT8 training with loss-aware compensation (docs/seeds.md section 5; Zhou et al., ATC '21).

Rewrites, per FP32 op of a layer with weights (conv, depthwise conv, fully connected):

- forward: ``reducemax`` (min/max of X) + ``quantize`` of X (asymmetric, stochastic rounding;
  one per tensor, shared by every layer that reads it, and kept for the weight gradient),
  ``quantize`` of W, the INT8 op with int32 accumulation, ``dequantize`` (scale product);
- after each convolution - after its batch norm when one follows, before the ReLU - a LAC
  layer ``lac`` adds alpha * mu + beta (mu, beta shaped like one output sample); its backward
  ``lac_bwd`` computes d_alpha, d_mu, d_beta (the error passes through unchanged) and the LAC
  parameters get their own ``sgd_update``;
- backward: PRC ``clip`` (range and 95% interval of the error) + symmetric ``quantize`` of the
  error (one per gradient tensor), INT8 error- and weight-gradient ops, ``dequantize``.

Weights stay FP32 masters updated in FP32; attention matmuls, norms and activations stay FP32.
"""
from __future__ import annotations

from socsim.workload.graph import TrainingGraph
from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op
from socsim.workload.rewriter import Rewriter


def _is_conv(op: Op) -> bool:
    """A forward convolution (plain or depthwise): where a LAC layer may go."""
    kind = lookup(op.kind)
    return op.phase == "forward" and kind.shape == "conv" and kind.backward == ""


def _lac_sites(graph: TrainingGraph) -> dict[str, Op]:
    """Forward tensor after which a LAC layer goes -> the conv it compensates."""
    readers: dict[str, list[Op]] = {}
    for op in graph.ops:
        if op.phase == "forward":
            for t in op.inputs:
                readers.setdefault(t, []).append(op)
    sites = {}
    for op in graph.ops:
        if _is_conv(op):
            after = readers.get(op.name, [])
            bn = after[0] if len(after) == 1 and lookup(after[0].kind).batch_stats else None
            sites[bn.name if bn else op.name] = op
    return sites


def rewrite(graph: TrainingGraph) -> list[Op]:
    rw = Rewriter(graph)
    b = graph.batch
    sites = _lac_sites(graph)
    w_q: dict[str, str] = {}       # layer -> its quantized weights
    lac_of: dict[str, Op] = {}     # conv layer -> its LAC op
    pending: dict[str, Op] = {}   # layer whose backward reads the LAC's gradient -> LAC op
    for op in graph.ops:
        if op.phase != "forward" and op.layer in pending:
            # the error reaching the LAC output passes through it; lac_bwd reads it for the
            # LAC parameter gradients before the layer under the LAC consumes it
            lac = pending.pop(op.layer)
            n, per_sample = lac.p["n"], lac.weight_bytes // 4 // 2
            rw.new(lac.layer, f"{lac.name}.bwd", "lac_bwd", "weight_grad", lac.p,
                   read=n + 2 * per_sample, write=2 * per_sample + 1,
                   weight=2 * per_sample + 1, inputs=(rw.t(op.inputs[0]),), dtype="fp32",
                   persistent=True, flops=3 * n)
        if lookup(op.kind).octo == "int8" and op.weight_bytes:
            _int8(rw, op, w_q)
        elif op.phase == "update":
            rw.keep(op)
            if op.layer in lac_of:  # the LAC parameters, updated after their conv's
                lac = lac_of[op.layer]
                w = lac.weight_bytes // 4
                rw.new(lac.layer, f"{lac.layer}.update", "sgd_update", "update", dict(n=w),
                       read=2 * w, write=w, weight=w, inputs=(f"{lac.name}.bwd",),
                       dtype="fp32", persistent=True)
        else:
            rw.keep(op)
        if op.phase == "forward" and op.name in sites:
            conv = sites[op.name]
            c, oh, ow = conv.p["cout"], conv.p["oh"], conv.p["ow"]
            per_sample, n = c * oh * ow, b * c * oh * ow
            lac = rw.new(f"{conv.layer}.lac", f"{conv.layer}.lac", "lac", "forward",
                         dict(batch=b, n=n, c=c, h=oh, w=ow), read=n + 2 * per_sample,
                         write=n, weight=2 * per_sample + 1, inputs=(rw.t(op.name),),
                         dtype="fp32", flops=n + 2 * per_sample)
            rw.rename[op.name] = lac.name
            lac_of[conv.layer] = lac
            pending[op.layer] = lac
    return rw.out


def _quant(rw: Rewriter, tensor: str, layer: str, phase: str, grad: bool) -> str:
    """One quantize per tensor: min/max + asymmetric stochastic rounding for activations,
    PRC clip + symmetric quantization for errors."""
    key = (tensor, "int8")
    if key not in rw.cache:
        n, b = rw.size[tensor], rw.graph.batch
        stat_kind = "clip" if grad else "reducemax"
        stat = rw.new(layer, f"{tensor}.{stat_kind}", stat_kind, phase, dict(batch=b, n=n),
                      read=n, write=2, inputs=(tensor,), dtype="fp32")
        q = rw.new(layer, f"{tensor}.quantize", "quantize", phase, dict(batch=b, n=n), read=n,
                   write=n, inputs=(tensor, stat.name), dtype="fp32", out_dtype="int8",
                   attrs={"scheme": "symmetric-prc" if grad else "asymmetric-stochastic"})
        rw.cache[key] = q.name
    return rw.cache[key]


def _int8(rw: Rewriter, op: Op, w_q: dict[str, str]) -> None:
    layer, phase = op.layer, op.phase
    ins = rw.ins(op)
    if phase == "forward":
        w = op.weight_bytes // 4
        wq = rw.new(layer, f"{layer}.weight.quantize", "quantize", phase, dict(n=w), read=w,
                    write=w, weight=w, inputs=(), dtype="fp32", out_dtype="int8",
                    attrs={"scheme": "asymmetric-stochastic", "operand": "weight"})
        w_q[layer] = wq.name
        q_ins = (_quant(rw, ins[0], layer, phase, grad=False), wq.name)
    elif phase == "error_grad":
        q_ins = (_quant(rw, ins[0], layer, phase, grad=True), w_q[layer])
    else:  # weight gradient: the error and the activation quantized in the forward pass
        q_ins = (_quant(rw, ins[0], layer, phase, grad=True),
                 _quant(rw, ins[1], layer, phase, grad=False))
    main = rw.derive(op, dtype="int8", out_dtype="int32", inputs=q_ins, persistent=False,
                     attrs={"acc": "int32"})
    n = rw.size[main.name]
    dq = rw.new(layer, f"{op.name}.dequantize", "dequantize", phase, dict(batch=rw.graph.batch,
                n=n), read=n, write=n, inputs=(main.name,), dtype="int32", out_dtype="fp32",
                persistent=phase == "weight_grad",
                attrs={k: v for k, v in op.attrs if k == "grad_of"})
    rw.rename[op.name] = dq.name
