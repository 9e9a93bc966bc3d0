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


def test_compiled_interp_is_the_python_one():
    """The compiled one-point interpolation takes _interp1's branches: outside the table, on a
    point, between points, NaN, a one-point table, a flat stretch."""
    import math

    from socsim.hw.battery import _interp1
    from socsim.hw.battery_kernel import _interp1 as interp_c

    for xs, ys in (([0.0, 0.5, 1.0], [3.0, 3.7, 4.3]), ([0.2], [3.9]), ([0.0, 0.3, 0.6, 1.0], [3.5, 3.8, 3.8, 4.2])):
        a, b = np.array(xs), np.array(ys)
        for x in (-1.0, 0.0, 0.1, 0.3, 0.45, 0.5, 0.6, 0.99, 1.0, 2.0, math.nan):
            want, got = _interp1(x, xs, ys), interp_c(x, a, b)
            assert np.array([want]).tobytes() == np.array([got]).tobytes(), (xs, x)
