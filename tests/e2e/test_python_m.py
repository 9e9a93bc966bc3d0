"""``python -m socsim`` is the ``socsim`` command: same output, same exit codes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "socsim", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_python_m_socsim_lists_and_names_itself():
    r = _run("list", "socs")
    assert r.returncode == 0, r.stderr
    assert "sd865" in r.stdout
    assert _run("--help").stdout.startswith("Usage: socsim ")


def test_python_m_socsim_bad_input_exits_2(tmp_path):
    bad = tmp_path / "w.yaml"
    bad.write_text("name: x\nmodel: lenet\ninput: [1, 28, 28]\nnum_classes: 10\nbatch_size: -3\n")
    r = _run("validate", str(bad))
    assert r.returncode == 2
    assert "batch_size" in r.stderr and "-3" in r.stderr
