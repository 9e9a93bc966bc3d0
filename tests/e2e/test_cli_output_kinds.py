"""--json and --trace keep the kind of the path they are given: a symlink still points at the
file it named, which gets the output; a FIFO stays a FIFO and its reader gets the output; a
directory is an error.  (Never /dev: a FIFO stands in for a character device.)"""
from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from cli_helpers import invoke, write_workload

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


class _Reader(threading.Thread):
    """Reads a FIFO to its end, as ``cat fifo`` would (the writer's open waits for it)."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.data = b""

    def run(self) -> None:
        with open(self.path, "rb") as f:
            self.data = f.read()


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    wl = str(write_workload(tmp_path))
    return {
        "run --json": ["run", "--soc", "sd865", wl, "--quiet", "--json"],
        "run --trace": ["run", "--soc", "sd865", wl, "--quiet", "--trace"],
        "op --json": ["op", "--soc", "sd865", "conv2d", "--json"],
        "compare --json": ["compare", "--soc", "sd865", wl, "--schedulers", "mnn-fp32", "--quiet", "--json"],
        "sweep --json": ["sweep", "--soc", "sd865", wl, "--quiet", "--json"],
    }


@pytest.mark.parametrize("cmd", ["run --json", "run --trace", "op --json", "compare --json", "sweep --json"])
def test_fifo_is_written_in_place(tmp_path, cmd):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = _Reader(fifo)
    reader.start()
    r = invoke(*_commands(tmp_path)[cmd], str(fifo))
    reader.join(timeout=30)
    assert r.exit_code == 0, r.output
    assert stat.S_ISFIFO(fifo.lstat().st_mode)   # not replaced by a regular file
    assert reader.data
    if "json" in cmd:
        json.loads(reader.data)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe", "wl.yaml"]   # no temporary file left


@pytest.mark.parametrize("cmd", ["run --json", "run --trace", "op --json"])
def test_symlink_target_gets_the_output(tmp_path, cmd):
    real = tmp_path / "results" / "real.out"
    real.parent.mkdir()
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.out"
    link.symlink_to(Path("results") / "real.out")
    r = invoke(*_commands(tmp_path)[cmd], str(link))
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and os.readlink(link) == str(Path("results") / "real.out")
    assert real.read_bytes() not in (b"", b"old")
    assert stat.S_IMODE(real.stat().st_mode) == 0o640   # the target's permissions are kept
    assert sorted(p.name for p in real.parent.iterdir()) == ["real.out"]


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "new" / "s.json")
    r = invoke(*_commands(tmp_path)["op --json"], str(link))
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and json.loads((tmp_path / "new" / "s.json").read_text())


def test_unwritable_fifo_is_bad_input_before_the_run(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo, 0o400)
    if os.access(fifo, os.W_OK):
        pytest.skip("running as root: permissions do not apply")
    r = invoke(*_commands(tmp_path)["run --json"], str(fifo))
    assert r.exit_code == 2 and "--json" in r.output and str(fifo) in r.output, r.output


@pytest.mark.parametrize("cmd", ["run --json", "run --trace", "op --json"])
def test_directory_and_link_to_a_directory_are_errors(tmp_path, cmd):
    d = tmp_path / "d"
    d.mkdir()
    (tmp_path / "dl").symlink_to(d)
    for target in (d, tmp_path / "dl"):
        r = invoke(*_commands(tmp_path)[cmd], str(target))
        assert r.exit_code == 2, r.output
        assert "is a directory" in r.output and cmd.split()[1] in r.output
    assert (tmp_path / "dl").is_symlink() and list(d.iterdir()) == []
