"""The fleet YAML's errors (file, line, field, value), --soc-mix, the availability trace, the
network model's arithmetic and the population's determinism."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.errors import InputError
from socsim.fleet.network import LINKS, transfer
from socsim.fleet.population import Window, make_clients
from socsim.fleet.spec import load_fleet, parse_soc_mix

from fleet_helpers import SMALL, fleet_dict, write_fleet


def _error(tmp_path, data) -> InputError:
    with pytest.raises(InputError) as e:
        load_fleet(write_fleet(tmp_path, data))
    return e.value


def test_bad_values_name_line_field_and_value(tmp_path) -> None:
    e = _error(tmp_path, fleet_dict(deadline_s=-1))
    assert e.field == "plan.deadline_s" and e.value == -1 and e.line and e.file.endswith("fleet.yaml")
    d = fleet_dict()
    d["population"]["phones"][0]["soc"] = "sd9999"
    e = _error(tmp_path, d)
    assert e.field == "population.phones.0.soc" and e.value == "sd9999" and e.line
    d = fleet_dict()
    d["population"]["phones"][1]["scheduler"]["options"]["slack"] = -2
    e = _error(tmp_path, d)
    assert e.field.startswith("population.phones.1.scheduler") and "slack" in e.field
    d = fleet_dict()
    d["workload"]["batches"] = 10
    e = _error(tmp_path, d)
    assert e.field == "workload.batches" and "set by the fleet" in e.message
    d = fleet_dict()
    d["workload"]["model"] = "nonet"
    assert _error(tmp_path, d).field == "workload.model"
    d = fleet_dict(local_steps=3)
    assert "local_epochs or local_steps" in _error(tmp_path, d).message
    d = fleet_dict()
    d["population"]["initial_soc"] = [0.9, 0.2]
    assert _error(tmp_path, d).field == "population.initial_soc"


def test_soc_mix_replaces_the_phones(tmp_path) -> None:
    spec = load_fleet(write_fleet(tmp_path), parse_soc_mix("sd888=3,sd855"))
    assert [(p.soc, p.share) for p in spec.population.phones] == [("sd888", 3.0), ("sd855", 1.0)]
    assert {c.soc for c in make_clients(spec)} <= {"sd888", "sd855"}
    for bad in ("sd865=x", "sd865=0", "sd865,,sd888", "sd865=1,sd865=2"):
        with pytest.raises(InputError) as e:
            parse_soc_mix(bad)
        assert e.value.field == "--soc-mix"


def test_trace_windows_and_errors(tmp_path) -> None:
    (tmp_path / "av.csv").write_text("client,start_h,end_h,charging\n0,22,2,1\n1,0,24,0\n")
    d = fleet_dict()
    d["population"]["availability"] = {"trace": "av.csv"}
    clients = make_clients(load_fleet(write_fleet(tmp_path, d)), tmp_path / "fleet.yaml")
    assert clients[0].available(23.5).charging and clients[0].available(1.0) and not clients[0].available(3.0)
    assert clients[1].available(12.0) and not clients[2].windows
    (tmp_path / "av.csv").write_text("client,start_h,end_h,charging\n0,22,x,1\n")
    with pytest.raises(InputError) as e:
        make_clients(load_fleet(write_fleet(tmp_path, d)), tmp_path / "fleet.yaml")
    assert e.value.line == 2 and e.value.field == "end_h" and e.value.value == "x"


def test_clients_are_a_function_of_spec_and_seed(tmp_path) -> None:
    spec = load_fleet(write_fleet(tmp_path))
    assert make_clients(spec) == make_clients(spec)
    other = load_fleet(write_fleet(tmp_path, {**SMALL, "seed": 4}, "other.yaml"))
    assert make_clients(other) != make_clients(spec)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**9), st.sampled_from(sorted(LINKS)))
def test_transfer_is_linear_in_bytes(n: int, link: str) -> None:
    lk = LINKS[link]
    one, two = transfer(lk, n), transfer(lk, 2 * n)
    assert two.down_s == pytest.approx(2 * one.down_s) and two.up_s == pytest.approx(2 * one.up_s)
    tail = lk.tail_s * lk.tail_mw * 1e-3
    assert two.energy_j - tail == pytest.approx(2 * (one.energy_j - tail))
    assert one.energy_j >= tail and math.isfinite(one.energy_j)


def test_lte_one_megabyte_by_hand() -> None:
    t = transfer(LINKS["lte"], 10**6)
    assert t.down_s == pytest.approx(8 / 12.74) and t.up_s == pytest.approx(8 / 5.64)
    up_w = (438.39 * 5.64 + 1288.04) / 1000
    assert t.up_j == pytest.approx(up_w * 8 / 5.64 + 11.576 * 1.06004)


@given(st.floats(0, 24), st.floats(0, 24), st.floats(0, 23.999))
def test_window_holds_its_hours(start: float, hours: float, at: float) -> None:
    w = Window(start, hours, False)
    # the window [start, start + hours), and its wrap past midnight
    inside = start <= at < start + hours or at + 24 < start + hours or hours >= 24
    if not any(abs(at - e) < 1e-9 or abs(at + 24 - e) < 1e-9 for e in (start, start + hours)):
        assert w.holds(at) == inside
    assert Window(start, 24.0, False).holds(at)
