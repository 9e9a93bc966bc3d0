"""The Adreno GPU's DVFS governor: Linux devfreq's ``simple_ondemand``, over the spec's OPP table.

Mainline Linux drives the Adreno GPU's clock with devfreq (drivers/gpu/drm/msm/msm_gpu_devfreq.c
registers the GPU with the ``simple_ondemand`` governor); Qualcomm's Android kernels use
``msm-adreno-tz`` (drivers/gpu/msm/kgsl_pwrscale.c), whose decision is taken in TrustZone and not
public.  socsim models the public one, ``simple_ondemand`` (drivers/devfreq/
governor_simpleondemand.c, ``devfreq_simple_ondemand_func``), with its default thresholds
(DFSO_UPTHRESHOLD 90, DFSO_DOWNDIFFERENCTIAL 5):

* load (busy / total) above the up-threshold: the top OPP;
* load above up-threshold - down-differential: the current frequency;
* else: current x load / (up-threshold - down-differential / 2), rounded up to the next OPP
  (``devfreq_recommended_opp`` without DEVFREQ_FLAG_LEAST_UPPER_BOUND finds the ceiling OPP).

``performance`` pins the top OPP (the behaviour before this model, and the devfreq governor of
that name).  Sampling: devfreq samples every ``polling_ms``; socsim evaluates the governor once a
batch on the batch's GPU load (training batches are 0.1-10 s, several polling periods; the
batch's mean load stands for the load of its polls, an approximation).  Thermal caps
(socsim.hw.thermal, the GPU as a cooling device) clamp the result.
"""
from __future__ import annotations

import math
from typing import Sequence

# drivers/devfreq/governor_simpleondemand.c: DFSO_UPTHRESHOLD, DFSO_DOWNDIFFERENCTIAL
DFSO_UPTHRESHOLD = 90
DFSO_DOWNDIFFERENTIAL = 5
GOVERNORS = ("simple_ondemand", "performance")


def ceil_opp(opps_mhz: Sequence[float], mhz: float) -> float:
    """The lowest OPP at or above ``mhz`` (the top one when none is)."""
    for f in opps_mhz:
        if f >= mhz - 1e-9:
            return f
    return opps_mhz[-1]


def next_freq(governor: str, opps_mhz: Sequence[float], cur_mhz: float, load: float,
              upthreshold: float = DFSO_UPTHRESHOLD, downdifferential: float = DFSO_DOWNDIFFERENTIAL) -> float:
    """The frequency the governor sets after a sampling window with GPU ``load`` (busy / total,
    0..1) at ``cur_mhz``."""
    top = opps_mhz[-1]
    if governor == "performance" or not math.isfinite(load):
        return top
    if governor != "simple_ondemand":
        raise ValueError(f"unknown GPU governor {governor!r}; known: {', '.join(GOVERNORS)}")
    pct = 100.0 * min(max(load, 0.0), 1.0)
    if pct > upthreshold:
        return top
    if pct > upthreshold - downdifferential:
        return ceil_opp(opps_mhz, cur_mhz)
    return ceil_opp(opps_mhz, cur_mhz * pct / (upthreshold - downdifferential / 2))
