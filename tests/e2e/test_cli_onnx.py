"""``model: net.onnx`` end to end through the CLI: the same summary as the zoo model, the seed
schedulers compared on it, and bad files exit 2 with nothing written."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("onnx")
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "workload"))
from cli_helpers import LENET, invoke  # noqa: E402
from onnx_export import export  # noqa: E402

from socsim.workload.zoo import build_model  # noqa: E402


def _workloads(tmp_path: Path) -> tuple[Path, Path]:
    """The LeNet quick-start as a zoo model and as ``nets/lenet.onnx`` beside the workload."""
    (tmp_path / "nets").mkdir()
    export(build_model("lenet", (1, 28, 28), 10), tmp_path / "nets" / "lenet.onnx", embed=True)
    zoo, imp = tmp_path / "zoo.yaml", tmp_path / "onnx.yaml"
    zoo.write_text(yaml.safe_dump(LENET))
    imp.write_text(yaml.safe_dump({**LENET, "model": "nets/lenet.onnx"}))
    return zoo, imp


def test_onnx_model_gives_the_zoo_models_summary(tmp_path, monkeypatch):
    zoo, imp = _workloads(tmp_path)
    monkeypatch.chdir(tmp_path / "nets")   # the path is relative to the workload file
    out = {}
    for name, wl in (("zoo", zoo), ("onnx", imp)):
        r = invoke("run", "--soc", "sd865", str(wl), "--deterministic", "--json", str(tmp_path / f"{name}.json"))
        assert r.exit_code == 0, r.output
        out[name] = json.loads((tmp_path / f"{name}.json").read_text())
    assert out["onnx"]["model"] == "nets/lenet.onnx"
    for key in ("per_batch", "memory", "placement"):
        assert out["onnx"][key] == out["zoo"][key]


def test_compare_seed_schedulers_on_an_imported_model(tmp_path):
    _, imp = _workloads(tmp_path)
    r = invoke("compare", "--soc", "sd865", str(imp), "--schedulers", "mnn-fp32,mandheling,min-energy,sage,swan",
               "--json", str(tmp_path / "cmp.json"))
    assert r.exit_code == 0, r.output
    assert "mandheling" in (tmp_path / "cmp.json").read_text()


def test_bad_onnx_exits_2_and_writes_nothing(tmp_path):
    _, imp = _workloads(tmp_path)
    (tmp_path / "nets" / "lenet.onnx").write_bytes(b"\x08\x07\x12")   # truncated
    out = tmp_path / "run"
    r = invoke("run", "--soc", "sd865", str(imp), "--out", str(out))
    assert r.exit_code == 2, r.output
    assert "lenet.onnx" in r.output and "field 'model'" in r.output
    assert not out.exists()
    r = invoke("validate", str(imp), "--soc", "sd865")
    assert r.exit_code == 2 and "lenet.onnx" in r.output


def test_missing_onnx_file_exits_2(tmp_path):
    wl = tmp_path / "w.yaml"
    wl.write_text(yaml.safe_dump({**LENET, "model": "nope.onnx"}))
    r = invoke("run", "--soc", "sd865", str(wl))
    assert r.exit_code == 2 and "no such ONNX file" in r.output


def test_inline_onnx_form_gives_the_path_forms_summary(tmp_path):
    """``model: {onnx: path, input: [...]}`` is the path form with the input shape beside it."""
    zoo, imp = _workloads(tmp_path)
    inline = tmp_path / "inline.yaml"
    wl = {k: v for k, v in LENET.items() if k != "input"}
    inline.write_text(yaml.safe_dump({**wl, "model": {"onnx": "nets/lenet.onnx", "input": LENET["input"]}}))
    out = {}
    for name, w in (("path", imp), ("inline", inline)):
        r = invoke("run", "--soc", "sd865", str(w), "--deterministic", "--json", str(tmp_path / f"{name}.json"))
        assert r.exit_code == 0, r.output
        out[name] = json.loads((tmp_path / f"{name}.json").read_text())
    assert out["inline"]["model"] == "nets/lenet.onnx"
    for key in ("per_batch", "memory", "placement", "energy_j"):
        assert out["inline"][key] == out["path"][key]


@pytest.mark.parametrize("model, top, field, value", [
    ({"onnx": "nets/lenet.txt"}, {}, "model.onnx", "nets/lenet.txt"),
    ({"onnx": "nets/lenet.onnx", "inputs": [1, 28, 28]}, {}, "model.inputs", None),
    ({"input": [1, 28, 28]}, {}, "model", None),
    ({"onnx": "nets/lenet.onnx", "input": [1, 0, 28]}, {"input": None}, "model.input.1", "0"),
    ({"onnx": "nets/lenet.onnx", "input": [1, 32, 32]}, {"input": [1, 28, 28]}, "model.input", None),
    ({"onnx": 7}, {}, "model.onnx", "7"),
])
def test_inline_onnx_form_errors_name_the_field(tmp_path, model, top, field, value):
    _workloads(tmp_path)
    w = tmp_path / "bad.yaml"
    wl = {**LENET, **top, "model": model}
    w.write_text(yaml.safe_dump({k: v for k, v in wl.items() if v is not None}))
    r = invoke("validate", str(w), "--soc", "sd865")
    assert r.exit_code == 2, r.output
    assert "bad.yaml" in r.output and f"field '{field}'" in r.output
    if value is not None:
        assert value in r.output


def test_inline_onnx_form_missing_file_names_it(tmp_path):
    w = tmp_path / "w.yaml"
    wl = {k: v for k, v in LENET.items() if k != "input"}
    w.write_text(yaml.safe_dump({**wl, "model": {"onnx": "nope.onnx", "input": [1, 28, 28]}}))
    r = invoke("run", "--soc", "sd865", str(w))
    assert r.exit_code == 2 and "no such ONNX file" in r.output and "nope.onnx" in r.output
