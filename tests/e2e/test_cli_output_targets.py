"""Outputs that name the same target exit 2 before the run; the precision note; the progress
bar stays off stderr when stderr is not a terminal."""
from __future__ import annotations

import io
import json
import time

import pytest
from click.testing import CliRunner
from rich.console import Console

import socsim.cli as cli
from socsim.cli import main

from cli_helpers import invoke, write_workload


@pytest.mark.parametrize("args, field", [
    (["--json", "-", "--trace", "-"], "--trace"),
    (["--json", "same.bin", "--trace", "same.bin"], "--trace"),
    (["--json", "x/../same.bin", "--trace", "same.bin"], "--trace"),
    (["--out", "o", "--json", "o/summary.json"], "--json"),
    (["--out", "o", "--trace", "o/ops.csv"], "--trace"),
    (["--out", "o", "--trace", "o"], "--trace"),
    (["--out", "o/run", "--json", "o"], "--json"),
])
def test_two_outputs_on_one_target_exit_2(tmp_path, monkeypatch, args, field):
    wl = write_workload(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = invoke("run", "--soc", "sd865", str(wl), *args)
    assert r.exit_code == 2, r.output
    assert f"field '{field}'" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wl.yaml"]   # nothing written


def test_both_outputs_may_be_thrown_away_in_dev_null(tmp_path):
    wl = write_workload(tmp_path)
    r = invoke("run", "--soc", "sd865", str(wl), "--json", "/dev/null", "--trace", "/dev/null", "--quiet")
    assert r.exit_code == 0, r.output


def test_json_file_inside_out_dir_is_fine(tmp_path):
    wl = write_workload(tmp_path)
    r = invoke("run", "--soc", "sd865", str(wl), "--out", str(tmp_path / "o"), "--json",
               str(tmp_path / "o" / "mine.json"), "--quiet")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "o" / "mine.json").read_text()) == \
        json.loads((tmp_path / "o" / "summary.json").read_text())


def test_precision_the_scheduler_does_not_use_is_reported(tmp_path):
    wl = write_workload(tmp_path)
    r = invoke("run", "--soc", "sd865", str(wl), "--set", "precision=octo", "--json", str(tmp_path / "s.json"))
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["precision"] == "fp32" and s["precision_requested"] == "octo"
    assert "note: mnn-fp32 trains fp32; the workload's precision octo is not used" in " ".join(r.output.split())
    # the precision the scheduler trains in, or none given: no note, no key
    for sets in (["--set", "precision=fp32"], []):
        r = invoke("run", "--soc", "sd865", str(wl), *sets, "--json", "-")
        assert r.exit_code == 0 and "precision_requested" not in json.loads(r.output) and "note:" not in r.output
    r = invoke("run", "--soc", "sd865", str(wl), "--scheduler", "mnn-int8", "--json", "-")
    assert "precision_requested" not in json.loads(r.output)   # the workload gave no precision


def test_compare_notes_the_precision_a_scheduler_does_not_use(tmp_path):
    wl = write_workload(tmp_path)
    r = invoke("compare", "--soc", "sd865", str(wl), "--schedulers", "mnn-fp32,mnn-int8", "--set", "precision=fp32")
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "note: mnn-int8 trains mnn-int8; the workload's precision fp32 is not used" in out
    assert "note: mnn-fp32" not in out


def _stderr_of(args: list[str], after_s: float, monkeypatch) -> str:
    real = cli._Progress.__init__

    def fast(self, label, enabled, **kw):
        real(self, label, enabled, **{**kw, "after_s": after_s})

    monkeypatch.setattr(cli._Progress, "__init__", fast)
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output + r.stderr
    return r.stderr


def test_no_progress_output_when_stderr_is_not_a_terminal(tmp_path, monkeypatch):
    wl = write_workload(tmp_path, batches=40)
    assert _stderr_of(["run", "--soc", "sd865", str(wl)], 0.0, monkeypatch) == ""
    assert _stderr_of(["sweep", "--soc", "sd865", str(wl), "--grid", "batch_size=8,16,32"], 0.0,
                      monkeypatch) == ""


