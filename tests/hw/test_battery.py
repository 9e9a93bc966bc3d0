"""Battery: charge conservation, gauge energy, OCV/resistance behaviour, Android counters."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.hw.battery import (BatteryState, battery_counters, battery_step, internal_resistance_ohm,
                               ocv_v, pack_current_a)
from socsim.spec import load_soc


@pytest.fixture(scope="module")
def bat():
    return load_soc("sd865").battery


def test_initial_state(bat):
    s = BatteryState.initial(bat)
    assert s.capacity_c == pytest.approx(4780 * 3.6)
    assert s.soc == pytest.approx(bat.initial_soc)
    with pytest.raises(ValueError):
        BatteryState.initial(bat, soc=1.5)


def test_ocv_table(bat):
    assert ocv_v(bat, 0.0) == bat.ocv_soc[0][1]
    assert ocv_v(bat, 1.0) == bat.ocv_soc[-1][1]
    assert ocv_v(bat, 2.0) == bat.ocv_soc[-1][1]
    socs = [i / 100 for i in range(101)]
    v = [ocv_v(bat, s) for s in socs]
    assert all(b >= a for a, b in zip(v, v[1:]))
    mean = sum(v) / len(v)
    assert mean == pytest.approx(bat.nominal_voltage_v, rel=0.02)


def test_resistance_grows_when_cold(bat):
    assert internal_resistance_ohm(bat, 25.0) == pytest.approx(bat.internal_resistance_ohm)
    r = [internal_resistance_ohm(bat, t) for t in (45.0, 25.0, 0.0, -20.0)]
    assert r[0] < r[1] < r[2] < r[3]
    assert 1.6 <= r[2] / r[1] <= 2.6     # ~2x at 0 C
    assert internal_resistance_ohm(bat, -40.0) == internal_resistance_ohm(bat, -20.0)  # clamped


def test_pack_current_solves_power_equation():
    for p in (-10.0, -1.0, 0.0, 0.5, 5.0, 20.0):
        i = pack_current_a(3.9, 0.1, p)
        assert (3.9 - i * 0.1) * i == pytest.approx(p, abs=1e-12)
    assert pack_current_a(3.9, 0.1, 1e3) == pytest.approx(3.9 / 0.2)   # saturates at max power


def test_discharge_and_charge_directions(bat):
    s = BatteryState.initial(bat)
    s1, i, v = battery_step(bat, s, 5.0, 1.0, 25.0)
    assert i > 0 and v < ocv_v(bat, s.soc) and s1.charge_c < s.charge_c
    s2, i, v = battery_step(bat, s, 0.5, 1.0, 25.0, charging_w=15.0)
    assert i < 0 and v > ocv_v(bat, s.soc) and s2.charge_c > s.charge_c
    c = battery_counters(s2, i, v)
    assert c["batt.current_ua"] > 0          # Android: positive while charging
    assert battery_counters(s1, 1.2, 3.8)["batt.current_ua"] == pytest.approx(-1.2e6)


def test_counters_units(bat):
    s = BatteryState.initial(bat, soc=0.5)
    c = battery_counters(s, 1.0, 3.85)
    assert c["batt.charge_uah"] == pytest.approx(4780 * 1e3 * 0.5)
    assert c["batt.capacity_pct"] == pytest.approx(50.0)
    assert c["batt.voltage_mv"] == pytest.approx(3850.0)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 12.0), st.floats(0.0, 30.0), st.floats(1e-3, 600.0),
                          st.floats(-10.0, 50.0)), min_size=1, max_size=40),
       st.floats(0.0, 1.0))
def test_charge_conservation(bat, steps, soc0):
    s = BatteryState.initial(bat, soc=soc0)
    q0 = s.charge_c
    integrated = 0.0
    for load_w, charger_w, dt, temp in steps:
        s, i, v = battery_step(bat, s, load_w, dt, temp, charging_w=charger_w if charger_w > 15 else 0.0)
        integrated += i * dt
        assert 0.0 <= s.charge_c <= s.capacity_c
        assert v > 0
    assert q0 - s.charge_c == pytest.approx(integrated, rel=1e-9, abs=1e-6)
    assert s.charge_out_c == pytest.approx(integrated, rel=1e-9, abs=1e-6)
    assert s.loss_j >= 0


def test_gauge_energy_is_terminal_energy(bat):
    s = BatteryState.initial(bat)
    for k in range(600):                  # 10 min at 100 ms, varying load
        s, i, v = battery_step(bat, s, 3.0 + math.sin(k / 20.0), 0.1, 30.0)
    expected = sum(3.0 + math.sin(k / 20.0) for k in range(600)) * 0.1
    assert s.energy_out_j == pytest.approx(expected, rel=1e-12)
    # the pack lost more chemical energy than the phone received: the I^2 R heat
    assert 0 < s.loss_j < 0.02 * s.energy_out_j


def test_one_hour_at_5w(bat):
    s0 = BatteryState.initial(bat, soc=1.0)
    s = s0
    for _ in range(360):
        s, i, v = battery_step(bat, s, 5.0, 10.0, 30.0)
    # 5 Wh out of a ~18.5 Wh pack: about 27% of charge, a little more for the loss
    assert 0.25 <= s0.soc - s.soc <= 0.31
    one_big = battery_step(bat, s0, 5.0, 3600.0, 30.0)[0]
    assert one_big.soc == pytest.approx(s.soc, abs=0.003)


def test_stops_at_empty_and_full(bat):
    s = BatteryState.initial(bat, soc=0.001)
    s, i, v = battery_step(bat, s, 5.0, 3600.0, 25.0)
    assert s.charge_c == 0.0 and i > 0
    s = BatteryState.initial(bat, soc=0.999)
    s, i, v = battery_step(bat, s, 0.0, 3600.0, 25.0, charging_w=20.0)
    assert s.charge_c == s.capacity_c and i < 0
    s2, i2, _ = battery_step(bat, s, 0.0, 10.0, 25.0, charging_w=20.0)
    assert s2.charge_c == s.capacity_c and i2 == 0.0
    # an instant (dt = 0) reads the same as any step: no current into a full pack or out of an empty one
    assert battery_step(bat, s, 0.0, 0.0, 25.0, charging_w=7.5)[1:] == (0.0, ocv_v(bat, 1.0))
    empty = BatteryState.initial(bat, soc=0.0)
    assert battery_step(bat, empty, 3.0, 0.0, 25.0)[1] == 0.0


def test_the_charger_delivers_its_efficiency_and_heats_with_the_rest(bat):
    """Input at the wall = what reaches the phone and the pack + the charger's loss."""
    s = BatteryState.initial(bat, soc=0.5)
    s1, i, v = battery_step(bat, s, 1.0, 10.0, 25.0, charging_w=7.5)
    delivered_j = 1.0 * 10.0 - (s1.energy_out_j - s.energy_out_j)      # phone + into the pack
    assert delivered_j == pytest.approx(7.5 * bat.charger_efficiency * 10.0, rel=1e-9)
    assert delivered_j + s1.charger_loss_j == pytest.approx(7.5 * 10.0, rel=1e-9)
    assert s1.charger_loss_j == pytest.approx(7.5 * (1 - bat.charger_efficiency) * 10.0, rel=1e-9)
    # no charger, no charger heat; a phone drawing more than the charger gives: all of it used
    assert battery_step(bat, s, 3.0, 10.0, 25.0)[0].charger_loss_j == 0.0
    s2, i2, _ = battery_step(bat, s, 9.0, 10.0, 25.0, charging_w=7.5)
    assert i2 > 0 and s2.charger_loss_j == pytest.approx(7.5 * (1 - bat.charger_efficiency) * 10.0, rel=1e-9)


