"""Regenerate docs/figures/thermal.png: the long-run thermal scenario, CPU FP32 vs DSP NITI.

    python docs/figures/make_thermal.py      # runs both workloads (a minute or two), writes the PNG
"""
from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import socsim  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RUNS = [("CPU FP32 (mnn-fp32, big4)", "thermal_cpu_fp32.yaml"),
        ("DSP NITI (mandheling)", "thermal_dsp_niti.yaml")]


def main(out: Path = ROOT / "docs" / "figures" / "thermal.png") -> None:
    fig, (ax_t, ax_b) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    with tempfile.TemporaryDirectory() as tmp:
        for label, wl in RUNS:
            d = Path(tmp) / wl
            res = socsim.run("sd865", ROOT / "workloads" / wl, out=d, reports=False)
            with open(d / "timeseries.csv") as f:
                rows = list(csv.DictReader(f))
            t = [float(r["t_s"]) / 60 for r in rows]
            zone = "cpu-1-0 Temperature"
            ax_t.plot(t, [float(r[zone]) for r in rows], label=f"{label}: big-cluster zone")
            ax_t.plot(t, [float(r["skin-therm Temperature"]) for r in rows], "--", label=f"{label}: skin")
            if "VIRTUAL-SENSOR Temperature" in rows[0]:   # the vendor's virtual skin sensor (sd865)
                ax_t.plot(t, [float(r["VIRTUAL-SENSOR Temperature"]) for r in rows], ":",
                          label=f"{label}: virtual skin sensor")
            with open(d / "batches.csv") as f:
                b = list(csv.DictReader(f))
            times = [float(r["time_s"]) for r in b]
            k = 10  # moving average over 10 batches: the step-wise governor toggles caps per batch
            smooth = [sum(times[max(0, i - k + 1):i + 1]) / len(times[max(0, i - k + 1):i + 1]) for i in range(len(times))]
            ax_b.plot([float(r["start_s"]) / 60 for r in b], smooth, label=f"{label} (10-batch mean)")
            s = res.summary
            print(f"{label}: {s['batches']} batches, {s['sim_time_s'] / 60:.1f} min, peak {s['thermal']['peak_c']:.1f} C, "
                  f"throttled {s['thermal']['time_throttled_s']:.0f} s, per batch {s['per_batch']['time_s']:.3f} s", file=sys.stderr)
    ax_t.axhline(90, color="red", lw=0.8, ls=":", label="cpu passive trip (sm8250.dtsi)")
    ax_t.set_ylabel("temperature (C)")
    ax_t.legend(fontsize=7, loc="lower right")
    ax_b.set_ylabel("time per batch (s)")
    ax_b.set_xlabel("simulated time (min)")
    ax_b.legend(fontsize=7)
    fig.suptitle("VGG-16 / CIFAR-10 training on sd865 at 25 C ambient")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
