"""What-ifs for the low-step collapse of Min-Energy's Table II (docs/validation.md, "The
low-step collapse"): the development rows (calibration/dev/minenergy_table2.yaml, 1 batch each,
as `socsim fidelity` runs them) under a patched copy of the CPU model, and the per-op
decomposition of a core set at a step.  Prints figures; writes nothing, changes no model.

    python benchmarks/lowstep_whatif.py rows [--variant V] [--rows REGEX]
    python benchmarks/lowstep_whatif.py ops hybrid8 L

Variants (each run in its own process: the cost model memoises per process):

* ``base``: the model as it is; ``quiet``: every row with no background work ({0, 0}).
* ``spillX``: on a set that fills both domains, the fraction X of the big domain's background
  preemption lands on the little threads (their ``U`` += X * the big ``U``).
* ``corunK``: on a set that fills all eight cores, one more runnable thread shares a little
  core with a training thread, which then runs at 1/K of its speed (the little threads' compute
  times K: the slowest thread paces the static split); ``corunlittleK``: the same on every set
  that fills the little domain (LITTLE4 too).
* ``littleX``: the little domain's background at the top OPP set to X (``BACKGROUND_UTIL_TOP``).
"""
from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's socsim, not an installed one

import socsim.hw.cpu as cpu  # noqa: E402
from socsim.fidelity.evaluate import simulate  # noqa: E402
from socsim.fidelity.loader import load_measurements, nearest_opp  # noqa: E402
from socsim.fidelity.metrics import kendall_tau_b  # noqa: E402
from socsim.hw import forkjoin  # noqa: E402

TABLE = ROOT / "calibration" / "dev" / "minenergy_table2.yaml"
LEVELS = {"H": (2400, 1800), "M": (1600, 1200), "L": (800, 600)}  # the table's big / little MHz


def patch(variant: str) -> None:
    """Apply ``variant`` to this process's model (module docstring)."""
    if variant in ("base", "quiet"):
        return
    if variant.startswith("spill"):
        x = float(variant[5:])
        shares = forkjoin.background_shares

        def spilled(soc, cfg, cores, util_top=None):  # type: ignore[no-untyped-def]
            out = dict(shares(soc, cfg, cores, util_top))
            if "little" in out and "big" in out:
                out["little"] = min(out["little"] + x * out["big"], forkjoin.U_MAX)
            return out
        forkjoin.background_shares = spilled  # type: ignore[assignment]
    elif variant.startswith("corun"):
        every = variant.startswith("corunlittle")
        k = float(variant[11:] if every else variant[5:])
        cycles, cost = cpu.compute_cycles, cpu.cpu_cost
        full = {"on": False}

        def slowed(op, cl, share=1.0):  # type: ignore[no-untyped-def]
            c = cycles(op, cl, share)
            return c * k if full["on"] and not cpu._out_of_order(cl) else c

        def costed(soc, op, cfg):  # type: ignore[no-untyped-def]
            need = soc.cpu.clusters[0].core_ids if every else [c for cl in soc.cpu.clusters for c in cl.core_ids]
            full["on"] = set(need) <= set(cfg.cores)
            try:
                return cost(soc, op, cfg)
            finally:
                full["on"] = False
        cpu.compute_cycles = slowed  # type: ignore[assignment]
        cpu.cpu_cost = costed  # type: ignore[assignment]
    elif variant.startswith("little"):
        forkjoin.BACKGROUND_UTIL_TOP = {"little": float(variant[6:]), "big": forkjoin.BACKGROUND_UTIL_TOP["big"]}
    else:
        raise SystemExit(f"unknown variant {variant!r}")


