"""The ncnn benchmark list as ratio tables: kernel-level inference latencies of another framework
are compared as ratios between runs on the same phone (1 -> 4 threads, big vs little cores,
INT8 vs FP32, GPU vs CPU), each measured and simulated, never as absolute times."""
from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from pathlib import Path

from socsim.fidelity.cases import Case, RatioCase, Suite, TableCases
from socsim.fidelity.formats import NcnnDevice, NcnnFile, NcnnRun
from socsim.spec import list_socs, load_soc
from socsim.spec.coretypes import has_dotprod
from socsim.spec.loader import _Lines
from socsim.workload.model import ModelError
from socsim.workload.zoo import canonical_name

#: ncnn's device names -> socsim's SoC, only where the chip is the same, with what differs
DEVICES: tuple[tuple[str, str, str | None], ...] = (
    (r"Snapdragon 855\+", "sd855", "Snapdragon 855+ (SM8150-AC) is sd855's chip at higher clocks: prime core "
     "2.96 GHz against 2.84 GHz, GPU 675 MHz against 585 MHz; simulated at sd855's"),
    (r"Snapdragon 855(?!\+)", "sd855", None),
    (r"Snapdragon 865(?!\+)", "sd865", None),
    (r"Snapdragon 888(?!\+)", "sd888", None),
    (r"Snapdragon 8 Gen 2", "sd8gen2", None),
    (r"Snapdragon 845", "sd845", None),
    (r"Snapdragon 750G", "sd750g", None),
    (r"Exynos 9820", "exynos9820", None),
    (r"Dimensity 9300", "dimensity9300", None),
    (r"Kirin 970", "kirin970", None),
    (r"Snapdragon 835", "sd835", "Snapdragon 835 (MSM8998): Kryo 280 Gold / Silver, semi-custom cores derived from the "
     "Cortex-A73 / A53, simulated as those cores (soc_specs/sd835.yaml)"),
)
# The run condition of benchncnn's measurements: the phone's own background work, {little, big}
# as a workload's environment.background (socsim.hw.forkjoin).  benchncnn is a native binary
# started from an adb shell on an otherwise idle phone, with no app of its own in the foreground,
# and it sleeps 10 s between models to cool down (benchmark/benchncnn.cpp, cooling_down = 1, the
# argument every run of benchmark/README.md passes); Min-Energy's training ran inside an app on
# a phone in use, whose fitted default (forkjoin.BACKGROUND_UTIL_TOP: big 0.13, 0.20 when this
# scan was made) is the wrong run condition here.  FITTED (a scan, not a free choice): on the 9 ncnn 1->4 thread ratios where it
# acts (sd855's four threads fill its big domain), big 0 / 0.05 / 0.10 give ratio MAPE
# 9.7 / 10.5 / 12.1% (mean signed error +2.0 / -3.1 / -8.2%); 0, a quiet phone, is also the
# value the setting has a meaning for without a fit.  The little domain is never filled by an
# ncnn row (powersave 1 runs are on no socsim SoC); 0 by the same reasoning.  A device entry of
# the file may state its own (``background``), docs/fidelity.md; docs/modeling.md, Fitted constants.
BENCHNCNN_BACKGROUND = {"little": 0.0, "big": 0.0}
# A measurement that contradicts the same phone's other runs.  Two runs of one phone on the same
# unit (two CPU runs, or two GPU runs) give each model a time ratio; the models' ratios spread
# around their median by what each model's layers make of the second configuration (1 -> 4
# threads: 1.8-3.3x across the models of one phone).  A model whose ratio lies more than
# CONTRADICTION_FACTOR from the median, against *every* other run of the phone that measured it
# and CONTRADICTION_MIN_MODELS other models, is a measurement the rest of the phone's data
# contradict (a throttled or disturbed run, a typing error): its ratios are shown in the report,
# marked, and kept out of the table's MAPE and tau, neither fitted to nor fitted around
# (docs/fidelity.md).  Assumption, not fitted: 2x is a round bound; in calibration/dev/
# ncnn_phones.yaml (every device, 60 pairs of runs) the largest deviation below it is 1.78x
# (sd8gen2 vgg16_int8, 1 thread against 8), the two measurements above it are sd8gen2's
# resnet18 at 8 threads (4.9x and 5.8x: 69.5 ms against 6.6 ms on 4 big cores) and
# resnet18_int8 at 4 threads (2.1x and 2.7x: 22.6 ms against 32.0 ms on one).
CONTRADICTION_FACTOR = 2.0
CONTRADICTION_MIN_MODELS = 4
INPUT = (3, 224, 224)   # benchncnn's inputs (ImageNet models, 1000 classes)
CLASSES = 1000
MODEL_NOTE = ("ncnn FP32 CPU runs as socsim's ncnn-fp32 (FP16 arithmetic on ARMv8.2 cores, Winograd 3x3), INT8 "
              "(_int8 models) as ncnn-int8 (per-layer quantize/dequantize, SDOT GEMM), the Vulkan GPU as "
              "ncnn-vulkan (socsim/sched/ncnn.py): mode inference, batch 1, 3x224x224, 1000 classes; one thread per core "
              "(powersave 2: ncnn's big mask, the cores whose top clock is at least the midpoint of the SoC's lowest and highest, 1: "
              "the others; n threads on the n fastest cores of the mask, as Linux's energy-aware scheduler places busy threads; "
              "0 with every core: all; more threads than cores: they share the cores, ncnn's threads option, "
              "socsim.sched.ncnn.oversubscription); the phone's own background work: a quiet phone "
              "(BENCHNCNN_BACKGROUND, little 0 / big 0) unless a device entry states its own")


