"""``placement`` counts are means per batch over the batches run, not a floor of them."""
from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from socsim.api import run
from socsim.report.summary import _per_batch

ROOT = Path(__file__).resolve().parents[2]


def test_per_batch_is_exact_or_the_mean():
    assert _per_batch(400, 4) == 100 and isinstance(_per_batch(400, 4), int)
    assert _per_batch(410, 4) == 102.5
    assert _per_batch(2, 3) == pytest.approx(0.67)


def test_counts_are_the_mean_of_the_batches_as_run(tmp_path):
    # Mandheling's self-adaptive rescaling alternates plans with different op counts
    r = run("sd865", str(ROOT / "workloads" / "mandheling_vgg16.yaml"), overrides=["batches=4"], out=tmp_path / "o")
    per = Counter()
    with open(tmp_path / "o" / "ops.csv", newline="") as f:
        for row in csv.DictReader(f):
            # one row per op and resource: a CPU op on cores 4 and 5 is two rows
            if row["track"] in ("cpu4", "dsp"):
                per[row["track"][:3]] += 1
    p = r.summary["placement"]
    assert p["cpu_ops"] == pytest.approx(per["cpu"] / 4, abs=0.005)
    assert p["dsp_ops"] == pytest.approx(per["dsp"] / 4, abs=0.005)
    assert len(p["plan_batches"]) > 1
