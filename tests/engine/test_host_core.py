"""A plan with no CPU cores (every op on the GPU) still has its host core, the first core: it
hands work over and compiles kernels, so under schedutil its cluster runs at its top OPP (the
host is busy whenever the CPU side is active, docs/modeling.md DVFS) and the core is powered."""
from __future__ import annotations

from engine_runs import SOC, lenet, run


def test_a_gpu_plans_host_cluster_is_clocked_and_powered(tmp_path):
    r = run(tmp_path, lenet(batches=2, batch_size=256, scheduler={"name": "mnn-fp32-gpu"},
                            cpu={"cores": "big4", "governor": "schedutil"}))
    assert r.summary["placement"]["cpu_cores"] == []
    little = SOC.cluster("little")
    assert set(r.column("cpufreq.little")) == {little.max_mhz}
    # well above the collapsed idle of its four cores: the host core leaks and works
    idle_j = 4 * little.idle_mw_per_core * 1e-3 * r.summary["sim_time_s"]
    assert r.summary["energy_j"]["rails"]["cpu.little"] > 2 * idle_j
