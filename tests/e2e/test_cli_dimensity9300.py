"""End-to-end: the Dimensity 9300 spec (soc_specs/dimensity9300.yaml) as a user runs it, through
``python -m socsim``: listed, checked, and the quick-start trains on it.  A SoC with no Hexagon
DSP: its run has no cdsp rail."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    # a wide terminal, so that the tables do not wrap a name across lines
    return subprocess.run([sys.executable, "-m", "socsim", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env={**os.environ, "COLUMNS": "250"})


def test_list_socs_shows_the_dimensity_9300():
    r = _run("list", "socs")
    assert r.returncode == 0, r.stderr
    words = r.stdout.split()
    assert "dimensity9300" in words and "cortex-a720@2000" in words and "Immortalis-G720" in words


def test_spec_check_prints_the_four_x4_and_four_a720():
    r = _run("spec", "check", "soc_specs/dimensity9300.yaml")
    assert r.returncode == 0, r.stderr
    assert "4x cortex-a720 @ 2000 MHz" in r.stdout and "3x cortex-x4 @ 2850 MHz" in r.stdout
    assert "1x cortex-x4 @ 3250 MHz" in r.stdout and "LPDDR5T-9600: 76.8 GB/s" in r.stdout


def test_quickstart_runs_on_the_dimensity_9300(tmp_path):
    out = tmp_path / "run.json"
    r = _run("run", "--soc", "dimensity9300", "workloads/quickstart.yaml", "--set", "batches=5", "--json", str(out))
    assert r.returncode == 0, r.stderr
    s = json.loads(out.read_text())
    assert s["soc"] == "dimensity9300" and s["batches"] == 5
    # mnn-fp32's default big cores: the four X4 (cores 4-7), nothing on a DSP
    assert s["placement"]["cpu_cores"] == [4, 5, 6, 7] and s["placement"]["dsp_ops"] == 0
    assert s["per_batch"]["time_s"] > 0 and s["energy_j"]["total"] > 0
    rails = s["energy_j"]["rails"]
    assert "cdsp" not in rails and rails["cpu.mid"] > 0 and rails["cpu.prime"] > 0
