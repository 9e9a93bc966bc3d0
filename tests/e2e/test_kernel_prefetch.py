"""A cold run compiles the cache model's driver in a child process while it builds the graph and
compiles the stream generator (socsim.kernels.prefetch): the child must compile exactly the
signature the simulations call (else the run compiles it again), the engine kernels warmed while
waiting likewise, and the outputs must not change."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest

from socsim import kernels
from socsim.hw import memory
from socsim.hw.cache import hier_numba
from socsim.spec import load_soc
from socsim.workload.ops import Op, make_params

REPO = Path(__file__).resolve().parents[2]


def _record(monkeypatch, module, name) -> list[tuple]:
    """Replace ``module.name`` (a numba dispatcher) with a twin that records its argument types."""
    seen: list[tuple] = []
    disp = getattr(module, name)

    def twin(*args):
        seen.append(tuple(numba.typeof(a) for a in args))
        return disp(*args)

    monkeypatch.setattr(module, name, twin)
    return seen


def test_the_child_compiles_the_signature_cpu_and_dsp_simulations_call(monkeypatch):
    seen = _record(monkeypatch, hier_numba, "run_steps")
    kernels.compile_driver()
    assert len(seen) == 1
    soc = load_soc("sd865")
    conv = Op("c", "conv2d", "forward", "l", "fp32", make_params(batch=2, cin=8, h=9, w=9, cout=8, kh=3, kw=3,
                                                                stride=1, pad=1, groups=1, oh=9, ow=9))
    cores = soc.cpu.clusters[-1].core_ids[:1] + soc.cpu.clusters[-2].core_ids[:1]
    priv = tuple(memory.cpu_private_geoms(soc, c) for c in cores)
    kind, dtype, params = memory._stream_key(conv)
    memory._cpu_memory.__wrapped__(kind, dtype, params, 10000, 5000, priv, memory.cpu_shared_geoms(soc),
                                   memory.DEFAULT_BUDGET)
    l2 = memory.CacheGeom.from_spec("L2", soc.dsp.l2)
    memory._dsp_memory.__wrapped__(kind, "int8", params, 2000, 1300, l2, 2, 2, int(soc.dsp.vtcm_kb * 1024),
                                   memory.DEFAULT_BUDGET)
    assert len(seen) == 3
    assert seen[1] == seen[0] and seen[2] == seen[0]


def test_the_engine_kernels_warmed_meanwhile_are_the_ones_a_run_calls(tmp_path, monkeypatch):
    """Every signature a run adds to the seven kernels is one compile_engine_kernels compiled."""
    from socsim.api import run
    from socsim.engine import pieces_kernel
    from socsim.hw import battery_kernel, thermal_scan

    disps = (pieces_kernel.sample_offsets, pieces_kernel.pieces, thermal_scan.neg_rate_steps,
             thermal_scan.modal_steps, battery_kernel.profile_terms, pieces_kernel.part_peaks,
             battery_kernel.step_currents)
    kernels.compile_engine_kernels()
    warmed = [set(d.signatures) for d in disps]
    assert all(warmed)
    run("sd865", dict(kernels.WARMUP_WORKLOAD), deterministic=True)
    assert [set(d.signatures) for d in disps] == warmed


@pytest.mark.parametrize("free", [1, 2])
def test_the_children_compile_and_exit_cleanly(monkeypatch, free):
    """One free CPU: one child (the driver); two: a second one for the engine's kernels."""
    monkeypatch.delenv("SOCSIM_PREFETCH", raising=False)
    monkeypatch.setattr(kernels, "_prefetched", False)
    monkeypatch.setattr(kernels, "_driver_cached", lambda: False)
    monkeypatch.setattr(kernels, "free_cpus", lambda: free)
    monkeypatch.setattr(kernels, "compile_engine_kernels", lambda: None)
    assert kernels.prefetch()
    assert len(kernels._children) == free
    assert not kernels.prefetch()          # once per process
    assert kernels.await_prefetch() == 0   # each child imported socsim and compiled without error
    assert kernels.await_prefetch() is None and not kernels._children


