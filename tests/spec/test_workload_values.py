"""Workload values that pydantic alone would take: true/false for a number (pydantic reads them
as 1/0), a sampling period so short the run runs out of memory, an emptied ``batches``.  Each
is bad input: exit 2 with the field, the value and where it came from."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from socsim.cli import main
from socsim.errors import InputError
from socsim.spec import load_soc, load_workload, workloads_dir
from socsim.spec.workload import Output

QUICK = str(workloads_dir() / "quickstart.yaml")


def _run(*args: str):
    return CliRunner().invoke(main, ["run", "--soc", "sd865", QUICK, "--quiet", *args])


# -- booleans are not numbers ---------------------------------------------------------------------

@pytest.mark.parametrize("key, value, field", [
    ("batches", "true", "batches"),
    ("batch_size", "true", "batch_size"),
    ("num_classes", "false", "num_classes"),
    ("seed", "false", "seed"),
    ("input", "[true,28,28]", "input"),
    ("environment.ambient_c", "true", "environment.ambient_c"),
    ("environment.memory_budget_mb", "true", "environment.memory_budget_mb"),
    ("environment.initial_soc", "false", "environment.initial_soc"),
    ("environment.memory_budget_mb", "[{at_s: 0, mb: true}]", "environment.memory_budget_mb.0.mb"),
    ("environment.foreground_load", "{cores: [4], duration_s: true}", "environment.foreground_load.duration_s"),
    ("cpu.freq", "true", "cpu.freq"),
    ("cpu.freq", "{cpu.mid: true}", "cpu.freq"),
    ("dsp.freq_mhz", "true", "dsp.freq_mhz"),
    ("output.sample_ms", "true", "output.sample_ms"),
    ("output.trace_every", "true", "output.trace_every"),
])
def test_a_boolean_for_a_number_is_bad_input(key, value, field):
    with pytest.raises(InputError) as e:
        load_workload(QUICK, [f"{key}={value}"])
    assert e.value.field == field and e.value.origin == "--set", e.value
    r = _run("--set", f"{key}={value}")
    assert r.exit_code == 2, r.output
    assert f"field '{field}' (from --set)" in r.output and "true/false" in r.output


@pytest.mark.parametrize("key, value, field", [
    ("batch_size", "'32'", "batch_size"),
    ("batches", '"5"', "batches"),
    ("environment.ambient_c", "'30'", "environment.ambient_c"),
    ("environment.memory_budget_mb", "'900'", "environment.memory_budget_mb"),
    ("dsp.freq_mhz", "'500'", "dsp.freq_mhz"),
])
def test_a_quoted_number_is_bad_input(key, value, field):
    """pydantic would read "32" as 32; numeric fields take numbers only (docs/guide.md)."""
    with pytest.raises(InputError) as e:
        load_workload(QUICK, [f"{key}={value}"])
    assert e.value.field == field and "got a string" in e.value.message, e.value


def test_string_fields_and_names_still_take_strings():
    wl = load_workload(QUICK, ["cpu.freq=mid", "cpu.cores='456'", "cpu.governor=userspace", "precision=fp32"])
    assert wl.cpu.freq == "mid" and wl.cpu.cores == "456"


def test_a_boolean_in_the_file_names_its_line(tmp_path):
    p = tmp_path / "wl.yaml"
    p.write_text("name: t\nmodel: lenet\ninput: [1, 28, 28]\nbatch_size: true\nbatches: 2\n")
    with pytest.raises(InputError) as e:
        load_workload(p)
    assert e.value.field == "batch_size" and e.value.line == 4 and e.value.value is True


def test_booleans_still_set_boolean_fields():
    wl = load_workload(QUICK, ["environment.charging=false", "dsp.batch_padding=false", "batches=3"])
    assert wl.environment.charging is False and wl.dsp.batch_padding is False and wl.batches == 3


def test_every_numeric_field_refuses_booleans():
    """The check is one validator that every block of the workload inherits, not a list of fields."""
    from pydantic import BaseModel

    import socsim.spec.workload as w

    blocks = [m for m in vars(w).values() if isinstance(m, type) and issubclass(m, BaseModel)
              and m.__module__ == w.__name__ and m is not w.WorkloadBlock]
    assert len(blocks) >= 8 and all(issubclass(m, w.WorkloadBlock) for m in blocks)
    numeric = [(m.__name__, n) for m in blocks for n, f in m.model_fields.items()
               if w._bool_for_number(f.annotation, True)]
    assert ("Workload", "batches") in numeric and ("Output", "sample_ms") in numeric and len(numeric) >= 15


# -- output.sample_ms -----------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["1e-9", "1e-12", "1e-300", "0.05", "0", ".inf", ".nan"])
def test_sample_period_below_a_tenth_of_a_ms_is_bad_input(value, monkeypatch):
    from socsim.engine.sim import Engine

    def no_run(self):   # 1e-9 ms ran out of memory: never simulate if the check is gone
        raise AssertionError("the run started with a bad output.sample_ms")

    monkeypatch.setattr(Engine, "run", no_run)
    r = _run("--set", f"output.sample_ms={value}")
    assert r.exit_code == 2, r.output
    out = " ".join(r.output.split())
    assert "field 'output.sample_ms' (from --set)" in out and "value" in out, out
    assert "internal error" not in out


def test_sample_period_bound_is_documented():
    assert Output(sample_ms=0.1).sample_ms == 0.1
    assert "0.1 ms" in Output.model_fields["sample_ms"].description


# -- batches emptied by --set -----------------------------------------------------------------------

def test_empty_batches_from_set_says_from_set():
    with pytest.raises(InputError) as e:
        load_workload(QUICK, ["batches="])
    assert e.value.field == "batches" and e.value.origin == "--set" and e.value.line is None
    r = _run("--set", "batches=")
    assert r.exit_code == 2
    out = " ".join(r.output.split())
    assert "field 'batches' (from --set)" in out and "give either 'batches'" in out and "(top level)" not in out


def test_epochs_with_batches_names_the_field_set():
    with pytest.raises(InputError) as e:
        load_workload(QUICK, ["epochs=3", "dataset_size=100"])
    assert e.value.field == "epochs" and e.value.origin == "--set" and e.value.value == 3
    assert "not both" in e.value.message


def test_length_error_in_the_file_keeps_its_line(tmp_path):
    p = tmp_path / "wl.yaml"
    p.write_text("name: t\nmodel: lenet\ninput: [1, 28, 28]\nbatch_size: 4\nepochs: 2\n")
    with pytest.raises(InputError) as e:
        load_workload(p)
    assert e.value.field == "epochs" and e.value.line == 5 and e.value.origin is None


# -- a workload given as --soc ------------------------------------------------------------------------

def test_workload_given_as_soc_says_so():
    with pytest.raises(InputError) as e:
        load_soc(QUICK)
    assert "looks like a workload" in e.value.message and e.value.field == "--soc"
    r = CliRunner().invoke(main, ["run", "--soc", QUICK, QUICK, "--quiet"])
    assert r.exit_code == 2
    out = " ".join(r.output.split())
    assert "looks like a workload" in out and "'source'" not in out
    assert load_soc("sd865").name == "sd865"   # a SoC spec still loads


def test_a_misspelt_required_key_is_named_with_the_one_meant(tmp_path):
    p = tmp_path / "wl.yaml"
    p.write_text("name: t\nmodel: lenet\ninput: [1, 28, 28]\nBatch_Size: 32\nbatches: 2\n")
    with pytest.raises(InputError) as e:
        load_workload(p)
    assert e.value.field == "Batch_Size" and e.value.line == 4
    assert "did you mean 'batch_size'" in e.value.message


@pytest.mark.parametrize("text, words", [("", "an empty file"), ("[1, 2]\n", "a list"), ("hello\n", "a single string")])
def test_a_file_that_is_not_a_mapping_says_what_it_is(tmp_path, text, words):
    p = tmp_path / "wl.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        load_workload(p)
    assert words in e.value.message and e.value.line == 1
