"""Peak memory of a long run with its output files against the same run without them.

Runs ``socsim run --soc sd865 workloads/quickstart.yaml --set batches=N --quiet`` in a fresh
process twice, without ``--out`` and with it (ops.csv, batches.csv, the Perfetto trace and the
HTML report written), and prints each process's peak RSS (the kernel's own accounting, from
wait4), the ratio and the size of the output folder.  Issue 29's bound: the ratio stays <= 1.5
and the folder well under 200 MB at 2,000,000 batches (op slices decimated by output.trace_limit,
batch rows grouped past output.batch_rows, samples past output.sample_rows; the trace and report
are written streaming).

    python benchmarks/long_run_rss.py --batches 20000
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def peak_rss_mib(args: list[str]) -> float:
    """Peak RSS (MiB) of ``python -m socsim ARGS`` run to the end in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "socsim", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"socsim {' '.join(args)} failed: {err}")
    return usage.ru_maxrss / 1024


def measure(batches: int, workload: str = "workloads/quickstart.yaml") -> dict:
    base = ["run", "--soc", "sd865", workload, "--set", f"batches={batches}", "--quiet", "--deterministic"]
    bare = peak_rss_mib(base)
    with tempfile.TemporaryDirectory(prefix="socsim-rss-") as d:
        out = Path(d) / "out"
        full = peak_rss_mib([*base, "--out", str(out)])
        size = sum(f.stat().st_size for f in out.iterdir())
    return {"batches": batches, "peak_mib_bare": bare, "peak_mib_out": full, "ratio": full / bare,
            "out_mb": size / 1e6}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=20000)
    a = ap.parse_args()
    r = measure(a.batches)
    print(f"batches={r['batches']} peak_rss_bare_mib={r['peak_mib_bare']:.0f} "
          f"peak_rss_out_mib={r['peak_mib_out']:.0f} ratio={r['ratio']:.2f} out_mb={r['out_mb']:.1f}")


if __name__ == "__main__":
    main()
