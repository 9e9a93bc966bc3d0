"""PyTorch import: an nn.Module through socsim.run(..., model=module, example_input=...) trains
the same graph as the zoo's definition of the same network (skips without torch; CI's
scripts/test.sh installs the CPU-only torch wheel, docs/guide.md "Your own model")."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
from torch import nn  # noqa: E402

import socsim  # noqa: E402
from socsim.workload.graph import training_graph  # noqa: E402
from socsim.workload.onnx_import import import_onnx  # noqa: E402
from socsim.workload.torch_import import export_module  # noqa: E402
from socsim.workload.zoo import build_model  # noqa: E402


class LeNet(nn.Module):
    """socsim's lenet (MNIST 28x28: conv1 pads by 2) written as a PyTorch module."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.flatten(nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2), 1)
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def test_exported_module_matches_the_zoo(tmp_path):
    path, dims = export_module(LeNet(), torch.randn(1, 1, 28, 28), tmp_path / "lenet.onnx")
    assert dims == (1, 28, 28)
    m, zoo = import_onnx(path, dims, 10), build_model("lenet", dims, 10)
    assert m.param_count == zoo.param_count
    g, gz = training_graph(m, 4), training_graph(zoo, 4)
    assert sorted(op.kind for op in g.ops) == sorted(op.kind for op in gz.ops)
    assert (g.total_macs, g.total_flops) == (gz.total_macs, gz.total_flops)


def test_run_takes_a_module(tmp_path):
    wl = dict(name="t", model="lenet", input=[1, 28, 28], batch_size=4, batches=2)
    res = socsim.run("sd865", wl, model=LeNet(), example_input=torch.randn(1, 1, 28, 28),
                     deterministic=True)
    zoo = socsim.run("sd865", wl, deterministic=True)
    assert res.summary["per_batch"]["time_s"] == pytest.approx(zoo.summary["per_batch"]["time_s"], rel=0.02)


def test_batchnorm_and_silu_survive_the_export(tmp_path):
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.SiLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1), nn.Linear(8, 10))
    path, dims = export_module(net, torch.randn(1, 3, 16, 16), tmp_path / "n.onnx")
    kinds = [layer.kind for layer in import_onnx(path, dims, 10).layers]
    assert kinds == ["input", "conv2d", "batchnorm", "silu", "avgpool", "view", "linear", "softmax_ce"]
