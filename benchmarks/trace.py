"""Overhead of writing the trace and time series of a one-hour simulated run.

Generates a synthetic hour (default 1200 batches x 150 op slices, 36,000 samples at 100 ms of
26 counters, a few hundred thermal events), then times separately:

- streaming it through ``StreamRecorder`` (what the engine pays while it runs),
- ``write_perfetto`` (native trace), ``write_html`` and ``to_parquet`` (report writers).

The events are generated before timing, so only the recorder's own cost is measured.  Pass
``--engine-wall-s`` (the engine's wall time for the same hour, without recording) to print the
overhead as a percentage; issue 5 asks for at most 20%.

    python benchmarks/trace.py [--batches 1200] [--slices 150] [--samples 36000]
                               [--keep-policy] [--engine-wall-s SECONDS] [--out DIR]
                               [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

# cold figures: cache simulations are not read from an earlier run's store (docs/performance.md)
os.environ.setdefault("SOCSIM_CACHE", "off")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # run from a checkout, uninstalled

from socsim.report.events import StreamRecorder
from socsim.report.html import write_html
from socsim.report.perfetto import write_perfetto
from socsim.report.timeseries import to_parquet

TRACE = "trace.perfetto-trace"
RAILS = ("cpu_little", "cpu_mid", "cpu_big", "cdsp", "gpu", "ddr")
CLUSTERS = ("little", "mid", "big")
ZONES = ("cpu-little", "cpu-big", "cdsp", "skin", "battery")


def synthetic_hour(batches: int, slices: int, samples: int, sample_s: float = 0.1):
    """Op slices, batch rows, instants and samples of a synthetic run of ``samples * sample_s``
    seconds."""
    batch_s = samples * sample_s / batches
    # per batch: a prep/DVFS slice on engine, ops on the 4 big cores (every 4th op followed by a
    # FastRPC call and a DSP op) and a closing GPU op, about ``slices`` slices in all
    plan, n = [], 2
    while n + 4 <= slices:
        dsp = len(plan) % 4 == 0 and n + 6 <= slices
        plan.append(dsp)
        n += 6 if dsp else 4
    op_s = batch_s / (len(plan) + 2)
    ops, batch_rows = [], []
    for b in range(batches):
        t = b * batch_s
        ops.append(("engine", "graph_prepare" if b == 0 else "dvfs", "prep", b, "prep", t, op_s * 0.01))
        for i, dsp in enumerate(plan):
            phase = ("forward", "error_grad", "weight_grad", "update")[min(3, 4 * i // len(plan))]
            for c in range(4, 8):
                ops.append((f"cpu{c}", f"conv{i}", "conv2d", b, phase, t, op_s * 0.9))
            if dsp:
                ops.append(("fastrpc", "fastrpc_invoke", "rpc", b, "rpc", t + op_s * 0.9, op_s * 0.02))
                ops.append(("dsp", f"qconv{i}", "conv2d", b, phase, t + op_s * 0.92, op_s * 0.05))
            t += op_s
        ops.append(("gpu", "fc", "matmul", b, "forward", t, op_s * 0.5))
        batch_rows.append((b, b * batch_s, batch_s, 2.5 + 0.001 * b, "cpu:big4"))
    instants = [(k * 7.3, "thermal", "throttle cpu_big" if k % 2 else "trip_point_1", "cap")
                for k in range(int(samples * sample_s / 7.3))]
    rows = []
    energy = dict.fromkeys(RAILS, 0.0)
    for k in range(samples):
        v: dict[str, float] = {}
        for j, r in enumerate(RAILS):
            p = 300.0 * (j + 1) * (1.0 + 0.05 * ((k * 7 + j) % 11))
            energy[r] += p * 1e3 * sample_s
            v[f"power.{r}_uws"] = energy[r]
            v[f"power.{r}_mw"] = p
        for j, c in enumerate(CLUSTERS):
            v[f"cpufreq.{c}"] = 1804.8 if (k // 300 + j) % 3 else 2419.2
        for j, z in enumerate(ZONES):
            v[f"{z} Temperature"] = 25.0 + 20.0 * (1 - 0.999 ** k) + 0.1 * j + 0.01 * (k % 7)
        v.update({"batt.charge_uah": 4e6 - 0.3 * k, "batt.capacity_pct": float(100 - k // 3600),
                  "batt.current_ua": -1.2e6 - 10.0 * (k % 5), "batt.voltage_mv": 4350.0 - 0.005 * k,
                  "mem.used_bytes": 1.5e9 + 1e6 * (k % 50), "batch": float(int(k * sample_s / batch_s))})
        rows.append((k * sample_s, v))
    return ops, batch_rows, instants, rows


def record(run: Path, ops: list, batch_rows: list, instants: list, rows: list,
           keep_policy: bool) -> int:
    """Stream everything through a StreamRecorder, as the engine does; returns slices kept."""
    rec = StreamRecorder(run)
    keep = rec.keeps_batch if keep_policy else (lambda b: True)
    n_slices = 0
    for op in ops:
        if keep(op[3]):
            rec.op_slice(*op)
            n_slices += 1
    for row in batch_rows:
        rec.batch(*row)
    for ev in instants:
        rec.instant(*ev)
    for t_s, values in rows:
        rec.sample(t_s, values)
    rec.close()
    return n_slices


def _mb(path: Path) -> float:
    return path.stat().st_size / 1e6 if path.exists() else 0.0


def real_hour() -> None:
    """One simulated hour of workloads/thermal_cpu_fp32.yaml (VGG-16 FP32, ~800 batches, 100 ms
    samples) run by the engine with cost caches warm: without recording, with the time series
    and op slices streamed to a run directory, then the Perfetto trace written from it."""
    import socsim
    from socsim.report.perfetto import write_perfetto

    wl = Path(__file__).resolve().parents[1] / "workloads" / "thermal_cpu_fp32.yaml"
    warm = socsim.run("sd865", wl, overrides=["batches=2"]).summary  # warm the op-cost caches
    n = int(3600 / warm["per_batch"]["time_s"]) + 1                   # one simulated hour
    ov = [f"batches={n}", "output.sample_ms=100"]
    t = time.perf_counter()
    socsim.run("sd865", wl, overrides=ov)
    bare = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        t = time.perf_counter()
        socsim.run("sd865", wl, overrides=ov, out=run, reports=False)
        rec = time.perf_counter() - t
        t = time.perf_counter()
        write_perfetto(run, run / TRACE)
        trace = time.perf_counter() - t
    print(f"real hour, warm op costs: engine {bare:.2f} s; with time series + op slices {rec:.2f} s "
          f"(+{100 * (rec - bare) / bare:.0f}%); Perfetto trace {trace:.2f} s; "
          f"trace + time series overhead {100 * (rec - bare + trace) / bare:.0f}%")
    # what a user sees: a fresh `socsim run` process (imports, graph, op costing, the run) with
    # and without the time series + trace (the HTML report is not part of this figure)
    import subprocess
    code = ("import sys, socsim; from pathlib import Path; from socsim.report.perfetto import write_perfetto\n"
            f"ov = {ov!r}\n"
            "out = sys.argv[1] if len(sys.argv) > 1 else None\n"
            f"socsim.run('sd865', {str(wl)!r}, overrides=ov, out=out, reports=False)\n"
            "if out: write_perfetto(Path(out), Path(out) / 'trace.perfetto-trace')\n")
    with tempfile.TemporaryDirectory() as tmp:
        walls = {}
        for label, args in (("bare", []), ("recorded", [str(Path(tmp) / "run")])):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code, *args], check=True)
            walls[label] = time.perf_counter() - t
    print(f"real hour, fresh process (as `socsim run`): {walls['bare']:.2f} s bare, {walls['recorded']:.2f} s "
          f"with time series + trace: overhead {100 * (walls['recorded'] - walls['bare']) / walls['bare']:.0f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=1200)
    ap.add_argument("--slices", type=int, default=150, help="op slices per batch")
    ap.add_argument("--samples", type=int, default=36_000)
    ap.add_argument("--keep-policy", action="store_true",
                    help="record slices only for batches StreamRecorder.keeps_batch() keeps")
    ap.add_argument("--engine-wall-s", type=float, default=None)
    ap.add_argument("--out", type=Path, default=None, help="keep the run directory here")
    ap.add_argument("--repeat", type=int, default=3, help="report the best of N runs")
    ap.add_argument("--real", action="store_true",
                    help="also time a real one-hour engine run with and without recording")
    args = ap.parse_args()

    t = time.perf_counter()
    ops, batch_rows, instants, rows = synthetic_hour(args.batches, args.slices, args.samples)
    gen_s = time.perf_counter() - t
    best: dict[str, float] = {}   # best of --repeat runs: the machine may be shared
    with tempfile.TemporaryDirectory() as tmp:
        run = args.out or Path(tmp)
        for _ in range(args.repeat):
            t = time.perf_counter()
            n_slices = record(run, ops, batch_rows, instants, rows, args.keep_policy)
            best["record"] = min(best.get("record", 1e9), time.perf_counter() - t)
            for name, fn in (("write_perfetto", lambda: write_perfetto(run, run / TRACE)),
                             ("write_html", lambda: write_html(run, run / "report.html")),
                             ("to_parquet", lambda: to_parquet(run))):
                t = time.perf_counter()
                fn()
                best[name] = min(best.get(name, 1e9), time.perf_counter() - t)
        sizes = {f: _mb(run / f) for f in ("ops.csv", "timeseries.csv", TRACE, "report.html")}
    record_s = best.pop("record")
    timings = best
    n_counters = len(rows[0][1]) if rows else 0
    print(f"synthetic hour: {args.batches} batches, {n_slices:,} op slices, {len(instants)} events, "
          f"{len(rows):,} samples x {n_counters} counters (generated in {gen_s:.2f} s, not counted)")
    print(f"best of {args.repeat}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"StreamRecorder (engine-side)  {record_s:7.2f} s   "
          f"({1e6 * record_s / max(1, n_slices + len(rows)):.2f} us per slice/sample)")
    for name, s in timings.items():
        print(f"{name:<29} {s:7.2f} s")
    print("sizes (MB): " + ", ".join(f"{f} {mb:.1f}" for f, mb in sizes.items()))
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB "
          "(includes the pre-generated events)")
    total = record_s + sum(timings.values())
    print(f"total recording + reports     {total:7.2f} s")
    if args.real:
        real_hour()
    if args.engine_wall_s:
        print(f"overhead vs engine run of {args.engine_wall_s:.1f} s: "
              f"recording {100 * record_s / args.engine_wall_s:.1f}%, "
              f"recording + reports {100 * total / args.engine_wall_s:.1f}%")


if __name__ == "__main__":
    main()
