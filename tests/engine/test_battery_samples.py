"""The battery counters of every sample follow the power drawn up to it: the charge at each row is
the charge left then, and integrating the current over time gives the change of charge
(socsim.engine.accounting ``_sample_chunk``, socsim.hw.battery ``step_profile``)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.hw.battery import (BatteryState, battery_counters, battery_step, charger_supply_w, counter_columns,
                               cv_limit_a, internal_resistance_ohm, ocv_v, pack_current_a, step_profile)

from engine_runs import SOC, lenet, run


@pytest.mark.parametrize("charging", [False, True])
def test_integrated_current_is_the_change_of_charge(tmp_path, charging):
    r = run(tmp_path, lenet(batches=4, environment={"charging": charging, "initial_soc": 0.6}))
    charge_uah, current_ua = r.column("batt.charge_uah"), r.column("batt.current_ua")
    assert charge_uah[0] == pytest.approx(0.6 * SOC.battery.capacity_mah * 1e3, rel=1e-12)
    integrated_uah = float((current_ua * r.hold_s()).sum()) / 3600.0
    assert integrated_uah == pytest.approx(charge_uah[-1] - charge_uah[0], rel=1e-6)
    # every row inside a batch already moved: no row repeats the charge at its batch's end, and
    # each moves the way its own current flows (four big cores at their top OPP can draw more
    # than the charger delivers: those rows discharge while it is plugged in)
    steps = np.diff(charge_uah[:-1])
    assert np.all(steps != 0) and np.all(np.sign(steps) == np.sign(current_ua[:-2]))
    assert np.any(steps > 0) if charging else np.all(steps < 0)
    assert r.hold_s()[:-2] == pytest.approx(0.1)   # then the partial interval to the end


def test_the_current_follows_the_power_of_its_interval(tmp_path):
    r = run(tmp_path, lenet(batches=3, environment={"charging": False}))
    power_w = sum(r.column(f"power.{rail}_mw") for rail in r.stats.rail_energy_j) * 1e-3
    volts = r.column("batt.voltage_mv") * 1e-3
    current_a = -r.column("batt.current_ua") * 1e-6
    # a gauge's I = P / V_t, sample by sample (to second order: I(P) is linearised, and a
    # row's means of I and V_t are not the mean of their product; a row whose power varies more
    # within it, as one holding a weight gradient's one-thread packing, is off by up to ~0.12%)
    np.testing.assert_allclose(current_a * volts, power_w, rtol=2e-3)


def test_gauge_energy_is_the_energy_drawn(tmp_path):
    """Integral of V_t x I over the run = the summary's energy: the pack draws each sampling
    interval's current at that interval's power (battery_step's profile), not the current of the
    batch's mean power (I is convex in P: that undercounted the gauge by ~0.1%)."""
    # CPU-DSP batches of ~13 ms sampled every 1 ms: the load changes between a batch's intervals
    r = run(tmp_path, lenet(batches=3, batch_size=256, environment={"charging": False},
                            scheduler={"name": "mandheling"}, output={"sample_ms": 1.0}))
    hold = r.hold_s()
    gauge_j = float((r.column("batt.voltage_mv") * 1e-3 * -r.column("batt.current_ua") * 1e-6 * hold).sum())
    # rounding of the CSV's mV/uA (~4e-6 here) plus an interval's mean V_t x mean I against the
    # mean of their product (~2e-6 since FastRPC's copies run on the host core at its own power,
    # socsim.hw.host); the mean power's current, the defect this guards against, was off by 1.1e-5
    assert gauge_j == pytest.approx(r.summary["energy_j"]["total"], rel=8e-6)


def test_a_step_with_a_profile_draws_the_pieces_charge():
    spec, st0 = SOC.battery, BatteryState.initial(SOC.battery, 0.5)
    pw, dt = np.array([0.5, 8.0]), np.array([0.5, 0.5])
    flat, i_flat, _ = battery_step(spec, st0, float(pw.mean()), 1.0, 25.0)
    prof, i_prof, _ = battery_step(spec, st0, float(pw.mean()), 1.0, 25.0, profile=(pw, dt))
    assert i_prof > i_flat                                       # convexity
    assert prof.energy_out_j - st0.energy_out_j == pytest.approx(float((pw * dt).sum()), rel=1e-9)
    # the chemical energy that left the pack (OCV x charge) is the phone's plus the pieces' I^2 R
    ocv = ocv_v(spec, 0.5 - 0.5 * i_prof / st0.capacity_c)
    assert ocv * i_prof == pytest.approx(prof.energy_out_j + prof.loss_j, rel=1e-6)
    assert prof.loss_j > flat.loss_j                                     # I^2 R is convex too


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 6.0), st.floats(1e-3, 2.0)), min_size=1, max_size=12),
       st.floats(0.05, 0.95), st.floats(0.0, 45.0), st.sampled_from([0.0, 15.0]))
def test_step_profile_spreads_the_step_current_over_its_pieces(pieces, soc, temp_c, charger_w):
    spec = SOC.battery
    power_w = np.array([p for p, _ in pieces])
    dt_s = np.array([d for _, d in pieces])
    mean_w = float((power_w * dt_s).sum() / dt_s.sum())
    state = BatteryState.initial(spec, soc)
    after, i, v = battery_step(spec, state, mean_w, float(dt_s.sum()), temp_c, charger_w)
    cur, volt = step_profile(spec, after, i, v, temp_c, power_w, dt_s)
    # the pieces' charge is the step's
    assert float((cur * dt_s).sum()) == pytest.approx(state.charge_c - after.charge_c, rel=1e-9, abs=1e-12)
    # each piece draws the pack's current at its own power, all shifted alike by a second-order
    # amount (I is convex in P: at most max I''(P) * var(P) / 2)
    r = internal_resistance_ohm(spec, temp_c)
    ocv = v + i * r
    supply_w = charger_supply_w(spec, charger_w)
    exact = np.array([pack_current_a(ocv, r, p - supply_w) for p in power_w])
    assert np.allclose(volt, ocv - cur * r, rtol=1e-12)
    if exact.min() < -cv_limit_a(spec, ocv, r):
        # constant-voltage phase: the pieces that would charge faster are held at the limit
        return
    shift = cur - exact
    assert np.ptp(shift) < 1e-9
    var_w2 = float((dt_s * (power_w - mean_w) ** 2).sum() / dt_s.sum())
    curvature = 2 * r / (ocv * ocv - 4 * r * (power_w.max() - supply_w)) ** 1.5
    assert abs(shift[0]) <= curvature * var_w2 / 2 + 1e-12


def test_step_profile_keeps_a_limited_step_flat():
    spec = SOC.battery
    empty = BatteryState.initial(spec, 0.0)
    after, i, v = battery_step(spec, empty, 3.0, 1.0, 25.0)
    cur, _ = step_profile(spec, after, i, v, 25.0, np.array([1.0, 5.0]), np.array([0.5, 0.5]))
    assert np.all(cur == i)


def test_counter_columns_match_battery_counters():
    spec = SOC.battery
    s = BatteryState.initial(spec, 0.37)
    row = counter_columns(np.array([s.charge_c]), s.capacity_c, np.array([1.3]), np.array([ocv_v(spec, 0.37)]))
    assert list(row[0]) == list(battery_counters(s, 1.3, ocv_v(spec, 0.37)).values())
