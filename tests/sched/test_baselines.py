"""The framework baselines differ as modelled: per-batch overheads and kernel efficiencies."""
from __future__ import annotations

import pytest

import socsim
from socsim.engine.context import PlanContext
from socsim.engine.oracle import CostOracle
from socsim.sched.baselines import (PYTORCH_DISPATCH_S_PER_OP, TFLITE_PREP_S_PER_OP, TFLITE_PREP_US_PER_MB,
                                    MnnFp32, MnnFp32Gpu, MnnInt8, Octo, PyTorch, TfliteFp32, scale_work,
                                    tflite_graph_prep_s)
from socsim.sched.mandheling import region_storage_bytes
from socsim.spec import load_soc, workload_from_dict

SOC = load_soc("sd865")
WL = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=32, batches=3,
          cpu={"cores": "big2"})


def ctx(**over):
    return PlanContext(SOC, workload_from_dict({**WL, **over}), CostOracle(SOC))


def test_tflite_prepares_its_graph_every_batch():
    c = ctx()
    ops = c.graph("fp32").ops
    storage_mb = region_storage_bytes(ops, 0, len(ops)) / (1 << 20)
    assert TfliteFp32().plan(c).cpu_graph_prep_s == pytest.approx(
        TFLITE_PREP_S_PER_OP * len(ops) + TFLITE_PREP_US_PER_MB * 1e-6 * storage_mb)
    assert MnnFp32().plan(c).cpu_graph_prep_s == 0


def test_tflite_preparation_reproduces_the_published_figure_and_grows_with_the_graph():
    """The per-op term re-derived: VGG-16/CIFAR-10 at batch 64 re-prepares in 304 ms
    (pub:dsp_graph_preparation_ms.VGG16.tflite) with the FastRPC table's per-MB term
    (sd865's graph_prep_us_per_mb, the same rpcperf slope the DSP graph pays)."""
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    published = yaml.safe_load((root / "calibration" / "published.yaml").read_text())["dsp_graph_preparation_ms"]
    assert TFLITE_PREP_US_PER_MB == SOC.fastrpc.graph_prep_us_per_mb
    v = PlanContext(SOC, workload_from_dict({**WL, "model": "vgg16", "input": [3, 32, 32], "batch_size": 64}),
                    CostOracle(SOC))
    ops = v.graph("fp32").ops
    storage_mb = region_storage_bytes(ops, 0, len(ops)) / (1 << 20)
    per_op = (published["VGG16"]["tflite"] * 1e-3 - TFLITE_PREP_US_PER_MB * 1e-6 * storage_mb) / len(ops)
    assert TFLITE_PREP_S_PER_OP == pytest.approx(per_op, rel=1e-3)
    assert TfliteFp32().plan(v).cpu_graph_prep_s == pytest.approx(published["VGG16"]["tflite"] * 1e-3, rel=1e-3)
    # size-dependent: the same ops with a bigger batch (larger live tensors) cost more
    big = PlanContext(SOC, workload_from_dict({**WL, "model": "vgg16", "input": [3, 32, 32], "batch_size": 128}),
                      CostOracle(SOC))
    assert len(big.graph("fp32").ops) == len(ops)
    assert tflite_graph_prep_s(big.graph("fp32").ops) > tflite_graph_prep_s(ops) + 1e-3


def test_existing_baselines_still_plan():
    c = ctx()
    assert any(s.op.dtype == "int8" for s in MnnInt8().plan(c).steps)
    assert Octo().plan(c).label.startswith("octo")


def test_tflite_slower_than_mnn_by_at_least_its_preparation():
    mnn = socsim.run("sd865", WL, scheduler="mnn-fp32").summary
    tfl = socsim.run("sd865", WL, scheduler="tflite-fp32").summary
    n = mnn["placement"]["cpu_ops"]
    gap = tfl["per_batch"]["time_s"] - mnn["per_batch"]["time_s"]
    assert gap >= TFLITE_PREP_S_PER_OP * n
    assert tfl["per_batch"]["energy_j"] > mnn["per_batch"]["energy_j"]
    gpu = socsim.run("sd865", WL, scheduler="mnn-fp32-gpu").summary
    assert gpu["placement"]["gpu_ops"] == n and gpu["placement"]["cpu_ops"] == 0


def test_mnn_gpu_inference_plan_has_one_memory_figure_per_kernel():
    from socsim.contract.checks import check_plan
    c = ctx(mode="inference")
    p = MnnFp32Gpu().plan(c)
    check_plan(p, SOC, scheduler="mnn-fp32-gpu")   # raises on a step_memory of the wrong length
    assert len(p.step_memory) == len(p.steps) < len(c.graph("fp32").ops)
    assert max(p.step_memory) <= p.peak_memory_bytes
