"""The console tables: a run that stopped early says why, --deterministic does not claim a wall
time of 0.00 s, counts agree with their nouns, small energies keep their digits."""
from __future__ import annotations

import copy
import io
import json
import re
from pathlib import Path

from rich.console import Console

from socsim.report.console import compare_table, fmt_energy, summary_table

import cli_helpers  # noqa: E402


def _wl(tmp_path: Path, **changes) -> Path:
    return cli_helpers.write_workload(tmp_path, **{"batches": 3, **changes})


def invoke(*args: str):
    return cli_helpers.invoke(*args, terminal_width=200)


def _text(table) -> str:
    c = Console(width=250, record=True, file=io.StringIO())
    c.print(table)
    return c.export_text()


def test_stop_reason_is_shown(tmp_path):
    """Swan stops when the phone is not charging (as `swan_resnet34.yaml --set environment.charging=false`)."""
    p = _wl(tmp_path, scheduler={"name": "swan"}, environment={"charging": False})
    js = tmp_path / "s.json"
    r = invoke("run", "--soc", "sd865", str(p), "--json", str(js))
    assert r.exit_code == 0, r.output
    s = json.loads(js.read_text())
    reason = s["engine"]["stop_reason"]
    assert reason and s["batches"] < 3
    assert "stopped early" in r.output and reason in r.output


def test_no_stop_row_for_a_complete_run(tmp_path):
    r = invoke("run", "--soc", "sd865", str(_wl(tmp_path)))
    assert r.exit_code == 0, r.output
    assert "stopped early" not in r.output


def test_deterministic_run_shows_no_wall_time(tmp_path):
    p = _wl(tmp_path)
    r = invoke("run", "--soc", "sd865", str(p), "--deterministic")
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "wall time" in x)
    assert "0.00 s" not in line and "deterministic" in line
    r = invoke("run", "--soc", "sd865", str(p))
    line = next(x for x in r.output.splitlines() if "wall time" in x)
    assert "deterministic" not in line and " s" in line


def _summary(tmp_path: Path) -> dict:
    r = invoke("run", "--soc", "sd865", str(_wl(tmp_path)), "--json", "-")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_one_switch_is_singular(tmp_path):
    s = _summary(tmp_path)
    for n, want in ((1, "1 switch;"), (0, "0 switches;"), (12, "12 switches;")):
        t = copy.deepcopy(s)
        t["placement"]["switches"] = n
        assert want in _text(summary_table(t))


def test_small_energies_keep_three_significant_digits(tmp_path):
    s = _summary(tmp_path)
    a, b = copy.deepcopy(s), copy.deepcopy(s)
    a["per_batch"]["energy_j"], b["per_batch"]["energy_j"] = 0.00571, 0.0123
    text = _text(compare_table([a, b]))
    assert "5.71 mJ" in text and "12.3 mJ" in text and "0.01 J" not in text
    assert fmt_energy(20.526) == "20.5 J" and fmt_energy(0.567) == "0.567 J" and fmt_energy(0.0042) == "4.20 mJ"
    assert "mJ" in _text(summary_table(s))  # LeNet's per-batch energy is a few mJ


def test_plans_a_scheduler_switched_to_are_shown(tmp_path):
    """Swan moves off the cores a foreground app takes: the table shows every plan it ran and the
    configuration switches, not only the first plan's cores."""
    p = _wl(tmp_path, batches=60, scheduler={"name": "swan"},
            environment={"foreground_load": {"cores": [4, 5, 6, 7], "start_s": 0.01, "duration_s": 10}})
    js = tmp_path / "s.json"
    r = invoke("run", "--soc", "sd865", str(p), "--json", str(js))
    assert r.exit_code == 0, r.output
    pl = json.loads(js.read_text())["placement"]
    assert len(pl["plans"]) > 1 and pl["config_switches"] > 0
    out = " ".join(re.sub(r"[│┃]", " ", r.output).split())    # table cells may wrap
    assert " -> ".join(pl["plans"]) in out
    assert f"{pl['config_switches']} config switches" in out and "(first plan)" in out
    assert sum(pl["plan_batches"].values()) == 60 and set(pl["plan_batches"]) == set(pl["plans"])


def test_one_plan_shows_no_plans_row(tmp_path):
    s = _summary(tmp_path)
    assert len(s["placement"]["plans"]) <= 1 and s["placement"]["config_switches"] == 0
    text = _text(summary_table(s))
    assert "config switch" not in text and "(first plan)" not in text
    t = copy.deepcopy(s)
    t["placement"]["plans"] = [f"p{i}" for i in range(10)]
    t["placement"]["config_switches"] = 1
    text = " ".join(_text(summary_table(t)).split())
    assert "p0 -> p1 -> p2 -> p3 -> ... -> p8 -> p9 (10 in all); 1 config switch " in text


def test_short_simulated_time_keeps_its_digits(tmp_path):
    s = _summary(tmp_path)
    for t_s, want in ((0.0004, "0.400 ms"), (0.0123, "12.3 ms"), (0.5, "500.0 ms"), (91.7958, "91.796 s")):
        t = copy.deepcopy(s)
        t["sim_time_s"] = t_s
        line = next(x for x in _text(summary_table(t)).splitlines() if "simulated time" in x)
        assert want in line, line


