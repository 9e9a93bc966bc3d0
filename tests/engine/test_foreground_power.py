"""A foreground app draws power and heats the phone (socsim.engine.batch ``fg_mw``): on the
cores training leaves it, at its utilisation and FG_APP_ACTIVITY, at the clock schedutil picks
for it; its energy is in the rails and ``energy_j.foreground_apps``, not in ``training``."""
from __future__ import annotations

import pytest

from socsim.engine.batch import FG_APP_ACTIVITY
from socsim.hw.power import SocPower

from engine_runs import SOC, lenet, run

APP = {"name": "game", "cores": [0, 1], "start_s": 0.0, "duration_s": 100.0, "utilization": 0.8}


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    base = lenet(batches=3, cpu={"cores": "big4", "governor": "schedutil"})
    quiet = run(tmp_path_factory.mktemp("quiet"), base)
    busy = run(tmp_path_factory.mktemp("busy"), {**base, "environment": {"foreground_load": APP}})
    return quiet, busy


def test_an_app_on_other_cores_draws_its_power_there(pair):
    quiet, busy = pair
    little = SOC.cluster("little")
    # schedutil: 1.25 x f_max x 0.8 = the top OPP; the cluster was at its lowest without the app
    assert set(quiet.column("cpufreq.little")) == {little.min_mhz}
    assert set(busy.column("cpufreq.little")) == {little.max_mhz}
    t = busy.summary["sim_time_s"]
    dyn, _ = SocPower.from_spec(SOC).units["cpu.little"].power_mw(little.max_mhz, 2 * 0.8, FG_APP_ACTIVITY, 25.0)
    fg = busy.summary["energy_j"]["foreground_apps"]
    assert fg == pytest.approx(dyn * 1e-3 * t, rel=1e-6)
    # the little rail carries it (and its two cores' leakage, now powered); training does not
    extra = busy.summary["energy_j"]["rails"]["cpu.little"] - quiet.summary["energy_j"]["rails"]["cpu.little"]
    assert extra > fg
    total, idle = busy.summary["energy_j"]["total"], busy.summary["energy_j"]["idle_baseline"]
    assert busy.summary["energy_j"]["training"] == pytest.approx(total - idle - fg, abs=1e-6)
    assert "foreground_apps" not in quiet.summary["energy_j"]
    # and it heats: the little cluster's node ends warmer
    assert busy.column("thermal.cpu_little_c")[-1] > quiet.column("thermal.cpu_little_c")[-1] + 0.1


def test_on_a_core_training_keeps_busy_the_app_adds_nothing(tmp_path):
    """Training on all four big cores through the whole batch: the app on core 4 shares a core
    that is busy throughout (its power is training's), so the app adds no power of its own."""
    wl = lenet(batches=2, environment={"foreground_load": {**APP, "cores": [4]}})
    r = run(tmp_path, wl)
    assert r.summary["energy_j"]["foreground_apps"] == pytest.approx(0.0, abs=1e-3)