def device_soc(device: str) -> tuple[str | None, str | None, str]:
    """(socsim SoC, note on what differs, the short name that runs' labels give) for an ncnn
    device name; (None, None, device) if socsim has no spec of its chip."""
    for pattern, soc, note in DEVICES:
        m = re.search(pattern, device)
        if m and soc in list_socs():
            return soc, note, soc if note is None else f"{soc} ({m.group(0).removeprefix('Snapdragon ')})"
    return None, None, device


def _model(key: str) -> tuple[str | None, bool]:
    """(zoo name or None, INT8?) of an ncnn model key (``resnet18_int8``)."""
    int8 = key.endswith("_int8")
    try:
        return canonical_name(key.removesuffix("_int8")), int8
    except ModelError:
        return None, int8


def powersave_masks(soc: str) -> tuple[list[int], list[int]]:
    """(little, big) cores of ncnn's powersave masks on ``soc``: a core is big when its top
    frequency is at least the midpoint of the lowest and the highest core's top frequencies
    (ncnn src/cpu.cpp, initialize_cpu_thread_affinity_mask: max_freq_khz_medium), else little;
    all big when every core tops out alike."""
    spec = load_soc(soc)
    top = {c: max(o.freq_mhz for o in cl.opps) for cl in spec.cpu.clusters for c in cl.core_ids}
    lo, hi = min(top.values()), max(top.values())
    medium = (lo + hi) / 2
    if medium == hi:
        return [], sorted(top)
    return sorted(c for c, f in top.items() if f < medium), sorted(c for c, f in top.items() if f >= medium)


def thread_cores(soc: str, cores: list[int], threads: int) -> list[int]:
    """The cores ``threads`` busy threads land on within an affinity mask of ``cores``: the
    fastest first (Linux's energy-aware scheduler moves a task that does not fit a core's
    capacity to a bigger one, "misfit" migration, so a lone busy thread runs on the prime core;
    kernel/sched/fair.c, update_misfit_status); one thread per core."""
    spec = load_soc(soc)
    top = {c: max(o.freq_mhz for o in cl.opps) for cl in spec.cpu.clusters for c in cl.core_ids}
    return sorted(sorted(cores, key=lambda c: (-top[c], c))[:threads])


def _cores(run: NcnnRun, soc: str) -> tuple[list[int] | str | None, str | None]:
    """(socsim core ids, or None and why not) of a CPU run's threads and powersave."""
    little, big = powersave_masks(soc)
    if run.powersave == 2:
        return thread_cores(soc, big, run.threads), None
    if run.powersave == 1:
        if not little:
            return None, "powersave 1 (little cores): every core of this SoC is big by ncnn's rule"
        return thread_cores(soc, little, run.threads), None
    if run.threads >= len(little) + len(big):
        return "all", None
    return None, (f"powersave 0 (any cores) with {run.threads} of {len(little) + len(big)} cores: the cores the OS "
                  "chose are not known")