def test_memory_budget_the_scheduler_does_not_keep_is_noted(tmp_path):
    p = _wl(tmp_path)
    r = invoke("run", "--soc", "sd865", str(p), "--set", "environment.memory_budget_mb=1")
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "note: memory in use exceeded the budget in force (environment.memory_budget_mb)" in out
    assert " batches, by up to " in out and "mnn-fp32 does not plan for the budget" in out
    r = invoke("compare", "--soc", "sd865", str(p), "--schedulers", "mnn-fp32,mnn-int8",
               "--set", "environment.memory_budget_mb=0.1")
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "mnn-fp32 does not plan for the budget" in out and "mnn-int8 does not plan for the budget" in out
    # a budget the run stays within, a later step the run never reaches, --quiet: no note
    for sets in (["--set", "environment.memory_budget_mb=1000"],
                 ["--set", "environment.memory_budget_mb=[{at_s: 0, mb: 1000}, {at_s: 1000, mb: 1}]"]):
        r = invoke("run", "--soc", "sd865", str(p), *sets)
        assert r.exit_code == 0 and "note:" not in r.output, r.output
    r = invoke("run", "--soc", "sd865", str(p), "--set", "environment.memory_budget_mb=1", "--quiet")
    assert r.exit_code == 0 and r.output == ""


def test_a_budget_kept_after_it_dropped_is_not_called_ignored(tmp_path):
    """The note counts memory above the budget in force at the time: a run that met a large
    budget and then a small one it fits is not over (the peak of the whole run is above the
    smallest budget, which is what the note once compared)."""
    from socsim.api import run as api_run
    from socsim.engine.context import budget_steps_bytes

    p = _wl(tmp_path)
    base = api_run("sd865", str(p), overrides=["batches=4"]).summary
    peak_mb = base["memory"]["peak_bytes"] / (1 << 20)
    t1 = base["per_batch"]["time_s"] * 1.5     # the step lands inside batch 1
    prof = f"[{{at_s: 0, mb: {peak_mb * 2:.3f}}}, {{at_s: {t1!r}, mb: {peak_mb * 0.5:.3f}}}]"
    s = api_run("sd865", str(p), overrides=["batches=4", f"environment.memory_budget_mb={prof}"]).summary
    over = s["memory"]["over_budget"]
    # batches 1 (from the step on), 2 and 3 run over the halved budget; batch 0 is within
    assert over["batches"] == 3 and 0 < over["seconds"] < 2.5 * base["per_batch"]["time_s"]
    assert budget_steps_bytes(None) == []
    prof_ok = f"[{{at_s: 0, mb: {peak_mb * 0.5:.3f}}}, {{at_s: 0.0000001, mb: {peak_mb * 2:.3f}}}]"
    s = api_run("sd865", str(p), overrides=["batches=2", f"environment.memory_budget_mb={prof_ok}"]).summary
    assert s["memory"]["over_budget"]["batches"] == 1   # only the first 0.1 us, in batch 0


def test_a_run_that_trained_no_batch_says_so(tmp_path):
    """Swan's gate declines the first batch off the charger: no per-batch figures of 0 ms and 0 J,
    no empty rail list, and an app that never started is not reported as unharmed."""
    p = _wl(tmp_path, scheduler={"name": "swan"}, environment={
        "charging": False, "foreground_load": {"name": "game", "cores": [6, 7], "start_s": 20, "duration_s": 30,
                                               "utilization": 0.5}})
    r = invoke("run", "--soc", "sd865", str(p))
    assert r.exit_code == 0, r.output
    out = " ".join(re.sub(r"[│┃]", " ", r.output).split())
    assert "per batch - (no batch trained)" in out and "0 ms, 0 J" not in out
    assert "energy by rail - " in out
    assert "foreground game cores [6, 7]: not reached (it starts at 20 s)" in out and "throughput loss" not in out


def test_compare_shows_dashes_for_a_run_with_no_batch_and_no_loss_for_an_app_not_reached(tmp_path):
    p = _wl(tmp_path, batches=2, environment={
        "charging": False, "foreground_load": {"name": "game", "cores": [6, 7], "start_s": 3600, "duration_s": 30,
                                               "utilization": 0.5}})
    js = tmp_path / "c.json"
    r = invoke("compare", "--soc", "sd865", str(p), "--schedulers", "mnn-fp32,swan", "--json", str(js))
    assert r.exit_code == 0, r.output
    rows = json.loads(js.read_text())["rows"]
    assert [row["batches"] for row in rows] == [2, 0]
    assert all(row["fg_loss"] is None for row in rows)        # the app starts an hour in
    lines = [" ".join(re.sub(r"[│┃]", " ", ln).split()) for ln in r.output.splitlines()]
    swan = next(ln for ln in lines if ln.startswith("swan "))
    assert swan == "swan 0/2 - - - - - 25.0 - - -", swan
    assert "fg loss" not in r.output
