"""Thermal RC network: analytic steady states, exact step response, step-size independence,
no node below ambient without a sink."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.hw.thermal import ThermalNetwork
from socsim.spec import load_soc
from socsim.spec.soc import Thermal

AMB = 25.0


def spec(nodes: dict[str, float], links: list[tuple[str, str, float]], heat=None) -> Thermal:
    return Thermal(source="test fixture",
                   nodes=[{"name": n, "capacitance_j_per_k": c} for n, c in nodes.items()]
                   + [{"name": "ambient", "capacitance_j_per_k": 1.0}],  # listed, but a boundary
                   links=[{"a": a, "b": b, "conductance_w_per_k": g} for a, b, g in links],
                   heat_sources=heat or {})


@pytest.fixture(scope="module")
def sd865():
    return load_soc("sd865")


@pytest.fixture(scope="module")
def net(sd865):
    return ThermalNetwork(sd865.thermal, AMB)


def _cpu_load(net: ThermalNetwork) -> np.ndarray:
    return net.node_power({"cpu.mid": 2.6, "cpu.prime": 1.1, "cpu.little": 0.1, "dram": 0.2,
                           "platform": 0.42})


def expm_taylor(a: np.ndarray) -> np.ndarray:
    """Independent matrix exponential: scaling and squaring of a 30-term Taylor series."""
    s = max(0, int(math.ceil(math.log2(max(np.linalg.norm(a, 1), 1e-300)))) + 1)
    b = a / 2.0 ** s
    out = np.eye(len(a))
    term = np.eye(len(a))
    for k in range(1, 30):
        term = term @ b / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


def exact_by_augmented_expm(net: ThermalNetwork, t0: np.ndarray, p: np.ndarray, dt: float,
                            expm=expm_taylor) -> np.ndarray:
    """theta' = A theta + b as exp([[A, b], [0, 0]] dt) applied to [theta0; 1]."""
    c = net.capacitance_j_per_k
    a = -net.conductance_w_per_k / c[:, None]
    n = len(c)
    m = np.zeros((n + 1, n + 1))
    m[:n, :n] = a
    m[:n, n] = p / c
    x = expm(m * dt) @ np.append(t0 - net.ambient_c, 1.0)
    return net.ambient_c + x[:n]


# -- structure -----------------------------------------------------------------------------

def test_conductance_matrix(net):
    g = net.conductance_w_per_k
    np.testing.assert_array_equal(g, g.T)
    np.testing.assert_allclose(g.sum(axis=1), net.ambient_conductance_w_per_k, atol=1e-15)
    assert "ambient" not in net.node_names
    assert np.all(net.rates_per_s > 0)


def test_node_power_mapping(sd865, net):
    p = net.node_power({"cpu.mid": 2.0, "dram": 0.5, "platform": 0.4, "battery": 0.1})
    assert p[net.index("cpu_mid")] == 2.0
    assert p[net.index("soc")] == 0.5
    assert p[net.index("board")] == 0.4
    assert p.sum() == pytest.approx(3.0)
    with pytest.raises(KeyError, match="no thermal heat source"):
        net.node_power({"modem": 1.0})
    s = spec({"a": 1.0}, [("a", "ambient", 1.0)], heat={"x": "a", "screen": "ambient"})
    assert ThermalNetwork(s, AMB).node_power({"x": 1.0, "screen": 5.0}).tolist() == [1.0]


def test_zone_temps(net):
    t = net.initial_temps()
    t[net.index("skin")] = 40.0
    z = net.zone_temps(t)
    assert z["skin-therm"] == 40.0 and z["cpu-1-0"] == AMB


# -- steady state --------------------------------------------------------------------------

