"""The scheduler hooks are declared once, on socsim.contract.BaseScheduler: the registry wraps
exactly those, the old plugin API re-exports the contract's names, and docs/plugins.md lists
exactly those hooks."""
from __future__ import annotations

import re
from pathlib import Path

import socsim.contract as contract
from socsim.contract import HOOK_SPECS, HOOKS, BaseScheduler, Plan, single_unit_plan
from socsim.sched import api as old_api
from socsim.sched import registry

DOC = (Path(__file__).resolve().parents[2] / "docs" / "plugins.md").read_text()


def test_the_hooks_are_the_marked_methods_of_base_scheduler():
    marked = [n for n, f in vars(BaseScheduler).items() if hasattr(f, "__socsim_hook__")]
    assert HOOKS == tuple(marked) == tuple(HOOK_SPECS)
    assert HOOKS[0] == "plan" and "summary_extra" in HOOKS
    assert all(HOOK_SPECS[h].runtime == h.startswith("on_") for h in HOOKS)
    assert {h for h in HOOKS if HOOK_SPECS[h].batch_arg} == {"on_batch_start", "on_batch_end"}


def test_the_registry_wraps_exactly_the_declared_hooks():
    assert registry.HOOKS is HOOKS

    class Mine(BaseScheduler):
        name = "mine"

        def plan(self, ctx) -> Plan:
            return single_unit_plan(ctx.graph(), "cpu", ctx.cores(), "mine")

    sub = registry.guarded(Mine, "mine")
    wrapped = {n for n, v in vars(sub).items() if callable(v) and getattr(v, "__name__", None) == n}
    assert wrapped - {"__init__"} == set(HOOKS)


def test_the_docs_list_exactly_the_declared_hooks():
    table = re.search(r"\| hook \| when \|\n\|[-|]+\|\n((?:\|.*\|\n)+)", DOC).group(1)
    documented = re.findall(r"^\| `(\w+)\(", table, re.M)
    assert "## 2. Planning: `plan(ctx) -> Plan`" in DOC
    assert ["plan"] + documented == list(HOOKS)


def test_the_old_plugin_api_re_exports_the_contract():
    for name in ("BaseScheduler", "Plan", "Step", "BatchRecord", "ThermalEvent", "InterferenceEvent",
                 "NoOptions", "Scheduler"):
        assert getattr(old_api, name) is getattr(contract, name)
