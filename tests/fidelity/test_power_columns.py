"""The fidelity report's power columns: each row's average power E / t, measured against
simulated, which a time error leaves out (a row too fast by half with the right energy is twice
the power)."""
from __future__ import annotations

import pytest

from socsim.fidelity import evaluate, load_measurements
from socsim.fidelity.metrics import kendall_tau_b, kendall_tau_b_resolved, mape, resolution
from socsim.fidelity.render import markdown
from tests.fidelity.helpers import write


def test_power_is_energy_over_time_and_its_mape_is_the_tables(tmp_path):
    rep = evaluate(load_measurements(write(tmp_path)), batches=1)
    table = rep["tables"][0]
    with_energy = [r for r in table["rows"] if "measured_energy_j" in r]
    assert len(with_energy) == 2
    for r in table["rows"]:
        if r not in with_energy:
            assert "measured_power_w" not in r      # a row without energy has no power either
            continue
        assert r["measured_power_w"] == pytest.approx(r["measured_energy_j"] / r["measured_time_s"], rel=1e-5)
        assert r["simulated_power_w"] == pytest.approx(r["simulated_energy_j"] / r["simulated_time_s"], rel=1e-5)
        # (1 + e_E) / (1 + e_t) = 1 + e_P: the power's error is the energy's with the time's taken out
        e_e, e_t, e_p = (r[k] / 100 for k in ("energy_error_pct", "time_error_pct", "power_error_pct"))
        assert 1 + e_p == pytest.approx((1 + e_e) / (1 + e_t), rel=1e-4)
    pm = [r["measured_power_w"] for r in with_energy]
    ps = [r["simulated_power_w"] for r in with_energy]
    assert table["power_mape_pct"] == pytest.approx(mape(pm, ps), rel=1e-5)
    assert table["power_tau"] == pytest.approx(kendall_tau_b(pm, ps), rel=1e-5)
    assert "power MAPE" in markdown(rep) and "tau power" in markdown(rep)


def test_the_resolved_taus_are_beside_the_taus(tmp_path):
    rep = evaluate(load_measurements(write(tmp_path)), batches=1)
    table = rep["tables"][0]
    rows = table["rows"]
    tm, ts = [r["measured_time_s"] for r in rows], [r["simulated_time_s"] for r in rows]
    assert table["resolution"]["time_s"] == pytest.approx(resolution(tm))
    want = kendall_tau_b_resolved(tm, ts, resolution(tm))
    assert table.get("time_tau_resolved") == (None if want is None else pytest.approx(want, rel=1e-5))
    assert "time_tau" in table and "tau energy, resolved pairs" in markdown(rep)


def test_a_ratio_table_has_no_power(tmp_path):
    rep = evaluate(load_measurements(write(tmp_path)), batches=1)
    ratios = rep["tables"][1]
    assert ratios["compare"] == "ratios" and "power_mape_pct" not in ratios
