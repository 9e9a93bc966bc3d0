"""soc_specs/kirin970.yaml and soc_specs/sd835.yaml: ARMv8.0 big.LITTLE chips (Cortex-A73 +
Cortex-A53, or Qualcomm's Kryo 280 derived from them) load and validate, their core types have
neither FP16 arithmetic nor the dot product, so ncnn runs FP32 kernels and no SDOT on them, and
the carried constants are their sources' values."""
from __future__ import annotations

import pytest

from socsim.hw import armk
from socsim.sched.ncnn import int8_kernel_path
from socsim.spec import load_soc
from socsim.spec.coretypes import FP32_EFFICIENCY, has_dotprod, has_fp16_arithmetic, has_i8mm, kernel_power


@pytest.mark.parametrize("name, tops", [("kirin970", (1844.0, 2362.0)), ("sd835", (1900.8, 2457.6))])
def test_the_specs_load_with_a53_little_and_a73_big_clusters(name, tops):
    soc = load_soc(name)
    got = [(c.name, c.core_type, c.core_ids, c.max_mhz) for c in soc.cpu.clusters]
    assert got == [("little", "cortex-a53", [0, 1, 2, 3], tops[0]), ("big", "cortex-a73", [4, 5, 6, 7], tops[1])]
    assert soc.dsp is None and soc.cpu.slc is None and soc.gpu is not None
    # no L3 on these chips: the shared level is the big cluster's 2 MB L2, behind a 512 KB share
    assert soc.cpu.l3.size_kb == 2048 and soc.cluster("big").l2.size_kb == 512


@pytest.mark.parametrize("core_type", ["cortex-a53", "cortex-a73"])
def test_armv8_0_cores_have_no_fp16_no_dotprod_no_i8mm(core_type):
    assert not (has_fp16_arithmetic(core_type) or has_dotprod(core_type) or has_i8mm(core_type))
    assert int8_kernel_path(core_type) == "neon"


def test_carried_constants():
    assert FP32_EFFICIENCY["cortex-a53"] == FP32_EFFICIENCY["cortex-a55"]      # in-order predecessor
    assert "cortex-a73" not in FP32_EFFICIENCY                                   # the A75's spec assumption
    assert load_soc("kirin970").cluster("big").fp32_efficiency == load_soc("sd845").cluster("big").fp32_efficiency
    assert kernel_power("cortex-a73") == kernel_power("cortex-a76")
    assert kernel_power("cortex-a53") == kernel_power("cortex-a55")


def test_the_a73_costs_as_llvms_a57_model_like_the_a75():
    for kernel in armk.table():
        assert armk.cycles(kernel, "cortex-a73") == armk.cycles(kernel, "cortex-a75"), kernel
    # the in-order A53 with its 64-bit NEON datapath is the slowest per FMLA of all
    gemm = {t: armk.cycles("gemm_f32_12x8", t) for t in ("cortex-a53", "cortex-a55", "cortex-a73")}
    assert gemm["cortex-a53"] > gemm["cortex-a55"] > gemm["cortex-a73"]


def test_ncnn_gains_less_over_mnn_on_the_a73_without_fp16():
    """ncnn-fp32 on an ARMv8.2 core computes in FP16 (half the FMLA cycles), on the A73 in FP32:
    its gain over MNN's FP32 inference is smaller on the Kirin 970 than on sd855's A76."""
    import socsim

    wl = {"name": "t", "model": "vgg11", "input": [3, 32, 32], "num_classes": 10, "batch_size": 1, "batches": 1,
          "mode": "inference", "cpu": {"cores": "big1"}}
    ratio = {}
    for soc in ("sd855", "kirin970"):
        t = {s: socsim.run(soc, wl, scheduler=s, deterministic=True, reports=False).summary["per_batch"]["time_s"]
             for s in ("ncnn-fp32", "mnn-fp32")}
        ratio[soc] = t["ncnn-fp32"] / t["mnn-fp32"]
    assert ratio["kirin970"] > 1.3 * ratio["sd855"]
