"""The round model: determinism, the local pool against this process, gates, stragglers, the
cache of identical runs, and carried state."""
from __future__ import annotations

import pytest

from socsim.fleet import run_fleet
from socsim.fleet.rounds import quantise

from fleet_helpers import fleet_dict, write_fleet


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    p = write_fleet(tmp_path_factory.mktemp("fleet"))
    return p, run_fleet(p)


def test_same_inputs_same_fleet_and_the_pool_agrees(base) -> None:
    p, res = base
    pooled = run_fleet(p, jobs=2)
    assert pooled.summary == res.summary
    assert pooled.clients == res.clients


def test_rows_add_up(base) -> None:
    _, res = base
    s = res.summary
    assert s["rounds"] == 2 and len(res.clients) == s["participation"]["selected"] == 8
    assert s["participation"]["trained"] + sum(s["dropped"].values()) == 8
    assert s["energy_j"]["total"] == pytest.approx(sum(r["energy_j"] for r in res.clients))
    for r in res.clients:
        if r["status"] == "completed":
            assert r["total_s"] == pytest.approx(r["download_s"] + r["compute_s"] + r["upload_s"])
            assert r["total_s"] <= 30
            assert r["energy_j"] == pytest.approx(r["train_energy_j"] + r["radio_energy_j"])
            assert r["radio_energy_j"] > 0
    # the round lasts until its last client is done
    for rd in res.rounds:
        done = [c["total_s"] for c in res.clients if c["round"] == rd["round"] and c["status"] == "completed"]
        assert rd["wall_s"] == pytest.approx(max(done, default=0.0))


def test_low_battery_clients_are_gated(base) -> None:
    _, res = base
    low = [r for r in res.clients if r["soc_start"] < 0.2 and not r["charging"]]
    assert low, "the fixture's initial_soc [0.1, 1] should give a low-battery client"
    assert all(r["status"] == "battery" and r["energy_j"] == 0 for r in low)
    assert res.summary["dropped"]["battery"] == len(low)


def test_state_carries_to_the_next_round(base) -> None:
    _, res = base
    by = {}
    for r in res.clients:
        by.setdefault(r["client"], []).append(r)
    again = [rs for rs in by.values() if len(rs) == 2]
    assert again
    for first, second in again:
        assert second["soc_start"] == pytest.approx(first["soc_end"])
        if first["status"] == "completed":
            assert first["soc_end"] < first["soc_start"]   # not charging: training drained it


def test_identical_clients_share_one_engine_run(tmp_path) -> None:
    d = fleet_dict(rounds=1, clients_per_round=6)
    d["population"].update(samples=64, initial_soc=0.9)
    d["population"]["phones"] = [{"soc": "sd865", "share": 1}]
    d["baselines"] = []
    res = run_fleet(write_fleet(tmp_path, d))
    s = res.summary
    assert s["client_runs"] == 6 and s["engine_runs"] == 1
    assert len({(r["energy_j"], r["compute_s"]) for r in res.clients}) == 1


def test_a_tight_deadline_drops_stragglers_or_waits(tmp_path) -> None:
    drop = run_fleet(write_fleet(tmp_path, fleet_dict(deadline_s=0.2), "drop.yaml")).summary
    wait = run_fleet(write_fleet(tmp_path, fleet_dict(deadline_s=0.2, stragglers="wait"), "wait.yaml")).summary
    assert drop["dropped"]["deadline"] > 0 and drop["participation"]["trained"] == 0
    assert all(w == pytest.approx(0.2) for w in drop["round_wall_s"])
    assert wait["dropped"]["deadline"] == 0 and max(wait["round_wall_s"]) > 0.2


def test_min_energy_is_compared_against_the_baseline(base) -> None:
    _, res = base
    vs = res.summary["vs_baselines"]["mnn-fp32"]
    assert vs["clients"] == res.summary["participation"]["trained"]
    me = [r for r in res.clients if r["scheduler"] == "min-energy" and r["status"] == "completed"]
    assert me
    # under a 30 s deadline Min-Energy's DP spends less training energy than MNN at full speed
    assert sum(r["train_energy_j"] for r in me) < sum(r["energy_j[mnn-fp32]"] for r in me)


def test_quantise_rounds_to_the_step() -> None:
    assert quantise(0.73, 0.05) == 0.75
    assert quantise(25.2, 0.5) == 25.0
