"""Writes a zoo model as an ONNX file with ``onnx.helper``, node for node as ``torch.onnx.export``
spells the torchvision modules (Conv, BatchNormalization, Relu, Clip(0, 6), MaxPool,
AveragePool, GlobalAveragePool, Flatten, Gemm(transB=1), Add, Concat, Slice for ``torch.chunk``,
Reshape-Transpose-Reshape for the channel shuffle), so the import tests need no torch.

The weights live in one external-data file written sparse (a seek past its end), so even
VGG-16's 138 M parameters cost no disk writes: the importer reads weight shapes, never values.
"""
from __future__ import annotations

from math import prod
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from socsim.workload.model import Model


class _Writer:
    def __init__(self, weights_file: str | None):
        self.nodes: list = []
        self.inits: list = []
        self.weights_file = weights_file
        self.offset = 0

    def weight(self, name: str, shape: tuple[int, ...]) -> str:
        if self.weights_file is None:   # embedded random weights (small models)
            arr = np.random.default_rng(len(self.inits)).standard_normal(shape).astype(np.float32)
            self.inits.append(onnx.numpy_helper.from_array(arr, name))
            return name
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(shape))
        n = prod(shape) * 4
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", self.weights_file), ("offset", str(self.offset)),
                     ("length", str(n))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.offset += n
        self.inits.append(t)
        return name

    def const(self, name: str, values: list[float] | list[int], dtype=np.int64) -> str:
        self.inits.append(onnx.numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def node(self, op: str, ins: list[str], out: str, name: str, **attrs) -> str:
        self.nodes.append(helper.make_node(op, ins, [out], name=name, **attrs))
        return out


def export(model: Model, path: Path, embed: bool = False) -> Path:
    """Write ``model`` (a CNN of the zoo) to ``path``; ``embed`` stores random weights in the file
    instead of a sparse external-data file beside it."""
    wf = None if embed else path.name + ".weights"
    w = _Writer(wf)
    t: dict[str, str] = {"input": "input"}   # layer -> tensor
    for L in model.layers[1:]:
        a, ins, n = L.a, [t[i] for i in L.inputs], L.name
        if L.kind == "conv2d":
            args = [ins[0], w.weight(f"{n}.weight", (a["cout"], a["cin"] // a["groups"], a["kh"],
                                                     a["kw"]))]
            if a["bias"]:
                args.append(w.weight(f"{n}.bias", (a["cout"],)))
            t[n] = w.node("Conv", args, n, n, kernel_shape=[a["kh"], a["kw"]],
                          strides=[a["stride"]] * 2, group=a["groups"],
                          pads=[a["pad"], a["pad_w"], a["pad"], a["pad_w"]])
        elif L.kind == "batchnorm":
            c = (a["c"],)
            t[n] = w.node("BatchNormalization", [ins[0], *(w.weight(f"{n}.{p}", c) for p in
                                                           ("weight", "bias"))] +
                          [w.const(f"{n}.{p}", [0.0] * c[0], np.float32) for p in
                           ("running_mean", "running_var")], n, n)
        elif L.kind == "relu":
            if a.get("cap"):
                t[n] = w.node("Clip", [ins[0], w.const(f"{n}.min", 0.0, np.float32),
                                       w.const(f"{n}.max", float(a["cap"]), np.float32)], n, n)
            else:
                t[n] = w.node("Relu", ins, n, n)
        elif L.kind in ("maxpool", "avgpool"):
            if a["is_global"]:
                t[n] = w.node("GlobalAveragePool" if L.kind == "avgpool" else "GlobalMaxPool",
                              ins, n, n)
            else:
                t[n] = w.node("MaxPool" if L.kind == "maxpool" else "AveragePool", ins, n, n,
                              kernel_shape=[a["k"], a["kw"]], strides=[a["stride"]] * 2,
                              pads=[a["pad"]] * 4)
        elif L.kind == "view" and a.get("split"):
            t[n] = w.node("Slice", [ins[0], w.const(f"{n}.starts", [a["start"]]),
                                    w.const(f"{n}.ends", [a["stop"]]),
                                    w.const(f"{n}.axes", [1])], n, n)
        elif L.kind == "view":
            t[n] = w.node("Flatten", ins, n, n, axis=1) if len(L.shape) == 1 else \
                w.node("Reshape", [ins[0], w.const(f"{n}.shape", [-1, *L.shape])], n, n)
        elif L.kind == "linear":
            args = [ins[0], w.weight(f"{n}.weight", (a["n"], a["k"]))]
            if a["bias"]:
                args.append(w.weight(f"{n}.bias", (a["n"],)))
            t[n] = w.node("Gemm", args, n, n, transB=1)
        elif L.kind == "add":
            t[n] = w.node("Add" if len(ins) == 2 else "Sum", ins, n, n)
        elif L.kind == "concat":
            t[n] = w.node("Concat", ins, n, n, axis=1)
        elif L.kind == "channel_shuffle":
            g, (c, h, wd) = a["groups"], L.shape
            r = w.node("Reshape", [ins[0], w.const(f"{n}.s1", [-1, g, c // g, h, wd])],
                       f"{n}.r1", f"{n}.r1")
            tr = w.node("Transpose", [r], f"{n}.tr", f"{n}.tr", perm=[0, 2, 1, 3, 4])
            t[n] = w.node("Reshape", [tr, w.const(f"{n}.s2", [-1, c, h, wd])], n, n)
        elif L.kind == "softmax_ce":
            logits = ins[0]
        else:
            raise ValueError(f"no ONNX spelling for layer kind {L.kind!r} in this helper")
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", *model.input_chw])
    y = helper.make_tensor_value_info(logits, TensorProto.FLOAT, ["N", model.num_classes])
    graph = helper.make_graph(w.nodes, model.name, [x], [y], w.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path.write_bytes(m.SerializeToString())
    if wf is not None:
        with open(path.parent / wf, "wb") as f:
            f.truncate(w.offset)   # sparse: the importer checks the size, never reads the bytes
    return path
