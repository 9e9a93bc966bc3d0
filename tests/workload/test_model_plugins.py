"""Model plugins: entry points in the group ``socsim.models`` add named models; the zoo's own
models are registered the same way (pyproject.toml), a broken or clashing plugin is listed with
its problem and choosing it is an input error."""
from __future__ import annotations

import sys
import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from socsim.workload import models, zoo
from socsim.workload.builder import NetBuilder
from socsim.workload.model import Model, ModelError
from socsim.workload.modeldef import ModelDef


def tiny(b: NetBuilder) -> Model:
    """A plugin's model: conv, ReLU, global pool, linear."""
    x = b.relu(b.conv("input", 8, 3, pad=1, name="conv"))
    return b.build(b.linear(b.flatten(b.global_avgpool(x)), b.num_classes), "plugin")


TINY = ModelDef(tiny, (3, 16, 16), description="a tiny CNN")


@pytest.fixture
def plugins(monkeypatch):
    sys.modules[__name__].TINY = TINY
    eps = [EntryPoint("tiny", f"{__name__}:TINY", models.GROUP),
           EntryPoint("tinyfn", f"{__name__}:tiny", models.GROUP),
           EntryPoint("broken", "no_such_module_xyz:Model", models.GROUP),
           EntryPoint("VGG-16", f"{__name__}:tiny", models.GROUP)]
    monkeypatch.setattr(models, "entry_points", lambda group: eps if group == models.GROUP else [])


def test_plugin_models_build_and_list(plugins):
    m = models.build_model("tiny", (3, 16, 16), 5)
    assert m.name == "tiny" and m.variant == "plugin" and m.param_count == 8 * 27 + 8 * 5 + 5
    assert models.build_model("tinyfn", (3, 16, 16), 5).param_count == m.param_count
    found = models.discover()
    assert found["tiny"].defn is TINY and not found["tiny"].builtin
    assert "No" in (found["broken"].error or "") and found["broken"].defn is None
    assert any("taken by a zoo model" in (e.error or "") for e in found.values())
    assert "tiny" in models.list_models() and "broken" not in models.list_models()
    with pytest.raises(ModelError, match="broken"):
        models.build_model("broken", (3, 16, 16), 5)


def test_zoo_is_registered_through_the_entry_point_group():
    eps = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    group = eps["project"]["entry-points"][models.GROUP]
    assert list(group) == list(zoo.ZOO)
    for name, target in group.items():
        module, attr = target.split(":")
        assert module == "socsim.workload.zoo" and getattr(zoo, attr) is zoo.ZOO[name]


def test_unknown_model_says_what_is_known():
    with pytest.raises(ModelError, match="known models: vgg11.*or give the path of an .onnx"):
        models.build_model("nope", (3, 32, 32), 10)


def test_list_models_shows_plugins_and_their_problems(plugins):
    from click.testing import CliRunner

    from socsim.cli import main
    r = CliRunner().invoke(main, ["list", "models"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    for text in ("resnet18", "3x224x224", "tiny", "broken", "*.onnx"):
        assert text in r.output
