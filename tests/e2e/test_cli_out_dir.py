"""`run --out DIR` into a directory that already holds files: socsim replaces only its own
files, `--out .` works, and a failed or interrupted run leaves DIR as it was."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import socsim.report.writers

from cli_helpers import invoke, write_workload

RUN_FILES = ["summary.json", "timeseries.csv", "ops.csv", "batches.csv", "events.csv",
             "trace.perfetto-trace", "report.html"]


def _user_files(d: Path) -> None:
    (d / "notes.txt").write_text("mine\n")
    (d / "sub").mkdir()
    (d / "sub" / "deep.txt").write_text("deep\n")


def test_out_dir_keeps_files_socsim_did_not_write(tmp_path):
    wl = write_workload(tmp_path)
    d = tmp_path / "d"
    d.mkdir()
    _user_files(d)
    (d / "summary.json").write_text("{}\n")          # a previous run's file: replaced
    (d / "timeseries.parquet").write_text("stale")   # a previous run's, not written now: removed
    r = invoke("run", "--soc", "sd865", str(wl), "--out", str(d))
    assert r.exit_code == 0, r.output
    assert (d / "notes.txt").read_text() == "mine\n" and (d / "sub" / "deep.txt").read_text() == "deep\n"
    assert (d / "summary.json").read_text() != "{}\n"
    assert not (d / "timeseries.parquet").exists() or (d / "timeseries.parquet").read_text() != "stale"
    assert sorted(p.name for p in d.iterdir()) == sorted(RUN_FILES + ["notes.txt", "sub"])
    # the console lists every file written
    assert f"wrote {d}/ ({', '.join(RUN_FILES)})" in " ".join(r.output.split())


def test_out_dot_writes_into_the_current_directory(tmp_path, monkeypatch):
    wl = write_workload(tmp_path)
    d = tmp_path / "here"
    d.mkdir()
    _user_files(d)
    monkeypatch.chdir(d)
    r = invoke("run", "--soc", "sd865", str(wl), "--out", ".", "--quiet")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in d.iterdir()) == sorted(RUN_FILES + ["notes.txt", "sub"])
    assert (d / "notes.txt").read_text() == "mine\n"


def test_failed_run_leaves_out_dir_unchanged(tmp_path, monkeypatch):
    wl = write_workload(tmp_path)
    d = tmp_path / "d"
    d.mkdir()
    _user_files(d)
    (d / "summary.json").write_text("old\n")
    before = sorted(str(p.relative_to(d)) for p in d.rglob("*"))

    def broken(run_dir, *a, **k):
        raise RuntimeError("report writer broke")

    monkeypatch.setattr(socsim.report.writers, "write_reports", broken)
    r = invoke("run", "--soc", "sd865", str(wl), "--out", str(d))
    assert r.exit_code == 1
    assert sorted(str(p.relative_to(d)) for p in d.rglob("*")) == before   # no temp dir left
    assert (d / "summary.json").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "wl.yaml"]


def test_directory_named_like_an_output_is_refused(tmp_path):
    wl = write_workload(tmp_path)
    d = tmp_path / "d"
    (d / "report.html").mkdir(parents=True)
    r = invoke("run", "--soc", "sd865", str(wl), "--out", str(d))
    assert r.exit_code == 2 and "report.html" in r.output and "--out" in r.output
    assert [p.name for p in d.iterdir()] == ["report.html"]


def test_publish_puts_old_files_back_when_a_move_fails(tmp_path, monkeypatch):
    from socsim import api
    from socsim.api import OUTPUT_NAMES

    out, tmp = tmp_path / "out", tmp_path / "out" / ".tmp"
    tmp.mkdir(parents=True)
    for n in ("summary.json", "ops.csv"):
        (out / n).write_text("old " + n)
        (tmp / n).write_text("new " + n)
    (out / "notes.txt").write_text("mine")
    real = os.replace
    calls = []

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == 4:   # after both old files are aside and one new file is in
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(api.os, "replace", flaky)
    with pytest.raises(OSError):
        api._publish(tmp, out)
    monkeypatch.setattr(api.os, "replace", real)
    assert {p.name: p.read_text() for p in out.iterdir() if p.is_file()} == \
        {"summary.json": "old summary.json", "ops.csv": "old ops.csv", "notes.txt": "mine"}
    assert set(OUTPUT_NAMES) >= {"summary.json", "ops.csv"}


def _kill_group(p: subprocess.Popen) -> None:
    """Kill what the test started (its own session: the command and any workers), whatever
    happened."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    p.wait()


def test_sigterm_removes_the_temporary_directory(tmp_path):
    wl = write_workload(tmp_path, batches=1_000_000)
    d = tmp_path / "o"
    d.mkdir()
    (d / "notes.txt").write_text("mine")
    env = {**os.environ, "COLUMNS": "120"}
    p = subprocess.Popen([sys.executable, "-m", "socsim.cli", "run", "--soc", "sd865", str(wl), "--out", str(d)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        def hidden() -> list[str]:   # the run's temporary directory (in DIR, or beside it)
            return [x.name for x in [*d.iterdir(), *tmp_path.iterdir()] if x.name.startswith(".")]

        assert _wait_until(hidden, 90), "the run never started"  # generous: CI runs this beside other tests
        time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    finally:
        _kill_group(p)
    assert p.returncode == 143, err
    assert [x.name for x in d.iterdir()] == ["notes.txt"] and not hidden()


def _wait_until(cond, seconds: float) -> bool:
    """Poll ``cond`` until it holds or ``seconds`` pass; its last value."""
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() >= deadline:
            return bool(cond())
        time.sleep(0.05)
    return True


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_sigterm_stops_a_parallel_sweep_and_its_workers(tmp_path):
    wl = write_workload(tmp_path, batches=1_000_000)
    p = subprocess.Popen([sys.executable, "-m", "socsim.cli", "sweep", "--soc", "sd865", str(wl), "--grid",
                          "batch_size=8,16", "--jobs", "2", "--json", str(tmp_path / "s.json")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _wait_until(lambda: len(_children(p.pid)) >= 2, 90)
        workers = _children(p.pid)
        assert len(workers) >= 2, "the workers never started"
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    finally:
        _kill_group(p)
    assert p.returncode == 143, err
    assert _wait_until(lambda: not any(_running(w) for w in workers), 20)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["wl.yaml"]
