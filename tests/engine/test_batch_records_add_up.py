"""batches.csv and the foreground accounting describe the batches as they ran: a config switch
belongs to the batch that pays it, and a foreground app is charged only by the batches that ran
with it (socsim.engine.sim ``_training``, ``_config_switch``, ``_foreground_contention``)."""
from __future__ import annotations

import dataclasses

import pytest

from socsim.sched.baselines import MnnFp32

from engine_runs import lenet, run


class Hopper(MnnFp32):
    """Moves between core sets after every batch (a config switch before each batch but the first)."""

    def on_batch_end(self, ctx, batch, record):
        plan = ctx.plan
        cores = (4, 5) if plan.cpu_cores != (4, 5) else (4, 5, 6, 7)
        self.records = getattr(self, "records", []) + [record]
        return dataclasses.replace(plan, cpu_cores=cores, label=f"cores {cores}")


def test_config_switches_belong_to_the_batches_that_pay_them(tmp_path):
    sched = Hopper()
    r = run(tmp_path, lenet(batches=4, batch_size=512), scheduler=sched)
    assert r.stats.config_switches == 3
    rows = r.batches()
    assert sum(x["time_s"] for x in rows) == pytest.approx(r.stats.sim_time_s, rel=1e-12)
    assert sum(x["energy_j"] for x in rows) == pytest.approx(sum(r.stats.rail_energy_j.values()), rel=1e-12)
    assert r.stats.batch_time_sum_s == pytest.approx(r.stats.sim_time_s, rel=1e-12)
    switches = [o for o in r.ops() if o["name"] == "config-switch"]
    assert [o["batch"] for o in switches] == [1, 2, 3]
    for o in switches:
        row = rows[o["batch"]]
        assert row["start_s"] == pytest.approx(o["start_s"], abs=1e-12)   # the batch starts with its switch
        assert o["start_s"] + o["dur_s"] <= row["start_s"] + row["time_s"]
    # the scheduler hears of the batch's ops alone, from their start to the batch's end
    for rec, row in zip(sched.records, rows):
        assert rec.start_s + rec.time_s == pytest.approx(row["start_s"] + row["time_s"], abs=1e-12)
        paid = 0.0035 if row["batch"] != "0" else 0.0
        assert rec.time_s == pytest.approx(row["time_s"] - paid, abs=1e-12)


def test_an_app_that_comes_and_goes_within_a_batch_is_not_charged(tmp_path):
    """The batch took its interference at its start (none) and ran at full speed: the app,
    started and gone before the batch ended, met no training thread of that batch."""
    fg = {"name": "app", "cores": [4, 5, 6, 7], "start_s": 0.1, "duration_s": 0.2, "utilization": 0.8}
    r = run(tmp_path, lenet(batches=2, batch_size=6144, environment={"foreground_load": fg}))   # a batch of ~0.37 s
    b0 = r.batches()[0]
    assert b0["start_s"] < 0.1 and 0.3 < b0["start_s"] + b0["time_s"]
    (app,) = r.summary["foreground"]
    assert app["contended_core_s"] == 0.0 and app["throughput_loss"] == 0.0


def test_an_app_is_charged_by_the_batches_that_ran_with_it(tmp_path):
    fg = {"name": "app", "cores": [4, 5, 6, 7], "start_s": 0.1, "duration_s": 60.0, "utilization": 0.8}
    r = run(tmp_path, lenet(batches=4, environment={"foreground_load": fg}))
    rows = r.batches()
    assert rows[1]["time_s"] > 1.2 * rows[0]["time_s"]     # batch 1 on ran with the app
    (app,) = r.summary["foreground"]
    # mnn-fp32 keeps all four cores busy nearly all the time: at most 4 core-seconds per second of
    # the batches that ran with the app, nothing from batch 0's
    loaded_s = sum(x["time_s"] for x in rows[1:])
    assert 0.8 * 4 * loaded_s < app["contended_core_s"] <= 4 * loaded_s * (1 + 1e-8)



def test_an_app_there_from_the_start_slows_the_first_batch(tmp_path):
    """A foreground app with start_s 0 runs when batch 0 begins: every batch shares its cores
    alike (it used to reach the engine only after batch 0 had started without it)."""
    app = {"name": "app", "cores": [4, 5, 6, 7], "start_s": 0, "duration_s": 1e4, "utilization": 0.8}
    rows = run(tmp_path / "with", lenet(environment={"foreground_load": app})).batches()
    alone = run(tmp_path / "alone", lenet()).batches()
    assert rows[0]["time_s"] == pytest.approx(rows[1]["time_s"], rel=1e-9)
    assert rows[0]["time_s"] > 1.3 * alone[0]["time_s"]
