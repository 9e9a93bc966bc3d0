"""A small synthetic run directory, written through the engine's own StreamRecorder.

Known shape, so tests can assert exact counts: 4 batches; each batch runs FORWARD_OPS ops on the
four big cores (one slice per core), then one DSP op preceded by a FastRPC call, then one GPU op;
batch 0 also has one graph-preparation slice on ``engine``; batches.csv has a row per batch.
Samples every 100 ms with Android counter names; a thermal trip and a throttle event half-way;
the big cluster drops frequency then.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from socsim.report.events import StreamRecorder

BATCHES = 4
FORWARD_OPS = 5
BIG_CORES = (4, 5, 6, 7)
RAILS = {"cpu_big": 3000.0, "cpu_little": 200.0, "cdsp": 800.0, "gpu": 400.0, "ddr": 300.0,
         "platform": 500.0}   # mean power, mW
SAMPLE_S = 0.1


@dataclass(frozen=True)
class SyntheticRun:
    """The run directory and what the tests expect to find in its trace."""

    path: Path
    slices_by_track: dict[str, int]
    n_samples: int
    end_s: float
    throttle_t_s: float


def write_synthetic_run(directory: Path) -> SyntheticRun:
    """Write ops.csv, events.csv, timeseries.csv and summary.json into ``directory``."""
    rec = StreamRecorder(directory)
    counts: dict[str, int] = {}

    def op(track: str, name: str, kind: str, batch: int, phase: str, t: float, dur: float) -> None:
        rec.op_slice(track, name, kind, batch, phase, t, dur)
        counts[track] = counts.get(track, 0) + 1

    t = 0.0
    op("engine", "graph_prepare", "prep", 0, "prep", t, 0.05)
    t += 0.05
    for b in range(BATCHES):
        batch_start = t
        for i in range(FORWARD_OPS):
            phase = "forward" if i < 3 else ("weight_grad" if i == 3 else "update")
            dur = 0.04 * (1.5 if b >= 2 else 1.0)  # throttled batches are slower
            for c in BIG_CORES:
                op(f"cpu{c}", f"conv{i}", "conv2d", b, phase, t, dur)
            t += dur
        op("fastrpc", "fastrpc_invoke", "rpc", b, "rpc", t, 0.002)
        t += 0.002
        op("dsp", "conv_int8", "conv2d", b, "error_grad", t, 0.03)
        t += 0.03
        op("gpu", "fc", "matmul", b, "forward", t, 0.01)
        t += 0.01
        rec.batch(b, batch_start, t - batch_start, 1.0 + 0.25 * b, "cpu:big4,dsp")
    end_s = t
    throttle_t = round(end_s / 2, 3)
    rec.instant(throttle_t - 0.05, "thermal", "trip_point_1", "cpu-big 75 C")
    rec.instant(throttle_t, "thermal", "throttle cpu_big", "cap 1.86 GHz")
    n = int(end_s / SAMPLE_S) + 2
    energy = {r: 0.0 for r in RAILS}
    for k in range(n):
        ts = k * SAMPLE_S
        values: dict[str, float] = {}
        for r, p_mw in RAILS.items():
            p = p_mw * (1.0 + 0.1 * (k % 3))
            energy[r] += p * 1e3 * SAMPLE_S if k else 0.0   # uW * s
            values[f"power.{r}_uws"] = energy[r]
            values[f"power.{r}_mw"] = p
        values["cpufreq.little"] = 1804.8
        values["cpufreq.big"] = 2419.2 if ts < throttle_t else 1862.4
        values["cpu-big Temperature"] = 30.0 + 4.0 * k
        values["skin Temperature"] = 28.0 + 0.5 * k
        values["batt.charge_uah"] = 4_000_000.0 - 10.0 * k
        values["batt.capacity_pct"] = 100.0
        values["batt.current_ua"] = -900_000.0 - k
        values["batt.voltage_mv"] = 4350.0 - 0.1 * k
        values["mem.used_bytes"] = 200e6 + 1e6 * k
        values["batch"] = float(min(BATCHES - 1, int(ts / (end_s / BATCHES))))
        rec.sample(ts, values)
    rec.close()
    summary = {
        "soc": "sd865", "workload": "synthetic", "scheduler": "mnn-fp32", "batches": BATCHES,
        "sim_time_s": end_s, "per_batch": {"time_s": end_s / BATCHES, "energy_j": 1.25},
        "energy_j": {"total": sum(energy.values()) * 1e-6, "training": 3.0,
                     "rails": {r: e * 1e-6 for r, e in energy.items()}},
        "thermal": {"peak_c": 30.0 + 4.0 * (n - 1), "final_c": 30.0 + 4.0 * (n - 1)},
        "placement": {"cpu_ops": 20, "dsp_ops": 4, "gpu_ops": 4, "switches": 8},
        "memory": {"peak_bytes": 200_000_000 + 1_000_000 * (n - 1)},
        "wall_time_s": 0.5, "socsim_version": "0.1.0", "custom_note": "extra-scalar-key",
    }
    (directory / "summary.json").write_text(json.dumps(summary, indent=1))
    return SyntheticRun(directory, counts, n, end_s, throttle_t)