@pytest.mark.parametrize("why", ["off", "cached", "busy"])
def test_no_child_when_it_cannot_help(monkeypatch, why):
    monkeypatch.setattr(kernels, "_prefetched", False)
    monkeypatch.setattr(kernels, "_driver_cached", lambda: why == "cached")
    monkeypatch.setattr(kernels, "free_cpus", lambda: 0 if why == "busy" else 1)
    if why == "off":
        monkeypatch.setenv("SOCSIM_PREFETCH", "off")
    else:
        monkeypatch.delenv("SOCSIM_PREFETCH", raising=False)
    assert not kernels.prefetch()
    assert kernels.await_prefetch() is None


@pytest.mark.parametrize(("cpus", "load", "free"), [(1, 0.0, 0), (2, 0.0, 1), (2, 0.9, 1), (2, 1.2, 0),
                                                    (2, 6.0, 0), (16, 3.5, 12)])
def test_free_cpus_are_the_cpus_that_the_load_leaves(monkeypatch, cpus, load, free):
    import socsim.hostcpus as hostcpus

    monkeypatch.setattr(hostcpus, "usable_cpus", lambda: cpus)
    monkeypatch.setattr(hostcpus.os, "getloadavg", lambda: (load, load, load))
    assert hostcpus.free_cpus() == free


def test_on_starts_a_child_on_a_busy_machine(monkeypatch):
    monkeypatch.setenv("SOCSIM_PREFETCH", "on")
    monkeypatch.setattr(kernels, "_prefetched", False)
    monkeypatch.setattr(kernels, "_driver_cached", lambda: False)
    monkeypatch.setattr(kernels, "free_cpus", lambda: 0)
    monkeypatch.setattr(kernels, "usable_cpus", lambda: 2)
    assert kernels.prefetch() and len(kernels._children) == 1
    kernels._stop_children()
    assert not kernels._children


@pytest.mark.slow
def test_a_cold_run_with_its_child_gives_the_warm_runs_summary(tmp_path):
    """Fresh numba cache and profile store: the driver comes from the child (its cache index is
    written), and the summary is byte-identical to the same run on this process's warm kernels."""
    from socsim.api import dump_json, run

    wl = tmp_path / "wl.json"
    wl.write_text(json.dumps(kernels.WARMUP_WORKLOAD))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), SOCSIM_CACHE_DIR=str(tmp_path / "store"),
               PYTHONPATH=str(REPO))
    env["SOCSIM_PREFETCH"] = "on"   # whatever the machine's load
    out = tmp_path / "cold.json"
    r = subprocess.run([sys.executable, "-m", "socsim", "run", "--soc", "sd865", str(wl), "--quiet",
                        "--deterministic", "--json", str(out)], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert list((tmp_path / "numba").rglob("hier_numba.run_steps-*.nbi"))
    warm = dump_json(run("sd865", dict(kernels.WARMUP_WORKLOAD), deterministic=True).summary)
    assert out.read_text() == warm


def test_a_child_does_nothing_where_numba_already_has_the_driver(monkeypatch):
    """The run may start its children before it imports numba; each child looks at numba's
    cache first."""
    def boom():
        raise AssertionError("compiled although cached")

    monkeypatch.setattr(kernels, "compile_driver", boom)
    monkeypatch.setattr(kernels, "_driver_cached", lambda: True)
    kernels._child_main("compile_driver")
    monkeypatch.setattr(kernels, "_driver_cached", lambda: False)
    with pytest.raises(AssertionError):
        kernels._child_main("compile_driver")


def test_the_marker_check_imports_no_numba():
    """A cold run checks the marker and starts its children before importing numba (~1 s)."""
    code = ("import sys; from socsim import kernels; kernels.compiled(); kernels.free_cpus(); "
            "print('numba' in sys.modules, 'socsim.hw.profile_store' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(REPO)),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]
