"""The phone's own background work as a run condition (``environment.background``, socsim.hw.forkjoin):
the schema takes 0-1 per domain and refuses anything else with the file, field and value."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from socsim.errors import InputError
from socsim.spec import workload_from_dict

WL = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=2)


def _wl(background):
    return workload_from_dict({**WL, "environment": {"background": background}}, "w.yaml")


def test_left_out_it_is_null_and_the_fitted_values_apply():
    assert workload_from_dict(WL).environment.background is None
    bg = _wl({"little": 0.0}).environment.background
    assert bg.little == 0.0 and bg.big is None   # big: the fitted value (forkjoin.background_of)


@settings(max_examples=60, deadline=None)
@given(little=st.floats(0.0, 1.0), big=st.floats(0.0, 1.0))
def test_every_share_from_0_to_1_is_taken_as_stated(little, big):
    bg = _wl({"little": little, "big": big}).environment.background
    assert (bg.little, bg.big) == (little, big)


@settings(max_examples=60, deadline=None)
@given(domain=st.sampled_from(["little", "big"]),
       value=st.one_of(st.floats(max_value=0.0, exclude_max=True), st.floats(min_value=1.0, exclude_min=True),
                       st.just(math.nan)))
def test_outside_0_1_is_an_input_error_naming_file_field_and_value(domain, value):
    with pytest.raises(InputError) as e:
        _wl({domain: value})
    msg = e.value.render()
    assert "w.yaml" in msg and f"environment.background.{domain}" in msg
    assert e.value.field == f"environment.background.{domain}"


@pytest.mark.parametrize("bad", [{"medium": 0.1}, "quiet", 0.1, {"big": "a lot"}, {"big": True}])
def test_other_shapes_are_input_errors(bad):
    with pytest.raises(InputError) as e:
        _wl(bad)
    assert (e.value.field or "").startswith("environment.background")
