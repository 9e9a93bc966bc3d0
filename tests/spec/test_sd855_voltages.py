"""sd855's CPU OPPs carry freqbench's sm8150 firmware voltages (calibration/hardware.yaml
cpu_voltage_mv.sd855_table): every OPP at the voltage of the table's OPP it stands for (the
Min-Energy levels replace 576 / 1209.6 / 1785.6 MHz little and 825.6 / 1612.8 / 2419.2 MHz big
by 0.6 / 1.2 / 1.8 and 0.8 / 1.6 / 2.4 GHz, each within 4% of its table entry)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from socsim.spec import load_soc

ROOT = Path(__file__).resolve().parents[2]


def _table() -> dict[str, dict[float, float]]:
    hw = yaml.safe_load((ROOT / "calibration" / "hardware.yaml").read_text())
    t = hw["cpu_voltage_mv"]["sd855_table"]
    return {c: {float(f): float(mv) for f, mv in t[c].items()} for c in ("little", "mid", "prime")}


@pytest.mark.parametrize("cluster", ["little", "mid", "prime"])
def test_every_opp_is_at_its_firmware_voltage(cluster):
    table = _table()[cluster]
    cl = next(c for c in load_soc("sd855").cpu.clusters if c.name == cluster)
    for opp in cl.opps:
        nearest = min(table, key=lambda f: abs(f - opp.freq_mhz))
        assert abs(nearest - opp.freq_mhz) / nearest < 0.045, (cluster, opp.freq_mhz)
        assert opp.voltage_mv == table[nearest], (cluster, opp.freq_mhz, nearest)
    # the table's ends are the spec's (the clusters' whole frequency range)
    assert cl.opps[-1].voltage_mv == table[max(table)]
    assert min(o.voltage_mv for o in cl.opps) == min(table.values())


def test_the_floors_are_flat():
    """The little rail's 600 mV floor holds to 672 MHz, so 0.6 GHz costs no more voltage than
    0.3 GHz (the endpoints' line put it at 643 mV)."""
    from socsim.hw.power import voltage_v
    little = load_soc("sd855").cpu.clusters[0]
    assert voltage_v(little.opps, 600.0) == pytest.approx(voltage_v(little.opps, 300.0)) == pytest.approx(0.6)
    assert voltage_v(little.opps, 1800.0) == pytest.approx(0.816)
