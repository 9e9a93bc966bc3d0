"""Re-fit the power constants the development set's energies carry (calibration/dev/
minenergy_table2.yaml, all 21 rows): the memory subsystem's power at the voted DDR clock
(``cpu.uncore.power_top_mw`` and ``power_exponent`` of soc_specs/sd855.yaml,
socsim.hw.power.uncore_power_mw), the switching activity of a core spinning at a fork-join
barrier (socsim.hw.cpu.SPIN_ACTIVITY) and the dense-kernel power of the A76 and the A55
(socsim.spec.coretypes.KERNEL_POWER).  None of them moves a time, so the fit minimises the
energy MAPE (ties: the Kendall tau-b of the energies) over a grid inside each constant's
plausible range; it prints the best points and writes nothing (copy the values into the spec,
socsim/hw/cpu.py and docs/modeling.md, "Fitted constants").

    python benchmarks/fit_uncore_power.py [--top 5] [--spin 0.1 ...] [--power-top 800 ...]
        [--exponent 3 ...] [--a76 2.5 ...] [--a55 1.6 ...] [--little-coeff 146]
"""
from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.dev_error import DEFAULT_TABLE, WORKLOAD  # noqa: E402
from socsim.fidelity.metrics import kendall_tau_b  # noqa: E402
from socsim.hw import cpu  # noqa: E402
from socsim.spec import coretypes  # noqa: E402
from socsim.spec import SocSpec, load_soc  # noqa: E402

GRIDS = {
    "power_top_mw": [400, 800, 1200, 1600, 2000],                             # 0.4-2.5 W (spec)
    "power_exponent": [1.0, 2.0, 3.0],                                        # 1 fixed voltage .. 3 V ~ f
    "spin_activity": [0.05, 0.1, 0.15],                                       # 0-0.4 plausible (cpu.py)
    "kernel_power_a76": [1.0, 1.5, 2.0, 2.5, 3.0],                            # socsim/spec/coretypes.py
    "kernel_power_a55": [1.0, 1.3, 1.6, 2.0],
}


def with_uncore(soc: SocSpec, top: float, g: float) -> SocSpec:
    unc = soc.cpu.uncore.model_copy(update={"power_top_mw": top, "power_exponent": g})
    return soc.model_copy(update={"cpu": soc.cpu.model_copy(update={"uncore": unc})})


def evaluate(soc: SocSpec, tab: dict) -> dict[str, float]:
    import socsim

    rows = []
    for name, row in tab["rows"].items():
        for i, _ in enumerate(tab["levels"]):
            big, little = tab["big_ghz"][i] * 1000, tab["little_ghz"][i] * 1000
            r = socsim.run(soc, WORKLOAD, scheduler="mnn-fp32", reports=False, deterministic=True,
                           overrides={"batches": 1, "cpu.cores": name.lower(), "cpu.governor": "userspace",
                                      "cpu.freq": {"little": little, "mid": big, "prime": big}})
            s = r.summary
            rows.append((row["time_s"][i], s["per_batch"]["time_s"], row["energy_j"][i],
                         s["energy_j"]["training"] / s["batches"], name))
    out = {"time_mape": 100 * sum(abs(r[1] - r[0]) / r[0] for r in rows) / len(rows),
           "energy_mape": 100 * sum(abs(r[3] - r[2]) / r[2] for r in rows) / len(rows),
           "tau_time": kendall_tau_b([r[0] for r in rows], [r[1] for r in rows]),
           "tau_energy": kendall_tau_b([r[2] for r in rows], [r[3] for r in rows])}
    # the energy MAPE of each kind of core set (which rows pull the fit which way)
    for group in ("BIG", "LITTLE", "HYBRID"):
        sel = [r for r in rows if r[4].startswith(group)]
        if sel:
            out[f"energy_mape_{group.lower()}"] = 100 * sum(abs(r[3] - r[2]) / r[2] for r in sel) / len(sel)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", default=str(DEFAULT_TABLE))
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--little-coeff", type=float, default=None,
                    help="the little cluster's EAS coefficient (uW/MHz/V^2) to fit with, e.g. 146 for "
                         "freqbench's CoreMark power instead of sm8150.dtsi's 232")
    ap.add_argument("--spin", type=float, nargs="*", default=None, help="SPIN_ACTIVITY values (default: the grid)")
    ap.add_argument("--power-top", type=float, nargs="*", default=None, help="power_top_mw values")
    ap.add_argument("--exponent", type=float, nargs="*", default=None, help="power_exponent values")
    ap.add_argument("--a76", type=float, nargs="*", default=None, help="KERNEL_POWER['cortex-a76'] values")
    ap.add_argument("--a55", type=float, nargs="*", default=None, help="KERNEL_POWER['cortex-a55'] values")
    a = ap.parse_args(argv)
    tab = yaml.safe_load(Path(a.table).read_text())
    base = load_soc(tab["soc"])
    if a.little_coeff is not None:
        cls = list(base.cpu.clusters)
        cls[0] = cls[0].model_copy(update={"dyn_power_coeff_uw_mhz_v2": a.little_coeff})
        base = base.model_copy(update={"cpu": base.cpu.model_copy(update={"clusters": cls})})
    grids = dict(GRIDS)
    if a.spin:
        grids["spin_activity"] = a.spin
    if base.cpu.uncore is None:
        raise SystemExit(f"{tab['soc']} has no uncore block to fit")
    for key, vals in (("power_top_mw", a.power_top), ("power_exponent", a.exponent),
                      ("kernel_power_a76", a.a76), ("kernel_power_a55", a.a55)):
        if vals:
            grids[key] = vals
    spin0, kp0 = cpu.SPIN_ACTIVITY, dict(coretypes.KERNEL_POWER)
    res = []
    try:
        for p in itertools.product(*grids.values()):
            top, g, spin, k76, k55 = p
            cpu.SPIN_ACTIVITY = spin
            coretypes.KERNEL_POWER.update({"cortex-a76": k76, "cortex-a55": k55})
            m = evaluate(with_uncore(base, top, g), tab)
            res.append(((round(m["energy_mape"], 2), -m["tau_energy"]), p, m))
            print(" ".join(f"{k} {v}" for k, v in zip(grids, p)) + ": "
                  + " ".join(f"{k} {v:.3f}" for k, v in m.items()), flush=True)
    finally:
        cpu.SPIN_ACTIVITY = spin0
        coretypes.KERNEL_POWER.clear()
        coretypes.KERNEL_POWER.update(kp0)
    res.sort(key=lambda t: t[0])
    for _, p, m in res[:a.top]:
        print("best", dict(zip(grids, p)), {k: round(v, 3) for k, v in m.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
