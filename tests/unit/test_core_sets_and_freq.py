"""Core-set names and cpu.freq settings checked against the SoC: bad ones are input errors
naming the field they came from (socsim.engine.cores)."""
from __future__ import annotations

import pytest

import socsim
from socsim.engine.cores import check_freq_setting, is_core_set_name, resolve_cores
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


@pytest.mark.parametrize("spec", ["big9", "big0", "bigx", "big-1", "foo", "", [], [4, 4], [8], 4])
def test_bad_core_sets_are_input_errors_naming_the_given_field(spec):
    with pytest.raises(InputError) as e:
        resolve_cores(SD855, spec, field="scheduler.options.cpu_cores")
    assert e.value.field == "scheduler.options.cpu_cores"


def test_core_set_name_format():
    assert all(is_core_set_name(n) for n in ("big1", "little6", "hybrid8", "prime1", "all"))
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
