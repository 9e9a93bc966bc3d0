"""Reading the measurement formats and mapping rows to socsim runs."""
from __future__ import annotations

from pathlib import Path

import pytest

from socsim.fidelity import load_measurements
from socsim.fidelity.evaluate import workload_of
from socsim.fidelity.ncnn import device_soc, powersave_masks, thread_cores
from socsim.spec import workload_from_dict
from tests.fidelity.helpers import write

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "calibration" / "dev"


def test_dev_files_are_the_published_ones_with_their_headers():
    for name in ("minenergy_table2.yaml", "ncnn_phones.yaml"):
        assert (DEV / name).read_text().startswith("# DEVELOPMENT SET")


def test_minenergy_rows_map_to_core_sets_and_nearest_opps():
    suite = load_measurements(DEV / "minenergy_table2.yaml")
    (table,) = suite.tables
    assert table.compare == "absolute" and len(table.cases) == 21
    by_id = {c.id: c for c in table.cases}
    c = by_id["BIG1@H"]
    assert (c.soc, c.model, c.batch, c.mode, c.scheduler) == ("sd855", "alexnet", 16, "train", "mnn-fp32")
    assert (c.cores, c.governor) == ("big1", "userspace")
    assert c.freq == {"little": 1800.0, "mid": 2400.0, "prime": 2400.0}
    assert (c.time_s, c.energy_j) == (4.2, 10.6)
    low = by_id["HYBRID8@L"]
    assert low.cores == "hybrid8" and low.freq == {"little": 600.0, "mid": 800.0, "prime": 800.0}
    assert by_id["LITTLE4@M"].freq["little"] == 1200.0


def test_a_row_becomes_a_valid_workload():
    case = load_measurements(DEV / "minenergy_table2.yaml").tables[0].cases[0]
    wl = workload_from_dict(workload_of(case, 2))
    assert (wl.model, wl.batch_size, wl.batches, wl.mode) == ("alexnet", 16, 2, "train")
    assert (wl.cpu.cores, wl.cpu.governor, wl.scheduler.name) == ("big1", "userspace", "mnn-fp32")
    assert wl.cpu.freq == {"little": 1800.0, "mid": 2400.0, "prime": 2400.0}


def test_ncnn_devices_map_only_to_the_same_chip():
    soc, note, label = device_soc("Qualcomm SM8150-AC Snapdragon 855+ (Kyro485 2.96 GHz ...)")
    assert soc == "sd855" and "2.96" in note and "855+" in label
    assert device_soc("Qualcomm Snapdragon 888 (Cortex-X1 2.84GHz x1 ...)")[:2] == ("sd888", None)
    assert device_soc("Qualcomm SM8550-AB Snapdragon 8 Gen 2 (Kyro 3.20 GHz + ...)")[:2] == ("sd8gen2", None)
    assert device_soc("Qualcomm SDM765G Snapdragon 765G (...)")[0] is None
    assert device_soc("Qualcomm MSM6150 Snapdragon 675 (Kyro460 2.0GHz x 2 + ...)")[0] is None
    d9300 = "MediaTek Dimensity 9300 (MT6989) (Cortex-X4 3.25 GHz + 2.85 GHz x 3 + Cortex-A720 2.0 GHz x 4 + ...)"
    assert device_soc(d9300)[:2] == ("dimensity9300", None)
    assert device_soc("Kirin 970 (Cortex-A73 2.4GHz x 4 + Cortex-A53 1.8GHz x 4)")[:2] == ("kirin970", None)
    soc, note, label = device_soc("Qualcomm MSM8998 Snapdragon 835 (Kyro 2.45GHz x 4 + Kyro 1.9GHz x 4 + Adreno 540)")
    assert soc == "sd835" and "Cortex-A73" in note and label == "sd835 (835)"


def test_ncnn_powersave_masks_follow_ncnns_midpoint_rule():
    # 8 Gen 2: A510 2.0, A715/A710 2.8, X3 3.2 GHz: big = top clock >= 2.6 GHz
    assert powersave_masks("sd8gen2") == ([0, 1, 2], [3, 4, 5, 6, 7])
    assert thread_cores("sd8gen2", [3, 4, 5, 6, 7], 1) == [7]          # the prime core
    assert thread_cores("sd8gen2", [3, 4, 5, 6, 7], 4) == [3, 4, 5, 7]
    assert thread_cores("sd855", [4, 5, 6, 7], 8) == [4, 5, 6, 7]      # one thread per core
    # Dimensity 9300: A720 2.0, X4 2.85, X4 3.25 GHz: big = top clock >= 2.625 GHz, the four X4s
    assert powersave_masks("dimensity9300") == ([0, 1, 2, 3], [4, 5, 6, 7])
    assert thread_cores("dimensity9300", [4, 5, 6, 7], 1) == [7]       # the 3.25 GHz X4