def ncnn_suite(f: NcnnFile, lines: _Lines, file: str) -> Suite:
    """Ratio tables over the devices socsim has a spec for; the rest listed as skipped."""
    skipped: list[tuple[str, str]] = []
    notes = [MODEL_NOTE, f"socsim's SoCs (socsim list socs): {', '.join(list_socs())}"]
    missing_models: set[str] = set()
    cases: dict[str, Case] = {}
    ratios: dict[str, list[RatioCase]] = defaultdict(list)
    for di, dev in enumerate(f.devices):
        soc, note, label = device_soc(dev.device)
        if soc is None:
            skipped.append((dev.device, "socsim has no spec of this chip"))
            continue
        if note:
            notes.append(note)
        run_cases: list[dict[str, Case]] = []
        for ri, run in enumerate(dev.runs):
            got: dict[str, Case] = {}
            for key, ms in run.avg_ms.items():
                model, int8 = _model(key)
                if model is None:
                    missing_models.add(key.removesuffix("_int8"))
                    continue
                case = _case(file, lines, di, ri, run, key, model, int8, soc, label, ms, dev.device, skipped,
                             _background(dev))
                if case is not None:
                    got[key] = case
            run_cases.append(got)
        flags = contradictions(dev.runs)
        for (ri, key), why in sorted(flags.items()):
            notes.append(f"contradicted measurement: {label} run {ri} {key}: {why}")
        for kind, name, context, (i, ki), (j, kj), num, den in _pairs(dev.runs, run_cases):
            why = "; ".join(flags[k] for k in ((i, ki), (j, kj)) if k in flags)
            ratios[kind].append(RatioCase(table=f"ncnn {kind}", kind=kind, name=f"{name}, {label}, {context}",
                                          num=num.id,
                                          den=den.id, where=num.where, measured=num.time_s / den.time_s,
                                          contradicted=why))
            cases.setdefault(num.id, num)
            cases.setdefault(den.id, den)
    for model in sorted(missing_models):
        skipped.append((model, "not in socsim's model zoo (socsim list models)"))
    tables = [TableCases(f"ncnn {kind}", "ratios", _used(cases, rs), rs) for kind, rs in sorted(ratios.items())]
    if "big/little" not in ratios:
        notes.append("big/little: no device socsim has a spec of was measured on its big and on its little cores "
                     "alone at the same thread count (powersave 2 and 1)")
    return Suite(file=file, format="ncnn", source=Path(file).name, tables=tables, skipped=skipped, notes=notes)


def contradictions(runs: list[NcnnRun]) -> dict[tuple[int, str], str]:
    """(run index, model key) -> why, for every measurement the same phone's other runs
    contradict (CONTRADICTION_FACTOR): against each other run on the same unit that measured the
    model, the model's time ratio lies more than the factor from the median ratio of the models
    both runs measured.  A run with no such other run is never contradicted."""
    out: dict[tuple[int, str], str] = {}
    for i, a in enumerate(runs):
        for key in a.avg_ms:
            off: list[str] = []
            others = 0
            for j, b in enumerate(runs):
                if j == i or (a.gpu_device < 0) != (b.gpu_device < 0) or key not in b.avg_ms:
                    continue
                common = sorted(set(a.avg_ms) & set(b.avg_ms))
                if len(common) <= CONTRADICTION_MIN_MODELS:
                    continue
                others += 1
                med = statistics.median(math.log(a.avg_ms[k] / b.avg_ms[k]) for k in common)
                ratio = a.avg_ms[key] / b.avg_ms[key]
                dev = math.exp(abs(math.log(ratio) - med))
                if dev <= CONTRADICTION_FACTOR:
                    break
                off.append(f"{a.avg_ms[key]:g} ms against {b.avg_ms[key]:g} ms in run {j} ({_on(b)}) is "
                           f"{ratio:.3g}x where the phone's other models give {math.exp(med):.3g}x ({dev:.2g}x off)")
            else:
                if others and len(off) == others:
                    out[(i, key)] = "; ".join(off)
    return out


def _background(dev: NcnnDevice) -> tuple[tuple[str, float | None], ...]:
    """The background work a device's runs were measured under: the entry's own, else benchncnn's
    quiet phone (BENCHNCNN_BACKGROUND); a domain the entry leaves out takes the quiet value."""
    b = dev.background
    little = BENCHNCNN_BACKGROUND["little"] if b is None or b.little is None else b.little
    big = BENCHNCNN_BACKGROUND["big"] if b is None or b.big is None else b.big
    return (("big", big), ("little", little))


