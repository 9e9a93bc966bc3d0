"""``mode: inference``: the forward pass alone, run by the CPU and GPU baselines, refused by the
training systems with exit 2."""
from __future__ import annotations

import pytest

import socsim
from socsim.errors import InputError
from socsim.workload import build_model, training_graph
from socsim.workload.graph import forward_only
from tests.e2e.cli_helpers import LENET, invoke, write_workload


def test_forward_only_keeps_the_forward_ops_and_no_saved_activations():
    g = training_graph(build_model("lenet", (1, 28, 28), 10), 4)
    f = forward_only(g)
    assert f.mode == "inference" and f.ops and all(op.phase == "forward" for op in f.ops)
    assert [op.name for op in f.ops] == [op.name for op in g.ops if op.phase == "forward"]
    assert f.saved_bytes == 0 and f.param_count == 0
    weights = sum(op.weight_bytes for op in f.ops)
    assert weights > 0 and f.peak_memory_bytes >= weights   # the weights held once
    assert f.peak_memory_bytes < g.peak_memory_bytes
    assert forward_only(f) is f and f.with_batch(2).mode == "inference" and f.with_batch(2).batch == 2


@pytest.mark.parametrize("scheduler", ["mnn-fp32", "mnn-int8", "tflite-fp32", "pytorch", "mnn-fp32-gpu"])
def test_baselines_run_inference_faster_than_training(scheduler):
    wl = dict(LENET, batches=2)
    train = socsim.run("sd865", wl, scheduler=scheduler, deterministic=True, reports=False).summary
    inf = socsim.run("sd865", dict(wl, mode="inference"), scheduler=scheduler, deterministic=True,
                     reports=False).summary
    assert inf["mode"] == "inference" and "mode" not in train
    assert 0 < inf["per_batch"]["time_s"] < train["per_batch"]["time_s"]
    assert inf["placement"]["work_fraction"] == 1.0


@pytest.mark.parametrize("scheduler", ["min-energy", "mandheling", "sage", "swan", "octo"])
def test_training_systems_refuse_inference(scheduler):
    with pytest.raises(InputError) as e:
        socsim.run("sd865", dict(LENET, mode="inference"), scheduler=scheduler)
    assert e.value.field == "mode" and e.value.value == "inference" and "training only" in e.value.message


def test_cli_inference_run_and_refusal(tmp_path):
    wl = write_workload(tmp_path, mode="inference", batch_size=1)
    res = invoke("run", "--soc", "sd865", str(wl))
    assert res.exit_code == 0 and "inference" in res.output
    bad = invoke("run", "--soc", "sd865", str(wl), "--scheduler", "min-energy")
    assert bad.exit_code == 2
    assert all(n in bad.output for n in (str(wl), "field 'mode'", "'inference'", "training only"))


def test_unknown_mode_is_bad_input(tmp_path):
    res = invoke("validate", str(write_workload(tmp_path, mode="predict")))
    assert res.exit_code == 2 and "field 'mode'" in res.output
