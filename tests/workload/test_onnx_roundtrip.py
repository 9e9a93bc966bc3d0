"""The torchvision architectures of the zoo, written as ONNX the way torch.onnx.export spells
them (tests/workload/onnx_export.py, no torch needed), import to the same model: parameter
count, MACs, FLOPs, op-kind multiset and peak memory of the training graph, and per-batch time
on sd865."""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("onnx")
sys.path.insert(0, str(Path(__file__).parent))
from onnx_export import export  # noqa: E402

import socsim  # noqa: E402
from socsim.workload.graph import training_graph  # noqa: E402
from socsim.workload.onnx_import import import_onnx  # noqa: E402
from socsim.workload.zoo import build_model  # noqa: E402

# the torchvision definitions (inputs of 64 px and up; Inception from 75, AlexNet's and VGG's
# adaptive pools are identities at 224); VGG-16 and AlexNet at 224 cost nothing to write: their
# weights go to a sparse external-data file
TORCHVISION = [("vgg16", (3, 224, 224)), ("resnet18", (3, 64, 64)), ("resnet50", (3, 64, 64)),
               ("mobilenetv2", (3, 64, 64)), ("shufflenetv2", (3, 64, 64)),
               ("alexnet", (3, 224, 224)), ("inceptionv3", (3, 75, 75)),
               ("densenet121", (3, 64, 64))]


@pytest.mark.parametrize("name,inp", TORCHVISION)
def test_imported_graph_matches_the_zoo(tmp_path, name, inp):
    zoo = build_model(name, inp, 10)
    imported = import_onnx(export(zoo, tmp_path / f"{name}.onnx"), inp, 10)
    assert imported.variant == "onnx" and zoo.variant == "torchvision"
    assert imported.param_count == zoo.param_count
    g1, g2 = training_graph(zoo, 2), training_graph(imported, 2)
    assert (g2.total_macs, g2.total_flops) == (g1.total_macs, g1.total_flops)
    assert Counter(op.kind for op in g2.ops) == Counter(op.kind for op in g1.ops)
    assert g2.peak_memory_bytes == g1.peak_memory_bytes


@pytest.mark.parametrize("name,inp", [("resnet18", (3, 64, 64)), ("mobilenetv2", (3, 64, 64)),
                                      ("shufflenetv2", (3, 64, 64))])
def test_imported_model_runs_as_fast_as_the_zoo_one(tmp_path, name, inp):
    path = export(build_model(name, inp, 10), tmp_path / f"{name}.onnx")
    wl = dict(name="t", input=list(inp), num_classes=10, batch_size=2, batches=2)
    zoo = socsim.run("sd865", {**wl, "model": name}, deterministic=True)
    imp = socsim.run("sd865", {**wl, "model": str(path)}, deterministic=True)
    assert imp.summary["per_batch"]["time_s"] == pytest.approx(zoo.summary["per_batch"]["time_s"],
                                                               rel=0.02)


def test_embedded_weights_import_too(tmp_path):
    zoo = build_model("lenet", (1, 28, 28), 10)
    m = import_onnx(export(zoo, tmp_path / "lenet.onnx", embed=True), (1, 28, 28), 10)
    assert m.param_count == zoo.param_count == 61706
