"""Heat that is not a rail's reaches the thermal network: the charger's conversion loss (heat
source "charger") and the pack's I^2 R (heat source "battery"), socsim.engine.accounting."""
from __future__ import annotations

import numpy as np
import pytest

from socsim.api import prepare
from socsim.engine.sim import Engine
from socsim.report.events import NullRecorder

from engine_runs import SOC, lenet


def _final(soc, **env):
    wl, _, sched, _ = prepare(lenet(batches=30, environment={"initial_soc": 0.5, **env}))
    engine = Engine(soc, wl, sched, NullRecorder())
    stats = engine.run()
    acc = engine.acct
    temps = dict(zip(acc.thermal.node_names, acc.temps))
    return temps, stats, acc.battery


def _without(*keys):
    """The spec with these heat sources sent to the ambient node: the heat leaves the phone."""
    hs = {**SOC.thermal.heat_sources, **{k: SOC.thermal.ambient_node for k in keys}}
    return SOC.model_copy(update={"thermal": SOC.thermal.model_copy(update={"heat_sources": hs})})


def _unnamed(*keys):
    hs = {k: v for k, v in SOC.thermal.heat_sources.items() if k not in keys}
    return SOC.model_copy(update={"thermal": SOC.thermal.model_copy(update={"heat_sources": hs})})


def test_a_charging_phone_runs_warmer():
    on, stats_on, bat_on = _final(SOC, charging=True)
    off, stats_off, bat_off = _final(SOC, charging=False)
    assert bat_on.charger_loss_j > 0 and bat_off.charger_loss_j == 0
    # ~0.5 W of charger loss on the board (7.5 W at 93%): the board, and through it the skin,
    # end warmer; what the phone draws is the same but for leakage at those temperatures.  The
    # pack itself need not: discharging, it carries the phone's whole current and its I^2 R,
    # which at a CPU load of a few watts outweighs what the charger's heat adds to it
    for node in ("board", "skin"):
        assert on[node] > off[node] + 1e-4, node
    assert stats_on.rail_energy_j["cpu.mid"] == pytest.approx(stats_off.rail_energy_j["cpu.mid"], rel=1e-3)
    # with the charger's heat sent to ambient the loss leaves the phone; a spec that does not name
    # the heat sources heats the board (the platform rail's node) and the pack as the shipped ones do
    quiet, _, _ = _final(_without("charger"), charging=True)
    assert quiet["board"] < on["board"] - 1e-3
    unnamed, _, _ = _final(_unnamed("charger", "battery"), charging=True)
    assert unnamed == on


def test_the_packs_own_loss_heats_the_battery_node():
    with_loss, _, bat = _final(SOC, charging=False)
    without, _, _ = _final(_without("battery"), charging=False)
    assert bat.loss_j > 0
    assert with_loss["battery"] > without["battery"]
    # a small effect: ~I^2 R at a few watts, under 2% of the pack's heat capacity times a kelvin
    rise = with_loss["battery"] - without["battery"]
    assert rise < bat.loss_j / SOC.thermal.nodes[[n.name for n in SOC.thermal.nodes].index("battery")].capacitance_j_per_k
    assert np.isfinite(rise)


def test_an_empty_battery_stops_the_run():
    """The phone shuts down at an empty gauge: training stops after the batch that drained it,
    unless the charger keeps up with the phone."""
    wl, _, sched, _ = prepare(lenet(batches=20, environment={"initial_soc": 2e-6, "charging": False}))
    engine = Engine(SOC, wl, sched, NullRecorder())
    stats = engine.run()
    assert stats.batches < 20 and stats.stop_reason == "battery empty: the phone shut down"
    assert engine.acct.battery.charge_c == 0.0
    wl, _, sched, _ = prepare(lenet(batches=5, environment={"initial_soc": 2e-6, "charging": True}))
    stats = Engine(SOC, wl, sched, NullRecorder()).run()
    assert stats.batches == 5 and stats.stop_reason is None
