"""A foreground app's DRAM traffic (environment.foreground_load.memory_gbs): one more interleaved
stream that takes its bandwidth from what training gets, down to an even split of the channel
(socsim.hw.dram), seen by every unit's cost model and by the engine while the app runs."""
from __future__ import annotations

import pytest

import socsim
from socsim.hw import dram
from socsim.hw.cost import CpuConfig, GpuConfig
from socsim.hw.cpu import cpu_cost
from socsim.hw.gpu import gpu_cost
from socsim.spec import load_soc
from socsim.workload.costs import OpFactory

SOC = load_soc("sd865")


def test_background_takes_bandwidth_down_to_an_even_split():
    d = SOC.dram
    alone = dram.achievable_bps(d, 1)
    two = dram.achievable_bps(d, 2)            # the app is one more stream
    assert dram.achievable_bps(d, 1, 0.0) == alone
    assert dram.achievable_bps(d, 1, 2e9) == pytest.approx(two - 2e9)
    assert dram.achievable_bps(d, 1, 1e12) == pytest.approx(dram.MIN_SHARE_UNDER_BACKGROUND * two)
    # monotone: more background traffic never gives training more bandwidth
    xs = [dram.achievable_bps(d, 2, g * 1e9) for g in range(0, 40, 2)]
    assert all(a >= b for a, b in zip(xs, xs[1:]))


def _relu(batch=64):
    n = batch * 64 * 56 * 56
    return OpFactory("l", batch).op("relu", "relu", "forward", dict(batch=batch, n=n), read=4 * n, write=4 * n,
                                    flops=n, dtype="fp32")


def test_memory_bound_ops_slow_down_under_background_traffic():
    op = _relu()
    freqs = tuple(sorted((c.name, c.max_mhz) for c in SOC.cpu.clusters))
    base = cpu_cost(SOC, op, CpuConfig((4, 5, 6, 7), freqs))
    busy = cpu_cost(SOC, op, CpuConfig((4, 5, 6, 7), freqs, bg_dram_gbs=8.0))
    assert busy.time_s > 1.05 * base.time_s
    g0 = gpu_cost(SOC, op, SOC.gpu.opps[-1].freq_mhz)
    g1 = gpu_cost(SOC, op, SOC.gpu.opps[-1].freq_mhz, bg_dram_gbs=8.0)
    assert g1.time_s > g0.time_s
    assert GpuConfig(500.0) != GpuConfig(500.0, bg_dram_gbs=1.0)   # memoised apart


def _wl(gbs, cores=(0, 1)):
    return dict(name="t", model="shufflenetv2", input=[3, 64, 64], num_classes=10, batch_size=16, batches=2,
                scheduler={"name": "pytorch"},
                environment={"foreground_load": {"cores": list(cores), "start_s": 0, "duration_s": 1e5,
                                                 "utilization": 0.5, "memory_gbs": gbs}})


def test_an_app_on_other_cores_slows_training_only_through_memory():
    """PyTorch trains on the big cores; the app runs on two little cores.  Without memory traffic
    training is untouched (no shared core); with it, training is slower."""
    quiet = socsim.run("sd865", _wl(0.0)).summary["per_batch"]["time_s"]
    none = socsim.run("sd865", {**_wl(0.0), "environment": {}}).summary["per_batch"]["time_s"]
    busy = socsim.run("sd865", _wl(10.0)).summary["per_batch"]["time_s"]
    assert quiet == pytest.approx(none)
    assert busy > 1.02 * quiet


def test_negative_memory_gbs_is_an_input_error():
    from socsim.errors import InputError
    with pytest.raises(InputError) as e:
        socsim.run("sd865", _wl(-1.0))
    assert "memory_gbs" in (e.value.field or "")
