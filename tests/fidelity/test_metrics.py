"""The error figures: MAPE, Kendall's tau-b and the worst rows, with their defining properties."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from socsim.fidelity.metrics import kendall_tau_b, mape, rel_error_pct, worst

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
