"""The compiled hot paths of the report writers against their plain references: "%.12g" rows
of timeseries.csv, and the counter and slice packets of the Perfetto trace."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from socsim.report import perfetto
from socsim.report.events import StreamRecorder, format_rows, format_rows_py
from socsim.report.perfetto import (_PacketStream, _counter_descriptors, _counter_head,
                                    _counter_row_py, write_perfetto)

TRICKY = [0.0, -0.0, math.nan, math.inf, -math.inf, 0.5, 1.5, 2.5, 100000000000.5,
          999999999999.5, 1e-4, 1e-5, 9.99999999999949e-5, 1e12, 999999999999.4,
          123456789012345.0, 1e-300, 1e300, 5e-324, 2419.2, 27.67956124635007, -1040455.40326]


def _blocks() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    blocks = [rng.standard_normal((50, 8)) * s for s in 10.0 ** np.arange(-14, 36, 3)]
    blocks.append(np.round(rng.standard_normal((50, 8)) * 1e4, 1))
    blocks.append(2.0 ** rng.integers(-45, 60, (50, 8)).astype(float))
    blocks.append(rng.integers(0, 10**6, (50, 8)) / 10.0 ** rng.integers(0, 15, (50, 8)))
    blocks.append(np.array([TRICKY]))
    return blocks


@pytest.mark.parametrize("block", _blocks(), ids=lambda b: f"{b.shape}-{abs(b).max():.0e}")
def test_format_rows_matches_percent_g(block: np.ndarray) -> None:
    assert format_rows(block) == format_rows_py(block)


def _write_ts(path: Path, rows: list[list[str]]) -> None:
    with open(path / "timeseries.csv", "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([["t_s", "a", "b", "cpufreq.big"], *rows])


def _reference_counters(ts_csv: Path, out: Path) -> bytes:
    """The per-row Python encoding (what _write_counters wrote before the kernel)."""
    with open(out, "wb") as f:
        stream = _PacketStream(f)
        with open(ts_csv, newline="") as src:
            reader = csv.reader(src)
            header = next(reader)
            heads = [_counter_head(u) for u in _counter_descriptors(stream, header[1:], set())]
            stream.flush()
            rows = list(reader)
            for k, row in enumerate(rows):
                f.write(_counter_row_py(row, rows[k - 1] if k else None, heads))
            if len(rows) >= 2:
                last, before = rows[-1], rows[-2]
                start = perfetto._counter_start(round(float(last[0]) * 1e9))
                f.write(b"".join(start + heads[i] + perfetto._pack_double(float(v))
                                 for i, (v, b) in enumerate(zip(last[1:], before[1:])) if v == b))
    return out.read_bytes()


def _fast_counters(ts_csv: Path, out: Path) -> bytes:
    with open(out, "wb") as f:
        stream = _PacketStream(f)
        perfetto._write_counters(stream, ts_csv, {})   # no SoC: every column a counter
        stream.flush()
    return out.read_bytes()


@pytest.mark.parametrize("chunk", [16, 97, 1 << 22])
def test_counter_kernel_matches_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          chunk: int) -> None:
    rng = np.random.default_rng(1)
    rows = []
    for k in range(300):
        a = "%.12g" % (1e3 * rng.standard_normal()) if k % 3 else "7"
        b = ["nan", "inf", "0.1234567890123456789", "1e-40", "-0", "0", "1.0", "1"][k % 8]
        rows.append(["%.12g" % (k * 0.1), a, b if k % 5 else "2", "2419.2" if k < 150 else "1862.4"])
    _write_ts(tmp_path, rows)
    monkeypatch.setattr(perfetto, "_TS_CHUNK", chunk)
    monkeypatch.setattr(perfetto, "_OUT_CAP", 4096)
    ref = _reference_counters(tmp_path / "timeseries.csv", tmp_path / "ref.bin")
    assert _fast_counters(tmp_path / "timeseries.csv", tmp_path / "fast.bin") == ref


@pytest.mark.parametrize("rows", [[], [["0", "1", "2", "3"]], [["0", "1", "2", "3"], ["0.1", "1", "5", "3"]]])
def test_counter_kernel_short_files(tmp_path: Path, rows: list[list[str]]) -> None:
    _write_ts(tmp_path, rows)
    ref = _reference_counters(tmp_path / "timeseries.csv", tmp_path / "ref.bin")
    assert _fast_counters(tmp_path / "timeseries.csv", tmp_path / "fast.bin") == ref


def test_last_line_without_newline(tmp_path: Path) -> None:
    _write_ts(tmp_path, [["0", "1", "2", "3"], ["0.1", "1", "5", "3"], ["0.2", "4", "5", "3"]])
    path = tmp_path / "timeseries.csv"
    ref = _reference_counters(path, tmp_path / "ref.bin")
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert _fast_counters(path, tmp_path / "fast.bin") == ref


def test_slice_kernel_matches_per_slice_encoding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices through the kernel give the bytes of the per-slice functions (small chunks, so
    interned strings and new lanes land between kernel calls)."""
    rec = StreamRecorder(tmp_path)
    for b in range(40):
        for i in range(12):
            rec.op_slice(f"cpu{4 + i % 4}", f"op{i % 5}" + "x" * (i * 20), "conv2d", b,
                         ("forward", "update")[i % 2], b * 1.0 + i * 0.05, 0.06 if i == 3 else 0.04)
    rec.close()
    monkeypatch.setattr(perfetto, "_CHUNK", 7)

    class NoSched:   # the slices alone (sched_switch packets: tests/report/test_perfetto_android.py)
        def op(self, cpu: int, t0: int, t1: int) -> bytes:
            return b""

        def close(self) -> bytes:
            return b""

    monkeypatch.setattr(perfetto, "SchedWriter", NoSched)
    write_perfetto(tmp_path, tmp_path / "fast.perfetto-trace")

    def per_slice(stream, tracks, ops_csv):   # the encoding before the kernel
        a_batch, a_phase, a_kind = (stream.intern("debug_annotation_names", n)
                                    for n in ("batch", "phase", "kind"))
        with open(ops_csv, newline="") as f:
            reader = csv.reader(f)
            next(reader)
            for track, name, kind, batch, phase, start_s, dur_s in reader:
                t0 = round(float(start_s) * 1e9)
                t1 = max(t0, round((float(start_s) + float(dur_s)) * 1e9))
                uuid = tracks.place(track, t0, t1)
                ann = (perfetto.annotation_str(a_phase, stream.intern(perfetto._STR, phase))
                       + perfetto.annotation_str(a_kind, stream.intern(perfetto._STR, kind)))
                tail = perfetto.begin_event_tail(uuid, stream.intern("event_names", name), ann)
                stream.raw.append(perfetto.slice_begin_bytes(
                    t0, perfetto.annotation_int(a_batch, int(batch)) + tail))
                stream.raw.append(perfetto.slice_end_bytes(t1, perfetto.end_event(uuid)))

    monkeypatch.setattr(perfetto, "_write_slices", per_slice)
    write_perfetto(tmp_path, tmp_path / "ref.perfetto-trace")
    ref = (tmp_path / "ref.perfetto-trace").read_bytes()
    assert (tmp_path / "fast.perfetto-trace").read_bytes() == ref and len(ref) > 10_000


def test_samples_written_in_order_across_blocks(tmp_path: Path) -> None:
    rec = StreamRecorder(tmp_path)
    rec.ROWS_PER_BLOCK = 3
    cols = ["a", "b"]
    for k in range(10):
        rec.sample(k * 0.1, {"a": k / 3, "b": -k * 1e-7})
    rec.samples(cols, np.array([1.0, 1.1]), np.array([[1 / 7, 2.0], [3.0, 4.5]]))
    rec.sample(1.2, {"a": 1.0, "b": 2.0})
    rec.close()
    want = ["t_s,a,b"] + ["%.12g,%.12g,%.12g" % (k * 0.1, k / 3, -k * 1e-7) for k in range(10)]
    want += ["1,%.12g,2" % (1 / 7), "1.1,3,4.5", "1.2,1,2"]
    assert (tmp_path / "timeseries.csv").read_text().splitlines() == want