def test_steady_state_chain_matches_hand_solution():
    g1, g2, g3, p = 0.5, 2.0, 0.25, 3.0
    net = ThermalNetwork(spec({"a": 1.0, "b": 5.0, "c": 50.0},
                              [("a", "b", g1), ("b", "c", g2), ("c", "ambient", g3)]), AMB)
    ss = net.steady_state(np.array([p, 0.0, 0.0]))
    tc = AMB + p / g3
    tb = tc + p / g2
    ta = tb + p / g1
    np.testing.assert_allclose(ss, [ta, tb, tc], rtol=1e-13)


def test_steady_state_two_paths_matches_hand_solution():
    # a -> ambient directly (g1) and through b (g2 then g3): parallel resistances
    g1, g2, g3, p = 0.2, 1.0, 0.3, 2.0
    net = ThermalNetwork(spec({"a": 1.0, "b": 4.0},
                              [("a", "ambient", g1), ("a", "b", g2), ("b", "ambient", g3)]), AMB)
    r_eff = 1.0 / (g1 + 1.0 / (1.0 / g2 + 1.0 / g3))
    ta = AMB + p * r_eff
    tb = AMB + (ta - AMB) * (1.0 / g3) / (1.0 / g2 + 1.0 / g3)
    np.testing.assert_allclose(net.steady_state(np.array([p, 0.0])), [ta, tb], rtol=1e-13)


def test_sd865_steady_state_balances_heat(net):
    p = _cpu_load(net)
    ss = net.steady_state(p)
    # every node's heat balance and the whole phone's: sum P leaves through the ambient links
    np.testing.assert_allclose(net.conductance_w_per_k @ (ss - AMB), p, atol=1e-12)
    assert net.ambient_conductance_w_per_k @ (ss - AMB) == pytest.approx(p.sum())
    # a long step reaches it
    np.testing.assert_allclose(net.advance(net.initial_temps(), p, 1e6), ss, atol=1e-9)


def test_floating_group_has_no_steady_state_but_heats_linearly():
    net = ThermalNetwork(spec({"a": 2.0, "b": 2.0, "c": 1.0},
                              [("a", "b", 1.0), ("c", "ambient", 1.0)]), AMB)
    with pytest.raises(ValueError, match="no path to ambient"):
        net.steady_state(np.array([1.0, 0.0, 0.0]))
    t = net.advance(net.initial_temps(), np.array([1.0, 0.0, 0.0]), 1000.0)
    # 1 W into 4 J/K for 1000 s: mean temperature of a, b rises by 250 K
    assert 0.5 * (t[0] + t[1]) - AMB == pytest.approx(250.0, rel=1e-9)
    assert t[2] == AMB


# -- transient -----------------------------------------------------------------------------

def test_single_node_step_response_is_analytic():
    c, g, p = 7.0, 0.35, 2.0
    net = ThermalNetwork(spec({"a": c}, [("a", "ambient", g)]), AMB)
    for t in (0.0, 0.1, 5.0, 20.0, 300.0):
        expect = AMB + p / g * (1 - math.exp(-g * t / c))
        assert net.advance(net.initial_temps(), np.array([p]), t)[0] == pytest.approx(expect, rel=1e-13)


@pytest.mark.parametrize("dt", [0.01, 0.25, 3.0, 60.0, 600.0])
def test_step_response_matches_independent_matrix_exponential(net, dt):
    p = _cpu_load(net)
    t0 = net.initial_temps() + np.linspace(0, 20, len(net.node_names))
    got = net.advance(t0, p, dt)
    np.testing.assert_allclose(got, exact_by_augmented_expm(net, t0, p, dt), rtol=0, atol=1e-9)


def test_step_response_matches_scipy_expm(net):
    linalg = pytest.importorskip("scipy.linalg")
    p = _cpu_load(net)
    t0 = net.initial_temps()
    for dt in (0.5, 120.0):
        np.testing.assert_allclose(net.advance(t0, p, dt),
                                   exact_by_augmented_expm(net, t0, p, dt, expm=linalg.expm), atol=1e-9)


