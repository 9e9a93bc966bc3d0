"""Engine speed: simulated training batches per wall-clock second, and memory flatness.

VGG-16 on CIFAR-10 (3x32x32), batch 64, on sd865 with the mnn-fp32 baseline; op costs and
batch templates are memoised after the first batch.  Prints figures; asserts nothing.

    python benchmarks/engine.py [--batches N]
"""
from __future__ import annotations

import argparse
import os
import resource
import time

# cold figures: cache simulations are not read from an earlier run's store (docs/performance.md)
os.environ.setdefault("SOCSIM_CACHE", "off")

import socsim

WORKLOAD = {
    "name": "bench-vgg16", "model": "vgg16", "input": [3, 32, 32], "num_classes": 10,
    "batch_size": 64, "precision": "fp32", "scheduler": {"name": "mnn-fp32"},
    "cpu": {"cores": "big4", "governor": "schedutil"},
}


def run(batches: int, scheduler: str = "mnn-fp32") -> tuple[float, dict]:
    wl = dict(WORKLOAD, batches=batches, scheduler={"name": scheduler})
    t0 = time.perf_counter()
    res = socsim.run("sd865", wl)
    return time.perf_counter() - t0, res.summary


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=20000)
    ap.add_argument("--scheduler", default="mnn-fp32")
    a = ap.parse_args()
    t_first, s1 = run(1, a.scheduler)
    print(f"first batch (graph build + costing, cold): {t_first * 1e3:.0f} ms wall, "
          f"{s1['per_batch']['time_s'] * 1e3:.1f} ms simulated")
    rss = []
    for n in (a.batches // 10, a.batches):
        wall, s = run(n, a.scheduler)
        rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        print(f"{n:>7} batches: {wall:.2f} s wall, {n / wall:,.0f} simulated batches/s, "
              f"{s['sim_time_s']:.0f} s simulated, peak {s['thermal']['peak_c']:.1f} C, max RSS {rss[-1]:.0f} MiB")
    print(f"batches_per_s={n / wall:.0f} rss_growth_mib={rss[-1] - rss[0]:.1f}")


if __name__ == "__main__":
    main()