def _case(file: str, lines: _Lines, di: int, ri: int, run: NcnnRun, key: str, model: str, int8: bool, soc: str,
          label: str, ms: float, device: str, skipped: list[tuple[str, str]],
          background: tuple[tuple[str, float | None], ...]) -> Case | None:
    """The socsim run of one model in one benchncnn run, or None (with the reason in ``skipped``)."""
    where = f"{di}.runs.{ri}.avg_ms.{key}"
    options: tuple[tuple[str, int], ...] = ()
    what = f"{label} run {ri} {key}"
    if run.gpu_device >= 0:
        if int8:
            skipped.append((what, "socsim's GPU runs FP32 only"))
            return None
        if load_soc(soc).gpu is None:
            skipped.append((what, f"{soc} has no GPU in socsim"))
            return None
        scheduler, cores, unit = "ncnn-vulkan", None, "gpu"
    else:
        cores, why = _cores(run, soc)
        if cores is None:
            skipped.append((what, why or ""))
            return None
        if int8 and not _all_dotprod(soc, cores):
            skipped.append((what, "ncnn's INT8 on cores without the dot product (ARMv8.0) runs its SMLAL int16 path, "
                                  "which socsim's INT8 kernel stream (the SDOT tile, isa/arm/kernels) does not cost"))
            return None
        scheduler, unit = ("ncnn-int8" if int8 else "ncnn-fp32"), f"cpu {run.threads}t ps{run.powersave}"
        n_cores = len(cores) if isinstance(cores, list) else sum(len(c.core_ids) for c in load_soc(soc).cpu.clusters)
        if run.threads > n_cores:
            options = (("threads", run.threads),)
    return Case(table="ncnn", id=f"{label} {key} [{unit}]", where=where, line=lines.nearest((di, "runs", ri)),
                soc=soc, model=model, input=INPUT, num_classes=CLASSES, batch=1, mode="inference",
                scheduler=scheduler, cores=cores, freq="max", governor="performance", time_s=ms / 1000.0,
                device=device, background=None if unit == "gpu" else background, options=options)


def _all_dotprod(soc: str, cores: list[int] | str) -> bool:
    """Whether every core of a run (ids, or "all") has SDOT/UDOT (socsim.spec.coretypes)."""
    spec = load_soc(soc)
    ids = [c for cl in spec.cpu.clusters for c in cl.core_ids] if cores == "all" else list(cores)
    return all(has_dotprod(spec.cpu.cluster_of(c).core_type) for c in ids)


def _on(run: NcnnRun) -> str:
    """A run in a few words: '4 threads, big cores' (', GPU' on the GPU)."""
    if run.gpu_device >= 0:
        return f"{run.threads} thread{'s' if run.threads > 1 else ''}, GPU"
    cores = {0: "any cores", 1: "little cores", 2: "big cores"}[run.powersave]
    return f"{run.threads} thread{'s' if run.threads > 1 else ''}, {cores}"


def _pairs(runs: list[NcnnRun], cases: list[dict[str, Case]]):
    """(kind, model, context, (run, key) of the numerator, (run, key) of the denominator,
    numerator case, denominator case) of every ratio the runs of one device give."""
    cpu = [i for i, r in enumerate(runs) if r.gpu_device < 0]
    for i in cpu:
        for j in cpu:
            a, b = runs[i], runs[j]
            if a.powersave == b.powersave and a.threads < b.threads:
                for key in sorted(set(cases[i]) & set(cases[j])):
                    yield (f"threads {a.threads}->{b.threads}", key, _on(a).split(", ")[1], (i, key), (j, key),
                           cases[i][key], cases[j][key])
            if a.threads == b.threads and a.powersave == 1 and b.powersave == 2:
                for key in sorted(set(cases[i]) & set(cases[j])):
                    yield "big/little", key, _on(a).split(", ")[0], (i, key), (j, key), cases[i][key], cases[j][key]
        for key in sorted(cases[i]):
            if key.endswith("_int8") and key.removesuffix("_int8") in cases[i]:
                fp = key.removesuffix("_int8")
                yield "INT8/FP32", fp, _on(runs[i]), (i, key), (i, fp), cases[i][key], cases[i][fp]
    for g, run in enumerate(runs):
        if run.gpu_device < 0:
            continue
        for i in cpu:
            if runs[i].threads == run.threads and runs[i].powersave == run.powersave:
                for key in sorted(set(cases[g]) & set(cases[i])):
                    yield "GPU/CPU", key, f"CPU {_on(runs[i])}", (g, key), (i, key), cases[g][key], cases[i][key]


def _used(cases: dict[str, Case], ratios: list[RatioCase]) -> list[Case]:
    ids = {r.num for r in ratios} | {r.den for r in ratios}
    return [c for cid, c in cases.items() if cid in ids]
