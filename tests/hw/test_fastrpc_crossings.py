"""What a CPU<->DSP switch moves (socsim.hw.fastrpc.expected_crossings): the tensors produced
before the switch that the ops after it read, as the co-scheduling DP prices a boundary and the
engine charges it."""
from __future__ import annotations

from socsim.engine.context import build_graph
from socsim.hw.fastrpc import expected_crossings
from socsim.workload.ops import Op


def op(name, inputs=(), out=0, read=0, weight=0, kind="relu"):
    return Op(name=name, kind=kind, phase="forward", layer=name, dtype="int8", params=(),
              bytes_read=read, weight_bytes=weight, out_bytes=out, inputs=tuple(inputs))


def test_chain_moves_the_previous_output():
    ops = [op("a", ["input"], out=100, read=64), op("b", ["a"], out=200), op("c", ["b"], out=50)]
    # the app's input batch crosses before the first op; then each op's input
    assert expected_crossings(ops) == [64, 100, 200]


def test_an_op_reading_no_earlier_tensor_defers_to_the_next_reader():
    """A weight rotation reads only weights: a switch before it still has to move the error
    gradient the deconvolution after it reads (the rotation's own output is made after the switch)."""
    ops = [op("dy", out=512), op("rot", [], out=4096, read=4096, weight=4096, kind="weight_rotate"),
           op("dgrad", ["dy", "rot"], out=1024, read=512 + 4096, weight=4096, kind="conv2d_dgrad")]
    assert expected_crossings(ops)[1] == 512
    assert expected_crossings(ops)[2] == 512 + 4096   # between rotation and deconvolution: both cross


def test_a_tensor_read_by_several_ops_counts_once_per_switch():
    ops = [op("x", out=10), op("y", ["x", "x"], out=20), op("z", ["x", "y"], out=5)]
    assert expected_crossings(ops)[1] == 10
    assert expected_crossings(ops)[2] == 30


def test_no_training_boundary_moves_nothing():
    """Every boundary of a real training graph moves something (the weight-gradient switches used
    to be priced at 0 bytes: their 'weight_bytes' is the gradient they write)."""
    g = build_graph("vgg16", (3, 32, 32), 10, 64, "niti")
    moved = expected_crossings(list(g.ops))
    names = [o.name for o in g.ops]
    wgrad = names.index("features.conv10.conv.wgrad")
    rot = names.index("features.conv10.conv.dgrad.weight_rotate")
    assert moved[wgrad] == 2 * 524288            # its two transposed operands
    assert moved[rot] == 524288                  # dY of the deconvolution after it
    assert min(moved[1:]) > 0
