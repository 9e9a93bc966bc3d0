"""The area under each power counter of the trace is the rail's energy in the summary.

Perfetto holds a counter's value from its timestamp to the next; a timeseries.csv row holds the
means over the interval from its ``t_s`` to the next row (socsim.engine.accounting ``_emit``),
so the trace copies the rows as they are and both integrate to the summary's energy, from t = 0
on (docs/modeling.md, Sampled counters).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from socsim.api import prepare
from socsim.engine.sim import Engine
from socsim.report.events import StreamRecorder, read_timeseries
from socsim.report.perfetto import write_perfetto
from socsim.sched.api import BaseScheduler, Plan, Step
from socsim.spec import load_soc

from test_perfetto_trace import decode

SOC = load_soc("sd865")


class DspForward(BaseScheduler):
    """Forward ops on the DSP where it runs them, the rest on the big cores: every rail moves."""

    precision = "niti"

    def plan(self, ctx) -> Plan:
        steps = tuple(Step(op, "dsp" if op.phase == "forward" and math.isfinite(ctx.profile(op, "dsp")) else "cpu")
                      for op in ctx.graph(self.precision).ops)
        return Plan(steps=steps, cpu_cores=(4, 5, 6, 7), label="dsp forward", dsp_graph="reuse")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("dsp")
    wl, _, _, _ = prepare(dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=256,
                               batches=3, precision="niti"))
    stats = Engine(SOC, wl, DspForward(), StreamRecorder(d)).run()
    write_perfetto(d, d / "trace.perfetto-trace")
    return d, stats, decode(d / "trace.perfetto-trace")


def test_area_under_each_power_counter_is_the_rail_energy(run):
    d, stats, trace = run
    assert stats.rail_energy_j["cdsp"] > 0
    for rail, energy_j in stats.rail_energy_j.items():
        points = trace.counters[f"power.{rail}_mw"]
        t_ns = np.array([p[0] for p in points])
        mw = np.array([p[1] for p in points])
        assert t_ns[0] == 0, rail                              # the first interval has its value
        assert t_ns[-1] == round(stats.sim_time_s * 1e9), rail  # and the last reaches the end
        area_j = float((mw[:-1] * np.diff(t_ns)).sum()) * 1e-12
        assert area_j == pytest.approx(energy_j, rel=1e-7, abs=1e-12), rail


def test_csv_rows_integrate_forward_to_the_rail_energy(run):
    d, stats, _ = run
    cols, data = read_timeseries(d)
    t = data[:, 0]
    assert t[0] == 0.0 and t[-1] == pytest.approx(stats.sim_time_s, rel=1e-12)
    hold = np.diff(t, append=t[-1])
    for rail, energy_j in stats.rail_energy_j.items():
        mw = data[:, cols.index(f"power.{rail}_mw")]
        uws = data[:, cols.index(f"power.{rail}_uws")]
        assert float((mw * hold).sum()) * 1e-3 == pytest.approx(energy_j, rel=1e-9, abs=1e-12), rail
        # the cumulative counter at each row is the energy of the rows before it
        before = np.concatenate(([0.0], np.cumsum(mw * hold)[:-1])) * 1e3
        np.testing.assert_allclose(uws, before, rtol=1e-9, atol=1e-6)
