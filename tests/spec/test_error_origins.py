"""Where an error points: the file's line for a value from the YAML, "(from --set)" and no line
for a value from an override, and the element (not the whole list) inside a union-typed list."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from socsim.api import prepare
from socsim.cli import main
from socsim.errors import InputError
from socsim.spec import load_workload, workloads_dir

QUICK = str(workloads_dir() / "quickstart.yaml")
LENET = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=2)


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "wl.yaml"
    p.write_text(text)
    return p


def test_set_value_error_says_from_set_and_gives_no_line():
    with pytest.raises(InputError) as e:
        load_workload(QUICK, ["output.sample_ms=-1"])
    assert e.value.field == "output.sample_ms" and e.value.value == -1
    assert e.value.line is None and e.value.origin == "--set"
    r = CliRunner().invoke(main, ["run", "--soc", "sd865", QUICK, "--set", "output.sample_ms=-1", "--quiet"])
    assert r.exit_code == 2
    assert "(from --set)" in r.output and "quickstart.yaml:" not in r.output


def test_set_value_replacing_a_file_value_says_from_set():
    with pytest.raises(InputError) as e:
        load_workload(QUICK, ["batch_size=0"])  # batch_size is on a line of the file
    assert e.value.line is None and e.value.origin == "--set"


def test_file_value_error_keeps_its_line(tmp_path):
    p = _write(tmp_path, "name: t\nmodel: lenet\ninput: [1, 28, 28]\nbatch_size: 16\nbatches: 2\n"
                         "output: {sample_ms: -1}\n")
    with pytest.raises(InputError) as e:
        load_workload(p, ["batches=3"])  # an unrelated override does not change where the error is
    assert e.value.line == 6 and e.value.origin is None and e.value.field == "output.sample_ms"


def test_budget_profile_error_names_the_element(tmp_path):
    p = _write(tmp_path, yaml.safe_dump({**LENET, "scheduler": {"name": "sage"}, "environment": {
        "memory_budget_mb": [{"at_s": 0, "mb": 900}, {"at_s": 5, "mb": -3}]}}, sort_keys=False))
    with pytest.raises(InputError) as e:
        load_workload(p)
    assert e.value.field == "environment.memory_budget_mb.1.mb" and e.value.value == -3
    assert "greater than 0" in e.value.message and "valid number" not in e.value.message
    lines = p.read_text().splitlines()
    assert "-3" in lines[e.value.line - 1]


def test_wrong_scalar_type_still_reported_for_the_field(tmp_path):
    p = _write(tmp_path, yaml.safe_dump({**LENET, "environment": {"memory_budget_mb": "lots"}}))
    with pytest.raises(InputError) as e:
        load_workload(p)
    assert e.value.field == "environment.memory_budget_mb" and e.value.value == "lots"


def test_scheduler_option_errors_point_at_their_line_or_option(tmp_path):
    p = _write(tmp_path, "name: t\nmodel: lenet\ninput: [1, 28, 28]\nbatch_size: 16\nbatches: 2\n"
                         "scheduler:\n  name: sage\n  options:\n    strategy: bogus\n")
    with pytest.raises(InputError) as e:
        prepare(str(p))
    assert e.value.field == "scheduler.options.strategy" and e.value.line == 9
    with pytest.raises(InputError) as e:
        prepare(str(p), scheduler="sage", overrides=["scheduler.options.strategy=nope"])
    assert e.value.origin == "--set" and e.value.line is None
    with pytest.raises(InputError) as e:
        prepare(str(p), scheduler="no-such-scheduler")
    assert e.value.field == "scheduler.name" and e.value.origin == "--scheduler"
    assert "(from --scheduler)" in e.value.render()


@pytest.mark.parametrize("seed", [-1, -100])
def test_negative_seed_is_rejected_by_the_schema(tmp_path, seed):
    p = _write(tmp_path, yaml.safe_dump({**LENET, "seed": seed}))
    with pytest.raises(InputError) as e:
        load_workload(p)
    assert e.value.field == "seed" and e.value.value == seed
    assert p.read_text().splitlines()[e.value.line - 1].startswith("seed:")
