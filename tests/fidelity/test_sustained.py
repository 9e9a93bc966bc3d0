"""``socsim fidelity --sustained S``: each row measured over S seconds of training from a cold
phone, the way a power monitor averaging a whole training round sees it."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from socsim.errors import InputError
from socsim.fidelity import evaluate, load_measurements
from socsim.fidelity.evaluate import sustained_batches
from socsim.spec.workload import MAX_BATCHES
from tests.e2e.cli_helpers import invoke
from tests.fidelity.helpers import SMALL, write


@given(s=st.floats(0.001, 1e5), t=st.floats(1e-4, 100.0), b=st.integers(1, 8))
def test_sustained_batches_fill_the_duration_and_no_more(s, t, b):
    n = sustained_batches(s, t, b)
    assert b <= n <= MAX_BATCHES
    if n < MAX_BATCHES:
        assert n * t >= s * (1 - 1e-12)           # the run lasts at least S
    if n > b:
        assert (n - 1) * t < s                     # and not a batch more than it needs


def _rows(report: dict) -> dict[str, dict]:
    return {r["id"]: r for r in report["tables"][0]["rows"]}


def test_a_hot_row_throttles_over_a_sustained_run_and_a_cool_one_does_not(tmp_path):
    # LeNet on sd865's four big cores at their top clock heats the cluster to its trip within
    # seconds (docs/validation.md, thermal: CPU FP32 caps at ~16 s); one little core at its
    # lowest clock never gets there.  Over 60 s the big row's average batch is slower and
    # cheaper per batch (lower clocks, lower voltage); the little row's figures stay.
    data = {**SMALL, "tables": [{**SMALL["tables"][0], "rows": SMALL["tables"][0]["rows"][:2]}]}
    suite = load_measurements(write(tmp_path, data))
    cold = _rows(evaluate(suite))
    rep = evaluate(suite, sustained_s=60.0)
    hot = _rows(rep)
    assert rep["sustained_s"] == 60.0
    assert hot["big4"]["simulated_time_s"] > 1.1 * cold["big4"]["simulated_time_s"]
    assert hot["big4"]["simulated_energy_j"] < 0.95 * cold["big4"]["simulated_energy_j"]
    assert hot["little1"]["simulated_time_s"] == pytest.approx(cold["little1"]["simulated_time_s"], rel=1e-6)
    assert hot["little1"]["simulated_energy_j"] == pytest.approx(cold["little1"]["simulated_energy_j"], rel=0.01)


def test_off_by_default_leaves_the_report_as_it_was(tmp_path):
    suite = load_measurements(write(tmp_path))
    assert "sustained_s" not in evaluate(suite, batches=1)


@pytest.mark.parametrize("value", [-1.0, math.nan, math.inf])
def test_a_bad_duration_is_an_input_error(tmp_path, value):
    with pytest.raises(InputError) as e:
        evaluate(load_measurements(write(tmp_path)), sustained_s=value)
    assert e.value.field == "--sustained"


def test_cli_rejects_a_negative_duration(tmp_path):
    res = invoke("fidelity", str(write(tmp_path)), "--sustained", "-5")
    assert res.exit_code == 2 and "--sustained" in res.output


def test_cli_rejects_sustained_with_a_trace(tmp_path):
    res = invoke("fidelity", "--trace", str(tmp_path / "t.json"), "--workload", "w.yaml", "--soc", "sd865",
                 "--sustained", "60")
    assert res.exit_code == 2 and "--sustained" in res.output
