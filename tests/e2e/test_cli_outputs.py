"""Output paths: unwritable ones are bad input (exit 2, naming the option and the path, checked
before the run, nothing left behind); written files and directories get the permissions the
process umask gives (mkstemp/mkdtemp would make them 0600/0700)."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import socsim.api

from cli_helpers import invoke, write_workload as _wl  # noqa: E402


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


# -- bad input, not an internal error ------------------------------------------------------------

def test_negative_seed_is_bad_input(tmp_path):
    p = _wl(tmp_path, seed=-1)
    r = invoke("run", "--soc", "sd865", str(p), "--quiet")
    assert r.exit_code == 2, r.output
    assert "wl.yaml:" in r.output and "seed" in r.output and "-1" in r.output
    r = invoke("validate", str(p))
    assert r.exit_code == 2 and "seed" in r.output


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_out_in_proc_is_bad_input(tmp_path):
    r = invoke("run", "--soc", "sd865", str(_wl(tmp_path)), "--out", "/proc/nope", "--quiet")
    assert r.exit_code == 2, r.output
    assert "--out" in r.output and "/proc/nope" in r.output and "internal error" not in r.output
    assert not Path("/proc/nope").exists()
    r = invoke("run", "--soc", "sd865", str(_wl(tmp_path)), "--json", "/proc/nope/s.json", "--quiet")
    assert r.exit_code == 2 and "--json" in r.output and "/proc/nope/s.json" in r.output, r.output


def test_output_below_a_file_is_bad_input_before_the_run(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the run started before the output paths were checked")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    p = _wl(tmp_path)
    for opt in ("--json", "--trace"):
        monkeypatch.setattr(socsim.api, "run", boom)
        r = invoke("run", "--soc", "sd865", str(p), opt, str(blocker / "sub" / "o.out"), "--quiet")
        assert r.exit_code == 2, r.output
        assert opt in r.output and str(blocker / "sub" / "o.out") in r.output
    monkeypatch.undo()
    r = invoke("run", "--soc", "sd865", str(p), "--out", str(blocker / "run"), "--quiet")
    assert r.exit_code == 2 and "--out" in r.output, r.output
    r = invoke("compare", "--soc", "sd865", str(p), "--schedulers", "mnn-fp32", "--json", str(blocker / "c.json"))
    assert r.exit_code == 2 and "--json" in r.output, r.output


def test_failed_run_leaves_no_parent_directories(tmp_path):
    # a foreground load on a core sd865 lacks: found by the engine, after --out's parents exist
    p = _wl(tmp_path, environment={"foreground_load": {"cores": [12], "duration_s": 1}})
    out = tmp_path / "a" / "b" / "run"
    r = invoke("run", "--soc", "sd865", str(p), "--out", str(out), "--json", str(tmp_path / "j" / "s.json"),
               "--quiet")
    assert r.exit_code == 2, r.output
    assert sorted(x.name for x in tmp_path.iterdir()) == ["wl.yaml"]


# -- permissions ----------------------------------------------------------------------------------

@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_outputs_get_the_umask_permissions(tmp_path, umask):
    p = _wl(tmp_path)
    old = os.umask(umask)
    try:
        out, js, tr = tmp_path / "o" / "run", tmp_path / "o" / "s.json", tmp_path / "t" / "t.perfetto-trace"
        r = invoke("run", "--soc", "sd865", str(p), "--out", str(out), "--json", str(js), "--quiet")
        assert r.exit_code == 0, r.output
        r = invoke("run", "--soc", "sd865", str(p), "--trace", str(tr), "--quiet")
        assert r.exit_code == 0, r.output
        cj = tmp_path / "c.json"
        r = invoke("compare", "--soc", "sd865", str(p), "--schedulers", "mnn-fp32", "--json", str(cj), "--quiet")
        assert r.exit_code == 0, r.output
    finally:
        os.umask(old)
    assert _mode(out) == 0o777 & ~umask
    files = [f for f in out.iterdir()]
    assert {"summary.json", "timeseries.csv", "trace.perfetto-trace", "report.html"} <= {f.name for f in files}
    for f in files:
        assert _mode(f) == 0o666 & ~umask, f
    for f in (js, tr, cj):
        assert _mode(f) == 0o666 & ~umask, f


def test_rewriting_a_file_keeps_its_permissions(tmp_path):
    p = _wl(tmp_path)
    js = tmp_path / "s.json"
    js.write_text("{}")
    js.chmod(0o640)
    r = invoke("run", "--soc", "sd865", str(p), "--json", str(js), "--quiet")
    assert r.exit_code == 0, r.output
    assert _mode(js) == 0o640 and js.read_text().startswith("{\n")
