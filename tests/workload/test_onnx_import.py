"""ONNX import, op by op and error by error: each bad file names the file, the node and the
value (a ModelError; the CLI's exit 2 is in tests/e2e/test_cli_onnx.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from socsim.workload.graph import training_graph  # noqa: E402
from socsim.workload.model import ModelError  # noqa: E402
from socsim.workload.onnx_import import SUPPORTED, import_onnx, is_onnx  # noqa: E402


def _w(name: str, *shape: int):
    return numpy_helper.from_array(np.zeros(shape, np.float32), name)


def _save(tmp_path: Path, nodes, inits, in_shape=("N", 4, 8, 8), out="y", out_shape=("N", 3),
          name="m.onnx", opset=18) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))
    y = helper.make_tensor_value_info(out, TensorProto.FLOAT, list(out_shape))
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y], inits),
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    p = tmp_path / name
    p.write_bytes(m.SerializeToString())
    return p


def _head(src: str, c: int, classes: int = 3):
    """GlobalAveragePool -> Flatten -> Gemm to ``classes``."""
    return ([helper.make_node("GlobalAveragePool", [src], ["gp"], name="gap"),
             helper.make_node("Flatten", ["gp"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["y"], name="fc", transB=1)],
            [_w("fc.w", classes, c), _w("fc.b", classes)])


def test_silu_dilated_conv_and_matmul_bias(tmp_path):
    head, hw = _head("s", 6)
    nodes = [helper.make_node("Conv", ["x", "c.w"], ["c"], name="conv", kernel_shape=[3, 3],
                              dilations=[2, 2], pads=[2, 2, 2, 2]),
             helper.make_node("Sigmoid", ["c"], ["sg"], name="sig"),
             helper.make_node("Mul", ["c", "sg"], ["s"], name="silu"), *head]
    m = import_onnx(_save(tmp_path, nodes, [_w("c.w", 6, 4, 3, 3), *hw]), (4, 8, 8), 3)
    kinds = [layer.kind for layer in m.layers]
    assert kinds == ["input", "conv2d", "silu", "avgpool", "view", "linear", "softmax_ce"]
    conv = m.layers[1]
    assert conv.shape == (6, 8, 8) and conv.a["dilation"] == 2
    assert m.param_count == 6 * 4 * 9 + 3 * 6 + 3
    ops = {op.kind for op in training_graph(m, 2).ops}
    assert {"silu", "silu_bwd"} <= ops


def test_matmul_and_its_bias_are_one_linear_layer(tmp_path):
    nodes = [helper.make_node("Flatten", ["x"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "w"], ["mm"], name="mm"),
             helper.make_node("Add", ["mm", "b"], ["y"], name="bias")]
    m = import_onnx(_save(tmp_path, nodes, [_w("w", 256, 3), _w("b", 3)]), (4, 8, 8), 3)
    lin = m.layers[-2]
    assert lin.kind == "linear" and lin.a["bias"] == 1 and lin.param_count == 256 * 3 + 3


def test_split_is_a_channel_split_and_a_final_softmax_is_the_loss(tmp_path):
    head, hw = _head("cat", 4)
    head[-1].output[0] = "logits"
    nodes = [helper.make_node("Split", ["x", "sizes"], ["a", "b"], name="split", axis=1),
             helper.make_node("Relu", ["b"], ["rb"], name="relu"),
             helper.make_node("Concat", ["a", "rb"], ["cat"], name="cat", axis=1), *head,
             helper.make_node("Softmax", ["logits"], ["y"], name="prob", axis=1)]
    inits = [numpy_helper.from_array(np.array([2, 2], np.int64), "sizes"), *hw]
    m = import_onnx(_save(tmp_path, nodes, inits), (4, 8, 8), 3)
    views = [layer for layer in m.layers if layer.kind == "view" and layer.a.get("split")]
    assert [(v.a["start"], v.a["stop"]) for v in views] == [(0, 2), (2, 4)]
    assert [layer.kind for layer in m.layers].count("softmax") == 0
    assert m.layer("relu").inputs == ("split_1",) and m.layers[-1].inputs == ("fc",)


def test_unsupported_op_names_the_node_and_type(tmp_path):
    head, hw = _head("t", 4)
    nodes = [helper.make_node("Sin", ["x"], ["t"], name="my_sin"), *head]
    with pytest.raises(ModelError) as e:
        import_onnx(_save(tmp_path, nodes, hw), (4, 8, 8), 3)
    assert "node 'my_sin' (Sin)" in e.value.message and "m.onnx" in e.value.message
    assert e.value.value == "Sin" and "Sin" not in SUPPORTED


def test_truncated_and_garbage_files(tmp_path):
    head, hw = _head("x", 4)
    p = _save(tmp_path, head, hw)
    p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])
    with pytest.raises(ModelError, match="truncated or corrupt|checker rejects"):
        import_onnx(p, (4, 8, 8), 3)
    q = tmp_path / "junk.onnx"
    q.write_bytes(b"\xff" * 100)
    with pytest.raises(ModelError, match="junk.onnx"):
        import_onnx(q, (4, 8, 8), 3)
    with pytest.raises(ModelError, match="no such ONNX file"):
        import_onnx(tmp_path / "missing.onnx", (4, 8, 8), 3)


def test_missing_external_data_names_the_tensor_and_file(tmp_path):
    head, hw = _head("x", 4)
    hw[0].data_location = TensorProto.EXTERNAL
    hw[0].ClearField("raw_data")
    for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", "48")):
        e = hw[0].external_data.add()
        e.key, e.value = k, v
    p = _save(tmp_path, head, hw)
    with pytest.raises(ModelError, match="'fc.w'.*'weights.bin', which is missing"):
        import_onnx(p, (4, 8, 8), 3)
    (tmp_path / "weights.bin").write_bytes(b"\0" * 10)
    with pytest.raises(ModelError, match="holds 10 bytes, 48 needed"):
        import_onnx(p, (4, 8, 8), 3)
    (tmp_path / "weights.bin").write_bytes(b"\0" * 48)
    assert import_onnx(p, (4, 8, 8), 3).param_count == 15


def test_the_input_must_match_what_the_workload_pins(tmp_path):
    head, hw = _head("x", 4)
    p = _save(tmp_path, head, hw, in_shape=("N", 4, 8, 8))
    with pytest.raises(ModelError, match="has 4 in dimension 1, the workload's input"):
        import_onnx(p, (3, 8, 8), 3)
    with pytest.raises(ModelError, match="needs 3 dimensions"):
        import_onnx(p, (4, 8), 3)
    fixed = _save(tmp_path, head, hw, in_shape=(32, 4, 8, 8), name="b32.onnx")
    with pytest.raises(ModelError, match="fixed batch of 32"):
        import_onnx(fixed, (4, 8, 8), 3)
    with pytest.raises(ModelError) as e:
        import_onnx(p, (4, 8, 8), 10)
    assert e.value.field == "num_classes" and "num_classes: 3" in e.value.message


def test_a_shape_left_dynamic_is_named(tmp_path):
    # a Reshape whose target comes from a second, unpinned computation stays dynamic
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("RandomUniformLike", ["s"], ["r"], name="rnd", dtype=7),
             helper.make_node("Reshape", ["x", "r"], ["y"], name="reshape")]
    p = _save(tmp_path, nodes, [], out_shape=("N", 3))
    with pytest.raises(ModelError, match="reshape|Reshape|shape inference"):
        import_onnx(p, (4, 8, 8), 3)


def test_is_onnx():
    assert is_onnx("a/b/Net.ONNX") and not is_onnx("resnet18") and not is_onnx(3)


def _const(name: str, *shape: int, value: float = 0.5):
    return numpy_helper.from_array(np.full(shape, value, np.float32), name)


def test_broadcasting_mul_div_sub_resize_tanh_leaky_relu(tmp_path):
    """A decoder-like block: every new op maps to its layer kind, costs its FLOPs, and gets a
    gradient of its input's shape (summed back where the input was broadcast)."""
    head, hw = _head("th", 4)
    nodes = [helper.make_node("Conv", ["x", "c.w"], ["c"], name="conv", kernel_shape=[1, 1]),
             helper.make_node("LeakyRelu", ["c"], ["lr"], name="lrelu", alpha=0.1),
             helper.make_node("Mul", ["lr", "scale"], ["ms"], name="scale"),        # (4,8,8) * (4,1,1)
             helper.make_node("Sub", ["shift", "ms"], ["sb"], name="shift"),        # c - x
             helper.make_node("GlobalAveragePool", ["sb"], ["gate"], name="gate"),  # (4,1,1)
             helper.make_node("Div", ["sb", "gate"], ["dv"], name="norm"),          # x / gate(x): broadcast
             helper.make_node("Resize", ["dv", "", "sc"], ["up"], name="up", mode="nearest"),
             helper.make_node("Tanh", ["up"], ["th"], name="tanh"), *head]
    inits = [_const("scale", 4, 1, 1), _const("shift", 1),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc"), _w("c.w", 4, 4, 1, 1), *hw]
    m = import_onnx(_save(tmp_path, nodes, inits), (4, 8, 8), 3)
    by = {layer.name: layer for layer in m.layers}
    assert [by[n].kind for n in ("lrelu", "scale", "shift", "norm", "up", "tanh")] == \
        ["leaky_relu", "mul", "sub", "div", "resize", "tanh"]
    assert by["up"].shape == (4, 16, 16) and by["scale"].a["const"] == 4 and by["shift"].a["rev"] == 1
    assert m.param_count == 16 + 3 * 4 + 3      # constants are not trainable
    g = training_graph(m, 2)
    ops = {op.name: op for op in g.ops}
    kinds = {op.kind for op in g.ops}
    assert {"leaky_relu", "leaky_relu_bwd", "mul", "mul_bwd", "sub", "sub_bwd", "div", "div_bwd",
            "resize", "resize_bwd", "tanh", "tanh_bwd"} <= kinds
    n = 2 * 4 * 8 * 8
    assert ops["scale"].flops == n and ops["tanh"].flops == 5 * 2 * 4 * 16 * 16
    assert ops["up"].flops == 0 and ops["up.dgrad"].flops == 2 * 4 * 16 * 16
    # the divisor was broadcast (4,1,1): its gradient sums n elements down to 2 x 4
    div1 = ops["norm.dgrad1"]
    assert div1.bytes_written == 2 * 4 * 4 and div1.flops == 3 * n + (n - 2 * 4)
    assert ops["norm.dgrad0"].flops == n
    # c - x: the subtrahend's gradient is -dy (an op), not dy passed through
    assert ops["shift.dgrad"].kind == "sub_bwd"


def test_resize_cubic_and_a_bad_broadcast_are_named(tmp_path):
    head, hw = _head("up", 4)
    nodes = [helper.make_node("Resize", ["x", "", "sc"], ["up"], name="up3", mode="cubic"), *head]
    sc = numpy_helper.from_array(np.array([1, 1, 1, 1], np.float32), "sc")
    with pytest.raises(ModelError) as e:
        import_onnx(_save(tmp_path, nodes, [sc, *hw]), (4, 8, 8), 3)
    assert "node 'up3' (Resize)" in e.value.message and e.value.value == "cubic"


def test_the_new_kinds_are_costed_on_the_cpu_and_the_gpu(tmp_path):
    from socsim.hw.cost import CpuConfig, GpuConfig
    from socsim.hw.cpu import CpuCostModel
    from socsim.hw.gpu import GpuCostModel
    from socsim.spec import load_soc

    soc = load_soc("sd865")
    head, hw = _head("th", 4)
    nodes = [helper.make_node("Conv", ["x", "c.w"], ["c"], name="conv", kernel_shape=[1, 1]),
             helper.make_node("Mul", ["c", "scale"], ["ms"], name="scale"),
             helper.make_node("Resize", ["ms", "", "sc"], ["up"], name="up", mode="linear"),
             helper.make_node("Tanh", ["up"], ["th"], name="tanh"), *head]
    inits = [_const("scale", 4, 1, 1), numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc"),
             _w("c.w", 4, 4, 1, 1), *hw]
    g = training_graph(import_onnx(_save(tmp_path, nodes, inits), (4, 8, 8), 3), 4)
    cpu, gpu = CpuCostModel(soc), GpuCostModel(soc)
    ccfg = CpuConfig((4, 5), tuple((c.name, c.opps[-1].freq_mhz) for c in soc.cpu.clusters))
    gcfg = GpuConfig(soc.gpu.opps[-1].freq_mhz)
    new = [op for op in g.ops if op.kind.split("_bwd")[0] in ("mul", "resize", "tanh")]
    assert len(new) == 6
    for op in new:
        assert 0 < cpu.cost(op, ccfg).time_s < 1e-2 and 0 < gpu.cost(op, gcfg).time_s < 1e-2
    up, up_b = next(op for op in new if op.kind == "resize"), next(op for op in new if op.kind == "resize_bwd")
    assert up.flops == 7 * up.bytes_written // 4 and up_b.flops == 8 * up.bytes_written // 4


@pytest.mark.parametrize("scheduler", ["mnn-fp32", "mandheling"])
def test_a_model_with_the_new_ops_trains_under_the_seed_schedulers(tmp_path, scheduler):
    """The new kinds have no DSP kernel: Mandheling keeps them on the CPU and the run completes."""
    from socsim.api import run

    head, hw = _head("th", 4)
    nodes = [helper.make_node("Conv", ["x", "c.w"], ["c"], name="conv", kernel_shape=[1, 1]),
             helper.make_node("LeakyRelu", ["c"], ["lr"], name="lrelu", alpha=0.1),
             helper.make_node("Div", ["lr", "k"], ["dv"], name="div"),
             helper.make_node("Resize", ["dv", "", "sc"], ["up"], name="up", mode="nearest"),
             helper.make_node("Tanh", ["up"], ["th"], name="tanh"), *head]
    inits = [_const("k", 1), numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc"),
             _w("c.w", 4, 4, 1, 1), *hw]
    p = _save(tmp_path, nodes, inits)
    wl = {"name": "new-ops", "model": {"onnx": str(p), "input": [4, 8, 8]}, "num_classes": 3, "batch_size": 4,
          "batches": 2, "scheduler": {"name": scheduler}}
    s = run("sd865", wl, deterministic=True, reports=False).summary
    assert s["per_batch"]["time_s"] > 0 and s["energy_j"]["total"] > 0
