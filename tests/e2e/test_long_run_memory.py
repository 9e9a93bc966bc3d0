"""A long run's output files are written streaming: its peak memory with ``--out`` stays within
1.5x of the same run without (issue 29; benchmarks/long_run_rss.py measures longer runs)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from long_run_rss import measure  # noqa: E402


@pytest.mark.slow
def test_output_files_cost_at_most_half_again_the_runs_memory():
    r = measure(20000)
    print(r)
    assert r["ratio"] <= 1.5, r
    assert r["out_mb"] < 25, r   # the quick-start at 20,000 batches: 14.9 MB (2026-11-27)