def test_step_response_matches_fine_implicit_euler(net):
    p = _cpu_load(net)
    h, t_end = 0.002, 30.0
    c = net.capacitance_j_per_k
    step = np.linalg.inv(np.diag(c / h) + net.conductance_w_per_k)
    theta = np.zeros(len(c))
    for _ in range(int(round(t_end / h))):
        theta = step @ (c / h * theta + p)
    exact = net.advance(net.initial_temps(), p, t_end) - AMB
    # backward Euler is first order: error ~ h / (2 tau_min) of the rise
    np.testing.assert_allclose(theta, exact, rtol=5e-3)


def test_exact_across_step_sizes(net):
    p = _cpu_load(net)
    one = net.advance(net.initial_temps(), p, 100.0)
    many = net.initial_temps()
    for _ in range(1000):
        many = net.advance(many, p, 0.1)
    np.testing.assert_allclose(many, one, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(net.advance(one, p, 0.0), one)


def test_rejects_negative_step(net):
    with pytest.raises(ValueError):
        net.advance(net.initial_temps(), np.zeros(len(net.node_names)), -1.0)


def test_cpu_heats_within_minutes_dsp_slowly(sd865, net):
    """The sd865 network's design target (docs/modeling.md): ~4.3 W with four big cores busy
    reaches 80-95 C on the big-core junction within a few minutes; a 1.3 W cDSP load stays cool."""
    mid = net.index("cpu_mid")
    t3 = net.advance(net.initial_temps(), _cpu_load(net), 180.0)[mid]
    assert 75.0 <= t3 <= 95.0
    assert net.steady_state(_cpu_load(net))[mid] > 95.0  # so the governor must act
    p_dsp = net.node_power({"cdsp": 1.3, "cpu.little": 0.05, "cpu.mid": 0.15, "dram": 0.2, "platform": 0.42})
    t_dsp = net.advance(net.initial_temps(), p_dsp, 1800.0)
    assert t_dsp.max() < 60.0


# -- never below ambient -------------------------------------------------------------------

@st.composite
def networks(draw):
    n = draw(st.integers(1, 6))
    names = [f"n{i}" for i in range(n)]
    caps = {nm: draw(st.floats(0.05, 200.0)) for nm in names}
    links = []
    for i in range(1, n):  # a random tree, then extra links
        j = draw(st.integers(0, i - 1))
        links.append((names[i], names[j], draw(st.floats(0.01, 5.0))))
    for _ in range(draw(st.integers(0, 4))):
        a, b = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        if a != b:
            links.append((a, b, draw(st.floats(0.01, 5.0))))
    sinks = draw(st.lists(st.sampled_from(names), max_size=n, unique=True))  # may be none
    links += [(s, "ambient", draw(st.floats(0.01, 2.0))) for s in sinks]
    if not links:  # a lone node needs a link; its only possible one is to ambient
        links = [(names[0], "ambient", 0.5)]
    return spec(caps, links)


@settings(max_examples=150, deadline=None)
@given(networks(), st.data())
def test_no_node_below_ambient_without_sink(th, data):
    amb = data.draw(st.floats(-20.0, 45.0))
    net = ThermalNetwork(th, amb)
    n = len(net.node_names)
    t = amb + np.array(data.draw(st.lists(st.floats(0.0, 80.0), min_size=n, max_size=n)))
    t_max0 = t.max()
    for _ in range(data.draw(st.integers(1, 5))):
        p = np.array(data.draw(st.lists(st.floats(0.0, 10.0), min_size=n, max_size=n)))
        dt = data.draw(st.floats(0.0, 1e4))
        t = net.advance(t, p, dt)
        assert np.all(t >= amb - 1e-9 * max(1.0, abs(amb)))
    # with no power the hottest node never gets hotter (maximum principle)
    t0 = amb + np.array(data.draw(st.lists(st.floats(0.0, 80.0), min_size=n, max_size=n)))
    t1 = net.advance(t0, np.zeros(n), data.draw(st.floats(0.0, 1e4)))
    assert t1.max() <= t0.max() + 1e-9
    assert t_max0 >= amb
