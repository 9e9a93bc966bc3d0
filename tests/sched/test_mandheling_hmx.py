"""Mandheling's ``use_hmx`` option: the cDSP's matrix unit is a scheduler's choice, never a default."""
from __future__ import annotations

import socsim
from tests.e2e.cli_helpers import write_workload


def _run(tmp_path, soc, **options):
    wl = write_workload(tmp_path, model="vgg11", input=[3, 32, 32], precision="niti", batch_size=16, batches=1,
                        scheduler={"name": "mandheling", "options": options})
    return socsim.run(soc, wl).summary


def test_hmx_runs_mac_ops_only_when_asked(tmp_path):
    off = _run(tmp_path, "sd888")
    on = _run(tmp_path, "sd888", use_hmx=True)
    assert off["placement"]["hmx_ops"] == 0
    assert on["placement"]["hmx_ops"] > 0
    # the DP takes HMX where it is faster (HVX <-> HMX passes stay inside the cDSP, no FastRPC
    # call); how many CPU <-> cDSP switches the faster plan makes depends on the CPU's speed
    assert on["per_batch"]["time_s"] < off["per_batch"]["time_s"]
    # a SoC without HMX ignores the option
    assert _run(tmp_path, "sd865", use_hmx=True)["placement"]["hmx_ops"] == 0
