"""The GPU fill rule's calibration: FILL_WORK re-derived from Sage's published tipping point.

pub:gpu_micro_batch_tipping_point.resnet50_mobile_gpu_mtp = 6 (ResNet-50, 3x224x224, mobile GPU),
read as in socsim/hw/gpu.py: the MTP is the smallest batch whose GPU time per sample of a whole
training step is within 10% of that at batch 32, on the sd865's Adreno 650 at its top OPP.
"""
import math

import pytest

from socsim.engine.context import build_graph
from socsim.hw import gpu
from socsim.spec import load_soc

PUBLISHED_MTP = 6       # pub:gpu_micro_batch_tipping_point.resnet50_mobile_gpu_mtp
KNEE = 1.10             # within 10% of the per-sample time at the mini-batch
MINI_BATCH = 32

SOC = load_soc("sd865")
F_MHZ = SOC.gpu.opps[-1].freq_mhz


def _graph(batch):
    return build_graph("resnet50", (3, 224, 224), 1000, batch, "fp32")


def per_sample_s(batch: int, fill_work: float = gpu.FILL_WORK) -> float:
    ops = _graph(batch).ops
    return sum(gpu.gpu_cost(SOC, op, F_MHZ, fill_work).time_s for op in ops) / batch


def ratio(batch: int, fill_work: float = gpu.FILL_WORK) -> float:
    return per_sample_s(batch, fill_work) / per_sample_s(MINI_BATCH, fill_work)


def mtp(fill_work: float = gpu.FILL_WORK) -> int:
    return next(m for m in range(1, MINI_BATCH + 1) if ratio(m, fill_work) <= KNEE)


def knee_fill(batch: int) -> float:
    """The FILL_WORK at which ``batch`` sits exactly on the knee (bisection in log space; the
    ratio grows with FILL_WORK)."""
    lo, hi = 1e4, 1e8
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ratio(batch, mid) > KNEE else (mid, hi)
    return math.sqrt(lo * hi)


def test_resnet50_tipping_point_is_the_published_one():
    assert mtp() == PUBLISHED_MTP
    assert ratio(PUBLISHED_MTP - 1) > KNEE + 0.01        # not on a knife edge
    assert ratio(PUBLISHED_MTP) < KNEE - 0.01


def test_fill_work_is_the_middle_of_the_interval_that_gives_the_published_mtp():
    lo, hi = knee_fill(PUBLISHED_MTP - 1), knee_fill(PUBLISHED_MTP)
    assert lo < gpu.FILL_WORK <= hi
    assert gpu.FILL_WORK == pytest.approx(math.sqrt(lo * hi), rel=0.02)
    # the figures quoted beside the constant
    assert lo == pytest.approx(3.63e5, rel=0.01) and hi == pytest.approx(4.70e5, rel=0.01)
