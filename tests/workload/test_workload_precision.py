"""Precision algorithms: NITI and Octo translations (docs/seeds.md sections 1 and 5)."""
from __future__ import annotations

from collections import Counter

import pytest

from socsim.workload import ModelError, build_model, list_precisions, training_graph, translate
from socsim.workload.costs import is_persistent
from socsim.workload.niti import static_rescale

CONVS = {"conv2d", "dwconv2d"}


def fp32(name: str = "vgg16", chw: tuple[int, ...] = (3, 32, 32), batch: int = 4):
    return training_graph(build_model(name, chw, 10), batch)


def consumers(g, name: str) -> list:
    return [op for op in g.ops if name in op.inputs]


def test_list_and_errors() -> None:
    assert list_precisions() == ["fp32", "niti", "octo", "mnn-int8", "qat"]
    g = fp32()
    assert translate(g, "fp32") is g and translate(g, "NITI") is translate(g, "niti")
    with pytest.raises(ModelError) as err:
        translate(g, "int4")
    assert err.value.field == "precision" and "niti" in err.value.message


@pytest.mark.parametrize("name,chw", [("vgg16", (3, 32, 32)), ("resnet18", (3, 32, 32)),
                                      ("mobilenetv2", (3, 32, 32)), ("lenet", (1, 28, 28))])
def test_niti_structure(name: str, chw: tuple[int, ...]) -> None:
    g32 = fp32(name, chw)
    g = translate(g32, "niti")
    assert g.precision == "niti" and g.total_macs == g32.total_macs
    n_conv = sum(op.kind in CONVS for op in g32.ops)
    convs = [op for op in g.ops if op.kind in CONVS]
    assert len(convs) == n_conv
    for conv in convs:  # every FP32 conv becomes INT8 conv (int32 out) + reducemax + requant
        assert conv.dtype == "int8" and conv.attr("out_dtype") == "int32"
        after = {op.kind for op in consumers(g, conv.name)}
        assert after == {"reducemax", "requant_dynamic"}
        p = conv.p
        assert conv.bytes_written == 4 * p["batch"] * p["cout"] * p["oh"] * p["ow"]
    assert not any(op.kind.startswith("batchnorm") for op in g.ops), "NITI has no batch norm"
    assert all(op.dtype == "int8" for op in g.ops if op.kind in ("maxpool", "relu", "relu_bwd"))
    for op in g.ops:
        if op.kind.endswith("conv2d_dgrad"):
            assert op.dtype == "int8"
            assert g.ops[g.index[op.inputs[-1]]].kind == "weight_rotate"
        if op.kind.endswith("conv2d_wgrad"):
            assert {g.ops[g.index[i]].kind for i in op.inputs} == {"transpose"}
    updates = [op for op in g.ops if op.phase == "update"]
    assert updates and all(op.dtype == "int8" for op in updates)
    assert g.param_bytes == g.param_count  # int8 weights
    assert g.peak_memory_bytes < g32.peak_memory_bytes
    counts = Counter(op.kind for op in g.ops)
    assert counts["reducemax"] == counts["requant_dynamic"] >= 3 * n_conv - 1


def test_niti_int8_weight_gradients_are_persistent_and_feed_updates() -> None:
    g = translate(fp32(), "niti")
    upd = g.ops[g.index["features.conv3.conv.update"]]
    (src,) = upd.inputs
    assert g.ops[g.index[src]].kind == "requant_dynamic" and is_persistent(g.ops[g.index[src]])


def test_niti_static_rescale() -> None:
    g = translate(fp32(), "niti")
    ops = static_rescale(g)
    kinds = Counter(op.kind for op in ops)
    assert kinds["reducemax"] == 0 and kinds["requant_dynamic"] == 0
    assert kinds["requant_static"] == Counter(op.kind for op in g.ops)["requant_dynamic"]


@pytest.mark.parametrize("name,chw", [("vgg16", (3, 32, 32)), ("resnet18", (3, 32, 32)),
                                      ("mobilenetv2", (3, 32, 32)), ("alexnet", (3, 32, 32))])
def test_octo_structure(name: str, chw: tuple[int, ...]) -> None:
    g32 = fp32(name, chw)
    g = translate(g32, "octo")
    assert g.total_macs == g32.total_macs
    convs = [op for op in g.ops if op.kind in CONVS]
    for conv in convs:  # quantize X and W before, dequantize after
        assert conv.dtype == "int8"
        assert [g.ops[g.index[i]].kind for i in conv.inputs] == ["quantize", "quantize"]
        assert [op.kind for op in consumers(g, conv.name)] == ["dequantize"]
    lacs = [op for op in g.ops if op.kind == "lac"]
    assert len(lacs) == len(convs) == sum(op.kind == "lac_bwd" for op in g.ops)
    has_bn = any(op.kind == "batchnorm" for op in g.ops)
    for lac in lacs:  # after BN (when there is one), before the ReLU
        before = g.ops[g.index[lac.inputs[0]]]
        assert before.kind == ("batchnorm" if has_bn else "dequantize")
    for relu in (op for op in g.ops if op.kind == "relu"):  # conv outputs reach ReLUs via LAC
        src = g.ops[g.index[relu.inputs[0]]]
        assert src.kind != "batchnorm"
        if src.kind == "dequantize":
            assert g.ops[g.index[src.inputs[0]]].kind == "gemm"
    for op in g.ops:  # backward int8 ops read PRC-clipped, quantized errors
        if op.phase != "forward" and op.kind in ("conv2d_dgrad", "conv2d_wgrad"):
            q = g.ops[g.index[op.inputs[0]]]
            assert q.kind == "quantize" and g.ops[g.index[q.inputs[1]]].kind == "clip"
    lac_params = sum(op.weight_bytes // 4 for op in lacs)
    assert g.param_count == g32.param_count + lac_params
    assert all(op.dtype == "fp32" for op in g.ops if op.phase == "update")


def test_precision_survives_with_batch() -> None:
    g = translate(fp32(batch=4), "octo")
    g8 = g.with_batch(8)
    assert g8.precision == "octo" and g8.batch == 8
    assert translate(g8, "fp32").total_macs == 2 * fp32(batch=4).total_macs
    assert translate(g, "niti").precision == "niti"  # from octo via the fp32 graph


@pytest.mark.parametrize("precision", ["niti", "octo"])
def test_translated_graphs_are_well_formed(precision: str) -> None:
    for name, chw in [("bert-small", (64, 512)), ("densenet121", (3, 32, 32)),
                      ("shufflenetv2", (3, 32, 32)), ("inceptionv3", (3, 32, 32))]:
        g = translate(fp32(name, chw, 2), precision)
        seen = {"input"}
        for op in g.ops:
            assert set(op.inputs) <= seen, (name, op.name)
            seen.add(op.name)
        assert g.peak_memory_bytes > g.persistent_bytes > 0
