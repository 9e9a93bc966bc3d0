"""docs/plugins.md's code is the worked example: its imports are complete, its options are the
example plugin's, and its plan() runs on the simulated phone."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from socsim.engine.sim import Engine
from socsim.spec import load_soc, workload_from_dict

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "plugins.md").read_text()
EXAMPLE = ROOT / "examples" / "socsim-plugin-example"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC, re.S)


def test_doc_snippet_runs_and_matches_the_example():
    cls_block, plan_block = _python_blocks()[:2]
    ns: dict = {}
    exec(compile(cls_block, "plugins.md", "exec", dont_inherit=True), ns)  # a missing import fails here or below
    exec(compile(plan_block, "plugins.md", "exec", dont_inherit=True), ns)
    sys.path.insert(0, str(EXAMPLE))
    try:
        from socsim_plugin_example import BigOnlyGreedyOptions
    finally:
        sys.path.remove(str(EXAMPLE))
        sys.modules.pop("socsim_plugin_example", None)
    doc_opts = ns["BigOnlyGreedyOptions"]
    assert set(doc_opts.model_fields) == set(BigOnlyGreedyOptions.model_fields)
    # the YAML example of the page validates against the page's options
    m = re.search(r"scheduler: \{name: big-only-greedy, options: (\{.*?\})\}", DOC)
    opts = doc_opts.model_validate(yaml.safe_load(m.group(1)))
    sched_cls = ns["BigOnlyGreedy"]
    sched_cls.plan = ns["plan"]
    sched = sched_cls(opts)
    wl = workload_from_dict(dict(name="t", model="lenet", input=[1, 28, 28], batch_size=16, batches=2))
    stats = Engine(load_soc("sd865"), wl, sched).run()
    assert stats.batches == 2 and set(stats.first_plan.cpu_cores) <= {4, 5, 6, 7}


def test_example_does_not_depend_on_the_pypi_name():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    meta = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    names = [re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].lower() for d in meta.get("dependencies", [])]
    assert "socsim" not in names
    for text in (DOC, (EXAMPLE / "README.md").read_text()):
        assert "pip install ./examples/socsim-plugin-example" in text
