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
