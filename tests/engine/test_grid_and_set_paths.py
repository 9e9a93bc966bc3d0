"""`--grid` parsing (typed values, list values, duplicates, empty items, errors naming --grid)
and `--set` paths through list items (environment.memory_budget_mb.0.mb)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from socsim.api import prepare
from socsim.cli import main
from socsim.errors import InputError
from socsim.sweep import parse_grid

QUICK = str(Path(__file__).resolve().parents[2] / "workloads" / "quickstart.yaml")
BUDGET = "environment.memory_budget_mb=[{at_s: 0, mb: 900}, {at_s: 5, mb: 700}]"


def test_grid_values_are_parsed_as_yaml():
    assert parse_grid(["batch_size=16,32", "cpu.cores=big2,big4", "dsp.batch_padding=true,false"]) == {
        "batch_size": [16, 32], "cpu.cores": ["big2", "big4"], "dsp.batch_padding": [True, False]}


def test_grid_list_values_are_separated_by_semicolons():
    assert parse_grid(["input=[1,28,28];[1,32,32]"]) == {"input": [[1, 28, 28], [1, 32, 32]]}
    assert parse_grid(["input=[1,28,28]"]) == {"input": [[1, 28, 28]]}
    assert parse_grid(["batch_size=16;32"]) == {"batch_size": [16, 32]}


@pytest.mark.parametrize("items, says", [
    (["batches=2", "batches=3"], "given twice"),
    (["batch_size=16,,32"], "empty value"),
    (["batch_size=16,"], "empty value"),
    (["input=[1,28,28];;[1,32,32]"], "empty value"),
    (["batch_size="], "no value"),
    (["=16"], "key is empty"),
    (["batch_size"], "expected key=v1,v2"),
])
def test_bad_grid_items_are_errors(items, says):
    with pytest.raises(InputError) as e:
        parse_grid(items)
    assert e.value.field == "--grid" and says in e.value.message and e.value.value == items[-1]


def _sweep(*args: str):
    return CliRunner().invoke(main, ["sweep", "--soc", "sd865", QUICK, *args])


def test_unknown_grid_field_names_grid_not_set():
    r = _sweep("--grid", "nosuch=1")
    assert r.exit_code == 2
    assert "field '--grid'" in r.output and "--set" not in r.output and "nosuch" in r.output


def test_sweep_json_gives_the_scheduler_run_and_typed_values(tmp_path):
    out = tmp_path / "s.json"
    r = _sweep("--grid", "batches=2", "--grid", "input=[1,28,28];[1,32,32]", "--json", str(out), "--quiet")
    assert r.exit_code == 0, r.output
    pts = [p["point"] for p in json.loads(out.read_text())["points"]]
    assert pts == [{"soc": "sd865", "scheduler": "mnn-fp32", "set": {"batches": 2, "input": [1, 28, 28]}},
                   {"soc": "sd865", "scheduler": "mnn-fp32", "set": {"batches": 2, "input": [1, 32, 32]}}]


def test_set_reaches_into_a_list_item():
    wl = prepare(QUICK, overrides=[BUDGET, "environment.memory_budget_mb.1.mb=650"])[0]
    assert [(s.at_s, s.mb) for s in wl.environment.memory_budget_mb] == [(0, 900), (5, 650)]
    wl = prepare(QUICK, overrides=["input.0=3"])[0]
    assert wl.input == [3, 28, 28]


@pytest.mark.parametrize("path, says", [
    ("environment.memory_budget_mb.2.mb=5", "has 2 items"),
    ("environment.memory_budget_mb.mb=5", "address an item of its list by index"),
    ("environment.memory_budget_mb.0.nosuch=5", "fields here: at_s, mb"),
    ("environment.foreground_load.0.cores=[4]", "holds no list"),
    ("environment.0=1", "is not a list"),
])
def test_set_list_paths_that_do_not_fit_say_why(path, says):
    with pytest.raises(InputError) as e:
        prepare(QUICK, overrides=[BUDGET, path])
    assert says in e.value.message and e.value.field == "--set"


def test_value_error_in_a_list_item_is_located_from_set():
    with pytest.raises(InputError) as e:
        prepare(QUICK, overrides=[BUDGET, "environment.memory_budget_mb.0.mb=-1"])
    assert e.value.field == "environment.memory_budget_mb.0.mb" and e.value.origin == "--set"


def test_set_into_a_scalar_says_to_set_the_whole_field():
    with pytest.raises(InputError) as e:        # quickstart.yaml has `freq: max`
        prepare(QUICK, overrides=["cpu.freq.little=max"])
    assert e.value.field == "cpu.freq.little" and e.value.file == "--set"
    assert "'cpu.freq' is 'max'" in e.value.message and "cpu.freq={little: ...}" in e.value.message