def rows(variant: str, pattern: str) -> None:
    patch(variant)
    suite = load_measurements(TABLE)
    meas, sims, errs = [], [], []
    for c in suite.tables[0].cases:
        if not re.search(pattern, c.id):
            continue
        if variant == "quiet":
            c = dataclasses.replace(c, background=(("big", 0.0), ("little", 0.0)))
        t, _ = simulate(c, 1, suite.file)
        meas.append(c.time_s)
        sims.append(t)
        errs.append(abs(t / c.time_s - 1))
        print(f"{variant:10s} {c.id:11s} measured {c.time_s:6.2f} s  simulated {t:7.3f} s  {100 * (t / c.time_s - 1):+6.1f}%",
              flush=True)
    if errs:
        tau = f", tau {kendall_tau_b(meas, sims):.3f}" if len(meas) > 2 else ""
        print(f"{variant}: {len(errs)} rows, time MAPE {100 * sum(errs) / len(errs):.1f}%{tau}")


def ops(core_set: str, level: str) -> None:
    """Sum over AlexNet's training ops of the op time, the pacing thread's compute, the
    background stall, and each cluster's per-thread compute; the background share per domain;
    the step's L3 hits and DRAM bytes and the L3 clocks the governors vote."""
    from socsim.engine.context import build_graph
    from socsim.engine.cores import resolve_cores
    from socsim.hw.cost import CpuConfig
    from socsim.hw.memory import op_memory
    from socsim.spec import load_soc

    soc = load_soc("sd855")
    g = build_graph("alexnet", (3, 224, 224), 10, 16, "fp32")
    big_mhz, little_mhz = LEVELS[level]
    little, bigs = soc.cpu.clusters[0], soc.cpu.clusters[1:]
    freq = {little.name: nearest_opp(little, little_mhz), **{c.name: nearest_opp(c, big_mhz) for c in bigs}}
    cfg = CpuConfig(resolve_cores(soc, core_set), tuple(sorted(freq.items())))
    cores = tuple(sorted(cfg.cores))
    total = pacing = noise = l3_hits = dram = 0.0
    l3_mhz: set[float] = set()
    per_cluster: dict[str, float] = {}
    for op in g.ops:
        c = cpu.cpu_cost(soc, op, cfg)
        d = dict(c.detail)
        total += c.cycles / (c.freq_mhz * 1e6) + c.stall_s
        pacing += d["compute_s"]
        noise += d["noise_s"]
        dram += c.dram_bytes
        l3_hits += sum(lv.hits for lv in op_memory(op, "cpu", soc, cores).levels if lv.name == "L3")
        if "l3_mhz" in d:
            l3_mhz.add(d["l3_mhz"])
        for cl in {soc.cpu.cluster_of(x).name: soc.cpu.cluster_of(x) for x in cores}.values():
            per_cluster[cl.name] = per_cluster.get(cl.name, 0.0) + \
                cpu.compute_cycles(op, cl, cpu.split_share(op, len(cores))) / (freq[cl.name] * 1e6)
    u = forkjoin.background_shares(soc, cfg, cores)
    print(f"{core_set}@{level} {freq} ({len(g.ops)} ops): op time {total:.2f} s = pacing compute {pacing:.2f} s"
          f" + background stall {noise:.2f} s + rest {total - pacing - noise:.2f} s")
    print("  compute per thread: " + ", ".join(f"{k} {v:.2f} s" for k, v in per_cluster.items())
          + "; U per full domain: " + ", ".join(f"{k} {v:.2f}" for k, v in u.items()))
    print(f"  L3 hits {l3_hits / 1e6:.0f}M ({l3_hits * 64 / 1e9:.1f} GB), DRAM {dram / 1e9:.2f} GB;"
          f" L3 clocks voted {sorted(l3_mhz)} MHz")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rows")
    r.add_argument("--variant", default="base")
    r.add_argument("--rows", default=".", help="regular expression over the row ids (e.g. 'HYBRID8')")
    o = sub.add_parser("ops")
    o.add_argument("core_set")
    o.add_argument("level", choices=sorted(LEVELS))
    a = ap.parse_args(argv)
    if a.cmd == "rows":
        rows(a.variant, a.rows)
    else:
        ops(a.core_set, a.level)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
