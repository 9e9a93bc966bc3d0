"""Shared by the CLI tests: a tiny LeNet workload written to a temporary file, and the CLI
invoked in-process."""
from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from socsim.cli import main

LENET = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=2)


def write_workload(tmp_path: Path, **changes) -> Path:
    """``LENET`` with ``changes`` applied at the top level, as ``tmp_path/wl.yaml``."""
    p = tmp_path / "wl.yaml"
    p.write_text(yaml.safe_dump({**LENET, **changes}, sort_keys=False))
    return p


def invoke(*args: str, **kw):
    return CliRunner().invoke(main, list(args), **kw)


def run_outs(tmp_path: Path, wl: Path, setting: str, values: tuple[str, ...], *extra: str) -> dict[str, Path]:
    """``socsim run --soc sd865 wl --set setting=value [extra] --deterministic --quiet --out DIR``
    once per value (each must exit 0): value -> its output folder."""
    outs = {}
    for v in values:
        out = tmp_path / f"out-{v}"
        r = invoke("run", "--soc", "sd865", str(wl), "--set", f"{setting}={v}", *extra, "--deterministic",
                   "--quiet", "--out", str(out))
        assert r.exit_code == 0, r.output
        outs[v] = out
    return outs
