"""schedutil sees the host core's own work (graph preparation, FastRPC copies) as busy, and a
cluster's utilisation is its busiest core's (socsim.contract.dvfs.schedutil_util)."""
from __future__ import annotations

import pytest

from socsim.contract.dvfs import HOST_BUSY, schedutil_util

from engine_runs import SOC, lenet, run


def test_util_is_the_busiest_core_of_each_cluster():
    # sd865: cores 4-6 mid, 7 prime.  1 s active: 0.2 s of ops on all four cores (0.6 mid
    # core-seconds, 0.2 prime) and 0.5 s the host core (4) works alone
    busy = {"mid": 0.6 + 0.5, "prime": 0.2, HOST_BUSY: 0.5}
    u = schedutil_util(SOC, (4, 5, 6, 7), busy, 1.0)
    assert u["mid"] == pytest.approx(0.7)      # the host core: its ops and its own work
    assert u["prime"] == pytest.approx(0.2)    # idle while the host prepares
    assert "little" not in u


def test_util_without_host_work_is_the_ops_share():
    u = schedutil_util(SOC, (4, 5), {"mid": 2 * 0.3}, 0.6)
    assert u == {"mid": pytest.approx(0.5)}


def test_graph_preparation_keeps_the_host_cluster_at_its_top_opp(tmp_path):
    """TFLite prepares its graph on the host core every batch: schedutil must not read that as
    idle (it did: the host cluster fell to 710 MHz after the first batch)."""
    wl = lenet(batches=4, batch_size=64, scheduler={"name": "tflite-fp32"},
               cpu={"cores": "big4", "governor": "schedutil"})
    r = run(tmp_path, wl)
    mid = r.column("cpufreq.mid")
    assert (mid == SOC.cluster("mid").max_mhz).all()
    # the prime core's worker waits through the preparation: its cluster clocks down
    assert r.column("cpufreq.prime")[-1] < SOC.cluster("prime").max_mhz
