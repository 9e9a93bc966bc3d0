"""The HTML report: self-contained, deterministic, and rendered by headless Chromium."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from socsim.report.html import per_batch, render_html, scan_ops, write_html
from socsim.report.timeseries import load_timeseries
from socsim.report.writers import write_reports

from report_synthetic import BATCHES, SyntheticRun

CHART_IDS = ("chart-energy-by-rail", "chart-power", "chart-temperature", "chart-cpufreq",
             "chart-per-batch", "chart-timeline")
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and os.environ.get("CI", "").lower() != "true",
    reason="headless chromium not installed (CI=true makes this a failure)")


class _ChartFinder(HTMLParser):
    """Counts the svg elements (and their drawn children) inside each element with a chart id."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []
        self.svg: dict[str, int] = {}
        self.shapes: dict[str, int] = {}

    def handle_starttag(self, tag: str, attrs: list) -> None:
        chart = dict(attrs).get("id")
        self.stack.append(chart if chart in CHART_IDS else None)
        inside = next((c for c in reversed(self.stack) if c), None)
        if inside and tag == "svg":
            self.svg[inside] = self.svg.get(inside, 0) + 1
        if inside and tag in ("path", "text", "rect", "use"):
            self.shapes[inside] = self.shapes.get(inside, 0) + 1

    def handle_endtag(self, tag: str) -> None:
        if self.stack:
            self.stack.pop()


def _charts(page: str) -> _ChartFinder:
    finder = _ChartFinder()
    finder.feed(page)
    return finder


@pytest.fixture(scope="module")
def report(synthetic_run: SyntheticRun) -> Path:
    out = synthetic_run.path / "report.html"
    write_html(synthetic_run.path, out)
    return out


def test_page_is_self_contained_and_has_every_chart(report: Path) -> None:
    page = report.read_text()
    assert not re.search(r"https?://|<script|<link|@import", page)
    found = _charts(page)
    assert {c: found.svg.get(c) for c in CHART_IDS} == {c: 1 for c in CHART_IDS}
    assert all(found.shapes[c] > 10 for c in CHART_IDS)


def test_summary_table_renders_known_and_unknown_keys(report: Path) -> None:
    page = report.read_text()
    for key in ("soc", "energy_j.rails.cpu_big", "placement.switches", "memory.peak_bytes",
                "custom_note"):
        assert f"<th>{key}</th>" in page
    assert "extra-scalar-key" in page and "213,000,000" in page


def test_deterministic(synthetic_run: SyntheticRun) -> None:
    assert render_html(synthetic_run.path) == render_html(synthetic_run.path)


def test_timeline_batch_choice(synthetic_run: SyntheticRun) -> None:
    extents, chosen, slices = scan_ops(synthetic_run.path, None)
    assert sorted(extents) == list(range(BATCHES)) and chosen == 1
    assert {s[0] for s in slices} == {"cpu4", "cpu5", "cpu6", "cpu7", "fastrpc", "dsp", "gpu"}
    _, chosen, slices = scan_ops(synthetic_run.path, 0)
    assert chosen == 0 and any(s[0] == "engine" for s in slices)
    assert "Op timeline, batch 3" in render_html(synthetic_run.path, batch_for_timeline=3)


def test_per_batch_from_batches_csv_or_op_slices(synthetic_run: SyntheticRun, tmp_path: Path) -> None:
    from_csv = per_batch(synthetic_run.path, load_timeseries(synthetic_run.path))
    assert [r[0] for r in from_csv] == list(range(BATCHES))
    assert [r[3] for r in from_csv] == [1.0, 1.25, 1.5, 1.75]
    run = tmp_path / "run"
    shutil.copytree(synthetic_run.path, run)
    (run / "batches.csv").write_text("batch,start_s,time_s,energy_j,plan\n")  # none recorded
    from_ops = per_batch(run, load_timeseries(run))
    assert [r[0] for r in from_ops] == list(range(BATCHES))
    for (_, s_csv, t_csv, _), (_, s_ops, t_ops, e_ops) in zip(from_csv[1:], from_ops[1:]):
        assert (s_ops, t_ops) == pytest.approx((s_csv, t_csv)) and e_ops > 0
    assert _charts(render_html(run)).svg.get("chart-per-batch") == 1
    (run / "batches.csv").unlink()
    assert per_batch(run, load_timeseries(run)) == from_ops


def test_missing_inputs_render_placeholders(tmp_path: Path) -> None:
    page = render_html(tmp_path)
    assert page.count('class="empty"') == len(CHART_IDS) + 1


def test_write_reports_is_atomic(synthetic_run: SyntheticRun, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(synthetic_run.path, run)
    written = write_reports(run)
    assert [p.name for p in written[:2]] == ["trace.perfetto-trace", "report.html"]
    assert not list(run.glob(".*.tmp"))
    assert write_reports(run, trace=False, html=False) == written[2:]
    with pytest.raises(FileNotFoundError):
        write_reports(tmp_path / "nope")


@needs_chromium
def test_chromium_renders_charts_and_screenshot(report: Path, tmp_path: Path) -> None:
    assert CHROMIUM is not None, "CI=true but chromium is not installed"
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    url = report.resolve().as_uri()
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    found = _charts(dom)
    assert all(found.svg.get(c) == 1 and found.shapes.get(c, 0) > 10 for c in CHART_IDS), found.svg
    shot = tmp_path / "report.png"
    subprocess.run([*flags, f"--screenshot={shot}", "--window-size=1280,2400", url],
                   capture_output=True, timeout=60, check=True)
    assert shot.exists() and shot.stat().st_size > 20_000
    from PIL import Image
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    assert pixels.shape[:2] == (2400, 1280)
    colours = np.unique(pixels.reshape(-1, 3)[::97], axis=0)
    assert len(colours) > 20   # text, axes, bars and lines, not a blank page
