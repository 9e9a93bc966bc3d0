"""Bad options of the built-in schedulers are input errors (exit 2) naming the option and its
value; setups a scheduler cannot run are schedule errors (socsim.sched.registry and the
schedulers' own checks).  Errors here are raised before any profiling, so the runs are cheap."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

import socsim
from socsim.cli import main
from socsim.errors import InputError, ScheduleError
from socsim.sched.registry import _error_field

WL = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=1)


def _run(name: str, soc: str = "sd865", precision: str = "fp32", **options):
    return socsim.run(soc, {**WL, "precision": precision, "scheduler": {"name": name, "options": options}})


@pytest.mark.parametrize("name,precision,options,field,value", [
    ("swan", "fp32", {"choices": []}, "scheduler.options.choices", []),
    ("swan", "fp32", {"choices": ["89"]}, "scheduler.options.choices", "89"),
    # the options model checks the strings (its message names the choice), the plan the SoC
    ("swan", "fp32", {"choices": ["45", "54"]}, "scheduler.options.choices", ["45", "54"]),
    ("swan", "fp32", {"choices": ["445"]}, "scheduler.options.choices", ["445"]),
    ("mandheling", "niti", {"cpu_cores": "big9"}, "scheduler.options.cpu_cores", "big9"),
    ("mandheling", "niti", {"cpu_cores": "bigx"}, "scheduler.options.cpu_cores", "bigx"),
    ("mandheling", "niti", {"cpu_cores": []}, "scheduler.options.cpu_cores", []),
    ("mandheling", "niti", {"scale_change_interval": [5, 2]}, "scheduler.options.scale_change_interval", [5, 2]),
    ("mnn-fp32", "fp32", {"cores": "big9"}, "scheduler.options.cores", "big9"),
    ("mnn-int8", "niti", {"cores": [4, 12]}, "scheduler.options.cores", [4, 12]),
    ("mnn-int8", "niti", {"int8_path": "int4"}, "scheduler.options.int8_path", "int4"),
    ("pytorch", "fp32", {"cores": []}, "scheduler.options.cores", []),
    ("tflite-fp32", "fp32", {"cores": "little9"}, "scheduler.options.cores", "little9"),
])
def test_bad_options_name_their_field_and_value(name, precision, options, field, value):
    with pytest.raises(InputError) as e:
        _run(name, precision=precision, **options)
    assert not isinstance(e.value, ScheduleError)
    assert e.value.field == field and e.value.value == value


def test_bad_options_exit_2_on_the_cli(tmp_path):
    wl = tmp_path / "w.yaml"
    wl.write_text("name: t\nmodel: lenet\ninput: [1, 28, 28]\nbatch_size: 16\nbatches: 1\nprecision: niti\n")
    for sched, opt, field in (("swan", "scheduler.options.choices=[]", "scheduler.options.choices"),
                              ("mandheling", "scheduler.options.cpu_cores=big9", "scheduler.options.cpu_cores"),
                              ("mandheling", "scheduler.options.scale_change_interval=[5,2]",
                               "scheduler.options.scale_change_interval"),
                              ("mnn-fp32", "scheduler.options.cores=big9", "scheduler.options.cores")):
        r = CliRunner().invoke(main, ["run", "--soc", "sd865", str(wl), "--scheduler", sched, "--quiet",
                                      "--set", opt], terminal_width=300)
        assert r.exit_code == 2, r.output
        assert f"field '{field}'" in r.output and "cpu.cores'" not in r.output


class _Opts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    low: int = 1
    high: int = 2

    @model_validator(mode="after")
    def _order(self):
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        return self


class _Anon(_Opts):
    @model_validator(mode="after")
    def _other(self):
        raise ValueError("these options do not go together")


def _err(model, options):
    with pytest.raises(ValidationError) as e:
        model.model_validate(options)
    return e.value.errors()[0]


def test_model_validator_errors_name_an_option_or_the_options():
    opts = {"low": 5, "high": 2}
    # the message names options: the first it names, as a word ("lower" would not be "low")
    assert _error_field(_err(_Opts, opts), opts) == ("scheduler.options.low", 5)
    assert _error_field({"loc": (), "msg": "lower must not exceed high"}, opts) == ("scheduler.options.high", 2)
    assert _error_field(_err(_Anon, {"low": 1}), {"low": 1}) == ("scheduler.options", {"low": 1})
    assert _error_field(_err(_Opts, {"low": "x"}), {"low": "x"}) == ("scheduler.options.low", "x")


def test_mandheling_needs_a_dsp():
    with pytest.raises(ScheduleError) as e:
        _run("mandheling", soc="exynos9820", precision="niti")
    assert e.value.field == "scheduler.name" and e.value.value == "mandheling"
    assert "exynos9820 has no DSP" in e.value.message


def test_a_composed_base_reports_its_own_fields():
    def base(name="mandheling", **options):
        return {"base": {"name": name, "options": options}}
    with pytest.raises(InputError) as e:
        _run("min-energy", precision="niti", **base(cpu_cores="big9"))
    assert e.value.field == "scheduler.options.base.options.cpu_cores"
    with pytest.raises(InputError) as e:
        _run("min-energy", precision="niti", **base(nope=1))
    assert e.value.field == "scheduler.options.base.options.nope"
    with pytest.raises(InputError) as e:
        _run("min-energy", **base(name="no-such-scheduler"))
    assert e.value.field == "scheduler.options.base.name"
    with pytest.raises(ScheduleError) as e:
        _run("min-energy", soc="exynos9820", precision="niti", **base())
    assert e.value.field == "scheduler.options.base.name" and "no DSP" in e.value.message


@pytest.mark.parametrize("options,field,value", [
    ({"levels": ["high", "foo"]}, "scheduler.options.levels.1", "foo"),
    ({"cores": ["x"]}, "scheduler.options.cores", ["x"]),        # union tags are not fields
    ({"base": {"options": {}}}, "scheduler.options.base.name", None),
])
def test_nested_option_errors_point_into_the_value(options, field, value):
    from socsim.sched.baselines import CpuOptions
    from socsim.sched.min_energy import MinEnergyOptions
    model = CpuOptions if "cores" in options else MinEnergyOptions
    assert _error_field(_err(model, options), options) == (field, value)


def test_a_composed_infeasible_budget_is_a_schedule_error():
    with pytest.raises(ScheduleError) as e:
        _run("min-energy", base={"name": "mnn-fp32"}, time_budget_s=1e-6)
    assert e.value.field == "scheduler.options.time_budget_s" and e.value.value == 1e-6
    assert "minimum feasible run time" in e.value.message and "mnn-fp32 @high" in e.value.message


# Errors that do not depend on the phone are the options models' (or the scheduler's
# construction's), so ``socsim validate`` without --soc catches them as ``run`` does.
SOC_FREE = [
    ("min-energy", {"base": {"name": "nosuch"}}, "scheduler.options.base.name", "nosuch", "unknown scheduler"),
    ("min-energy", {"base": {"name": "mandheling", "options": {"bogus": 1}}},
     "scheduler.options.base.options.bogus", 1, "unknown option"),
    ("min-energy", {"base": {"name": "mandheling", "options": {"rescale_window": 1}}},
     "scheduler.options.base.options.rescale_window", 1, "greater than or equal to 2"),
    ("min-energy", {"base": {"name": "min-energy"}}, "scheduler.options.base.name", "min-energy",
     "cannot compose with itself"),
    ("min-energy", {"core_sets": ["big2", "445"]}, "scheduler.options.core_sets", ["big2", "445"], "distinct"),
    ("min-energy", {"mode": "fixed", "config": "4455@high"}, "scheduler.options.config", "4455@high", "distinct"),
    ("mandheling", {"cpu_cores": "huge9"}, "scheduler.options.cpu_cores", "huge9", "unknown core set"),
    ("mandheling", {"cpu_cores": "455"}, "scheduler.options.cpu_cores", "455", "distinct"),
    ("mandheling", {"cpu_cores": [4, 4]}, "scheduler.options.cpu_cores", [4, 4], "distinct"),
    ("mandheling", {"cpu_cores": []}, "scheduler.options.cpu_cores", [], "empty"),
    ("sage", {"unit": "cpu", "cores": "huge9"}, "scheduler.options.cores", "huge9", "unknown core set"),
    ("swan", {"choices": ["4599"]}, "scheduler.options.choices", ["4599"], "choice '4599': a core set names each core once"),
    ("swan", {"choices": ["45", "4a"]}, "scheduler.options.choices", ["45", "4a"], "choice '4a': a core set is a string"),
    ("swan", {"choices": ["4567", "7654"]}, "scheduler.options.choices", ["4567", "7654"], "choice '7654': the same core set"),
]


def _yaml(tmp_path, name, options) -> str:
    import yaml
    p = tmp_path / "w.yaml"
    p.write_text(yaml.safe_dump({**WL, "precision": "fp32", "scheduler": {"name": name, "options": options}}))
    return str(p)


@pytest.mark.parametrize("name,options,field,value,words", SOC_FREE)
def test_validate_without_a_soc_catches_option_errors(tmp_path, name, options, field, value, words):
    from socsim.api import prepare
    with pytest.raises(InputError) as e:
        prepare({**WL, "precision": "fp32", "scheduler": {"name": name, "options": options}})
    assert not isinstance(e.value, ScheduleError)
    assert (e.value.field, e.value.value) == (field, value) and words in e.value.message
    r = CliRunner().invoke(main, ["validate", _yaml(tmp_path, name, options)], terminal_width=300)
    assert r.exit_code == 2, r.output
    assert f"field '{field}'" in r.output and "ok:" not in r.output


@pytest.mark.parametrize("name,options", [
    ("min-energy", {"base": {"name": "mandheling", "options": {"cpu_cores": "big1"}}}),
    ("mandheling", {"cpu_cores": "456"}),
    ("mandheling", {"cpu_cores": [4, 5]}),
    ("swan", {"choices": ["4567", "45", "0"]}),
    ("sage", {"unit": "cpu", "cores": "little2"}),
])
def test_well_formed_options_still_validate(tmp_path, name, options):
    r = CliRunner().invoke(main, ["validate", _yaml(tmp_path, name, options)], terminal_width=300)
    assert r.exit_code == 0, r.output


def test_soc_dependent_core_errors_stay_at_plan_time(tmp_path):
    """A core set the SoC lacks is well-formed: validate passes, validate --soc and run refuse it."""
    for name, options, field in (("swan", {"choices": ["4567", "89"]}, "scheduler.options.choices"),
                                 ("mandheling", {"cpu_cores": "big9"}, "scheduler.options.cpu_cores")):
        path = _yaml(tmp_path, name, options)
        assert CliRunner().invoke(main, ["validate", path]).exit_code == 0
        r = CliRunner().invoke(main, ["validate", path, "--soc", "sd865"], terminal_width=300)
        assert r.exit_code == 2 and f"field '{field}'" in r.output, r.output
