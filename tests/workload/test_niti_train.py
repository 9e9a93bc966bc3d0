"""NITI integer training on the emulated HVX kernels (socsim.workload.niti_train) and its use by
Mandheling's self-adaptive rescaling (scale_source="niti-train").

The assertions describe what the real run does: the loss falls and accuracy goes well above
chance; after an early phase in which the shifts drift up, each layer's shift only oscillates
between two adjacent values.  At this scale (batch 16, 8x8 images) the oscillation is frequent
(most batches change some layer), not the every-10-60-batches of the paper's CIFAR runs.
"""
from __future__ import annotations

import numpy as np
import pytest

import socsim
from socsim.workload.niti_train import change_rate, niti_scale_trace, niti_train

BATCHES = 200


@pytest.fixture(scope="module")
def run():
    return niti_train(BATCHES, 0)


def test_training_is_deterministic_and_a_prefix_of_longer_runs(run):
    again = niti_train.__wrapped__(BATCHES, 0)   # bypass the memo: really retrain
    assert np.array_equal(again.shifts, run.shifts)
    assert np.array_equal(again.loss, run.loss) and np.array_equal(again.accuracy, run.accuracy)
    assert np.array_equal(niti_scale_trace(40, 0), run.shifts[:40])
    assert niti_scale_trace(BATCHES, 0).shape == (BATCHES, 3)
    assert not np.array_equal(niti_scale_trace(40, 1), run.shifts[:40])


def test_loss_falls_and_accuracy_beats_chance(run):
    early, late = slice(0, 20), slice(BATCHES - 100, BATCHES)
    assert run.loss[late].mean() < 0.5 * run.loss[early].mean()
    assert run.accuracy[early].mean() < 0.8
    assert run.accuracy[late].mean() > 0.8          # 4 classes: chance is 0.25


def test_shifts_settle_to_two_adjacent_values(run):
    s = run.shifts
    late = s[BATCHES // 2:]
    # settled: every layer's shift takes at most two adjacent values
    assert all(late[:, l].max() - late[:, l].min() <= 1 for l in range(s.shape[1]))
    # early phase: the shifts drift (weights grow from the Xavier init), so the first layers
    # start below where they settle
    assert (s[:10].mean(axis=0) < late.mean(axis=0)).sum() >= 2
    # observed, not modelled: changes are frequent at this scale, but not every batch
    assert 0.1 < change_rate(late) < 0.95


def test_mandheling_observes_niti_train_scales():
    wl = {"name": "niti-vgg11", "model": "vgg11", "input": [3, 32, 32], "num_classes": 10,
          "batch_size": 16, "batches": 6, "precision": "niti",
          "scheduler": {"name": "mandheling", "options": {}}, "seed": 0}
    res = socsim.run("sd865", wl, overrides={"scheduler.options.scale_source": "niti-train"})
    extra = res.summary["scheduler_info"]["rescale"]
    assert extra["scale_source"] == "niti-train"
    rates = extra["observed_change_rate"]
    trace = niti_scale_trace(6, 0)
    changes = int(np.any(np.diff(trace, axis=0) != 0, axis=1).sum())
    assert extra["scale_changes"] == changes and rates["all"] == round(changes / 5, 4)
    assert extra["dynamic_batches"] + extra["stale_batches"] <= 6
    model = socsim.run("sd865", wl).summary["scheduler_info"]["rescale"]
    assert model["scale_source"] == "model" and "observed_change_rate" not in model

