"""Scheduler plugins from other packages: found by entry point, selected by name, options
validated, broken plugins reported without hiding the others (docs/plugins.md).

Installing the example package is simulated the way pip leaves it: a ``*.dist-info`` folder with
``entry_points.txt`` on ``sys.path`` (what importlib.metadata reads), plus the package source.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import socsim
from socsim.cli import main
from socsim.errors import InputError
from socsim.sched.registry import discover

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "socsim-plugin-example"
WL = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=2)


def _dist(site: Path, name: str, entry_points: str) -> None:
    d = site / f"{name}-0.1.0.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (d / "entry_points.txt").write_text(entry_points)


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    # the example's own entry point, as pip would write it to entry_points.txt
    section = (EXAMPLE / "pyproject.toml").read_text().split('[project.entry-points."socsim.schedulers"]')[1]
    name, value = next(x for x in section.splitlines() if "=" in x).split("=", 1)
    _dist(site, "socsim_plugin_example", f"[socsim.schedulers]\n{name.strip()} = {value.strip().strip(chr(34))}\n")
    _dist(site, "socsim_broken_plugin", "[socsim.schedulers]\nbroken-plugin = socsim_broken_plugin:Sched\n")
    (site / "socsim_broken_plugin.py").write_text("raise ImportError('needs libfoo, which is not installed')\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    importlib.invalidate_caches()
    yield site
    for m in ("socsim_plugin_example", "socsim_broken_plugin"):
        sys.modules.pop(m, None)


def test_example_plugin_runs_by_name(plugins):
    entries = discover()
    assert entries["big-only-greedy"].cls is not None
    s = socsim.run("sd865", {**WL, "scheduler": {"name": "big-only-greedy", "options": {"max_cores": 2}}}).summary
    assert s["scheduler"] == "big-only-greedy"
    assert set(s["placement"]["cpu_cores"]) <= {4, 5}
    assert len(s["scheduler_info"]["profiled"]) == 2


def test_plugin_options_are_validated(plugins):
    with pytest.raises(InputError) as e:
        socsim.run("sd865", WL, scheduler="big-only-greedy", overrides={"scheduler.options.max_cores": 0})
    assert e.value.field == "scheduler.options.max_cores"
    with pytest.raises(InputError) as e:
        socsim.run("sd865", WL, scheduler="big-only-greedy", overrides={"scheduler.options.nope": 1})
    assert e.value.field == "scheduler.options.nope" and "unknown option" in e.value.message


def test_broken_plugin_is_listed_and_the_others_still_list(plugins):
    r = CliRunner().invoke(main, ["list", "schedulers"], catch_exceptions=False, terminal_width=300)
    assert r.exit_code == 0
    assert "broken-plugin" in r.output and "broken" in r.output and "libfoo" in r.output
    for name in ("big-only-greedy", "sage", "swan", "mnn-fp32", "tflite-fp32", "pytorch", "mnn-fp32-gpu"):
        assert name in r.output


def test_selecting_a_broken_or_missing_plugin_exits_2(plugins, tmp_path):
    wl = tmp_path / "w.yaml"
    wl.write_text("name: t\nmodel: lenet\ninput: [1, 28, 28]\nbatch_size: 16\nbatches: 1\n")
    r = CliRunner().invoke(main, ["run", "--soc", "sd865", str(wl), "--scheduler", "broken-plugin", "--quiet"])
    assert r.exit_code == 2 and "broken" in r.output and "scheduler.name" in r.output
    r = CliRunner().invoke(main, ["run", "--soc", "sd865", str(wl), "--scheduler", "no-such-thing", "--quiet"])
    assert r.exit_code == 2 and "unknown scheduler" in r.output
