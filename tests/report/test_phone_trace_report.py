"""`socsim report RUN_DIR --phone-trace TRACE`: a phone's measured CPU frequency, rail power and
temperature drawn beside the simulated curves in report.html (the phone trace built with the
perfetto package's TraceProtoBuilder, in the forms Android writes), checked in headless
Chromium; a file that is not a trace exits 2 naming it, and nothing is written."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from socsim.cli import main
from socsim.report.html import PHONE_CHART_IDS
from socsim.report.trace_reader import read_trace

from report_synthetic import SyntheticRun
from test_html_report import CHROMIUM, _ChartFinder, needs_chromium

S = 1_000_000_000
T0 = 5 * S                                  # the phone's clock does not start at 0
RAILS = ("S4M_VDD_CPUCL0", "S2M_VDD_CPUCL2")


def phone_trace() -> bytes:
    """2 s of a phone: CPUs 0 and 4 change frequency, two rails sampled together every 100 ms
    (rail k draws (k + 1) W), the SoC's skin zone and one of the phone's own heat up."""
    b = TraceProtoBuilder()
    bundle = b.add_packet()
    bundle.trusted_packet_sequence_id = 2
    bundle.ftrace_events.cpu = 0
    for t, cpu, khz in ((0, 0, 1804800), (0, 4, 2419200), (S, 4, 1862400), (S // 2, 0, 300000)):
        bundle.ftrace_events.event.add(timestamp=T0 + t, pid=0, cpu_frequency={"state": khz, "cpu_id": cpu})
    for k in range(5):
        for zone in ("skin", "pa-therm"):
            bundle.ftrace_events.event.add(timestamp=T0 + k * S // 2, pid=0, thermal_temperature={
                "id": 0, "temp": 30_000 + 500 * k, "thermal_zone": zone})
    d = b.add_packet()
    d.trusted_packet_sequence_id = 3
    for i, name in enumerate(RAILS):
        d.power_rails.rail_descriptor.add(index=i, rail_name=name, subsys_name="cpu", sampling_rate=10)
    for k in range(21):
        q = b.add_packet()
        q.timestamp, q.trusted_packet_sequence_id = T0 + k * S // 10, 3
        for i in range(len(RAILS)):
            # (i + 1) W for 0.1 s = (i + 1) * 1e5 uWs per sample
            q.power_rails.energy_data.add(index=i, timestamp_ms=(T0 + k * S // 10) // 1_000_000,
                                          energy=(i + 1) * 100_000 * k)
    q = b.add_packet()
    q.timestamp, q.trusted_packet_sequence_id = T0, 4
    q.sequence_flags = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    q.battery.charge_counter_uah = 4_000_000
    return b.serialize()


@pytest.fixture
def run(synthetic_run: SyntheticRun, tmp_path: Path) -> Path:
    d = tmp_path / "run"
    shutil.copytree(synthetic_run.path, d)
    return d


@pytest.fixture
def phone(tmp_path: Path) -> Path:
    p = tmp_path / "phone.perfetto-trace"
    p.write_bytes(phone_trace())
    return p


def test_series_read_from_the_phone_trace(phone: Path) -> None:
    s = read_trace(phone, "").series
    assert s.end_s == 2.0
    assert s.freq_khz == {0: ([0.0, 0.5], [1804800, 300000]), 4: ([0.0, 1.0], [2419200, 1862400])}
    for i, rail in enumerate(RAILS):
        t, mw = s.rail_power_mw[rail]
        assert t == pytest.approx([k / 10 for k in range(20)])
        assert mw == pytest.approx([1000.0 * (i + 1)] * 20)
    assert s.temp_c["skin"] == ([0.0, 0.5, 1.0, 1.5, 2.0], [30.0, 30.5, 31.0, 31.5, 32.0])


def _report(run: Path, *args: str):
    return CliRunner().invoke(main, ["report", str(run), *args])


def _chart_texts(page: str) -> dict[str, str]:
    """The text of each side-by-side chart (its SVG keeps the legend's labels as text)."""
    return {c: page.split(f'id="{c}"', 1)[1].split('<div class="chart"', 1)[0] for c in PHONE_CHART_IDS}


def test_report_draws_measured_beside_simulated(run: Path, phone: Path) -> None:
    r = _report(run, "--phone-trace", str(phone))
    assert r.exit_code == 0, r.output
    page = (run / "report.html").read_text()
    assert "Simulated and measured: phone.perfetto-trace" in page
    charts = _chart_texts(page)
    freq, power, temp = (charts[c] for c in PHONE_CHART_IDS)
    # sd865's little cluster is CPUs 0-3: its simulated curve and CPU 0's measured one share a colour
    assert "little (simulated)" in freq and "little (measured, cpu0)" in freq
    assert "cpu4 (measured)" in freq and "big (simulated)" in freq
    assert all(f"{r} (measured)" in power for r in RAILS)
    assert "total (measured)" in power and "total (simulated)" in power
    assert "skin (simulated)" in temp and "skin (measured)" in temp and "pa-therm (measured)" in temp
    # without the option the page has no such section, and is otherwise the same page
    plain = _report(run)
    assert plain.exit_code == 0 and "chart-vs-" not in (run / "report.html").read_text()
    assert page.startswith((run / "report.html").read_text().split("</body>")[0])


@pytest.mark.parametrize("content", [b"not a trace at all\n", phone_trace()[:-7], None])
def test_bad_phone_trace_exits_2_and_writes_nothing(run: Path, tmp_path: Path, content: bytes | None) -> None:
    assert _report(run).exit_code == 0
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    bad = tmp_path / "bad.perfetto-trace"
    if content is not None:
        bad.write_bytes(content)
    r = _report(run, "--phone-trace", str(bad))
    assert r.exit_code == 2, r.output
    assert str(bad) in re.sub(r"\s+", "", r.output) or str(bad) in r.output
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before   # no .tmp left, nothing replaced


@needs_chromium
def test_chromium_renders_side_by_side_charts(run: Path, phone: Path, tmp_path: Path) -> None:
    assert CHROMIUM is not None, "CI=true but chromium is not installed"
    assert _report(run, "--phone-trace", str(phone)).exit_code == 0
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    url = (run / "report.html").resolve().as_uri()
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True,
                         timeout=60, check=True).stdout

    class Finder(_ChartFinder):
        def handle_starttag(self, tag: str, attrs: list) -> None:
            chart = dict(attrs).get("id")
            self.stack.append(chart if chart in PHONE_CHART_IDS else None)
            inside = next((c for c in reversed(self.stack) if c), None)
            if inside and tag == "svg":
                self.svg[inside] = self.svg.get(inside, 0) + 1
            if inside and tag in ("path", "text", "rect", "use"):
                self.shapes[inside] = self.shapes.get(inside, 0) + 1

    found = Finder()
    found.feed(dom)
    assert all(found.svg.get(c) == 1 and found.shapes.get(c, 0) > 10 for c in PHONE_CHART_IDS), found.svg
    shot = tmp_path / "report.png"
    subprocess.run([*flags, f"--screenshot={shot}", "--window-size=1280,4000", url],
                   capture_output=True, timeout=60, check=True)
    assert shot.exists() and shot.stat().st_size > 20_000
