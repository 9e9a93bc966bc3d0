"""Measurements that the same phone's other runs contradict (socsim.fidelity.ncnn.contradictions):
found by a stated rule, shown in the report and kept out of a ratio table's MAPE and tau."""
from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.fidelity import load_measurements
from socsim.fidelity.cases import RatioCase, TableCases
from socsim.fidelity.evaluate import _ratio_table
from socsim.fidelity.formats import NcnnRun
from socsim.fidelity.ncnn import CONTRADICTION_FACTOR, contradictions
from socsim.fidelity.render import markdown

DEV = Path(__file__).resolve().parents[2] / "calibration" / "dev"
MODELS = ("squeezenet", "mobilenet", "googlenet", "resnet18", "alexnet", "vgg16", "resnet50")


def _run(threads: int, times: dict[str, float], gpu: int = -1) -> NcnnRun:
    return NcnnRun(threads=threads, powersave=2, gpu_device=gpu, avg_ms=times)


def test_the_dev_file_has_two_contradicted_measurements_and_they_leave_three_ratios_uncounted():
    """sd8gen2's resnet18 at 8 threads (69.5 ms against 6.63 ms on 4 big cores) and
    resnet18_int8 at 4 threads (22.57 ms against 32.04 ms on one); no other measurement of the
    file is flagged, and the 1-thread and 8-thread resnet18_int8 times, which agree with the
    phone's other runs, are not."""
    suite = load_measurements(DEV / "ncnn_phones.yaml")
    flagged = {(t.name, q.name) for t in suite.tables for q in t.ratios if q.contradicted}
    assert flagged == {("ncnn INT8/FP32", "resnet18, sd8gen2, 4 threads, big cores"),
                       ("ncnn INT8/FP32", "resnet18, sd8gen2, 8 threads, any cores"),
                       ("ncnn threads 1->4", "resnet18_int8, sd8gen2, big cores")}
    notes = [n for n in suite.notes if n.startswith("contradicted measurement")]
    assert len(notes) == 2
    assert any("sd8gen2 run 2 resnet18:" in n and "69.5 ms" in n for n in notes)
    assert any("sd8gen2 run 1 resnet18_int8:" in n and "22.57 ms" in n for n in notes)


def test_a_model_off_against_every_other_run_is_flagged_and_only_in_that_run():
    base = {m: 10.0 + i for i, m in enumerate(MODELS)}
    one = _run(1, base)
    four = _run(4, {m: t / 3 for m, t in base.items()} | {"vgg16": base["vgg16"] / 3 * 2.5})
    eight = _run(8, {m: t / 3.5 for m, t in base.items()})
    flags = contradictions([one, four, eight])
    assert set(flags) == {(1, "vgg16")}
    # against one other run only, the pair cannot say which run is wrong: both are flagged
    assert set(contradictions([one, four])) == {(0, "vgg16"), (1, "vgg16")}
    # GPU runs are compared with GPU runs only
    assert contradictions([one, _run(1, {m: t * 3 for m, t in base.items()} | {"vgg16": 1.0}, gpu=0)]) == {}


def test_few_common_models_say_nothing():
    a = _run(1, {m: 10.0 for m in MODELS[:4]})
    b = _run(4, {m: 10.0 for m in MODELS[:3]} | {MODELS[3]: 100.0})
    assert contradictions([a, b]) == {}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1.0, 500.0), min_size=6, max_size=10),
       st.lists(st.floats(-0.65, 0.65), min_size=10, max_size=10),
       st.floats(0.05, 20.0))
def test_a_phone_whose_models_scale_within_the_factor_is_never_contradicted(times, noise, scale):
    """Any common speed-up with per-model spread inside sqrt(CONTRADICTION_FACTOR) on either
    side of it (so no model is more than the factor from the median) flags nothing."""
    import math

    spread = math.log(CONTRADICTION_FACTOR) / 2
    a = {f"m{i}": t for i, t in enumerate(times)}
    b = {k: t * scale * math.exp(spread * n) for (k, t), n in zip(a.items(), noise)}
    assert contradictions([_run(1, a), _run(4, b)]) == {}


def test_a_contradicted_ratio_is_shown_but_not_counted():
    rows = [{"id": i, "simulated_time_s": s} for i, s in (("a", 2.0), ("b", 1.0), ("c", 1.0), ("d", 1.0))]
    ratios = [RatioCase("t", "k", "good", "a", "b", "w", 2.2),
              RatioCase("t", "k", "good2", "a", "c", "w", 1.9),
              RatioCase("t", "k", "bad", "a", "d", "w", 20.0, contradicted="a phone's typo")]
    out = _ratio_table(TableCases("t", "ratios", [], ratios), rows, 3)
    assert out["n"] == 2 and out["n_contradicted"] == 1
    assert abs(out["ratio_mape_pct"] - (100 * 0.2 / 2.2 + 100 * 0.1 / 1.9) / 2) < 1e-3
    assert out["ratio_mape_all_pct"] > 30 and "bad" not in out["worst"]
    assert out["ratios"][2]["contradicted"] == "a phone's typo"
    md = markdown({"file": "f", "source": "s", "batches_per_row": 1, "tables": [out], "skipped": [], "notes": []})
    assert "+1 contradicted" in md and "(contradicted, not counted)" in md
    clean = _ratio_table(TableCases("t", "ratios", [], ratios[:2]), rows, 3)
    assert "n_contradicted" not in clean and "ratio_mape_all_pct" not in clean
