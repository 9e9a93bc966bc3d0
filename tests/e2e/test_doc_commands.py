"""The commands docs/guide.md gives with ``--set``, and every command in the workloads' header
comments, are feasible: each is planned as ``run`` would plan it before its first batch
(``socsim validate --soc``), so a workload that cannot run on the phone it names, or an option
value that the scheduler refuses (a Min-Energy slack below 1, a Sage strategy that cannot fit
the file's memory budget), fails here."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from socsim.api import validate_on_soc

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
    return [" ".join(m.split(" #")[0].split()) for m in re.findall(r"^(socsim (?:run|compare) .*)$", text, re.M)]


WORKLOADS = sorted((ROOT / "workloads").glob("*.yaml"))


def _documented() -> list[tuple[str, str]]:
    out = [("docs/guide.md", c) for c in _guide_commands() if "--set" in c and "k=v" not in c]
    for p in WORKLOADS:
        out += [(f"workloads/{p.name}", c) for c in _header_commands(p)]
    return out


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


@pytest.mark.parametrize("path", WORKLOADS, ids=lambda p: p.name)
def test_every_workload_shows_how_to_run_itself(path):
    cmds = _header_commands(path)
    assert cmds, f"{path.name}: no 'socsim run|compare --soc ...' line in its header comment"
    assert all(f"workloads/{path.name}" in c for c in cmds), cmds


# The framework baselines a compare line sets beside a seed system plan one unit with fixed
# cores (tests/sched/test_baselines.py); planning them again on every large workload would add
# minutes to the suite.  They are planned here only where a command sets an option.
BASELINES = {"mnn-fp32", "mnn-int8", "tflite-fp32", "mnn-fp32-gpu", "pytorch"}


def _plans() -> list[tuple[str, str, str | None, tuple[str, ...]]]:
    """The distinct (soc, workload, scheduler, --set values) the documented commands plan: a
    workload's run and compare lines often plan the same scheduler on the same phone."""
    out: dict[tuple, None] = {}
    for _, cmd in _documented():
        soc, workload, schedulers, sets = _parse(cmd)
        assert soc and workload and (ROOT / workload).exists(), cmd
        sets = tuple(x for x in sets if not x.startswith("batches="))  # the plan is per batch
        own = yaml.safe_load((ROOT / workload).read_text())["scheduler"]["name"]
        for name in schedulers:
            name = name or own
            if name not in BASELINES or sets:
                out[(soc, workload, name, sets)] = None
    return list(out)


@pytest.mark.parametrize("soc,workload,scheduler,sets", _plans(),
                         ids=lambda v: v if isinstance(v, str) else " ".join(v) if isinstance(v, tuple) else str(v))
def test_documented_commands_plan(soc, workload, scheduler, sets):
    validate_on_soc(soc, ROOT / workload, overrides=list(sets), scheduler=scheduler)
