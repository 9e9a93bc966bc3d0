"""socsim fleet end to end, in-process: a tiny fleet's files and console lines; bad input exits 2
and writes nothing."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from cli_helpers import invoke

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fleet"))
from fleet_helpers import SMALL, write_fleet  # noqa: E402


def test_fleet_writes_its_files(tmp_path) -> None:
    p = write_fleet(tmp_path)
    r = invoke("fleet", str(p), "--out", str(tmp_path / "out"), "--json", str(tmp_path / "s.json"))
    assert r.exit_code == 0, r.output
    assert "fleet tiny-fleet: 6 clients, 2 rounds" in r.output and "vs mnn-fp32:" in r.output
    names = sorted(x.name for x in (tmp_path / "out").iterdir())
    assert names == ["clients.csv", "fleet.json", "report.html", "rounds.csv"]
    s = json.loads((tmp_path / "s.json").read_text())
    assert s == json.loads((tmp_path / "out" / "fleet.json").read_text())
    assert (tmp_path / "out" / "rounds.csv").read_text().count("\n") == 3
    assert "<svg" in (tmp_path / "out" / "report.html").read_text()


def test_soc_mix_on_the_command_line(tmp_path) -> None:
    r = invoke("fleet", str(write_fleet(tmp_path)), "--soc-mix", "sd888=1", "--json", "-")
    assert r.exit_code == 0, r.output
    assert set(json.loads(r.output)["per_phone"]) == {"sd888"}


def test_bad_fleet_exits_2_and_writes_nothing(tmp_path) -> None:
    d = yaml.safe_load(yaml.safe_dump(SMALL))
    d["plan"]["clients_per_round"] = 0
    r = invoke("fleet", str(write_fleet(tmp_path, d)), "--out", str(tmp_path / "out"))
    assert r.exit_code == 2
    assert "plan.clients_per_round" in r.output and "fleet.yaml:" in r.output
    assert not (tmp_path / "out").exists()
    r = invoke("fleet", str(write_fleet(tmp_path)), "--soc-mix", "sd865=-1")
    assert r.exit_code == 2 and "--soc-mix" in r.output
    r = invoke("fleet", str(write_fleet(tmp_path)), "--address", "auto")
    assert r.exit_code == 2 and "--address" in r.output
