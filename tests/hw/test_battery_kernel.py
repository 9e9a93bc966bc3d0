"""The compiled battery-profile terms (socsim.hw.battery_kernel) are numpy's, bit for bit."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from socsim.hw.battery import piece_currents
from socsim.hw.battery_kernel import profile_terms, profile_terms_ref


@settings(max_examples=400, deadline=None)
@given(ocv=st.floats(2.5, 4.5), r=st.floats(0.01, 2.0), supply=st.sampled_from([0.0, 5.0, 13.5]),
       i_cv=st.floats(0.0, 5.0), pw=st.lists(st.floats(0.0, 40.0, allow_nan=False), min_size=1, max_size=16))
def test_profile_terms_match_numpy(ocv, r, supply, i_cv, pw):
    pw = np.array(pw)
    want = profile_terms_ref(ocv, r, pw, supply, i_cv)
    got = profile_terms(ocv, r, pw, supply, i_cv)
    for w, g in zip(want, got):
        assert w.tobytes() == g.tobytes()
    # the reference is battery_step's own expression (piece_currents, clamped)
    assert np.maximum(piece_currents(ocv, r, pw - supply), -i_cv).tobytes() == got[0].tobytes()


def test_beyond_the_packs_maximum_power_saturates():
    ocv, r = 3.8, 0.5                 # maximum power ocv^2 / 4r = 7.22 W
    cur, _, _ = profile_terms(ocv, r, np.array([1.0, 50.0]), 0.0, 10.0)
    assert cur[1] == ocv / (2.0 * r) and 0.0 < cur[0] < cur[1]


def _step_currents_python(spec, state, net_w, dt_s, temp_c):
    """battery_step's scalar start as it was in Python (the reference for step_currents)."""
    from socsim.hw.battery import cv_limit_a, internal_resistance_ohm, ocv_v, pack_current_a

    r = internal_resistance_ohm(spec, temp_c)
    ocv0 = ocv_v(spec, state.soc)
    i0 = max(pack_current_a(ocv0, r, net_w), -cv_limit_a(spec, ocv0, r))
    soc_mid = min(max(state.soc - 0.5 * i0 * dt_s / state.capacity_c, 0.0), 1.0)
    ocv = ocv_v(spec, soc_mid)
    i_cv = cv_limit_a(spec, ocv, r)
    return r, ocv, i_cv, max(pack_current_a(ocv, r, net_w), -i_cv)


@settings(max_examples=400, deadline=None)
@given(phone=st.sampled_from(["sd845", "sd855", "sd865", "sd888", "sd8gen2"]),
       soc=st.one_of(st.sampled_from([0.0, 1.0, 0.5]), st.floats(0.0, 1.0)),
       net_w=st.one_of(st.sampled_from([0.0, -13.5, 1e3]), st.floats(-20.0, 40.0)),
       dt_s=st.one_of(st.sampled_from([1e-9, 0.1, 1.9]), st.floats(1e-6, 3600.0)),
       temp_c=st.one_of(st.sampled_from([-20.0, 60.0, -40.0, 90.0, 25.0]), st.floats(-50.0, 120.0)))
def test_step_currents_match_python(phone, soc, net_w, dt_s, temp_c):
    """The compiled start of a battery step is the Python expressions', bit for bit (every
    phone's OCV table; empty, full, charging, beyond the pack's maximum power, clamped
    temperatures)."""
    from socsim.hw.battery import (R_ACTIVATION_K, R_TEMP_RANGE_C, BatteryState, _ocv_table)
    from socsim.hw.battery_kernel import step_currents
    from socsim.spec import load_soc

    spec = load_soc(phone).battery
    state = BatteryState.initial(spec, soc)
    xs, ys = _ocv_table(spec)
    got = step_currents(float(spec.internal_resistance_ohm), R_TEMP_RANGE_C[0], R_TEMP_RANGE_C[1], R_ACTIVATION_K,
                        temp_c, xs, ys, state.soc, state.capacity_c, net_w, dt_s, float(spec.charge_voltage_v))
    want = _step_currents_python(spec, state, net_w, dt_s, temp_c)
    assert np.array(got).tobytes() == np.array(want).tobytes()


def _step_currents_table(xs, ys, r25, t_lo, t_hi, k, temp_c, soc, cap, net_w, dt_s, v_charge):
    """The same Python expressions over an explicit OCV table (battery._interp1)."""
    import math

    from socsim.hw.battery import _interp1

    t = min(max(temp_c, t_lo), t_hi) + 273.15
    r = r25 * math.exp(k * (1.0 / t - 1.0 / 298.15))

    def current(ocv):
        disc = ocv * ocv - 4.0 * r * net_w
        return ocv / (2.0 * r) if disc <= 0.0 else 2.0 * net_w / (ocv + math.sqrt(disc))

    ocv0 = _interp1(soc, xs, ys)
    i0 = max(current(ocv0), -(max(v_charge - ocv0, 0.0) / r))
    ocv = _interp1(min(max(soc - 0.5 * i0 * dt_s / cap, 0.0), 1.0), xs, ys)
    i_cv = max(v_charge - ocv, 0.0) / r
    return r, ocv, i_cv, max(current(ocv), -i_cv)


def test_step_currents_on_odd_tables():
    """The compiled interpolation takes _interp1's branches: a one-point table, a flat stretch,
    a state of charge on a point, outside the table, NaN."""
    import math

    from socsim.hw.battery_kernel import step_currents

    tables = (([0.0, 0.5, 1.0], [3.0, 3.7, 4.3]), ([0.2], [3.9]), ([0.0, 0.3, 0.6, 1.0], [3.5, 3.8, 3.8, 4.2]),
              ([0.1, 0.9], [3.4, 4.1]))
    for xs, ys in tables:
        for soc in (0.0, 0.05, 0.1, 0.3, 0.45, 0.5, 0.6, 0.95, 1.0, math.nan):
            for net_w in (0.0, 3.0, -12.0, 500.0):
                args = (0.15, -20.0, 60.0, 2400.0, 31.0, soc, 11000.0, net_w, 2.0, 4.4)
                want = _step_currents_table(xs, ys, *args)
                got = step_currents(*args[:5], np.array(xs), np.array(ys), *args[5:])
                assert np.array(got).tobytes() == np.array(want).tobytes(), (xs, soc, net_w)
