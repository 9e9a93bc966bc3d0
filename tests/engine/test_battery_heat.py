"""The pack's I^2 R loss heats the battery node by exactly what the summary reports, part by
part: each part of a batch is heated by its own losses (socsim.engine.accounting ``_battery``),
so a short configuration switch that charges the pack hard does not set the next batch's heat."""
from __future__ import annotations

import numpy as np
import pytest

from socsim.hw.thermal import ThermalNetwork
from socsim.sched.api import BaseScheduler
from socsim.sched.common import single_unit_plan

from engine_runs import SOC, lenet, run


class Alternate(BaseScheduler):
    """Big cores, then one little core, then big cores again...: a configuration switch (a few
    ms at near-idle power) before every batch."""

    name = "alternate"

    def plan(self, ctx):
        g = ctx.graph()
        self.plans = [single_unit_plan(g, "cpu", (4, 5, 6, 7), "big4"), single_unit_plan(g, "cpu", (0,), "little1")]
        return self.plans[0]

    def on_batch_end(self, ctx, batch, record):
        return self.plans[(batch + 1) % 2]


def test_the_battery_node_takes_the_packs_loss(tmp_path, monkeypatch):
    into = []
    node = ThermalNetwork(SOC.thermal, 25.0).index("battery")
    real = ThermalNetwork.advance_many

    def spy(self, temps, node_w, dts):
        into.append(float(np.dot(np.asarray(node_w)[:, node], dts)))
        return real(self, temps, node_w, dts)

    monkeypatch.setattr(ThermalNetwork, "advance_many", spy)
    r = run(tmp_path, lenet(batches=6, batch_size=1024, environment={"charging": True}), scheduler=Alternate())
    assert r.summary["placement"]["config_switches"] >= 5
    assert r.summary["thermal"]["trip_events"] == 0   # no governor polls: one thermal solve per part
    assert sum(into) == pytest.approx(r.summary["battery"]["pack_loss_j"], rel=1e-4)
