"""INT8 training as MNN's CPU backend can run it (precisions ``mnn-int8`` and ``qat``).

Read from MNN's source (github.com/alibaba/MNN, source/backend/cpu and tools/train; the
snapshot read is commit 4d40bdb of 2026-08-20, the kernels cited are older than Mandheling):

- MNN's CPU backend has INT8 kernels only for the *forward* convolutions and element-wise ops:
  ``ConvInt8TiledExecutor`` / ``ConvInt8Winograd`` / ``CPUDepthwiseConvInt8`` (GEMM with SDOT,
  ``MNNGemmInt8AddBiasScale_ARMV82_Unit``, where the core reports the Armv8.2 dot product,
  else the SMLAL ``MNNGemmInt8AddBiasScale_16x4_Unit``; Int8FunctionsOpt.cpp), pooling and
  binary ops.  The gradient convolutions have none: the error gradient is a Deconvolution
  (tools/train/source/grad/ConvGrad.cpp), which ``CPUDeconvolution`` runs in floating point (an
  int8 weight is only dequantised into it), and the weight gradient is
  ``Conv2DBackPropFilter``, geometry-computed as an im2col raster and a ``CPUMatMul``, which is
  float only (source/geometry/GeometryConv2DBackPropFilter.cpp, source/backend/cpu/CPUMatMul.cpp).
  So an INT8 training algorithm on MNN's CPU (Mandheling's MNN-INT8 baseline, docs/seeds.md 1)
  gains only in the forward convolutions; its gradients run MNN's FP32 kernels.
- A scale found at run time is MNN's ``CPUDynamicQuant``: one ``MNNCountMaxMinValue`` pass over
  the FP32 tensor (min and max), then ``MNNFloat2Int8`` (scale, round, clamp) to int8.  Weights
  that change every step (training) are quantised again every batch the same way; the INT8
  kernel writes its output through its float scale (the "AddBiasScale" epilogue) back to FP32.

``mnn-int8`` (the default of the mnn-int8 scheduler) is that: per forward convolution or
fully-connected op, ``minmax`` + ``quantize`` of its input, ``minmax`` + ``quantize`` of its
weights, the INT8 kernel writing FP32; every other op, the gradients and the SGD update of the
FP32 master weights unchanged from the FP32 graph.  A forward-only graph (``mode: inference``)
has calibrated, static scales: only the ``quantize`` of each input, the weights already int8
(ncnn and MNN's offline-quantised inference models).

``qat`` is MNN's own quantised training (tools/train/source/nn/NN.cpp, ``NN::turnQuantize``:
``ConvBNReluFusedModule::onForward`` when training): every kernel stays FP32 and each
convolution's input and output (after BN and activation) are fake-quantised by
``fakeQuantFeatureWithMinMax``: an NC4HW4 -> NCHW ``_Convert``, ``_ReduceMin`` and
``_ReduceMax``, then divide by the scale, add the zero point, ``_Round``, clamp
(``_Minimum``, ``_Maximum``), subtract the zero point, multiply by the scale (7 element-wise
Express ops, each its own pass: ``fake_quant`` with 7 passes), ``_Cast``, the ``+ _ZeroGrad``
and the ``_Convert`` back (layout conversions: ``transpose``); the weights get
``_ReduceMax(_Abs(w))`` per output channel and the same round/clamp/rescale.  In the backward
pass the gradient crosses each fake-quantised tensor's two layout conversions (straight-through:
the quantisation itself has no gradient).
"""
from __future__ import annotations

from socsim.workload.graph import TrainingGraph
from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op
from socsim.workload.rewriter import Rewriter


def _int8_forward(op: Op) -> bool:
    """A forward op that MNN runs with an INT8 kernel: a convolution (plain, grouped or
    depthwise) or a fully-connected GEMM with weights."""
    kind = lookup(op.kind)
    return op.phase == "forward" and kind.is_mac and kind.backward == "" and op.weight_bytes > 0


def _training(graph: TrainingGraph) -> bool:
    return any(op.phase != "forward" for op in graph.ops)


def rewrite(graph: TrainingGraph) -> list[Op]:
    """The ``mnn-int8`` ops of an FP32 graph (module docstring)."""
    rw = Rewriter(graph)
    b = graph.batch
    train = _training(graph)
    for op in graph.ops:
        if not _int8_forward(op):
            rw.keep(op)
            continue
        layer, phase = op.layer, op.phase
        ins = list(rw.ins(op))
        x = ins[0]
        n = rw.size[x]
        if train:
            rw.new(layer, f"{op.name}.in_minmax", "minmax", phase, dict(batch=b, n=n),
                   read=n, write=2, inputs=(x,), dtype="fp32")
        ins[0] = rw.new(layer, f"{op.name}.in_quantize", "quantize", phase, dict(batch=b, n=n),
                        read=n, write=n, inputs=(x,), dtype="fp32", out_dtype="int8").name
        nw = op.weight_bytes // 4
        if train:
            rw.new(layer, f"{op.name}.w_minmax", "minmax", phase, dict(batch=b, n=nw),
                   read=nw, write=2, inputs=(), dtype="fp32")
            rw.new(layer, f"{op.name}.w_quantize", "quantize", phase, dict(batch=b, n=nw),
                   read=nw, write=nw, inputs=(), dtype="fp32", out_dtype="int8")
        rw.derive(op, dtype="int8", out_dtype="fp32", inputs=tuple(ins),
                  attrs={"framework": "mnn int8 kernel, fp32 out"})
    return rw.out


