"""Bad input on the command line: exit code 2, one message naming file, field and value, and
nothing written to the output paths (``--json`` and ``--out``)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from socsim.cli import main
from socsim.spec import soc_specs_dir, workloads_dir

QUICKSTART = yaml.safe_load((workloads_dir() / "quickstart.yaml").read_text())


def _write(tmp_path: Path, data: dict | str, name: str = "wl.yaml") -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return p


def _run(tmp_path: Path, args: list[str]):
    out_json, out_dir = tmp_path / "out" / "out.json", tmp_path / "out" / "run"
    res = CliRunner().invoke(main, [*args, "--json", str(out_json), "--out", str(out_dir), "--quiet"])
    assert not out_json.exists(), "an output file was written on bad input"
    assert not out_dir.exists(), "an output directory was written on bad input"
    leftovers = list((tmp_path / "out").glob("*")) if (tmp_path / "out").exists() else []
    assert not leftovers, f"temporary outputs left behind: {leftovers}"
    return res


def _expect_2(res, *needles: str) -> str:
    msg = res.output + (res.stderr if hasattr(res, "stderr_bytes") and res.stderr_bytes else "")
    assert res.exit_code == 2, f"exit {res.exit_code}: {msg}\n{res.exception!r}"
    assert "internal error" not in msg and "Traceback" not in msg
    for n in needles:
        assert n in msg, f"{n!r} not in message: {msg}"
    return msg


def _wl(tmp_path: Path, **changes) -> Path:
    data = dict(QUICKSTART)
    for k, v in changes.items():
        if v is _DELETE:
            data.pop(k, None)
        else:
            data[k] = v
    return _write(tmp_path, data)


_DELETE = object()


# -- the workload file ---------------------------------------------------------------------------

def test_malformed_yaml(tmp_path):
    p = _write(tmp_path, "name: x\nmodel: lenet\ninput: [1, 28, 28\nbatch_size: 4\n")
    msg = _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p)]), "wl.yaml", "malformed YAML")
    assert "wl.yaml:" in msg  # with a line number


def test_unknown_key(tmp_path):
    p = _wl(tmp_path, batchsize=32)
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p)]), "wl.yaml", "batchsize", "unknown key")


def test_unknown_nested_key_has_line(tmp_path):
    p = _wl(tmp_path, cpu={"cores": "big4", "govenor": "schedutil"})
    msg = _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p)]), "cpu.govenor", "unknown key")
    assert "wl.yaml:" in msg


def test_wrong_type(tmp_path):
    p = _wl(tmp_path, batch_size="many")
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p)]), "wl.yaml", "batch_size", "'many'")


@pytest.mark.parametrize("bad", [0, -8])
def test_zero_or_negative_batch_size(tmp_path, bad):
    p = _wl(tmp_path, batch_size=bad)
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p)]), "wl.yaml", "batch_size", str(bad))


def test_missing_required_field(tmp_path):
    p = _wl(tmp_path, model=_DELETE)
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p)]), "wl.yaml", "model", "missing")


def test_missing_workload_file(tmp_path):
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(tmp_path / "nope.yaml")]), "nope.yaml", "not found")


def test_oversized_workload_file_is_refused_without_reading_it_all(tmp_path, monkeypatch):
    """A workload that is not one (/dev/zero, a data file) is refused after a bounded read."""
    import socsim.spec.loader as loader
    monkeypatch.setattr(loader, "MAX_YAML_BYTES", 1000)
    big = _write(tmp_path, "name: x\n" + "# padding\n" * 200)
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(big)]), "wl.yaml", "larger than")
    if Path("/dev/zero").exists():
        _expect_2(_run(tmp_path, ["run", "--soc", "sd865", "/dev/zero"]), "/dev/zero", "larger than")


# -- names that do not exist ---------------------------------------------------------------------

def test_unknown_soc(tmp_path):
    p = _wl(tmp_path)
    _expect_2(_run(tmp_path, ["run", "--soc", "nosuch", str(p)]), "--soc", "nosuch", "sd865")


def test_bad_soc_spec_file(tmp_path):
    spec = yaml.safe_load((soc_specs_dir() / "sd865.yaml").read_text())
    spec["cpu"]["clusters"][0]["opps"][0]["freq_mhz"] = -300
    s = _write(tmp_path, spec, "badsoc.yaml")
    _expect_2(_run(tmp_path, ["run", "--soc", str(s), str(_wl(tmp_path))]),
              "badsoc.yaml", "cpu.clusters.0.opps.0.freq_mhz", "-300")



@pytest.mark.parametrize("key, value, field", [
    ("charge_voltage_v", -1, "battery.charge_voltage_v"),
    ("charge_voltage_v", "inf", "battery.charge_voltage_v"),
    ("charger_efficiency", 1.5, "battery.charger_efficiency"),
    ("charger_efficiency", 0, "battery.charger_efficiency"),
])
def test_bad_battery_charging_values_name_their_field(tmp_path, key, value, field):
    spec = yaml.safe_load((soc_specs_dir() / "sd865.yaml").read_text())
    spec["battery"][key] = float(value) if value == "inf" else value
    s = _write(tmp_path, spec, "badsoc.yaml")
    _expect_2(_run(tmp_path, ["run", "--soc", str(s), str(_wl(tmp_path))]), "badsoc.yaml", field, str(value))


def test_unknown_scheduler_in_file(tmp_path):
    p = _wl(tmp_path, scheduler={"name": "nosuch-sched", "options": {}})
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p)]), "wl.yaml", "scheduler.name", "nosuch-sched")


def test_unknown_scheduler_option(tmp_path):
    p = _wl(tmp_path)
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p), "--scheduler", "nosuch-sched"]),
              "scheduler.name", "nosuch-sched")


def test_unknown_model(tmp_path):
    p = _wl(tmp_path, model="nosuchnet")
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p)]), "wl.yaml", "model", "nosuchnet")


def test_input_too_small_for_model(tmp_path):
    p = _wl(tmp_path, model="vgg16", input=[3, 8, 8])
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p)]), "wl.yaml", "input", "too small")


# -- --set overrides -----------------------------------------------------------------------------

@pytest.mark.parametrize("override", ["nosuch.key=1", "batch_size.x=1", "cpu.nosuch=2"])
def test_set_path_that_does_not_exist(tmp_path, override):
    p = _wl(tmp_path)
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p), "--set", override]),
              "--set", override.split("=")[0])


def test_set_bad_value(tmp_path):
    p = _wl(tmp_path)
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p), "--set", "batch_size=0"]), "batch_size", "0")


def test_set_without_equals(tmp_path):
    p = _wl(tmp_path)
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p), "--set", "batch_size"]), "--set", "batch_size")


# -- socsim validate -------------------------------------------------------------------------

@pytest.mark.parametrize("changes,needles", [
    ({"batch_size": 0}, ["batch_size", "0"]),
    ({"precision": "fp64"}, ["precision", "fp64"]),
    ({"model": "nosuchnet"}, ["model", "nosuchnet"]),
    ({"model": "vgg16", "input": [3, 8, 8]}, ["input", "too small"]),
    ({"scheduler": {"name": "nosuch-sched"}}, ["scheduler.name", "nosuch-sched"]),
])
def test_validate_bad_workload(tmp_path, changes, needles):
    p = _wl(tmp_path, **changes)
    res = CliRunner().invoke(main, ["validate", str(p)])
    _expect_2(res, "wl.yaml", *needles)


def test_validate_malformed_yaml(tmp_path):
    p = _write(tmp_path, "cpu: {clusters: [\nthermal: 1\n", "bad.yaml")
    res = CliRunner().invoke(main, ["validate", str(p)])
    _expect_2(res, "bad.yaml:", "malformed YAML")


def test_model_errors_name_field_and_value_and_exit_2(tmp_path):
    """What already holds for graph-building errors: exit 2, field and value named, no output."""
    for changes, needles in (({"model": "nosuchnet"}, ["model", "nosuchnet"]),
                             ({"model": "vgg16", "input": [3, 8, 8]}, ["input", "too small"])):
        p = _wl(tmp_path, **changes)
        _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p)]), *needles)


# -- every SoC runs the quick-start job ------------------------------------------------------

@pytest.mark.slow  # ~4 s per SoC: the cost model's first costing of each op shape
@pytest.mark.parametrize("soc", sorted(p.stem for p in soc_specs_dir().glob("*.yaml")))
def test_quickstart_runs_on_every_soc(tmp_path, soc):
    out = tmp_path / "s.json"
    res = CliRunner().invoke(main, ["run", "--soc", soc, str(workloads_dir() / "quickstart.yaml"),
                                    "--set", "batches=5", "--json", str(out), "--quiet"])
    assert res.exit_code == 0, f"{res.output}\n{res.exception!r}"
    import json
    summary = json.loads(out.read_text())
    assert summary["soc"] == soc and summary["batches"] == 5
    assert summary["per_batch"]["time_s"] > 0 and summary["per_batch"]["energy_j"] > 0


@pytest.mark.parametrize("override, field", [
    ("batch_size=1000000000000000000", "batch_size"),
    ("num_classes=1000000000000000000", "num_classes"),
    ("input=[100000000000000000000000,28,28]", "input.0"),
    ("cpu.cores='²³'", "cpu.cores"),
    ("cpu.cores='٤٥'", "cpu.cores"),   # not ASCII digits: not read as cores 4 and 5
])
def test_huge_or_non_ascii_values_exit_2_naming_the_field(tmp_path, override, field):
    p = _wl(tmp_path)
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", str(p), "--set", override]), f"field '{field}'",
              "(from --set)")


def test_a_soc_spec_given_as_the_workload_says_so(tmp_path):
    spec = str(soc_specs_dir() / "sd865.yaml")
    _expect_2(_run(tmp_path, ["run", "--soc", "sd865", spec]), "looks like a SoC spec", "--soc")


def test_exponent_numbers_in_set_are_numbers():
    from socsim.spec import _parse_scalar
    assert _parse_scalar("1e9") == 1e9 and _parse_scalar("-2.5E-3") == -2.5e-3
    assert _parse_scalar("1e") == "1e" and _parse_scalar("big2") == "big2"
