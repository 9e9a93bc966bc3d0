"""The on-disk memory-profile store: results read back are the ones computed, a changed key or
simulator misses, and any trouble with the file falls back to computing (never an error)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import socsim
from socsim.hw import dsp, memory, profile_store
from socsim.spec import load_soc
from socsim.workload.ops import Op, make_params


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCSIM_CACHE_DIR", str(tmp_path / "store"))
    monkeypatch.delenv("SOCSIM_CACHE", raising=False)
    profile_store.reset()
    _clear_memos()
    yield tmp_path / "store"
    profile_store.reset()
    _clear_memos()


def _clear_memos():
    memory._cpu_memory.cache_clear()
    memory._dsp_memory.cache_clear()
    dsp._hvx_cycles.cache_clear()


def _conv(cin=32, hw=28, batch=2):
    return Op("c", "conv2d", "forward", "l", "fp32",
              make_params(batch=batch, cin=cin, h=hw, w=hw, cout=cin, kh=3, kw=3, stride=1, pad=1, groups=1,
                          oh=hw, ow=hw),
              bytes_read=batch * cin * hw * hw * 4 + cin * cin * 36, bytes_written=batch * cin * hw * hw * 4)


def _no_simulation(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("simulated although the store holds the result")
    monkeypatch.setattr(memory, "simulate", boom)


def test_a_profile_read_back_is_the_one_computed(store, monkeypatch):
    soc = load_soc("sd865")
    op = _conv()
    first = memory.op_memory(op, "cpu", soc, (4, 5))
    dsp_first = memory.op_memory(op, "dsp", soc, threads=2, batch=2)
    memory._cpu_memory.cache_clear()
    memory._dsp_memory.cache_clear()
    _no_simulation(monkeypatch)
    assert memory.op_memory(op, "cpu", soc, (4, 5)) == first
    assert memory.op_memory(op, "dsp", soc, threads=2, batch=2) == dsp_first
    assert profile_store.status()["files"]["memprofiles"]["entries"] == 2


def test_another_core_set_or_op_is_not_served_from_the_store(store, monkeypatch):
    soc = load_soc("sd865")
    memory.op_memory(_conv(), "cpu", soc, (4, 5))
    memory._cpu_memory.cache_clear()
    calls = []
    real = memory.simulate
    monkeypatch.setattr(memory, "simulate", lambda *a, **k: calls.append(1) or real(*a, **k))
    memory.op_memory(_conv(), "cpu", soc, (4, 5, 6))        # more threads
    memory.op_memory(_conv(), "cpu", soc, (0, 1))           # little cores' caches
    memory.op_memory(_conv(hw=14), "cpu", soc, (4, 5))      # another shape
    assert len(calls) == 3


def test_encoding_round_trips_every_field(store):
    prof = memory.op_memory(_conv(), "cpu", load_soc("sd865"), (4,))
    back = profile_store.decode(profile_store.encode(prof))
    assert back == prof
    assert json.loads(profile_store.encode(prof))["simulated_fraction"] == prof.simulated_fraction


def test_a_changed_simulator_uses_another_file(store, monkeypatch):
    before = profile_store.path()
    monkeypatch.setattr(profile_store, "_source_digest", lambda ns="memprofiles": "0123456789abcdef")
    assert profile_store.path() != before
    assert profile_store.path().name == "memprofiles-0123456789abcdef.sqlite"


@pytest.mark.parametrize("trouble", ["off", "unwritable", "corrupt"])
def test_trouble_with_the_store_falls_back_to_computing(store, monkeypatch, trouble):
    soc = load_soc("sd865")
    if trouble == "off":
        monkeypatch.setenv("SOCSIM_CACHE", "off")
    elif trouble == "unwritable":
        store.parent.mkdir(exist_ok=True)
        store.write_text("a file where the directory should be")
    else:
        store.mkdir()
        profile_store.path().write_bytes(b"this is not an SQLite database" * 100)
    profile_store.reset()
    prof = memory.op_memory(_conv(), "cpu", soc, (4, 5))
    memory._cpu_memory.cache_clear()
    assert memory.op_memory(_conv(), "cpu", soc, (4, 5)) == prof
    assert profile_store.get_text("memprofiles", profile_store.key_of("x")) is None


def test_hvx_timings_read_back_without_emulating(store, monkeypatch):
    from isa.kernels import costing
    shape = (("batch", 2), ("cin", 32), ("h", 8), ("w", 8), ("cout", 32), ("kh", 3), ("kw", 3), ("stride", 1),
             ("pad", 1))
    first = dsp._hvx_cycles("conv2d", shape)
    assert first == costing.profile_op("conv2d", **dict(shape)).compute_cycles
    dsp._hvx_cycles.cache_clear()

    def boom(*a, **k):
        raise AssertionError("emulated although the store holds the timing")
    monkeypatch.setattr(costing, "profile_op", boom)
    assert dsp._hvx_cycles("conv2d", shape) == first
    # another shape is not in the store
    dsp._hvx_cycles.cache_clear()
    with pytest.raises(AssertionError, match="emulated"):
        dsp._hvx_cycles("conv2d", shape[:1] + (("cin", 64),) + shape[2:])


@pytest.mark.parametrize("scheduler,precision", [("swan", "fp32"), ("mandheling", "niti")])
def test_runs_are_byte_identical_with_a_cold_a_warm_and_no_store(tmp_path, scheduler, precision):
    wl = tmp_path / "w.yaml"
    wl.write_text("name: t\nmodel: lenet\ninput: [1, 28, 28]\nnum_classes: 10\nbatch_size: 8\nbatches: 3\n"
                  f"precision: {precision}\nscheduler: {{name: {scheduler}}}\nseed: 0\n")
    outs = []
    for i, env in enumerate(({"SOCSIM_CACHE_DIR": str(tmp_path / "s")}, {"SOCSIM_CACHE_DIR": str(tmp_path / "s")},
                             {"SOCSIM_CACHE": "off"})):
        d = tmp_path / f"out{i}"
        r = subprocess.run([sys.executable, "-m", "socsim.cli", "run", "--soc", "sd865", str(wl), "--quiet",
                            "--deterministic", "--out", str(d)],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, **env})
        assert r.returncode == 0, r.stderr
        outs.append(((d / "summary.json").read_bytes(), (d / "trace.perfetto-trace").read_bytes()))
    assert outs[0] == outs[1] == outs[2]


def test_cache_command_shows_and_clears(store):
    socsim.run("sd865", dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=4, batches=1))
    r = subprocess.run([sys.executable, "-m", "socsim.cli", "cache"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "SOCSIM_CACHE_DIR": str(store)})
    assert r.returncode == 0 and str(store) in r.stdout and "entries" in r.stdout
    assert any(store.glob("memprofiles-*.sqlite"))
    r = subprocess.run([sys.executable, "-m", "socsim.cli", "cache", "clear"], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "SOCSIM_CACHE_DIR": str(store)})
    assert r.returncode == 0 and "removed 1" in r.stdout
    assert not any(store.glob("memprofiles-*"))
    r = subprocess.run([sys.executable, "-m", "socsim.cli", "cache"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "SOCSIM_CACHE_DIR": str(store)})
    assert r.returncode == 0 and "entries" not in r.stdout and "not written yet" in r.stdout   # no stale file

    profile_store.reset()   # this process's connection still points at the removed file
    _clear_memos()
    socsim.run("sd865", dict(name="t", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=4, batches=1,
                             precision="niti", scheduler={"name": "mandheling"}))
    profile_store.reset()
    st = profile_store.status()["files"]
    assert st["memprofiles"]["entries"] > 0 and st["hvxprofiles"]["entries"] > 0
    # the store's files are gone; a run's kernel marker (socsim.kernels) is not the store's
    assert profile_store.clear() == 2 and not [p for p in store.iterdir() if not p.name.startswith("kernels-")]