def test_sweep_progress_counts_points(tmp_path, monkeypatch):
    wl = write_workload(tmp_path)
    buf = io.StringIO()
    monkeypatch.setattr(cli, "err_console", Console(file=buf, force_terminal=True, color_system=None, width=120))
    _stderr_of(["sweep", "--soc", "sd865", str(wl), "--grid", "batch_size=8,16,32"], 0.0, monkeypatch)
    text = buf.getvalue()
    assert "/3 points" in text and "batches" not in text


def test_compare_with_its_json_on_stdout_puts_the_notes_on_stderr(tmp_path):
    """As run does: stdout stays one JSON document, the notes go to stderr (only the note on a
    short plan under --quiet)."""
    wl = write_workload(tmp_path)
    args = ["compare", "--soc", "sd865", str(wl), "--schedulers", "mnn-fp32,mnn-int8", "--set", "precision=fp32",
            "--json", "-"]
    r = invoke(*args)
    assert r.exit_code == 0, r.output
    assert [x["scheduler"] for x in json.loads(r.stdout)["runs"]] == ["mnn-fp32", "mnn-int8"]
    assert "note: mnn-int8 trains mnn-int8" in " ".join(r.stderr.split())
    r = invoke(*args, "--quiet")
    assert r.exit_code == 0 and "note:" not in r.stderr


@pytest.mark.parametrize("args, field", [
    (["run", "--soc", "sd865", "WL", "--json", ""], "--json"),
    (["run", "--soc", "sd865", "WL", "--trace", ""], "--trace"),
    (["run", "--soc", "sd865", "WL", "--out", ""], "--out"),
    (["compare", "--soc", "sd865", "WL", "--schedulers", "mnn-fp32", "--json", ""], "--json"),
    (["sweep", "--soc", "sd865", "WL", "--json", ""], "--json"),
    (["op", "--soc", "sd865", "conv2d", "--json", ""], "--json"),
    (["run", "--soc", "", "WL"], "--soc"),
    (["run", "--soc", ".", "WL"], "--soc"),
    (["run", "--soc", "sd865", ""], "WORKLOAD"),
    (["run", "--soc", "sd865", "."], "WORKLOAD"),
    (["run", "--soc", "sd865", "WL", "--json", "jdir/"], "--json"),
    (["run", "--soc", "sd865", "WL", "--trace", "tdir/"], "--trace"),
    (["sweep", "--soc", "sd865", "WL", "--jobs", "100000"], "--jobs"),
    (["op", "--soc", "sd865", "dwconv2d", "--out-channels", "7"], "--out-channels"),
    (["op", "--soc", "sd865", "conv2d", "--cores", "big²"], "--cores"),
])
def test_bad_option_values_exit_2_naming_the_option(tmp_path, monkeypatch, args, field):
    """An empty name (an unset shell variable) is an error, not "no output" or the current
    directory; so are a file name ending in '/', an absurd --jobs, and options the op cannot
    honour.  Nothing is written."""
    wl = write_workload(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = invoke(*[str(wl) if a == "WL" else a for a in args])
    assert r.exit_code == 2, r.output
    assert f"field '{field}'" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wl.yaml"]



def test_progress_says_planning_until_the_first_batch(monkeypatch):
    """At a terminal, a run still planning after ``after_s`` shows that it is planning (a cold
    Swan plan of a large model takes minutes), then the batch bar; nothing is left on close."""
    buf = io.StringIO()
    monkeypatch.setattr(cli, "err_console", Console(file=buf, force_terminal=True, color_system=None, width=120))
    prog = cli._Progress("w on sd865", enabled=True, after_s=0.0)
    deadline = time.monotonic() + 10
    while prog.bar is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert prog.bar is not None
    assert prog.bar.tasks[0].description == "w on sd865: planning" and prog.bar.tasks[0].total is None
    prog(3, 10)
    assert prog.bar.tasks[0].description == "w on sd865" and prog.bar.tasks[0].completed == 3
    prog.close()
    assert "planning" in buf.getvalue()


def test_progress_closed_before_its_timer_shows_nothing(monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr(cli, "err_console", Console(file=buf, force_terminal=True, color_system=None, width=120))
    prog = cli._Progress("w", enabled=True, after_s=0.2)
    prog.close()
    time.sleep(0.4)
    assert prog.bar is None and buf.getvalue() == ""