def test_ncnn_ratios_pair_runs_of_one_device():
    suite = load_measurements(DEV / "ncnn_phones.yaml")
    tables = {t.name: t for t in suite.tables}
    assert set(tables) == {"ncnn threads 1->4", "ncnn INT8/FP32", "ncnn GPU/CPU", "ncnn big/little"}
    threads = tables["ncnn threads 1->4"]
    alex = next(r for r in threads.ratios if r.name.startswith("alexnet,"))
    assert alex.measured == pytest.approx(24.92 / 11.91)
    cases = {c.id: c for c in threads.cases}
    # one thread on the prime core, four on the big mask (ncnn's powersave 2, EAS placement)
    assert (cases[alex.num].cores, cases[alex.den].cores) == ([7], [4, 5, 6, 7])
    assert all(c.mode == "inference" and c.batch == 1 for c in threads.cases)
    # the 855+, the 8 Gen 2, the Dimensity 9300, the Kirin 970 and the Snapdragon 835 rows
    assert {c.soc for c in threads.cases} == {"sd855", "sd8gen2", "dimensity9300", "kirin970", "sd835"}
    gpu = {c.scheduler for c in tables["ncnn GPU/CPU"].cases}
    assert gpu == {"ncnn-fp32", "ncnn-vulkan"}
    assert {c.scheduler for c in tables["ncnn INT8/FP32"].cases} == {"ncnn-fp32", "ncnn-int8"}
    skipped = dict(suite.skipped)
    assert skipped["squeezenet"].startswith("not in socsim's model zoo")
    assert any(w.startswith("Qualcomm MSM6150") for w in skipped)
    assert any("855+" in n for n in suite.notes) and not any(n.startswith("big/little") for n in suite.notes)


def test_ncnn_big_little_pairs_the_dimensity_9300s_four_thread_runs():
    """powersave 1 over powersave 2 at 4 threads: the four A720 against the four X4 (the only
    device of the dev file measured on both masks at one thread count)."""
    suite = load_measurements(DEV / "ncnn_phones.yaml")
    bl = next(t for t in suite.tables if t.name == "ncnn big/little")
    cases = {c.id: c for c in bl.cases}
    assert {c.soc for c in bl.cases} == {"dimensity9300"}
    vgg = next(r for r in bl.ratios if r.name.startswith("vgg16,"))
    assert vgg.measured == pytest.approx(47.78 / 34.08)
    assert (cases[vgg.num].cores, cases[vgg.den].cores) == ([0, 1, 2, 3], [4, 5, 6, 7])
    assert all(c.scheduler in ("ncnn-fp32", "ncnn-int8") for c in bl.cases)


def test_ncnn_int8_rows_on_cores_without_dot_product_are_skipped_with_the_reason():
    """The ARMv8.0 phones (Kirin 970's A73, Snapdragon 835's Kryo 280 as A73): ncnn's INT8 runs
    its SMLAL path there, which socsim's SDOT kernel stream does not cost; their FP32 rows run."""
    suite = load_measurements(DEV / "ncnn_phones.yaml")
    skipped = dict(suite.skipped)
    for label in ("kirin970", "sd835 (835)"):
        why = skipped[f"{label} run 0 resnet18_int8"]
        assert "without the dot product" in why and "SMLAL" in why
    cases = [c for t in suite.tables for c in t.cases if c.soc in ("kirin970", "sd835")]
    assert cases and all(c.scheduler in ("ncnn-fp32", "ncnn-vulkan") for c in cases)
    # the dot-product phones keep their INT8 rows
    int8 = {c.soc for t in suite.tables for c in t.cases if c.scheduler == "ncnn-int8"}
    assert int8 == {"sd855", "sd888", "sd8gen2", "dimensity9300"}


def test_general_format_fills_defaults_and_reads_ratios(tmp_path):
    suite = load_measurements(write(tmp_path))
    train, inference = suite.tables
    assert [c.id for c in train.cases] == ["big4", "little1", "big1"]
    little = train.cases[1]
    assert (little.freq, little.governor, little.energy_j) == ("min", "userspace", 0.006)
    assert train.cases[0].governor == "schedutil" and train.cases[2].energy_j is None
    assert inference.compare == "ratios" and inference.cases[0].mode == "inference"
    (ratio,) = inference.ratios
    assert ratio.measured == pytest.approx(2.0)


