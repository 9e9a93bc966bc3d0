"""Hostile input through the in-process CLI: hypothesis-made workloads, --set values and SoC-spec
mutations end in exit 0 or 2 (never 1: an internal error), never print a traceback, and leave no
output behind when they fail.  Cheap: a few dozen examples of a 1-2 batch LeNet run."""
from __future__ import annotations

import os
import re

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from socsim.spec import soc_specs_dir

from tests.e2e.cli_helpers import LENET, invoke

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

FIELDS = ["batches", "batch_size", "num_classes", "input", "precision", "seed", "epochs", "dataset_size",
          "cpu.cores", "cpu.governor", "cpu.freq", "dsp.freq_mhz", "environment.ambient_c",
          "environment.memory_budget_mb", "environment.initial_soc", "environment.charger_w",
          "output.sample_ms", "output.trace_batches", "output.trace_every", "output.trace_limit",
          "output.batch_rows", "output.sample_rows",
          "scheduler.name", "model", "name", "nonexistent.key"]
VALUES = st.one_of(
    st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "null", "true", "[]", "{}", "[1,65536,65536]", "[0]", "big2", "456", "max", "mnn-int8",
                     "lenet", "1e18", "-0", "\x1b[31mred\n", "a" * 300, "[1, 28, 28]", "mandheling"]),
    st.text(max_size=12))


def _check(r, out) -> None:
    assert r.exit_code in (0, 2), r.output
    assert "Traceback" not in r.output and "internal error" not in r.output, r.output
    if r.exit_code != 0:
        assert not os.path.exists(out) and not [p for p in os.listdir(os.path.dirname(out)) if p.startswith(".")]


def _fresh(tmp_path, tag: str):
    d = tmp_path / tag
    if d.exists():
        import shutil
        shutil.rmtree(d)
    d.mkdir()
    return d


@SETTINGS
@given(sets=st.lists(st.tuples(st.sampled_from(FIELDS), VALUES), max_size=3))
def test_fuzzed_set_values_exit_0_or_2(tmp_path, sets):
    d = _fresh(tmp_path, "set")
    wl = d / "wl.yaml"
    wl.write_text(yaml.safe_dump({**LENET, "batches": 1}))
    args = [a for k, v in sets for a in ("--set", f"{k}={v}")]
    # a run that would be long is cut to 2 batches of at most 64 (the fuzz is about the input checks)
    r = invoke("run", "--soc", "sd865", str(wl), *args, "--set", "batches=2", "--set", "batch_size=16",
               "--out", str(d / "out"), "--quiet")
    _check(r, str(d / "out"))


WORKLOAD_KEYS = st.dictionaries(st.sampled_from(["name", "model", "input", "batch_size", "batches", "precision",
                                                  "scheduler", "cpu", "output", "environment", "extra"]),
                                st.one_of(VALUES, st.dictionaries(st.text(max_size=6), VALUES, max_size=2)),
                                max_size=4)


@SETTINGS
@given(changes=WORKLOAD_KEYS)
def test_fuzzed_workload_files_exit_0_or_2(tmp_path, changes):
    d = _fresh(tmp_path, "wl")
    data = {**LENET, **changes}
    if isinstance(data.get("batches"), int) and not isinstance(data["batches"], bool):
        data["batches"] = max(1, min(int(data["batches"]), 2)) if data["batches"] > 0 else data["batches"]
    if isinstance(data.get("batch_size"), int) and not isinstance(data["batch_size"], bool) and data["batch_size"] > 64:
        data["batch_size"] = 64
    wl = d / "wl.yaml"
    wl.write_text(yaml.safe_dump(data))
    r = invoke("run", "--soc", "sd865", str(wl), "--out", str(d / "out"), "--quiet")
    _check(r, str(d / "out"))


SD865 = (soc_specs_dir() / "sd865.yaml").read_text()
NUMBERS = list(re.finditer(r"(?<=: )-?\d+(\.\d+)?(?=[,}\s])", SD865))


@SETTINGS
@given(picks=st.lists(st.tuples(st.integers(0, len(NUMBERS) - 1),
                                st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=32),
                                          st.sampled_from([0, -1, 1e9, 4095, 65536, 0.001, 1e-9]))),
                      min_size=1, max_size=3))
def test_fuzzed_soc_specs_exit_0_or_2(tmp_path, picks):
    d = _fresh(tmp_path, "soc")
    text = SD865
    for i, value in sorted(picks, key=lambda p: -NUMBERS[p[0]].start()):
        m = NUMBERS[i]
        text = text[:m.start()] + repr(value) + text[m.end():]
    spec = d / "soc.yaml"
    spec.write_text(text)
    r = invoke("validate", str(spec))
    assert r.exit_code in (0, 2) and "Traceback" not in r.output, r.output
    if r.exit_code == 0:
        wl = d / "wl.yaml"
        wl.write_text(yaml.safe_dump({**LENET, "batches": 1}))
        r = invoke("run", "--soc", str(spec), str(wl), "--out", str(d / "out"), "--quiet")
        _check(r, str(d / "out"))
