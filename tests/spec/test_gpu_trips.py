"""The GPU as a thermal cooling device on the Qualcomm phones: each spec's GPU zone carries the
trip of its chip's device tree (calibration/hardware.yaml thermal.gpu_top_trip_c) and caps the
GPU; phones without a public GPU trip keep a sensor-only zone."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from socsim.spec import load_soc

ROOT = Path(__file__).resolve().parents[2]
TRIPS = yaml.safe_load((ROOT / "calibration" / "hardware.yaml").read_text())["thermal"]["gpu_top_trip_c"]
CHIP = {"sd845": "sdm845", "sd855": "sm8150", "sd865": "sm8250", "sd888": "sm8350", "sd8gen2": "sm8550"}


def _gpu_zone(soc):
    zones = [z for z in soc.thermal.zones if z.node == "gpu"]
    assert len(zones) == 1
    return zones[0]


@pytest.mark.parametrize("name", sorted(CHIP))
def test_gpu_trip_from_the_device_tree(name):
    zone, ref = _gpu_zone(load_soc(name)), TRIPS[CHIP[name]]
    assert zone.trips_c == [ref["trip"]] and zone.hysteresis_c == ref["hysteresis"]
    assert zone.caps == ["gpu"]


@pytest.mark.parametrize("name", ["sd750g", "exynos9820"])
def test_no_public_gpu_trip_is_a_sensor_only_zone(name):
    zone = _gpu_zone(load_soc(name))
    assert zone.trips_c == [] and zone.caps == []
