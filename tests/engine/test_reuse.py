"""socsim.reuse: a fleet's runs share pure memos (op costs, plan estimates, Min-Energy's
DP, the scheduler registry) inside ``reusing()``; a run gives the same summary with or without
them, and outside the block nothing is shared."""
from __future__ import annotations

import json

import pytest

from socsim.api import run
from socsim import reuse
from socsim.engine.batch import BatchWalker

WL = {"name": "r", "model": "lenet", "input": [1, 28, 28], "num_classes": 10, "batch_size": 16, "batches": 3,
      "scheduler": {"name": "min-energy", "options": {"core_sets": ["big4", "little4"], "levels": ["high", "low"],
                                                     "time_budget_s": 5.0}}}


def _summary(wl: dict) -> str:
    return json.dumps(run("sd865", wl, deterministic=True, reports=False).summary, sort_keys=True)


@pytest.fixture(autouse=True)
def _fresh():
    reuse.clear()
    yield
    reuse.clear()


def _count_templates(monkeypatch) -> list[int]:
    calls = [0]
    real = BatchWalker.template

    def counted(self, *a, **kw):
        calls[0] += 1
        return real(self, *a, **kw)

    monkeypatch.setattr(BatchWalker, "template", counted)
    return calls


def test_reused_runs_give_the_fresh_summary(monkeypatch) -> None:
    fresh = _summary(WL)
    other = {**WL, "batches": 5, "environment": {"initial_soc": 0.5}}
    fresh_other = _summary(other)
    calls = _count_templates(monkeypatch)
    with reuse.reusing():
        assert reuse.enabled()
        first = _summary(WL)
        n_first = calls[0]
        again = _summary(WL)
        n_again = calls[0] - n_first
        shared = _summary(other)
    assert not reuse.enabled()
    assert first == again == fresh and shared == fresh_other
    # the second run profiles nothing again: only the engine's own batches build templates
    assert n_again < n_first


def test_outside_reusing_every_run_starts_empty(monkeypatch) -> None:
    calls = _count_templates(monkeypatch)
    _summary(WL)
    n = calls[0]
    _summary(WL)
    assert calls[0] == 2 * n


def test_tables_are_bounded_and_keyed_by_content() -> None:
    with reuse.reusing():
        for i in range(reuse.MAX_TABLES + 5):
            reuse.table("t", i)["x"] = i
        assert reuse.table("t", reuse.MAX_TABLES + 4) == {"x": reuse.MAX_TABLES + 4}
        assert reuse.table("t", 0) == {}      # the oldest was dropped
    from socsim.spec import load_soc
    a = load_soc("sd865")
    b = a.model_copy(deep=True)
    assert a is not b and reuse.spec_key(a) == reuse.spec_key(b)
    assert reuse.spec_key(load_soc("sd888")) != reuse.spec_key(a)
