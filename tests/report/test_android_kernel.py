"""The compiled Android packets (socsim/report/perfetto_android_kernel.py) against their
references: timeseries.csv's blocks against AndroidCounters.row (block boundaries and read
chunks anywhere, values the kernel hands back to the reference included), the sched_switch
runs against SchedWriter, and whole traces of a synthetic and a real run."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import socsim
from socsim.errors import InputError
from socsim.report import perfetto
from socsim.report.perfetto import write_perfetto
from socsim.report.events import StreamRecorder
from socsim.report.perfetto_android import AndroidCounters, SchedWriter, android_columns

from report_synthetic import SyntheticRun

HEADER = ["t_s", "power.cpu.big_uws", "power.gpu_uws", "power.gpu_mw", "cpufreq.big",
          "cpufreq.little", "cpufreq.nosuch", "cpu-1-0 Temperature", "skin-therm Temperature",
          "batt.charge_uah", "batt.capacity_pct", "batt.current_ua", "batt.voltage_mv"]
CLUSTERS = {"big": (4, 5, 6, 7), "little": (0, 1, 2, 3)}


def _rows(n: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    rows, e = [], [0.0, 0.0]
    for k in range(n):
        e = [e[0] + 300.0 * rng.random(), e[1] + 1e9 * rng.random()]   # > 2**32 uWs soon
        big = ("2419.2", "1804.8", "-0", "0", "2419.20000000001")[k // 7 % 5]
        temp = 25 + 20 * (1 - 0.99 ** k) + rng.choice([0, 0.0004, -0.0004])   # sub-milli steps
        rows.append(["%.12g" % (0.1 * k), "%.12g" % e[0], repr(e[1]), "%.12g" % rng.random(),
                     big, "1804.8" if k % 50 < 25 else "300", "2841.6",
                     "%.12g" % temp, "%.6g" % temp, "%.12g" % (4e6 - 0.3 * k),
                     ("80", "79.5", "1e-3", "3.4e38")[k % 4],
                     "%.12g" % (-1.2e6 - rng.random() * 1e3), repr(4350.0 - 0.005 * k)])
    return rows


def _write(path: Path, rows: list[list[str]], header: list[str] = HEADER) -> Path:
    ts = path / "timeseries.csv"
    ts.write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n")
    return ts


def _android(ts: Path, out: Path, writer, header: list[str] = HEADER) -> bytes:
    with open(out, "wb") as f:
        stream = perfetto._PacketStream(f)
        writer(stream, ts, AndroidCounters(android_columns(header, CLUSTERS)))
        stream.flush()
    return out.read_bytes()


@pytest.mark.parametrize(("block", "chunk"), [(1, 1 << 22), (7, 97), (4096, 1 << 22), (64, 1000)])
def test_blocks_match_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int,
                                chunk: int) -> None:
    ts = _write(tmp_path, _rows(300, 1))
    ref = _android(ts, tmp_path / "ref.bin", perfetto._write_android_rows_py)
    monkeypatch.setattr(perfetto, "_ANDROID_ROWS", block)
    monkeypatch.setattr(perfetto, "_TS_CHUNK", chunk)
    assert _android(ts, tmp_path / "fast.bin", perfetto._write_android_rows) == ref
    assert len(ref) > 50_000


@pytest.mark.parametrize("value", ["1e19", "-1e19", "0.12345678901234567", "1e-400",
                                   " 7", "+5", "3e38"])
def test_values_the_kernel_hands_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      value: str) -> None:
    """Rows the kernel's parser or encoder does not take (big ints, >15 digits, float32
    overflow) go through the reference with the change state carried over."""
    rows = _rows(40, 2)
    for k in (3, 17, 18):
        rows[k][1] = rows[k][10] = rows[k][4] = rows[k][11] = value
    ts = _write(tmp_path, rows)
    ref = _android(ts, tmp_path / "ref.bin", perfetto._write_android_rows_py)
    monkeypatch.setattr(perfetto, "_ANDROID_ROWS", 5)
    assert _android(ts, tmp_path / "fast.bin", perfetto._write_android_rows) == ref


def test_no_android_columns_and_no_newline(tmp_path: Path) -> None:
    header = ["t_s", "power.gpu_mw", "batch"]
    ts = tmp_path / "timeseries.csv"
    ts.write_text("t_s,power.gpu_mw,batch\n0,1,0\n0.1,2,0")
    assert (_android(ts, tmp_path / "fast.bin", perfetto._write_android_rows, header)
            == _android(ts, tmp_path / "ref.bin", perfetto._write_android_rows_py, header))
    rows = _rows(3, 3)
    ts.write_text("\n".join(",".join(r) for r in [HEADER, *rows]))   # no final newline
    assert (_android(ts, tmp_path / "fast.bin", perfetto._write_android_rows)
            == _android(ts, tmp_path / "ref.bin", perfetto._write_android_rows_py))


@pytest.mark.parametrize(("column", "value"), [(1, "nan"), (1, "inf"), (4, "nan"), (10, "3.5e38")])
def test_unencodable_value_is_bad_input(tmp_path: Path, column: int, value: str) -> None:
    """A value Android's forms cannot hold (nan/inf rounded to an integer, a capacity beyond
    float32) is bad input naming the file and line (the reference's error, exit 2)."""
    rows = _rows(10, 4)
    rows[6][column] = value
    ts = _write(tmp_path, rows)
    with pytest.raises(InputError, match=r"timeseries\.csv:8: "):
        _android(ts, tmp_path / "fast.bin", perfetto._write_android_rows)


class _ReferenceSched:
    """SchedWriter's packets as _write_slices took them before the bulk encoder: appended as
    each run ends, before the slices of the same flush."""

    def __init__(self) -> None:
        self._w, self._queue = SchedWriter(), []

    def op(self, cpu: int, t0: int, t1: int) -> None:
        packets = self._w.op(cpu, t0, t1)
        if packets:
            self._queue.append(packets)

    def close(self) -> None:
        self._queue.append(self._w.close())

    def drain(self, raw: list[bytes]) -> None:
        raw.extend(self._queue)
        self._queue.clear()


@pytest.mark.parametrize("chunk", [5, 1 << 14])
def test_sched_runs_match_sched_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """Runs of back-to-back and overlapping ops on several CPUs (times up to 10-byte varints),
    flushed anywhere: the bulk encoder writes SchedWriter's bytes."""
    rec = StreamRecorder(tmp_path)
    rng = np.random.default_rng(7)
    t = 0.0
    for k in range(400):
        cpu = int(rng.choice([0, 3, 4, 7, 12]))
        dur = float(rng.choice([0.001, 0.01, 0.5]))
        rec.op_slice(f"cpu{cpu}", f"op{k % 9}", "conv2d", k // 40, "forward", t, dur)
        rec.op_slice("dsp", "q", "conv2d", k // 40, "forward", t, dur)
        t += float(rng.choice([0.0, dur, dur / 2, 1e3 * rng.random()]))
    rec.close()
    monkeypatch.setattr(perfetto, "_CHUNK", chunk)
    write_perfetto(tmp_path, tmp_path / "fast.perfetto-trace")
    monkeypatch.setattr(perfetto, "SchedRuns", _ReferenceSched)
    write_perfetto(tmp_path, tmp_path / "ref.perfetto-trace")
    ref = (tmp_path / "ref.perfetto-trace").read_bytes()
    assert (tmp_path / "fast.perfetto-trace").read_bytes() == ref and ref.count(b"swapper") > 300


def _both(run_dir: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, bytes]:
    write_perfetto(run_dir, tmp / "fast.perfetto-trace")
    with monkeypatch.context() as m:
        m.setattr(perfetto, "_write_android_rows", perfetto._write_android_rows_py)
        m.setattr(perfetto, "SchedRuns", _ReferenceSched)
        write_perfetto(run_dir, tmp / "ref.perfetto-trace")
    return (tmp / "fast.perfetto-trace").read_bytes(), (tmp / "ref.perfetto-trace").read_bytes()


def test_synthetic_run_trace_identical(synthetic_run: SyntheticRun, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    fast, ref = _both(synthetic_run.path, tmp_path, monkeypatch)
    assert fast == ref


def test_real_run_trace_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    socsim.run("sd865", dict(name="t", model="lenet", input=[1, 28, 28], batch_size=16, batches=3),
               out=run, reports=False)
    fast, ref = _both(run, tmp_path, monkeypatch)
    assert fast == ref and len(ref) > 10_000
