"""``socsim compare``: its JSON holds what its table shows (the reference scheduler, each run's
ratios to it and the other columns), byte-identical with --deterministic; a run that stopped
early shows the batches it ran and why, in the table and in the JSON."""
from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from socsim.report.console import compare_table

import cli_helpers  # noqa: E402


def _text(table) -> str:
    """The table as a wide console prints it (the CLI's width depends on the terminal)."""
    c = Console(width=250, record=True, file=io.StringIO())
    c.print(table)
    return c.export_text()


def _compare(tmp_path: Path, wl: Path, schedulers: str, out: str, *extra: str):
    """The compare JSON written by the CLI, and the table of its runs."""
    js = tmp_path / out
    r = cli_helpers.invoke("compare", "--soc", "sd865", str(wl), "--schedulers", schedulers, "--json", str(js),
                           "--deterministic", "--quiet", *extra)
    assert r.exit_code == 0, r.output
    return _text(compare_table(json.loads(js.read_text())["runs"])), js


def test_json_has_the_tables_columns_and_the_reference(tmp_path):
    wl = cli_helpers.write_workload(tmp_path, batches=3)
    text, js = _compare(tmp_path, wl, "mnn-fp32,pytorch", "a.json")
    d = json.loads(js.read_text())
    assert d["reference"] == "mnn-fp32"
    runs, rows = d["runs"], d["rows"]
    assert [r["scheduler"] for r in rows] == [s["scheduler"] for s in runs] == ["mnn-fp32", "pytorch"]
    ref = runs[0]["per_batch"]
    for row, s in zip(rows, runs):
        assert row["time_per_batch_s"] == s["per_batch"]["time_s"]
        assert row["energy_per_batch_j"] == s["per_batch"]["energy_j"]
        assert abs(row["time_x_first"] - s["per_batch"]["time_s"] / ref["time_s"]) < 1e-8
        assert abs(row["energy_x_first"] - s["per_batch"]["energy_j"] / ref["energy_j"]) < 1e-8
        assert row["peak_memory_bytes"] == s["memory"]["peak_bytes"] and row["peak_c"] == s["thermal"]["peak_c"]
        assert [row[k] for k in ("cpu_ops", "dsp_ops", "gpu_ops", "switches")] == [
            s["placement"][k] for k in ("cpu_ops", "dsp_ops", "gpu_ops", "switches")]
        assert (row["batches"], row["batches_planned"], row["stopped_early"], row["stop_reason"]) == (3, 3, False, None)
        assert row["fg_loss"] is None
        # the table prints the same ratios
        line = next(x for x in text.splitlines() if f" {row['scheduler']} " in x)
        assert f"{row['time_x_first']:.2f}" in line and f"{row['energy_x_first']:.2f}" in line
    assert rows[0]["time_x_first"] == rows[0]["energy_x_first"] == 1.0
    header = next(x for x in text.splitlines() if "scheduler" in x)
    assert "batches" not in header and "stopped" not in text  # nobody stopped early
    # --deterministic: byte-identical JSON across runs
    _, js2 = _compare(tmp_path, wl, "mnn-fp32,pytorch", "b.json")
    assert js.read_bytes() == js2.read_bytes()


def test_an_early_stop_shows_the_batches_run_and_why(tmp_path):
    """Swan declines to train on a phone that is not charging: it stops after its first batch."""
    wl = cli_helpers.write_workload(tmp_path, batches=20, environment={"charging": False})
    text, js = _compare(tmp_path, wl, "mnn-fp32,swan", "c.json")
    rows = json.loads(js.read_text())["rows"]
    swan = rows[1]
    assert swan["stopped_early"] and swan["batches"] < swan["batches_planned"] == 20
    assert swan["stop_reason"] == "swan: phone not charging"
    assert not rows[0]["stopped_early"] and rows[0]["batches"] == 20
    header = next(x for x in text.splitlines() if "scheduler" in x)
    assert "batches" in header
    assert f"{swan['batches']}/20" in text and "20/20" in text
    assert f"swan stopped after {swan['batches']} of 20 batches: swan: phone not charging" in text


def test_time_split_per_unit_and_a_composition_by_name(tmp_path):
    """The split is time on each unit (its share of the batch; FastRPC calls and preparation are
    the rest), and ``base+scheduler`` runs the composition a workload's ``base`` option makes."""
    wl = cli_helpers.write_workload(tmp_path, batches=3, precision="niti", model="vgg11", input=[3, 32, 32],
                                    batch_size=16)
    text, js = _compare(tmp_path, wl, "mandheling,mandheling+min-energy,mnn-fp32-gpu", "c.json")
    d = json.loads(js.read_text())
    rows, runs = d["rows"], d["runs"]
    assert [r["scheduler"] for r in rows] == ["mandheling", "mandheling+min-energy", "mnn-fp32-gpu"]
    assert runs[1]["scheduler"] == "min-energy" and runs[1]["scheduler_info"]["base"] == "mandheling"
    for row, s in zip(rows, runs):
        t = s["placement"]["time_s"]
        assert abs(sum(t.values()) - s["per_batch"]["time_s"]) < 0.01 * s["per_batch"]["time_s"]
        for u in ("cpu", "dsp", "gpu"):
            assert abs(row["time_share"][u] - t[u] / s["per_batch"]["time_s"]) < 1e-3
    m = rows[0]["time_share"]
    assert m["cpu"] > 0.05 and m["dsp"] > 0.2 and m["gpu"] == 0 and runs[0]["placement"]["time_s"]["switch"] > 0
    assert rows[2]["time_share"]["gpu"] > 0.9
    line = next(x for x in text.splitlines() if " mandheling+min-energy " in x)
    assert "%/" in line
    r = cli_helpers.invoke("compare", "--soc", "sd865", str(wl), "--schedulers", "mandheling,+min-energy", "--quiet")
    assert r.exit_code == 2 and "base+scheduler" in r.output, r.output