def test_a_row_states_the_phones_background_as_its_run_condition(tmp_path):
    """``background`` (a row's or a table's default) becomes the run's environment.background and
    a separate simulation; a row that states none runs at the fitted values."""
    import copy

    from tests.fidelity.helpers import SMALL
    data = copy.deepcopy(SMALL)
    data["tables"][1]["rows"].append({"id": "4t-quiet", "cores": "big4", "threads": 4, "time_s": 0.001,
                                      "background": {"little": 0, "big": 0}})
    data["tables"][0]["defaults"]["background"] = {"big": 0.1}
    suite = load_measurements(write(tmp_path, data))
    train, ratios = suite.tables
    by_id = {c.id: c for c in ratios.cases}
    quiet, plain = by_id["4t-quiet"], by_id["4t"]
    assert plain.background is None and "environment" not in workload_of(plain, 2)
    assert quiet.background == (("big", 0.0), ("little", 0.0))
    assert quiet.run_key() != plain.run_key() and "background big 0/little 0" in quiet.config()
    wl = workload_from_dict(workload_of(quiet, 2))
    assert (wl.environment.background.little, wl.environment.background.big) == (0.0, 0.0)
    assert all(c.background == (("big", 0.1), ("little", None)) for c in train.cases)   # little: the fitted
    assert workload_from_dict(workload_of(train.cases[0], 2)).environment.background.little is None


def _ncnn_device(**extra):
    runs = [{"threads": t, "powersave": 2, "gpu_device": -1, "avg_ms": {"alexnet": ms}}
            for t, ms in ((1, 24.92), (4, 11.91))]
    runs.append({"threads": 1, "powersave": 2, "gpu_device": 0, "avg_ms": {"alexnet": 28.0}})
    return [{"device": "Qualcomm SM8150-AC Snapdragon 855+ (Kyro485 2.96 GHz)", "runs": runs, **extra}]


def test_ncnn_rows_run_on_a_quiet_phone_unless_the_device_states_its_background(tmp_path):
    """benchncnn's run condition (BENCHNCNN_BACKGROUND) reaches every CPU row's workload; a device
    entry's own ``background`` replaces it, a domain it leaves out keeps the quiet value; the GPU
    rows carry none (no fork-join on the CPU)."""
    from socsim.fidelity.ncnn import BENCHNCNN_BACKGROUND

    assert BENCHNCNN_BACKGROUND == {"little": 0.0, "big": 0.0}
    suite = load_measurements(write(tmp_path, _ncnn_device()))
    cases = {c.id: c for t in suite.tables for c in t.cases}
    cpu = [c for c in cases.values() if c.scheduler != "ncnn-vulkan"]
    assert len(cpu) == 2 and all(c.background == (("big", 0.0), ("little", 0.0)) for c in cpu)
    wl = workload_from_dict(workload_of(cpu[0], 2))
    assert (wl.environment.background.little, wl.environment.background.big) == (0.0, 0.0)
    assert all(c.background is None for c in cases.values() if c.scheduler == "ncnn-vulkan")
    busy = load_measurements(write(tmp_path, _ncnn_device(background={"big": 0.2}), name="busy.yaml"))
    got = {c.background for t in busy.tables for c in t.cases if c.scheduler != "ncnn-vulkan"}
    assert got == {(("big", 0.2), ("little", 0.0))}


def test_the_dev_files_ncnn_rows_carry_benchncnns_run_condition():
    suite = load_measurements(DEV / "ncnn_phones.yaml")
    cpu = {c.background for t in suite.tables for c in t.cases if c.scheduler != "ncnn-vulkan"}
    assert cpu == {(("big", 0.0), ("little", 0.0))}


def test_ncnn_rows_with_more_threads_than_cores_carry_the_thread_count():
    """sd888's benchncnn runs put 8 threads on its 4 big cores: the row's workload asks ncnn's
    scheduler for 8 threads; every other ncnn row runs one thread per core, as before."""
    suite = load_measurements(DEV / "ncnn_phones.yaml")
    cases = {c.id: c for t in suite.tables for c in t.cases}
    over = {cid: c for cid, c in cases.items() if c.options}
    assert over and all(c.soc == "sd888" and c.cores == [4, 5, 6, 7] for c in over.values())
    assert all(dict(c.options) == {"threads": 8} and "threads 8" in c.config() for c in over.values())
    assert all(not c.options for c in cases.values() if c.soc != "sd888" or "[gpu]" in c.id)
    wl = workload_from_dict(workload_of(next(iter(over.values())), 2))
    assert wl.scheduler.options == {"threads": 8}
