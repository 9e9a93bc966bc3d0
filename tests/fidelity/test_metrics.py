"""The error figures: MAPE, Kendall's tau-b and the worst rows, with their defining properties."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from socsim.fidelity.metrics import kendall_tau_b, kendall_tau_b_resolved, mape, rel_error_pct, resolution, worst

values = st.lists(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False), min_size=2, max_size=30)
# distinct values far enough apart that 2x + 1 keeps them distinct in floating point
distinct = st.lists(st.integers(min_value=1, max_value=10**6), min_size=2, max_size=30, unique=True).map(
    lambda xs: [x / 8 for x in xs])


@given(values)
def test_mape_of_identical_lists_is_zero(xs):
    assert mape(xs, xs) == 0.0


@given(distinct)
def test_tau_of_identical_orderings_is_one(xs):
    assert kendall_tau_b(xs, xs) == pytest.approx(1.0)
    assert kendall_tau_b(xs, [2 * x + 1 for x in xs]) == pytest.approx(1.0)


@given(distinct)
def test_tau_of_reversed_ordering_is_minus_one(xs):
    assert kendall_tau_b(xs, [-x for x in xs]) == pytest.approx(-1.0)


@given(values, values)
def test_tau_is_within_bounds_and_symmetric(xs, ys):
    n = min(len(xs), len(ys))
    t = kendall_tau_b(xs[:n], ys[:n])
    assert t is None or -1.0 - 1e-12 <= t <= 1.0 + 1e-12
    assert t == kendall_tau_b(ys[:n], xs[:n])


def test_tau_b_with_ties_matches_the_definition():
    # x ties one pair, y none: (P - Q) / sqrt((P + Q + Tx)(P + Q + Ty)) = (4 - 1) / sqrt(6 * 5)... by hand:
    x, y = [1, 1, 2, 3], [1, 2, 3, 4]
    # pairs: (0,1) tie in x; the other five concordant
    assert kendall_tau_b(x, y) == pytest.approx(5 / (5 * 6) ** 0.5)
    assert kendall_tau_b([1, 1], [1, 2]) is None


def test_mape_and_errors():
    assert rel_error_pct(2.0, 3.0) == pytest.approx(50.0)
    assert mape([2.0, 4.0], [3.0, 2.0]) == pytest.approx(50.0)
    assert mape([], []) is None
    with pytest.raises(ValueError):
        mape([1.0], [])


def test_worst_orders_by_absolute_error_then_position():
    assert worst(["a", "b", "c", "d"], [5.0, -20.0, 20.0, 1.0], 3) == ["b", "c", "a"]


def test_resolution_is_the_unit_of_the_finest_last_digit():
    assert resolution([10.6, 7.0, 25.0]) == pytest.approx(0.1)   # YAML's 7.0 and 25.0 read back as 7 and 25
    assert resolution([25.0, 30.0]) == pytest.approx(1.0)
    assert resolution([4.25, 57.8]) == pytest.approx(0.01)
    assert resolution([6.63e-3, 1e-3 * 6.63]) == pytest.approx(1e-5)   # a unit conversion's float noise is no digit
    assert resolution([]) is None and resolution([0.0]) is None


@given(distinct)
def test_resolved_tau_of_a_perfect_model_is_one_at_any_resolution(xs):
    for res in (0.0, 0.125, 1.0, 100.0):
        t = kendall_tau_b_resolved(xs, xs, res)
        assert t is None or t == pytest.approx(1.0)
    assert kendall_tau_b_resolved(xs, [-x for x in xs], 0.0) == pytest.approx(-1.0)


@given(distinct, st.lists(st.integers(min_value=0, max_value=50), min_size=30, max_size=30))
def test_resolved_tau_at_zero_is_tau_b_and_a_pair_within_resolution_never_counts(xs, perm):
    ys = [x + 0.5 * p for x, p in zip(xs, perm)]
    assert kendall_tau_b_resolved(xs, ys, 0.0) == pytest.approx(kendall_tau_b(xs, ys))   # xs has no ties
    # swap two values 1/8 apart in y: the resolved tau at 1/8 does not see it
    x2 = [1.0, 1.125, 3.0, 4.0]
    assert kendall_tau_b_resolved(x2, [1.125, 1.0, 3.0, 4.0], 0.125) == pytest.approx(1.0)
    assert kendall_tau_b(x2, [1.125, 1.0, 3.0, 4.0]) < 1.0


def test_resolved_tau_by_hand_and_its_errors():
    # pairs of x more than 0.1 apart: (0,2), (0,3), (1,2), (1,3), (2,3); y orders (1,2) wrongly
    x, y = [1.0, 1.1, 2.0, 3.0], [1.0, 2.5, 2.0, 3.0]
    assert kendall_tau_b_resolved(x, y, 0.1) == pytest.approx((4 - 1) / 5)
    assert kendall_tau_b_resolved([1.0, 1.1], [1.0, 2.0], 0.1) is None   # nothing resolved
    with pytest.raises(ValueError):
        kendall_tau_b_resolved([1.0], [], 0.1)
    with pytest.raises(ValueError):
        kendall_tau_b_resolved([1.0], [1.0], -0.1)
