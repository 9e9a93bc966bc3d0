"""socsim's import graph has no cycle and no import from a lower layer into a higher one
(tests/arch/layering.py has the rules and the layer table; docs/architecture.md the picture)."""
from __future__ import annotations

import textwrap
from pathlib import Path

from layering import LAYERS, cycles, import_graph, upward_imports

ROOT = Path(__file__).resolve().parents[2]

# Violations that existed when the rule was introduced; each fix removes its line.  The list must
# only shrink: a new violation fails, and so does a listed one that no longer exists.
KNOWN: set[str] = set()


def _violations(root: Path, packages: list[str], layers) -> set[str]:
    graph = import_graph(root, packages)
    found = {"cycle: " + " <-> ".join(c) for c in cycles(graph)}
    found |= {"upward: " + u for u in upward_imports(graph, layers)}
    return found


def test_socsim_has_no_cycle_and_no_upward_import():
    found = _violations(ROOT, ["socsim", "isa"], LAYERS)
    new = sorted(found - KNOWN)
    gone = sorted(KNOWN - found)
    assert not new, "import rules broken:\n" + "\n".join(new)
    assert not gone, "fixed, remove from KNOWN:\n" + "\n".join(gone)


def test_schedulers_and_the_engine_meet_only_in_the_contract():
    """The built-in schedulers import the contract and public helpers, never the engine; the
    engine never imports a scheduler (it runs whatever implements socsim.contract)."""
    graph = import_graph(ROOT, ["socsim"])
    bad = sorted(f"{m} imports {d}" for m, deps in graph.items() for d in deps
                 if (m.startswith("socsim.sched.") and d.startswith("socsim.engine"))
                 or (m.startswith("socsim.engine") and d.startswith("socsim.sched")))
    assert not bad, "\n".join(bad)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return tmp_path


def test_the_rule_catches_a_cycle_hidden_in_a_function(tmp_path):
    root = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low/__init__.py": "",
        "pkg/low/a.py": "def f():\n    from pkg.low import b\n    return b\n",
        "pkg/low/b.py": "from pkg.low.a import f\n",
    })
    found = _violations(root, ["pkg"], {"pkg.low": 0})
    assert found == {"cycle: pkg.low.a <-> pkg.low.b"}


def test_the_rule_catches_an_upward_import_under_type_checking(tmp_path):
    root = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.high import X\n",
        "pkg/high.py": "X = 1\n",
    })
    found = _violations(root, ["pkg"], {"pkg.low": 0, "pkg.high": 1})
    assert found == {"upward: pkg.low (layer 0) imports pkg.high (layer 1)"}


def test_relative_imports_and_submodules_resolve(tmp_path):
    root = _package(tmp_path, {
        "pkg/__init__.py": "from pkg import sub\n",
        "pkg/sub.py": "from . import other\nfrom .other import Y\n",
        "pkg/other.py": "Y = 2\n",
    })
    graph = import_graph(root, ["pkg"])
    assert graph == {"pkg": {"pkg.sub"}, "pkg.sub": {"pkg.other"}, "pkg.other": set()}
