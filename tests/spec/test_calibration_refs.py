"""Every "hw:" and "pub:" source reference in the specs, the code and the docs names an entry of
calibration/hardware.yaml or calibration/published.yaml, so a reader can follow each constant to
the measurement or hardware fact behind it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
FILES = {"hw": ROOT / "calibration" / "hardware.yaml", "pub": ROOT / "calibration" / "published.yaml"}
# hw:a.b.c or pub:a.b; a trailing "_*" names every entry with that prefix (hw:hexagon.clock_mhz.sm8250_*)
REF = re.compile(r"\b(hw|pub):([A-Za-z_][\w.\-]*\w)(\*)?")
SCANNED = ("socsim", "soc_specs", "workloads", "docs", "tests", "benchmarks", "isa")


def resolve(tree, key: str, prefix: bool = False) -> bool:
    """Whether the dotted ``key`` names a node of ``tree``; a key of the YAML may itself hold a
    dot (``VGG16``-style names do not, but ``a77_2.42ghz`` does), so the longest match wins."""
    parts = key.split(".")
    node = tree
    i = 0
    while i < len(parts):
        if not isinstance(node, dict):
            return False
        for j in range(len(parts), i, -1):
            k = ".".join(parts[i:j])
            if k in node:
                node, i = node[k], j
                break
        else:
            if prefix and i == len(parts) - 1:
                return any(str(k).startswith(parts[i] + "_") for k in node)
            return False
    return True


def references() -> dict[tuple[str, str, bool], list[str]]:
    refs: dict[tuple[str, str, bool], list[str]] = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in (".py", ".yaml", ".md") or "__pycache__" in path.parts or path == Path(__file__):
                continue
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                for m in REF.finditer(line):
                    key, prefix = m.group(2), bool(m.group(3))
                    refs.setdefault((m.group(1), key.rstrip("_") if prefix else key, prefix), []).append(
                        f"{path.relative_to(ROOT)}:{n}")
    return refs


def test_calibration_files_are_in_the_repository():
    for path in FILES.values():
        assert isinstance(yaml.safe_load(path.read_text()), dict), path


def test_every_source_reference_names_a_calibration_entry():
    trees = {p: yaml.safe_load(f.read_text()) for p, f in FILES.items()}
    refs = references()
    assert len(refs) > 50                       # the specs cite their sources
    bad = [f"{p}:{k}{'_*' if pre else ''} ({', '.join(where[:2])})"
           for (p, k, pre), where in sorted(refs.items()) if not resolve(trees[p], k, pre)]
    assert not bad, "references to missing calibration entries:\n" + "\n".join(bad)


@pytest.mark.parametrize("key, ok", [("cpu_core_power_mw_at_max.sd865.a77_2.42ghz", True),
                                     ("cpu_core_power_mw_at_max.sd865.a77_9.99ghz", False),
                                     ("hexagon.clock_mhz", True), ("no_such_entry", False)])
def test_resolve(key, ok):
    tree = yaml.safe_load(FILES["hw"].read_text())
    assert resolve(tree, key) is ok