def test_constant_voltage_phase_tapers_the_charge_current(bat):
    """Near full the terminal voltage holds at the charge-voltage limit and the current falls;
    the charger then delivers (and loses) less than its input allows."""
    s = BatteryState.initial(bat, soc=0.85)
    currents, volts, losses = [], [], []
    for _ in range(240):                                                 # 4 h in 1-minute steps
        before = s
        s, i, v = battery_step(bat, s, 0.3, 60.0, 25.0, charging_w=7.5)
        currents.append(-i)
        volts.append(v)
        losses.append((s.charger_loss_j - before.charger_loss_j) / 60.0)
    assert max(volts) <= bat.charge_voltage_v + 1e-9
    assert volts[0] < bat.charge_voltage_v - 0.05                       # starts in constant current
    cc = currents[0]
    assert cc == pytest.approx((7.5 * bat.charger_efficiency - 0.3) / volts[0], rel=0.02)
    taper = [k for k, c in enumerate(currents) if c < 0.9 * cc]
    assert taper, "the current never tapered"
    k = taper[0]
    assert all(b <= a + 1e-12 for a, b in zip(currents[k:], currents[k + 1:]))   # falls from there
    assert s.soc > 0.99
    assert losses[-1] < 0.5 * losses[0]


def test_a_charge_voltage_below_the_full_ocv_stops_the_charge_short_of_full(bat):
    """A phone's battery-protection charge limit: 4.2 V stops the sd865 pack near 90% (OCV 4.19 V)."""
    limited = bat.model_copy(update={"charge_voltage_v": 4.2})
    s = BatteryState.initial(limited, soc=0.8)
    for _ in range(600):                                                 # 10 h in 1-minute steps
        s, i, v = battery_step(limited, s, 0.3, 60.0, 25.0, charging_w=7.5)
        assert v <= 4.2 + 1e-9
    assert 0.89 < s.soc < 0.91 and abs(i) < 0.01