# The element-wise Express ops of one fake quantisation between its reductions and its cast
# (divide, add zero point, round, minimum, maximum, subtract zero point, multiply): MNN's CPU
# backend runs each as its own execution over the whole tensor (tools/train/source/nn/NN.cpp,
# fakeQuantFeatureWithMinMax).
QAT_FAKE_QUANT_PASSES = 7


def _fake_quant(rw: Rewriter, t: str, layer: str, phase: str, tag: str) -> tuple[str, str]:
    """Fake-quantise tensor ``t``: (the fake-quantised tensor, its NCHW copy)."""
    b = rw.graph.batch
    n = rw.size[t]
    nchw = rw.new(layer, f"{tag}.to_nchw", "transpose", phase, dict(batch=b, n=n), read=n, write=n,
                  inputs=(t,), dtype="fp32").name
    rw.new(layer, f"{tag}.reducemin", "minmax", phase, dict(batch=b, n=n), read=n, write=1,
           inputs=(nchw,), dtype="fp32", flops=n)
    rw.new(layer, f"{tag}.reducemax", "minmax", phase, dict(batch=b, n=n), read=n, write=1,
           inputs=(nchw,), dtype="fp32", flops=n)
    fq = rw.new(layer, f"{tag}.fake_quant", "fake_quant", phase, dict(batch=b, n=n), read=n, write=n,
                inputs=(nchw,), dtype="fp32").name
    back = rw.new(layer, f"{tag}.to_nc4hw4", "transpose", phase, dict(batch=b, n=n), read=2 * n, write=n,
                  inputs=(fq, nchw), dtype="fp32").name
    return back, nchw


def rewrite_qat(graph: TrainingGraph) -> list[Op]:
    """The ``qat`` ops of an FP32 graph (module docstring)."""
    rw = Rewriter(graph)
    b = graph.batch
    train = _training(graph)
    # the output fake-quant goes after the conv's batch norm and ReLU when they follow it
    # (ConvBNReluFused), else after the conv; the gradient crosses each fake-quantised tensor's
    # layout conversions where the backward pass reaches the conv's layer
    readers: dict[str, list[Op]] = {}
    for op in graph.ops:
        if op.phase == "forward":
            for t in op.inputs:
                readers.setdefault(t, []).append(op)
    out_site: dict[str, str] = {}      # tensor after which an output fake-quant goes -> layer
    for op in graph.ops:
        if _int8_forward(op):
            t = op.name
            for _ in range(2):          # conv -> [BN] -> [ReLU]
                after = readers.get(t, [])
                if len(after) == 1 and (lookup(after[0].kind).batch_stats or after[0].kind in ("relu",)):
                    t = after[0].name
                else:
                    break
            out_site[t] = op.layer
    crossings: dict[str, list[tuple[str, int]]] = {}   # layer -> (phase, n) of its straight-throughs
    for op in graph.ops:
        if op.phase != "forward" and op.layer in crossings:
            for i, (_ph, n) in enumerate(crossings.pop(op.layer)):
                for j in range(2):      # the gradient through both layout conversions
                    rw.new(op.layer, f"{op.name}.fq_grad{i}.{j}", "transpose", op.phase, dict(batch=b, n=n),
                           read=n, write=n, inputs=rw.ins(op)[:1], dtype="fp32")
        if _int8_forward(op) and train:
            layer, phase = op.layer, op.phase
            ins = list(rw.ins(op))
            ins[0], _ = _fake_quant(rw, ins[0], layer, phase, f"{op.name}.in")
            nw = op.weight_bytes // 4
            rw.new(layer, f"{op.name}.w_absmax", "minmax", phase, dict(batch=b, n=nw), read=nw, write=1,
                   inputs=(), dtype="fp32", flops=2 * nw)
            rw.new(layer, f"{op.name}.w_fake_quant", "fake_quant", phase, dict(batch=b, n=nw), read=nw,
                   write=nw, inputs=(), dtype="fp32")
            rw.derive(op, dtype="fp32", inputs=tuple(ins))
            crossings.setdefault(layer, []).append((phase, rw.size[ins[0]]))
        else:
            rw.keep(op)
        if train and op.name in out_site and op.phase == "forward":
            fq, _ = _fake_quant(rw, rw.t(op.name), op.layer, op.phase, f"{op.name}.out")
            rw.rename[op.name] = fq
            crossings.setdefault(out_site[op.name], []).append((op.phase, rw.size[fq]))
    return rw.out
