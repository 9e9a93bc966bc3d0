"""benchmarks/fit_uncore_power.py evaluates its grid by superposition: a run's training energy
is linear in each of the power constants it fits (KERNEL_POWER, SPIN_ACTIVITY, the uncore's
power_top_mw at a fixed exponent) and none of them moves a time.  A short sd855 run checks it."""
from __future__ import annotations

from pathlib import Path

import pytest

import socsim
from socsim.hw import cpu
from socsim.spec import coretypes, load_soc

ROOT = Path(__file__).resolve().parents[2]
LENET = ROOT / "workloads" / "min_energy_lenet.yaml"


def _run(soc, cores: str) -> tuple[float, float]:
    s = socsim.run(soc, LENET, scheduler="mnn-fp32", reports=False, deterministic=True,
                   overrides={"batches": 2, "cpu.cores": cores, "cpu.governor": "userspace",
                              "cpu.freq": {"little": 600, "mid": 1600, "prime": 1600}}).summary
    return s["per_batch"]["time_s"], s["energy_j"]["training"]


def _with_top(soc, top: float):
    unc = soc.cpu.uncore.model_copy(update={"power_top_mw": top})
    return soc.model_copy(update={"cpu": soc.cpu.model_copy(update={"uncore": unc})})


@pytest.mark.parametrize("cores", ["hybrid8", "little2"])
def test_training_energy_is_linear_in_the_fitted_power_constants(monkeypatch, cores):
    base = load_soc("sd855")

    def at(k76: float, k55: float, spin: float, top: float) -> tuple[float, float]:
        monkeypatch.setattr(cpu, "SPIN_ACTIVITY", spin)
        monkeypatch.setattr(coretypes, "KERNEL_POWER", {"cortex-a76": k76, "cortex-a55": k55})
        return _run(_with_top(base, top), cores)

    t0, e0 = at(0.0, 0.0, 0.0, 0.0)
    unit = {"k76": at(1.0, 0.0, 0.0, 0.0), "k55": at(0.0, 1.0, 0.0, 0.0),
            "spin": at(0.0, 0.0, 1.0, 0.0), "top": at(0.0, 0.0, 0.0, 1000.0)}
    assert all(t == t0 for t, _ in unit.values())                      # power only
    # every term draws on hybrid8 (A76s, A55s, threads waiting at the barrier for the slow
    # cores, DDR votes); little2 has no A76, and its two equal threads wait only in the weight
    # gradients (one thread packs dY's panel, the dW tiles split unevenly: socsim.hw.cpu)
    drawing = {"hybrid8": {"k76", "k55", "spin", "top"}, "little2": {"k55", "spin", "top"}}[cores]
    for k, (_, e) in unit.items():
        assert e > e0 if k in drawing else e == e0, k
    p = {"k76": 2.7, "k55": 1.3, "spin": 0.2, "top": 0.45}
    t, e = at(p["k76"], p["k55"], p["spin"], 1000.0 * p["top"])
    assert t == t0
    assert e == pytest.approx(e0 + sum(p[k] * (unit[k][1] - e0) for k in p), rel=1e-6)
