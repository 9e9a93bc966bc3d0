"""Small engine runs with their run-directory files, for the engine accounting tests.

LeNet at a large batch trains ~0.4 s per batch on the big cores of sd865, long enough for several
sampling boundaries and governor polls inside one batch, and costs little to simulate.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from socsim.api import prepare
from socsim.engine.sim import Engine
from socsim.report.events import StreamRecorder, read_timeseries
from socsim.report.perfetto import write_perfetto
from socsim.report.summary import build_summary
from socsim.spec import load_soc

SOC = load_soc("sd865")


def lenet(batches: int = 3, batch_size: int = 4096, **kw) -> dict:
    """A LeNet workload on the four big cores at their top OPP (performance governor)."""
    wl = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=batch_size,
              batches=batches, scheduler={"name": "mnn-fp32"},
              cpu={"cores": "big4", "governor": "performance"})
    wl.update(kw)
    return wl


@dataclass
class Run:
    dir: Path
    summary: dict
    stats: object

    def column(self, name: str) -> np.ndarray:
        cols, data = read_timeseries(self.dir)
        return data[:, cols.index(name)]

    def hold_s(self) -> np.ndarray:
        """How long each time-series row holds: to the next row (the last row: 0)."""
        t = self.column("t_s")
        return np.diff(t, append=t[-1])

    def batches(self) -> list[dict]:
        with open(self.dir / "batches.csv", newline="") as f:
            return [{**r, "start_s": float(r["start_s"]), "time_s": float(r["time_s"]),
                     "energy_j": float(r["energy_j"])} for r in csv.DictReader(f)]

    def ops(self) -> list[dict]:
        with open(self.dir / "ops.csv", newline="") as f:
            return [{**r, "batch": int(r["batch"]), "start_s": float(r["start_s"]), "dur_s": float(r["dur_s"])}
                    for r in csv.DictReader(f)]

    def events(self) -> list[dict]:
        with open(self.dir / "events.csv", newline="") as f:
            return [{**r, "t_s": float(r["t_s"])} for r in csv.DictReader(f)]


def run(directory: Path, workload: dict, scheduler=None, trace: bool = False) -> Run:
    """Run ``workload`` (its own scheduler unless ``scheduler`` is given) into ``directory``."""
    wl, _, sched, _ = prepare(workload)
    sched = scheduler or sched
    directory.mkdir(parents=True, exist_ok=True)
    engine = Engine(SOC, wl, sched, StreamRecorder(directory, wl.output.trace_batches, wl.output.trace_every))
    stats = engine.run()
    summary = build_summary(SOC, wl, sched, engine, stats, deterministic=True)
    (directory / "summary.json").write_text(json.dumps(summary))
    if trace:
        write_perfetto(directory, directory / "trace.perfetto-trace")
    return Run(directory, summary, stats)
