"""A compute unit registered from outside (an NPU with a trivial cost model, through
``socsim.hw.units.register``) runs a plan's ops through the engine, and the summary, the console
tables and the trace show it, with no change to socsim's code (docs/adding-a-unit.md)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from engine_runs import SOC, lenet, run
from socsim.engine.context import build_graph
from socsim.hw.units import unit_runs
from socsim.contract import check_plan
from socsim.errors import ScheduleError
from socsim.hw import units
from socsim.hw.power import RAIL_GPU
from socsim.report.console import compare_table, summary_table
from socsim.report.html import track_order
from socsim.report.summary import compare_rows
from socsim.sched.api import BaseScheduler, Plan, Step

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-a-unit.md"


def _doc_unit() -> units.ComputeUnit:
    """The unit docs/adding-a-unit.md defines (its first Python block, run as written)."""
    (code,) = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[:1]
    ns: dict = {}
    exec(compile(code, str(DOC), "exec", dont_inherit=True), ns)
    return ns["NPU"]


NPU = _doc_unit()


@pytest.fixture
def npu():
    units.register(NPU)
    yield NPU
    units.unregister(NPU.name)


class OnNpu(BaseScheduler):
    """Ops with multiply-accumulates on the NPU, the rest on the big cores."""

    name = "on-npu"

    def plan(self, ctx) -> Plan:
        conv = next(op for op in ctx.graph().ops if op.macs > 0)
        assert 0 < ctx.profile(conv, "npu") < float("inf")   # a scheduler can profile on it
        steps = tuple(Step(op, "npu" if op.macs > 0 else "cpu") for op in ctx.graph().ops)
        return Plan(steps=steps, cpu_cores=(4, 5, 6, 7), label="npu")


def _text(table) -> str:
    c = Console(record=True, width=250)
    c.print(table)
    return c.export_text()


def test_an_op_placed_on_a_registered_unit_runs_and_is_reported(npu, tmp_path):
    r = run(tmp_path / "run", lenet(batches=2, batch_size=32), scheduler=OnNpu(), trace=True)
    plan = r.stats.first_plan
    p = r.summary["placement"]
    assert p["npu_ops"] == plan.count("npu") > 0
    assert p["cpu_ops"] == plan.count("cpu") > 0 and p["dsp_ops"] == p["gpu_ops"] == 0
    assert p["switches"] == plan.switches + 1   # the batch starts on the host CPU: one more hand-over
    assert p["time_s"]["npu"] > 0
    # the NPU's ops on its own track; its hand-overs on the engine's
    tracks = {row["track"] for row in r.ops()}
    assert "npu" in tracks and "gpu" not in tracks
    assert any(row["name"].startswith("npu hand-over") for row in r.ops())
    # its power is on the rail it names
    assert r.summary["energy_j"]["rails"][RAIL_GPU] > 0
    assert (tmp_path / "run" / "trace.perfetto-trace").stat().st_size > 0

    shown = _text(summary_table(r.summary))
    assert f"cpu {p['cpu_ops']} / dsp 0 / gpu 0 / npu {p['npu_ops']} ops per batch" in shown
    (row,) = compare_rows([r.summary])
    assert row["npu_ops"] == p["npu_ops"] and row["time_share"]["npu"] > 0
    table = _text(compare_table([r.summary]))
    assert "cpu/dsp/gpu/npu ops" in table and f"/{p['npu_ops']:g} " in table


def test_plan_checks_and_reports_follow_the_registry(npu):
    g = build_graph("lenet", (1, 28, 28), 10, 4, "fp32", None)
    conv = next(o for o in g.ops if o.macs > 0)
    relu = next(o for o in g.ops if o.macs == 0)
    assert unit_runs(SOC, conv, "npu") and not unit_runs(SOC, relu, "npu")
    check_plan(Plan(steps=(Step(conv, "npu"),), cpu_cores=(4,)), SOC, scheduler="t")
    assert track_order("cpu7") < track_order("dsp") < track_order("gpu") < track_order("npu") < track_order("fastrpc")
    units.unregister("npu")
    with pytest.raises(ScheduleError, match="units are cpu, dsp, gpu"):
        check_plan(Plan(steps=(Step(conv, "npu"),), cpu_cores=(4,)), SOC, scheduler="t")
    units.register(NPU)


def test_the_registry_refuses_a_second_entry_of_a_name_or_host():
    with pytest.raises(ValueError, match="registered already"):
        units.register(units.unit("dsp"))
    with pytest.raises(ValueError, match="one host unit"):
        units.register(units.ComputeUnit(**{**units.host().__dict__, "name": "cpu2"}))
    assert units.names() == ("cpu", "dsp", "gpu")
