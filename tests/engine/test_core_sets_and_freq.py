"""Core-set names and cpu.freq settings checked against the SoC: bad ones are input errors
naming the field they came from (socsim.contract.cores)."""
from __future__ import annotations

import pytest

import socsim
from socsim.contract.cores import check_freq_setting, is_core_set_name, resolve_cores
from socsim.errors import InputError
from socsim.spec import load_soc

SD855 = load_soc("sd855")   # little 300-1800, mid 710.4-2400, prime 800-2841.6 MHz
WL = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=1,
          scheduler={"name": "mnn-fp32"}, cpu={"governor": "userspace"})


def test_core_set_names_resolve():
    assert resolve_cores(SD855, "big2") == (4, 5)
    assert resolve_cores(SD855, "little4") == (0, 1, 2, 3)
    assert resolve_cores(SD855, "prime1") == (7,)
    assert resolve_cores(SD855, [5, 4]) == (4, 5)
    assert resolve_cores(SD855, "456") == (4, 5, 6)      # Swan's way of writing a choice
    assert resolve_cores(SD855, "0") == (0,)


@pytest.mark.parametrize("spec", ["big9", "big0", "bigx", "big-1", "foo", "", [], [4, 4], [8], 4, "4457", "459"])
def test_bad_core_sets_are_input_errors_naming_the_given_field(spec):
    with pytest.raises(InputError) as e:
        resolve_cores(SD855, spec, field="scheduler.options.cpu_cores")
    assert e.value.field == "scheduler.options.cpu_cores"
    assert e.value.value == (list(spec) if isinstance(spec, list) else spec)   # as the user wrote it


def test_core_set_name_format():
    assert all(is_core_set_name(n) for n in ("big1", "little6", "hybrid8", "prime1", "all", "456"))
    assert not any(is_core_set_name(n) for n in ("big", "big0", "bigx", "little-2", "foo", "big4@high"))


@pytest.mark.parametrize("setting", ["max", "mid", "min", 2000, 300, 2841.6, 1000,
                                     {"little": 1800, "prime": "min"}, {"mid": 710.4}])
def test_frequencies_some_cluster_can_use_are_accepted(setting):
    check_freq_setting(SD855, setting)   # 2000 MHz: above little's top, for mid/prime (clamped)


@pytest.mark.parametrize("setting,field", [
    (99999, "cpu.freq"), (2841.7, "cpu.freq"), (1, "cpu.freq"), (299, "cpu.freq"),
    ({"mid": 2700}, "cpu.freq.mid"), ({"little": 2000}, "cpu.freq.little"),
    ({"little": 100}, "cpu.freq.little"), ({"foo": 1000}, "cpu.freq.foo"),
])
def test_frequencies_no_cluster_can_use_are_input_errors(setting, field):
    with pytest.raises(InputError) as e:
        check_freq_setting(SD855, setting)
    assert e.value.field == field


def test_run_refuses_an_impossible_userspace_frequency():
    with pytest.raises(InputError) as e:
        socsim.run("sd855", WL, overrides={"cpu.freq": 99999})
    assert e.value.field == "cpu.freq" and e.value.value == 99999
    assert "2841.6" in e.value.message
    with pytest.raises(InputError) as e:
        socsim.run("sd855", WL, overrides={"cpu.freq": {"little": 2000}})
    assert e.value.field == "cpu.freq.little"
    # one number for all clusters: clamped per cluster as intended
    s = socsim.run("sd855", WL, overrides={"cpu.freq": 2000, "cpu.cores": "big2"}).summary
    assert s["batches"] == 1


@pytest.mark.parametrize("cores, ok", [("456", True), ("'456'", True), ("456", True), ("012", False), ("4457", False)])
def test_workload_core_digits_must_be_quoted_strings(cores, ok):
    """`cores: '456'` names cores 4, 5, 6; a bare 456 is a YAML number (012 even octal 10), so
    it is refused with a hint rather than guessed at."""
    from socsim.spec.workload import Workload
    from pydantic import ValidationError
    value = int(cores) if cores == "012" else cores.strip("'")
    if ok:
        assert Workload.model_validate({**WL, "cpu": {"cores": value}}).cpu.cores == value
    else:
        with pytest.raises(ValidationError, match="quoted|distinct"):
            Workload.model_validate({**WL, "cpu": {"cores": value}})


def test_bare_number_core_set_from_yaml_is_refused_with_a_hint(tmp_path):
    from socsim.errors import InputError as IE
    from socsim.spec import load_workload
    f = tmp_path / "w.yaml"
    f.write_text("name: t\nmodel: lenet\ninput: [1, 28, 28]\nnum_classes: 10\nbatch_size: 4\nbatches: 1\n"
                 "cpu: {cores: 456}\n")
    with pytest.raises(IE) as e:
        load_workload(f)
    assert e.value.field == "cpu.cores" and "quoted" in str(e.value)


def test_an_unknown_cluster_names_the_cluster_and_shows_the_value():
    with pytest.raises(InputError) as e:
        check_freq_setting(SD855, {"big": "mid"})
    assert e.value.field == "cpu.freq.big" and e.value.value == "mid"
    assert "no CPU cluster 'big'" in e.value.message and "little, mid, prime" in e.value.message


def test_a_frequency_no_governor_reads_is_noted():
    """cpu.freq sets the clock only under the userspace governor: elsewhere the summary says it
    had no effect (engine.unused_settings), and the console note repeats it."""
    from socsim.report.console import notes

    sched = {**WL, "cpu": {"governor": "schedutil"}}
    s = socsim.run("sd855", sched, overrides={"cpu.freq": "min"}).summary
    assert s["engine"]["unused_settings"] == [
        "cpu.freq 'min' had no effect: the schedutil governor sets the clock (only cpu.governor: "
        "userspace runs at cpu.freq)"]
    assert any("cpu.freq 'min' had no effect" in n for n in notes(s))
    assert s["per_batch"] == socsim.run("sd855", sched).summary["per_batch"]   # as said: no effect
    assert "unused_settings" not in socsim.run("sd855", WL, overrides={"cpu.freq": "min"}).summary["engine"]
    assert "unused_settings" not in socsim.run("sd855", sched, overrides={"cpu.freq": "max"}).summary["engine"]


def test_mandheling_takes_one_frequency_for_all_clusters():
    """A plain MHz value (not a per-cluster mapping) under userspace: planned and run."""
    wl = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=1,
              precision="niti", scheduler={"name": "mandheling"},
              cpu={"governor": "userspace", "freq": 1804.8})
    s = socsim.run("sd865", wl).summary
    assert s["batches"] == 1
    assert all(v == 1804.8 for v in [s["scheduler_info"]["plans"][k]["cpu_freq_profiled"]
                                     for k in s["scheduler_info"]["plans"]])
