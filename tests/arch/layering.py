"""The import graph of a package, read with ``ast``, and the two rules socsim's layering keeps.

Every import counts, including those inside functions and under ``TYPE_CHECKING``: an import
that is only deferred is still a dependency, and a cycle hidden inside a function is still a
cycle.  Layers, lowest first (docs/architecture.md):

    isa < workload, spec < hw < contract < engine, sched < report < api, sweep, fleet, tools < cli

A module may import from its own layer and the layers below it, never from a layer above, and
the modules of a package may not import each other in a circle.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

# Layer rank of each part of the project, lowest first; a module takes the rank of the longest
# prefix that names it.  The package root ``socsim`` (its lazy ``socsim.run``) sits with the API,
# so a module that nobody placed lands high and cannot be imported from below by accident.
# ``contract`` sits under the engine: the engine consumes its plans and implements its Protocols,
# schedulers use them; neither the engine nor a scheduler imports the other.
LAYERS: dict[str, int] = {
    "isa": 0,
    "socsim.errors": 0, "socsim.jsonio": 0, "socsim.version": 0, "socsim.reuse": 0, "socsim.paths": 0, "socsim.hostcpus": 0,
    "socsim.workload": 1, "socsim.spec": 1,
    "socsim.hw": 2,
    "socsim.contract": 3,
    "socsim.engine": 4, "socsim.sched": 4,
    "socsim.report": 5,
    "socsim": 6, "socsim.api": 6, "socsim.sweep": 6, "socsim.fleet": 6, "socsim.fidelity": 6, "socsim.tools": 6,
    "socsim.cli": 7, "socsim.__main__": 7,
}


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str, is_package: bool,
               known: frozenset[str] = frozenset()) -> set[str]:
    """Every module name that ``path`` imports, at any depth of its code, resolved to absolute.

    ``from pkg import sub`` where ``sub`` is a module in ``known`` depends on ``pkg.sub`` only;
    a name defined in ``pkg/__init__`` makes ``pkg`` itself a dependency.
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            subs = {f"{prefix}.{a.name}" for a in node.names}
            found.update(subs & known)
            if not subs <= known:
                found.add(prefix)
    return found


def import_graph(root: Path, packages: Iterable[str]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (only modules that exist under ``root``)."""
    files: dict[str, Path] = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            files[module_name(root, path)] = path
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        deps = imports_of(path, mod, path.name == "__init__.py", frozenset(files))
        graph[mod] = {d for d in deps if d in files and d != mod}
    return graph


def layer_of(module: str, layers: Mapping[str, int]) -> int | None:
    best = None
    for prefix, rank in layers.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, rank)
    return None if best is None else best[1]


def upward_imports(graph: Mapping[str, set[str]], layers: Mapping[str, int]) -> list[str]:
    """Imports from a lower layer into a higher one, as 'a (layer) -> b (layer)' lines."""
    bad = []
    for mod, deps in sorted(graph.items()):
        lo = layer_of(mod, layers)
        if lo is None:
            continue
        for dep in sorted(deps):
            hi = layer_of(dep, layers)
            if hi is not None and hi > lo:
                bad.append(f"{mod} (layer {lo}) imports {dep} (layer {hi})")
    return bad


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)
