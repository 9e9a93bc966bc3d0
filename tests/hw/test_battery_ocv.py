"""ocv_v's plain-float interpolation is numpy's interp, bit for bit (the engine's outputs are
byte-identical under --deterministic, so the fast path may not move a single ulp)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from socsim.hw.battery import _interp1

finite = st.floats(-2.0, 3.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(pts=st.lists(st.tuples(finite, finite), min_size=1, max_size=12, unique_by=lambda p: p[0]),
       probes=st.lists(finite, min_size=1, max_size=20))
def test_interp1_is_numpys_interp(pts, probes):
    pts.sort()
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    # the table's own points and their neighbours are where the branches differ
    probes = probes + xs + [math.nextafter(x, math.inf) for x in xs] + [math.nextafter(x, -math.inf) for x in xs]
    want = np.interp(np.array(probes), np.array(xs), np.array(ys))
    got = np.array([_interp1(p, xs, ys) for p in probes])
    assert want.tobytes() == got.tobytes()


def test_interp1_nan_and_single_point():
    assert math.isnan(_interp1(math.nan, [0.0, 1.0], [3.0, 4.0]))
    assert np.isnan(np.interp(math.nan, [0.0, 1.0], [3.0, 4.0]))
    assert _interp1(5.0, [1.0], [2.0]) == np.interp(5.0, [1.0], [2.0]) == 2.0
    assert _interp1(math.nan, [1.0], [2.0]) == float(np.interp(math.nan, [1.0], [2.0]))
