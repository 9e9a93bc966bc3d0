"""The numba modal scan equals its numpy reference."""
import numpy as np
from hypothesis import given, settings, strategies as st

from socsim.hw.thermal_scan import modal_scan, modal_scan_ref


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(1, 10), st.integers(0, 2**31 - 1))
def test_scan_matches_reference(n, m, seed):
    rng = np.random.default_rng(seed)
    z0 = rng.normal(size=m)
    decay = rng.uniform(0, 1, size=(n, m))
    drive = rng.normal(size=(n, m))
    np.testing.assert_allclose(modal_scan(z0, decay, drive), modal_scan_ref(z0, decay, drive), rtol=1e-13, atol=1e-13)
