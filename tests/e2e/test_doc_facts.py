"""Statements of the docs that the code can check: which schedulers' summaries have
``scheduler_info`` (docs/guide.md) and the guard vector ``Builder.buffer`` adds (docs/hvx.md)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from socsim.api import run

ROOT = Path(__file__).resolve().parents[2]
LENET = dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=2)


def _guide_without_scheduler_info() -> list[str]:
    text = " ".join((ROOT / "docs" / "guide.md").read_text().split())
    m = re.search(r"`scheduler_info` with what the scheduler reports \(only when it reports something:"
                  r"[^;]*; the baselines ([^)]*) have none\)", text)
    assert m, "docs/guide.md no longer says when scheduler_info is present"
    return re.findall(r"`([a-z0-9-]+)`", m.group(1))


def test_guide_names_the_schedulers_without_scheduler_info():
    assert {"mnn-fp32", "mnn-fp32-gpu"} <= set(_guide_without_scheduler_info())


@pytest.mark.parametrize("name", ["mnn-fp32", "mnn-fp32-gpu", "mnn-int8", "pytorch", "tflite-fp32", "octo",
                                  "swan", "sage"])
def test_scheduler_info_is_present_as_the_guide_says(name):
    s = run("sd865", dict(LENET), scheduler=name, reports=False).summary
    assert ("scheduler_info" in s) == (name not in _guide_without_scheduler_info()), name


def test_hvx_doc_states_the_guard_vector():
    from isa.hvx import Builder, HvxState, MemoryFault, run as hvx_run

    text = " ".join((ROOT / "docs" / "hvx.md").read_text().split())
    assert "guard vector" in text and "`ceil(size / 128) * 128 + 128`" in text
    assert "one 256-byte buffer needs `HvxState(tiles, 384)`" in text
    b = Builder("doc")
    assert b.buffer("x", 256) == 0 and b.buffer("y", 1) == 384
    prog = b.build()
    assert prog.mem_bytes == 384 + 256
    one = Builder("one")
    one.buffer("x", 256)
    with pytest.raises(MemoryFault, match="program needs 384 bytes"):
        hvx_run(one.build(), HvxState(2, 256))
    hvx_run(one.build(), HvxState(2, 384))
