"""The development set (calibration/dev/) recomputed: no error may rise above the figures recorded
in calibration/dev/fidelity_recorded.json, and docs/validation.md's generated section must be
what ``socsim fidelity`` gives now (regenerate both with python scripts/fidelity_docs.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from socsim.fidelity.recorded import RECORDED, dev_reports, docs_section, recorded_figures, regressions

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reports():
    return dev_reports(ROOT)


def test_no_error_rises_above_the_recorded_one(reports):
    recorded = json.loads((ROOT / RECORDED).read_text())
    now = recorded_figures(reports)
    assert now["batches_per_row"] == recorded["batches_per_row"]
    assert not regressions(now, recorded), regressions(now, recorded)


def test_validation_doc_holds_the_generated_section(reports):
    doc = (ROOT / "docs" / "validation.md").read_text()
    assert docs_section(doc, reports) == doc, "stale: run python scripts/fidelity_docs.py"


def test_a_worse_figure_is_a_regression():
    rec = {"files": {"f": {"t": {"time_mape_pct": 10.0, "time_tau": 0.5, "energy_mape_pct": None}}}}
    ok = {"files": {"f": {"t": {"time_mape_pct": 9.0, "time_tau": 0.6, "energy_mape_pct": None}}}}
    bad = {"files": {"f": {"t": {"time_mape_pct": 10.1, "time_tau": 0.4}}}}
    assert regressions(ok, rec) == []
    assert len(regressions(bad, rec)) == 2
    assert regressions({"files": {}}, rec) == ["f: table t is gone"]
