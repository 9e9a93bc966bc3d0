"""Op slices of a long run are decimated (output.trace_limit), so its trace stays bounded; a
run shorter than trace_every x trace_limit keeps exactly what it kept before."""
from __future__ import annotations

import math

from hypothesis import given, settings, strategies as st

from socsim.report.events import keeps_batch, kept_batches


def test_short_runs_keep_the_first_batches_then_every_nth():
    kept = [b for b in range(50 * 1000) if keeps_batch(b, 200, 50, 1000)]
    assert kept == [b for b in range(50 * 1000) if b < 200 or b % 50 == 0]


def test_null_limit_keeps_every_nth_to_the_end():
    assert all(keeps_batch(b, 0, 50, None) == (b % 50 == 0) for b in range(0, 3_000_000, 997))


def test_two_million_batches_keep_a_few_thousand():
    n = sum(1 for b in range(0, 2_000_000, 50) if keeps_batch(b, 200, 50, 1000))
    assert 3000 < n < 4500, n     # 40,000 without the limit


@settings(max_examples=30, deadline=None)
@given(first=st.integers(0, 500), every=st.integers(1, 20), limit=st.integers(1, 100),
       scale=st.integers(1, 32))
def test_kept_batches_grow_with_the_log_of_the_run(first, every, limit, scale):
    span = every * limit
    total = span * scale
    n = sum(1 for b in range(total) if keeps_batch(b, first, every, limit))
    assert n <= first + limit + (limit / 2 + 1) * (math.log2(scale) + 1) + 1
    # the first span keeps what the rule without a limit keeps
    assert all(keeps_batch(b, first, every, limit) == (b < first or b % every == 0) for b in range(span))


@settings(max_examples=30, deadline=None)
@given(total=st.integers(0, 30_000), first=st.integers(0, 300), every=st.integers(1, 20),
       limit=st.one_of(st.none(), st.integers(1, 100)))
def test_kept_batches_counts_what_keeps_batch_keeps(total, first, every, limit):
    assert kept_batches(total, first, every, limit) == sum(keeps_batch(b, first, every, limit) for b in range(total))
