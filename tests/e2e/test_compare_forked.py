"""``compare`` runs its schedulers in forked workers where SOCSIM_JOBS allows (socsim.api,
_compare_forked): the summaries, and so the JSON, are the serial ones."""
from __future__ import annotations

import json

import socsim.api
import socsim.engine.oracle as oracle_mod
from socsim.jsonio import dump_json
from socsim.spec import load_soc

from cli_helpers import LENET  # noqa: E402

NAMES = ["mnn-fp32", "tflite-fp32", "mnn-int8"]


def test_forked_compare_gives_the_serial_summaries(monkeypatch):
    monkeypatch.setattr(oracle_mod.os, "sched_getaffinity", lambda pid: {0, 1})
    spec = load_soc("sd865")
    wl = {**LENET, "batches": 2}
    monkeypatch.setenv("SOCSIM_JOBS", "1")
    assert socsim.api._compare_forked(spec, wl, NAMES, None, True) is None      # one job: here
    serial = socsim.api.compare(spec, wl, NAMES, deterministic=True)
    monkeypatch.setenv("SOCSIM_JOBS", "2")
    forked = socsim.api._compare_forked(spec, wl, NAMES, None, True)
    assert forked is not None                                                   # the workers ran
    assert dump_json(forked) == dump_json(serial)
    assert json.loads(dump_json(socsim.api.compare(spec, wl, NAMES, deterministic=True))) == \
        json.loads(dump_json(serial))


def test_a_failing_worker_falls_back_to_the_serial_runs(monkeypatch):
    """Anything wrong in the workers: the runs are made here, and an error is raised as in a
    serial compare."""
    monkeypatch.setattr(oracle_mod.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setenv("SOCSIM_JOBS", "2")
    calls = []

    def failing(*a, **k):
        calls.append(k.get("scheduler"))
        raise RuntimeError("no such run")

    monkeypatch.setattr(socsim.api, "run", failing)
    try:
        socsim.api.compare("sd865", {**LENET, "batches": 2}, NAMES[:2], deterministic=True)
    except RuntimeError as e:
        assert str(e) == "no such run"
    else:
        raise AssertionError("the serial run's error was not raised")
    assert calls == [NAMES[0]]              # in this process: the first serial run raised
