"""Environment errors while writing a run's files (a full disk, a killed run's leftovers) are
named, keep the result, and leave nothing behind (docs/guide.md, Limits and errors)."""
from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
import sys

import pytest

import socsim.report.events as events
import socsim.report.writers as writers
from socsim.api import OWNER_FILE, remove_stale_temps

from tests.e2e.cli_helpers import invoke, write_workload


def _full_disk_open(full_name: str):
    """``open`` whose files named ``full_name`` raise ENOSPC once written to."""
    real = open

    class Full(io.RawIOBase):
        def __init__(self, path):
            self.path = path

        def writable(self):
            return True

        def write(self, b):
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path))

    def fake(path, mode="r", *a, **kw):
        if os.path.basename(str(path)) == full_name and "w" in mode:
            real(path, mode, *a, **kw).close()
            return Full(path)
        return real(path, mode, *a, **kw)
    return fake


def _check_salvaged(r, out):
    assert r.exit_code == 1, r.output
    assert "No space left on device" in r.output and "internal error" not in r.output
    assert f"kept: {out / 'summary.json'}" in r.output
    assert "per batch" in r.output                         # the console summary was printed
    assert sorted(os.listdir(out)) == ["summary.json"]     # the result, nothing half-written
    assert json.loads((out / "summary.json").read_text())["batches"] == 2
    assert not [p for p in os.listdir(out.parent) if p.startswith(".")]   # no temporary folder


def test_a_full_disk_while_recording_names_the_file_and_keeps_the_summary(tmp_path, monkeypatch):
    monkeypatch.setattr(events, "open", _full_disk_open("ops.csv"), raising=False)
    out = tmp_path / "o"
    r = invoke("run", "--soc", "sd865", str(write_workload(tmp_path)), "--out", str(out))
    _check_salvaged(r, out)
    assert f"cannot write {out / 'ops.csv'}" in r.output


def test_a_full_disk_while_writing_the_trace_names_it(tmp_path, monkeypatch):
    def full(directory, *a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device", str(directory / "trace.perfetto-trace"))
    monkeypatch.setattr(writers, "write_reports", full)
    out = tmp_path / "o"
    r = invoke("run", "--soc", "sd865", str(write_workload(tmp_path)), "--out", str(out))
    _check_salvaged(r, out)
    assert f"cannot write {out / 'trace.perfetto-trace'}" in r.output


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="mounting a tmpfs needs root")
def test_a_real_full_tmpfs(tmp_path):
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(tiny)],
                      capture_output=True).returncode != 0:
        pytest.skip("mount is not permitted here (a container without CAP_SYS_ADMIN)")
    try:
        out = tiny / "out"
        r = invoke("run", "--soc", "sd865", str(write_workload(tmp_path, batches=2)), "--out", str(out))
        _check_salvaged(r, out)
    finally:
        subprocess.run(["umount", str(tiny)], check=False)


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_killed_runs_temporary_folder_is_removed_by_the_next_run(tmp_path):
    stale = tmp_path / ".o.abcd1234"
    stale.mkdir()
    (stale / "ops.csv").write_text("x" * 1000)
    (stale / OWNER_FILE).write_text(f"{_dead_pid()} {os.uname().nodename}\n")
    live = tmp_path / ".o.live0000"          # a run still going: left alone
    live.mkdir()
    (live / OWNER_FILE).write_text(f"{os.getpid()} {os.uname().nodename}\n")
    foreign = tmp_path / ".o.other000"       # not socsim's: left alone
    foreign.mkdir()
    r = invoke("run", "--soc", "sd865", str(write_workload(tmp_path)), "--out", str(tmp_path / "o"), "--quiet")
    assert r.exit_code == 0, r.output
    assert not stale.exists() and live.exists() and foreign.exists()
    assert f"removed {stale}" in r.output and "killed" in r.output
    assert remove_stale_temps(tmp_path, "o") == []


def test_a_successful_run_leaves_no_owner_file(tmp_path):
    r = invoke("run", "--soc", "sd865", str(write_workload(tmp_path)), "--out", str(tmp_path / "o"), "--quiet")
    assert r.exit_code == 0, r.output
    assert OWNER_FILE not in os.listdir(tmp_path / "o")
    assert [p for p in os.listdir(tmp_path) if p.startswith(".")] == []


def test_a_huge_output_is_announced_before_the_run():
    from socsim.api import _estimate_note
    from socsim.spec import Workload

    def wl(batches, limit=1000):
        return Workload(name="t", model="lenet", input=[1, 28, 28], batch_size=16, batches=batches,
                        output={"trace_limit": limit})
    assert _estimate_note(wl(2000), 33) is None
    note = _estimate_note(wl(10_000_000, None), 33)
    assert note and "GB" in note and "200,196 of its 10,000,000 batches" in note
    assert _estimate_note(wl(2_000_000), 33) is None      # decimated: well under 1 GB
