"""Environment settings that cannot happen on a phone are input errors naming the field, not
silently reordered or accepted (docs/guide.md, the workload file)."""
from __future__ import annotations

import pytest

import socsim
from socsim.errors import InputError

WL = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=1)


def _env_error(env: dict) -> InputError:
    with pytest.raises(InputError) as e:
        socsim.run("sd865", {**WL, "environment": env})
    return e.value


@pytest.mark.parametrize("profile, words", [
    ([{"at_s": 30, "mb": 600}, {"at_s": 0, "mb": 900}], "step 1 (at_s 0) comes before step 0 (at_s 30)"),
    ([{"at_s": 0, "mb": 900}, {"at_s": 5, "mb": 700}, {"at_s": 2, "mb": 100}], "step 2 (at_s 2) comes before step 1"),
    ([], "at least one step"),
])
def test_a_budget_profile_out_of_order_or_empty_is_refused(profile, words):
    e = _env_error({"memory_budget_mb": profile})
    assert e.field == "environment.memory_budget_mb" and words in e.message


def test_an_app_using_more_dram_bandwidth_than_the_phone_has_is_refused():
    e = _env_error({"foreground_load": {"cores": [4], "duration_s": 5, "memory_gbs": 500}})
    assert e.field == "environment.foreground_load.memory_gbs" and e.value == 500
    assert "44 GB/s" in e.message
