"""Energy bookkeeping: rails sum to the total, the sampled counters integrate to it."""
from __future__ import annotations

import json

import numpy as np
import pytest

import socsim
from socsim.report.events import read_timeseries


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("run") / "r"
    wl = {"name": "e", "model": "lenet", "input": [1, 28, 28], "num_classes": 10, "batch_size": 64,
          "batches": 300, "precision": "fp32", "scheduler": {"name": "mnn-fp32"},
          "output": {"sample_ms": 20}}
    socsim.run("sd865", wl, out=d)
    return d, json.loads((d / "summary.json").read_text())


def test_rails_sum_to_total(run):
    _, s = run
    # the summary rounds each figure to 1e-8 J: the rails' sum may differ from the total by their roundings
    rails = s["energy_j"]["rails"]
    assert sum(rails.values()) == pytest.approx(s["energy_j"]["total"], rel=1e-9, abs=0.5e-8 * (len(rails) + 1))


def test_cumulative_rail_counters_end_at_the_rail_energies(run):
    d, s = run
    cols, data = read_timeseries(d)
    last = dict(zip(cols, data[-1]))
    for rail, e in s["energy_j"]["rails"].items():
        assert last[f"power.{rail}_uws"] * 1e-6 == pytest.approx(e, rel=1e-6, abs=1e-9), rail


def test_integrated_sampled_power_matches_energy(run):
    d, s = run
    cols, data = read_timeseries(d)
    t = data[:, cols.index("t_s")]
    dt = np.diff(t, append=t[-1])
    total = sum(float((data[:, cols.index(f"power.{r}_mw")] * 1e-3 * dt).sum()) for r in s["energy_j"]["rails"])
    assert total == pytest.approx(s["energy_j"]["total"], rel=1e-6)
    assert t[-1] == pytest.approx(s["sim_time_s"], rel=1e-8)
