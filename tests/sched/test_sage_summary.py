"""The summary's memory section follows the micro-batch split over the whole run
(socsim/report/summary.py; ``memory.micro_batches`` keeps the first plan's split)."""
from __future__ import annotations

import socsim

SMALL = dict(name="t", model="resnet18", input=[3, 96, 96], num_classes=10, batch_size=16)


def test_memory_reports_first_final_and_sequence_of_splits():
    steps = [{"at_s": 0, "mb": 200}, {"at_s": 0.5, "mb": 110}, {"at_s": 1.2, "mb": 98}]
    wl = dict(SMALL, batches=9, scheduler={"name": "sage"}, environment={"memory_budget_mb": steps})
    s = socsim.run("sd865", wl).summary
    mem = s["memory"]
    assert mem["micro_batches"] == [16]  # the first plan's split, as before
    assert mem["micro_batches_final"] == [6, 6, 4]
    assert mem["micro_batch_sequence"] == [[16], [10, 6], [6, 6, 4]]
    assert s["scheduler_info"]["split_sequence"] == ["16", "10+6", "6+6+4"]


def test_memory_split_keys_for_an_unsplit_run_and_another_scheduler():
    for name in ("sage", "mnn-fp32-gpu"):
        wl = dict(SMALL, batches=2, scheduler={"name": name}, environment={"memory_budget_mb": None})
        mem = socsim.run("sd865", wl).summary["memory"]
        assert mem["micro_batches"] == mem["micro_batches_final"] == [16]
        assert mem["micro_batch_sequence"] == [[16]]
