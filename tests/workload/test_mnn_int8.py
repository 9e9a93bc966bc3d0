"""MNN's INT8 training paths (socsim.workload.mnn_int8): which kernels run INT8, which FP32, and
the run-time scale and quantisation work around each convolution."""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from socsim.engine.context import build_graph
from socsim.workload import build_model, list_models, training_graph, translate
from socsim.workload.opkinds import lookup


def fp32(name: str = "resnet18", chw: tuple[int, ...] = (3, 32, 32), batch: int = 4):
    return training_graph(build_model(name, chw, 10), batch)


def mac_forward(g):
    return [op for op in g.ops if op.phase == "forward" and lookup(op.kind).is_mac and op.weight_bytes]


@pytest.mark.parametrize("model", ["resnet18", "mobilenetv2", "vgg11"])
def test_mnn_int8_runs_int8_only_in_the_forward_convolutions(model):
    g = fp32(model)
    q = translate(g, "mnn-int8")
    convs = mac_forward(g)
    # every forward conv/FC is the INT8 kernel writing FP32 through its float scale
    fwd = {op.name: op for op in mac_forward(q)}
    assert set(fwd) == {op.name for op in convs}
    assert all(op.dtype == "int8" and op.attr("out_dtype") == "fp32" for op in fwd.values())
    # every other op -- the gradient kernels, BN, the update -- is the FP32 graph's op
    rest = {op.name: op for op in g.ops if op.name not in fwd}
    assert all(op.dtype == "fp32" for op in q.ops if op.name in rest)
    assert sum(op.macs for op in q.ops if op.name in rest) == sum(op.macs for op in rest.values())
    # per conv: min/max and quantize of its input and of its weights (trained weights change)
    kinds = Counter(op.kind for op in q.ops if op.name not in rest and op.name not in fwd)
    assert kinds == {"minmax": 2 * len(convs), "quantize": 2 * len(convs)}
    for c in convs:
        qx = next(op for op in q.ops if op.name == f"{c.name}.in_quantize")
        assert qx.bytes_read == 4 * qx.bytes_written            # fp32 in, int8 out
        assert fwd[c.name].inputs[0] == qx.name


def test_mnn_int8_inference_has_static_scales():
    g = build_graph("resnet18", (3, 224, 224), 1000, 1, "fp32", mode="inference")
    q = translate(g, "mnn-int8")
    kinds = Counter(op.kind for op in q.ops) - Counter(op.kind for op in g.ops)
    assert kinds == {"quantize": len(mac_forward(g))}


def test_qat_keeps_every_kernel_fp32_and_fake_quantises_inputs_outputs_and_weights():
    g = fp32("vgg11")
    q = translate(g, "qat")
    assert all(op.dtype == "fp32" for op in q.ops)
    assert sum(op.macs for op in q.ops) == sum(op.macs for op in g.ops)
    n = len(mac_forward(g))
    kinds = Counter(op.kind for op in q.ops) - Counter(op.kind for op in g.ops)
    # input and output of each conv (2 fake quants) + its weights
    assert kinds["fake_quant"] == 3 * n
    assert kinds["minmax"] == 2 * 2 * n + n
    # layout conversions: 2 per fake-quantised tensor forward, 2 per crossing backward
    assert kinds["transpose"] == 4 * 2 * n
    # the fake quant's passes are its element-wise Express ops
    fq = next(op for op in q.ops if op.kind == "fake_quant")
    assert lookup(fq.kind).passes == 7 and fq.flops == 7 * fq.bytes_written // 4
    # a tensor consumed after an output fake quant reads the fake-quantised copy
    outs = {op.name for op in q.ops if op.name.endswith(".out.to_nc4hw4")}
    assert outs and all(any(t in op.inputs for op in q.ops) for t in outs)


def test_paths_order_by_work_on_one_core():
    """INT8 forward kernels cut the work; fake quantisation only adds to FP32; NITI's all-INT8
    graph is the least -- on the CPU cost model, a small CNN, one big core."""
    import socsim
    wl = {"name": "t", "model": "resnet18", "input": [3, 32, 32], "num_classes": 10, "batch_size": 8,
          "batches": 1, "cpu": {"cores": "big1"}}
    t = {}
    for sched, path in (("mnn-fp32", None), ("mnn-int8", "mnn-int8"), ("mnn-int8", "qat"), ("mnn-int8", "niti")):
        ov = {"scheduler.name": sched}
        if path:
            ov["scheduler.options.int8_path"] = path
        t[path or "fp32"] = socsim.run("sd865", wl, overrides=ov, reports=False).summary["per_batch"]["time_s"]
    assert t["niti"] < t["mnn-int8"] < t["fp32"] < t["qat"], t


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([m for m in list_models() if m != "bert-small"]), st.integers(1, 8),
       st.sampled_from(["mnn-int8", "qat"]))
def test_int8_paths_keep_the_fp32_ops_and_the_macs(model, batch, path):
    """Whatever the model and batch: the paths add ops, never drop or change the FP32 graph's
    others (gradients, update), and keep its MACs; only the forward convs may change dtype."""
    g = fp32(model, (3, 32, 32) if model != "lenet" else (1, 28, 28), batch)
    q = translate(g, path)
    assert sum(op.macs for op in q.ops) == sum(op.macs for op in g.ops)
    fwd = {op.name for op in mac_forward(g)}
    mine = {op.name: op for op in q.ops}
    for op in g.ops:
        assert op.name in mine
        if op.name not in fwd and op.phase != "forward":
            assert mine[op.name].dtype == op.dtype and mine[op.name].macs == op.macs
            assert mine[op.name].bytes_read == op.bytes_read and mine[op.name].bytes_written == op.bytes_written
    assert len(q.live_bytes()) == len(q.ops)
