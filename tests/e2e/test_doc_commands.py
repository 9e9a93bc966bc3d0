"""The commands docs/guide.md and the workloads' header comments give with ``--set`` are feasible:
each is planned as ``run`` would plan it before its first batch (``socsim validate --soc``), so
an option value that the scheduler refuses (a Min-Energy slack below 1, a Sage strategy that
cannot fit the file's memory budget) fails here."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from socsim.api import check_plan

ROOT = Path(__file__).resolve().parents[2]


def _guide_commands() -> list[str]:
    text = (ROOT / "docs" / "guide.md").read_text()
    return [" ".join(c.split()) for c in re.findall(r"`(socsim (?:run|compare) [^`]*)`", text)]


def _header_commands(path: Path) -> list[str]:
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    text = "\n".join(lines).replace("\\\n", " ")
    return [" ".join(m.split()) for m in re.findall(r"^(socsim (?:run|compare) .*)$", text, re.M)]


def _documented() -> list[tuple[str, str]]:
    out = [("docs/guide.md", c) for c in _guide_commands()]
    for p in sorted((ROOT / "workloads").glob("*.yaml")):
        out += [(f"workloads/{p.name}", c) for c in _header_commands(p)]
    return [(where, c) for where, c in out if "--set" in c and "k=v" not in c]


def _parse(cmd: str) -> tuple[str, str, list[str | None], list[str]]:
    args = shlex.split(cmd)[2:]
    soc, workload, schedulers, sets = None, None, [None], []
    it = iter(args)
    for a in it:
        if a == "--soc":
            soc = next(it)
        elif a == "--scheduler":
            schedulers = [next(it)]
        elif a == "--schedulers":
            schedulers = next(it).split(",")
        elif a == "--set":
            sets.append(next(it))
        elif a.startswith("--"):
            next(it)
        else:
            workload = a
    return soc, workload, schedulers, sets


def test_the_documented_option_commands_are_found():
    cmds = [c for _, c in _documented()]
    assert any("min-energy" in c and "slack" in c for c in cmds)
    assert any("sage_resnet50" in c and "memory_budget_mb" in c for c in cmds)


@pytest.mark.parametrize("where,cmd", _documented())
def test_documented_option_commands_plan(where, cmd):
    soc, workload, schedulers, sets = _parse(cmd)
    assert soc and workload and (ROOT / workload).exists(), cmd
    for name in schedulers:
        check_plan(soc, ROOT / workload, overrides=sets, scheduler=name)
