"""What the memory-profile store saves: each command run cold (a fresh, empty store) and then
warm (the store the cold run filled), in fresh processes, with its --deterministic JSON compared.
Prints figures; asserts nothing.

    python benchmarks/profile_store.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = (
    ("swan MobileNet-v2, 2 batches (8 core sets profiled)",
     ["run", "--soc", "sd865", "workloads/swan_mobilenetv2.yaml", "--set", "batches=2"]),
    ("min-energy AlexNet (21 configurations profiled)",
     ["run", "--soc", "sd855", "workloads/min_energy_alexnet.yaml"]),
    ("compare of five schedulers, VGG-16, 20 batches",
     ["compare", "--soc", "sd865", "workloads/mandheling_vgg16.yaml",
      "--schedulers", "mandheling,mnn-fp32,tflite-fp32,mnn-int8,mnn-fp32-gpu"]),
)


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    for label, args in COMMANDS:
        with tempfile.TemporaryDirectory(prefix="socsim-store-bench-") as d:
            env = {**os.environ, "SOCSIM_CACHE_DIR": str(Path(d) / "store")}
            env.pop("SOCSIM_CACHE", None)
            times, outs = [], []
            for run in ("cold", "warm"):
                js = Path(d) / f"{run}.json"
                t = time.perf_counter()
                subprocess.run([sys.executable, "-m", "socsim.cli", *args, "--quiet", "--deterministic",
                                "--json", str(js)], cwd=root, env=env, check=True)
                times.append(time.perf_counter() - t)
                outs.append(js.read_bytes())
            same = "identical" if outs[0] == outs[1] else "DIFFERENT"
            print(f"{label}: cold {times[0]:.1f} s, warm {times[1]:.1f} s ({times[0] / times[1]:.1f}x), "
                  f"JSON {same}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
