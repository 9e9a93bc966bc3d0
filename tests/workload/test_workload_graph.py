"""Training graphs: op order and kinds, MAC bookkeeping, liveness and memoisation."""
from __future__ import annotations


import numpy as np
import pytest

from socsim.workload import (CANONICAL_INPUTS, ModelError, build_model, graph_for, list_models,
                             training_graph)

FP32_KINDS = {"conv2d", "dwconv2d", "conv2d_dgrad", "conv2d_wgrad", "dwconv2d_dgrad",
              "dwconv2d_wgrad", "gemm", "batchnorm", "batchnorm_bwd", "relu", "relu_bwd",
              "maxpool", "maxpool_bwd", "avgpool", "avgpool_bwd", "add", "concat",
              "channel_shuffle", "layernorm", "layernorm_bwd", "gelu", "gelu_bwd", "softmax",
              "softmax_bwd", "embedding", "embedding_bwd", "softmax_ce", "softmax_ce_bwd",
              "sgd_update", "transpose", "slice"}
PHASE_RANK = {"forward": 0, "error_grad": 1, "weight_grad": 1, "update": 2}


def graph(name: str, batch: int = 4, classes: int = 10):
    return training_graph(build_model(name, CANONICAL_INPUTS[name], classes), batch)


@pytest.mark.parametrize("name", list_models())
def test_structure(name: str) -> None:
    g = graph(name)
    kinds = {op.kind for op in g.ops}
    assert kinds <= FP32_KINDS, kinds - FP32_KINDS
    ranks = [PHASE_RANK[op.phase] for op in g.ops]
    assert ranks == sorted(ranks), "forward, then backward, then updates"
    fwd = [op for op in g.ops if op.phase == "forward"]
    assert fwd[-1].kind == "softmax_ce"
    assert g.ops[len(fwd)].kind == "softmax_ce_bwd"
    seen = {"input"}
    for op in g.ops:  # every input is an earlier op's output (or the model input)
        assert set(op.inputs) <= seen, (op.name, set(op.inputs) - seen)
        seen.add(op.name)
    assert len(seen) == len(g.ops) + 1, "op names are unique"
    assert g.param_count == g.model.param_count and g.param_bytes == 4 * g.param_count
    assert sum(len(layer.all) for layer in g.layers) == len(g.ops)
    assert all(op.macs >= 0 and op.flops >= 0 and op.bytes_read > 0 for op in g.ops)


@pytest.mark.parametrize("name", list_models())
def test_backward_is_twice_forward(name: str) -> None:
    """Each conv/linear has an error gradient and a weight gradient with its forward MACs,
    except that the first layer needs no error gradient; attention matmuls have two error
    gradients and no weight gradient.  So backward = 2 x forward - first layer's MACs."""
    g = graph(name)
    by = g.macs_by_phase()
    first = next(op for op in g.ops if op.macs)
    skipped = first.macs if first.inputs == ("input",) else 0  # BERT starts with embeddings
    if skipped:
        assert not any(op.phase == "error_grad" and op.layer == first.layer for op in g.ops)
    assert by["error_grad"] + by["weight_grad"] == 2 * by["forward"] - skipped
    assert 1.7 <= (by["error_grad"] + by["weight_grad"]) / by["forward"] <= 2.0
    assert g.total_macs == sum(by.values())


def test_op_shapes_and_bytes_of_a_conv() -> None:
    g = training_graph(build_model("vgg16", (3, 32, 32), 10), 8)
    conv = g.ops[g.index["features.conv2.conv"]]
    assert conv.kind == "conv2d" and conv.dtype == "fp32"
    assert conv.p == dict(batch=8, cin=64, h=32, w=32, cout=64, kh=3, kw=3, stride=1, pad=1,
                          pad_w=1, groups=1, oh=32, ow=32)
    assert conv.macs == 8 * 64 * 32 * 32 * 64 * 9
    assert conv.weight_bytes == 64 * 64 * 9 * 4
    assert conv.bytes_read == 8 * 64 * 32 * 32 * 4 + conv.weight_bytes
    assert conv.out_bytes == conv.bytes_written == 8 * 64 * 32 * 32 * 4
    assert conv.saved_bytes == conv.out_bytes  # read by the batch-norm gradient
    bn = g.ops[g.index["features.conv2.bn"]]
    assert bn.saved_bytes == 0  # the ReLU saves its own output instead
    relu = g.ops[g.index["features.conv2.relu"]]
    assert relu.saved_bytes == relu.out_bytes
    wgrad = g.ops[g.index["features.conv2.conv.wgrad"]]
    assert wgrad.kind == "conv2d_wgrad" and wgrad.phase == "weight_grad"
    assert wgrad.inputs[1] == "features.conv1.relu"  # reads the saved activation
    fc = g.ops[g.index["classifier"]]
    assert fc.kind == "gemm" and fc.p == dict(batch=8, count=1, m=8, k=512, n=10)


def test_depthwise_and_shuffle_kinds() -> None:
    kinds = {op.kind for op in graph("mobilenetv2").ops}
    assert {"dwconv2d", "dwconv2d_dgrad", "dwconv2d_wgrad"} <= kinds
    assert "channel_shuffle" in {op.kind for op in graph("shufflenetv2").ops}
    bert = {op.kind for op in graph("bert-small").ops}
    assert {"embedding", "embedding_bwd", "layernorm_bwd", "gelu_bwd", "softmax_bwd"} <= bert


def test_residual_gradients_are_summed() -> None:
    g = graph("resnet18")
    sums = [op for op in g.ops if op.attr("role") == "grad_accum"]
    assert sums and all(op.kind == "add" and op.phase == "error_grad" for op in sums)
    assert len(sums) == 8  # one per basic block input (8 blocks)


@pytest.mark.parametrize("name", ["vgg16", "resnet50", "mobilenetv2", "bert-small"])
def test_peak_memory_grows_with_batch(name: str) -> None:
    peaks = [graph(name, b).peak_memory_bytes for b in (1, 4, 16)]
    assert peaks[0] < peaks[1] < peaks[2]
    g = graph(name, 16)
    live = g.live_bytes()
    assert live.shape == (len(g.ops),) and live.dtype == np.int64
    assert live.min() >= g.persistent_bytes == 2 * g.param_bytes
    # everything saved for backward is alive at the end of the forward pass
    assert live[g.index["loss"]] >= g.persistent_bytes + g.saved_bytes
    assert live[-1] == g.persistent_bytes  # after the last update only weights + grads remain


def test_with_batch_and_memoisation() -> None:
    g = graph("resnet18", 4)
    assert g.with_batch(4) is g
    g8 = g.with_batch(8)
    assert g8.batch == 8 and g8.model is g.model and g8.total_macs == 2 * g.total_macs
    assert graph_for("ResNet-18", (3, 224, 224), 10, 8) is g8
    with pytest.raises(ModelError) as err:
        g.with_batch(0)
    assert err.value.field == "batch"

