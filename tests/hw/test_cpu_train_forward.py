"""A training step's forward convolutions and MatMuls as MNN's CPU backend runs them (weights as
inputs, changed every step) against an inference graph's (weights constants, prepared at load):
socsim.workload.ops.TRAIN_STEP_ATTR and socsim.hw.cpu.multi_input_weights / matmul_operands."""
import pytest
from hypothesis import given, settings, strategies as st

from socsim.engine.context import build_graph
from socsim.hw import cpu
from socsim.hw.cost import CpuConfig
from socsim.spec import load_soc
from socsim.workload.graph import forward_only
from socsim.workload.ops import TRAIN_STEP_ATTR, Op, as_inference, as_training_step, make_params, with_cpu_framework


@pytest.fixture(scope="module")
def soc():
    return load_soc("sd855")


def _cfg(soc, cores):
    return CpuConfig(tuple(cores), tuple(sorted((c.name, c.max_mhz) for c in soc.cpu.clusters)))


def _conv(batch=16, cin=192, cout=384, k=3, o=13, stride=1, groups=1, dtype="fp32"):
    return Op("c", "conv2d", "forward", "l", dtype, make_params(batch=batch, cin=cin, h=o * stride, w=o * stride,
                                                                cout=cout, kh=k, kw=k, stride=stride, pad=k // 2,
                                                                groups=groups, oh=o, ow=o))


FC1 = Op("ff", "gemm", "forward", "l", "fp32", make_params(batch=16, count=1, m=16, k=9216, n=4096))


def _train(op):
    return as_training_step([op])[0]


def test_training_graph_marks_its_forward_ops_and_the_inference_graph_does_not():
    g = build_graph("alexnet", (3, 224, 224), 10, 16, "fp32")
    fwd = [op for op in g.ops if op.phase == "forward"]
    assert fwd and all(op.in_training_step and TRAIN_STEP_ATTR in op.attrs for op in fwd)
    assert all(op.in_training_step for op in g.ops)
    inf = forward_only(g)
    assert [op.name for op in inf.ops] == [op.name for op in fwd]
    assert not any(op.in_training_step or TRAIN_STEP_ATTR in op.attrs for op in inf.ops)
    # the same shape, another cost key
    assert {op.signature for op in inf.ops}.isdisjoint({op.signature for op in fwd})
    # a precision rewrite keeps the marks
    q = build_graph("alexnet", (3, 224, 224), 10, 16, "mnn-int8")
    assert all(op.in_training_step for op in q.ops)
    assert not any(op.in_training_step for op in forward_only(q).ops)


def test_marks_round_trip_and_survive_a_framework_change():
    t = _train(_conv())
    assert t.in_training_step and not _conv().in_training_step
    assert as_inference(t) == _conv()
    assert with_cpu_framework(t, "ncnn").in_training_step
    assert as_training_step([t])[0] is t


def test_training_forward_conv_packs_its_weights_on_one_thread():
    """ConvolutionTiledExecutorMultiInput: the weights transposed and packed on the calling
    thread (out of the split packing), the im2col per tile split as for inference."""
    inf, tr = _conv(), _train(_conv())
    w = 384 * 192 * 9
    assert cpu.multi_input_weights(inf) == 0.0 and cpu.multi_input_weights(tr) == w
    assert cpu.serial_pack_elements(inf) == 0.0 and cpu.serial_pack_elements(tr) == w
    # a convolution's forward pass is not a MatMul in MNN's CPU backend
    assert cpu.matmul_operands(tr) == {}
    assert cpu.gemm_data_movement(inf)[0] - cpu.gemm_data_movement(tr)[0] == w
    # grouped, INT8 and other frameworks' convolutions keep the split path
    for op in (_conv(groups=2, cin=192, cout=384), _conv(dtype="int8"), with_cpu_framework(_conv(), "pytorch"),
               with_cpu_framework(_conv(), "ncnn")):
        assert cpu.multi_input_weights(_train(op)) == 0.0


def test_training_forward_fc_is_mnns_matmul():
    """NN::Linear: _MatMul(input, weight) with the weight a variable: A (the activations), B (the
    weights) and C on one thread in MNN 1.2-2.7; an inference FC has no per-step packing."""
    tr = _train(FC1)
    assert cpu.matmul_operands(FC1) == {}
    assert cpu.matmul_operands(tr) == {"A": 16 * 9216, "B": 9216 * 4096, "C": 16 * 4096}
    assert cpu.serial_pack_elements(tr) == 16 * 9216 + 9216 * 4096 + 16 * 4096
    assert cpu.gemm_data_movement(tr)[0] == 0.0


def test_training_forward_costs_more_and_inference_is_unchanged(soc, monkeypatch):
    """The one-thread passes are training-step time; an inference op costs what an unmarked op
    does, and another framework's training op what its inference op does."""
    for op in (_conv(), FC1, _conv(k=5, cin=64, cout=192, o=27)):
        for cores in ([4], [4, 5, 6, 7], [0, 1, 2, 3]):
            cfg = _cfg(soc, cores)
            t_inf = cpu.cpu_cost(soc, op, cfg)
            t_tr = cpu.cpu_cost(soc, _train(op), cfg)
            assert t_tr.time_s > t_inf.time_s
            assert cpu.cpu_cost(soc, as_inference(_train(op)), cfg) == t_inf
            other = with_cpu_framework(op, "ncnn")
            assert cpu.cpu_cost(soc, _train(other), cfg).time_s == pytest.approx(cpu.cpu_cost(soc, other, cfg).time_s)
    # the one thread does not shrink with the threads: fc1's training forward gains less from
    # four big cores than its inference twin
    one, four = _cfg(soc, [4]), _cfg(soc, [4, 5, 6, 7])
    tr = _train(FC1)
    assert (cpu.cpu_cost(soc, tr, one).time_s / cpu.cpu_cost(soc, tr, four).time_s
            < cpu.cpu_cost(soc, FC1, one).time_s / cpu.cpu_cost(soc, FC1, four).time_s)


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 32), cin=st.integers(1, 512), cout=st.integers(1, 512), kk=st.sampled_from([1, 3, 5, 11]),
       o=st.integers(1, 56), stride=st.sampled_from([1, 2, 4]))
def test_training_forward_conv_moves_the_weight_packing(batch, cin, cout, kk, o, stride):
    """The weights are packed once either way: what leaves the split part is the one thread's
    packing; the transpose is extra cycles on that thread."""
    op = _conv(batch=batch, cin=cin, cout=cout, k=kk, o=o, stride=stride)
    tr = _train(op)
    assert (cpu.gemm_data_movement(op)[0] ==
            pytest.approx(cpu.gemm_data_movement(tr)[0] + cpu.serial_pack_elements(tr)))
    cl = load_soc("sd855").cpu.clusters[-1]
    assert cpu.serial_cycles(tr, cl) > cpu.serial_pack_elements(tr) / 4 * 0.99 * 2.0 > 0
    assert cpu.compute_cycles(tr, cl) < cpu.compute_cycles(op, cl)
