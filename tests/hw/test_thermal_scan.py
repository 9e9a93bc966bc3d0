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


def _advance_many_numpy(net, temps, node_w, dts):
    """ThermalNetwork.advance_many as it was in numpy (before its element-wise steps were
    compiled): the reference the compiled steps must equal bit for bit."""
    neg_lt = -(dts[:, None] * net.rates_per_s[None, :])
    decay = np.exp(neg_lt)
    gain = -np.expm1(neg_lt) / net._safe_rates
    if net._any_zero_mode:
        gain[:, net._zero_modes] = dts[:, None]
    drive = gain * (node_w @ net._power_to_modal.T)
    z = net._to_modal @ (temps - net.ambient_c)
    return net.ambient_c + modal_scan_ref(z, decay, drive) @ net._to_node.T


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["sd845", "sd855", "sd865", "sd888", "sd8gen2"]), st.integers(1, 40),
       st.integers(0, 2**31 - 1), st.booleans())
def test_advance_many_is_numpys_bit_for_bit(phone, n, seed, isolated):
    """The compiled exponents and scan (neg_rate_steps, modal_steps) give advance_many's numpy
    expressions bit for bit, for every phone's network, and with a mode of rate 0 (a node with
    no path to ambient)."""
    from socsim.hw.thermal import ThermalNetwork
    from socsim.spec import load_soc

    spec = load_soc(phone).thermal
    if isolated:   # a node with no link at all: a zero mode
        from socsim.spec.soc import ThermalNode
        spec = spec.model_copy(update={"nodes": list(spec.nodes) + [ThermalNode(name="lone", capacitance_j_per_k=3.0)]})
    net = ThermalNetwork(spec, 25.0)
    assert net._any_zero_mode == isolated
    rng = np.random.default_rng(seed)
    temps = 25.0 + 40.0 * rng.random(len(net.node_names))
    node_w = 3.0 * rng.random((n, len(net.node_names)))
    dts = rng.choice([0.0, 1e-9, 0.02, 0.1, 0.25, 1.7], size=n) * rng.random(n)
    got = net.advance_many(temps, node_w, dts)
    assert got.tobytes() == _advance_many_numpy(net, temps, node_w, dts).tobytes()


def test_advance_many_rejects_bad_steps():
    import pytest

    from socsim.hw.thermal import ThermalNetwork
    from socsim.spec import load_soc

    net = ThermalNetwork(load_soc("sd865").thermal, 25.0)
    t = np.full(len(net.node_names), 30.0)
    for bad in ([0.1, -0.1], [0.1, np.nan], [np.inf], [1e308, 1e308]):
        with pytest.raises(ValueError), np.errstate(over="ignore"):
            net.advance_many(t, np.zeros((len(bad), len(t))), np.array(bad))
