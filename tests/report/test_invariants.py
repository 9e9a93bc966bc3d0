"""A result no phone could give (negative or non-finite energy, silicon above 150 C) is an
error, never a printed result."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from socsim.errors import InputError
from socsim.report.invariants import MAX_JUNCTION_C, ModelInvariantError, check_summary


def _summary(total=1.0, rails=None, peak=40.0):
    return {"energy_j": {"total": total, "rails": rails or {"cpu.big": 0.5}},
            "thermal": {"peak_c": peak, "zones_peak_c": {"cpu-1-0": peak, "battery": 30.0}}}


def test_a_plausible_summary_passes():
    check_summary(_summary())


@pytest.mark.parametrize("total, rails", [(-1e-3, None), (math.nan, None), (1.0, {"dram": -2.0}),
                                          (1.0, {"dram": math.inf})])
def test_negative_or_non_finite_energy_is_a_model_error(total, rails):
    with pytest.raises(ModelInvariantError, match="model invariant broken"):
        check_summary(_summary(total, rails))


def test_a_runaway_temperature_names_the_spec_and_the_hot_zone():
    with pytest.raises(InputError) as e:
        check_summary(_summary(peak=277.8), spec_file="my.yaml")
    assert e.value.file == "my.yaml" and e.value.field == "thermal"
    assert "277.8 C" in e.value.message and "cpu-1-0" in e.value.message


@given(peak=st.floats(-40, 400), total=st.floats(-10, 10))
def test_check_summary_accepts_exactly_the_physical_results(peak, total):
    ok_energy, ok_peak = total >= 0, peak <= MAX_JUNCTION_C
    try:
        check_summary(_summary(total=total, peak=peak))
    except ModelInvariantError:
        assert not ok_energy
    except InputError:
        assert ok_energy and not ok_peak
    else:
        assert ok_energy and ok_peak
