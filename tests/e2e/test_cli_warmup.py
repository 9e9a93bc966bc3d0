"""The first run says it is compiling kernels (numba, once per machine) instead of looking hung,
and ``socsim warmup`` does that step ahead; a marker in socsim's cache directory remembers it."""
from __future__ import annotations

from cli_helpers import invoke, write_workload

from socsim import kernels

MESSAGE = "compiling kernels once"


def test_first_run_says_it_compiles_and_later_runs_do_not(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCSIM_CACHE_DIR", str(tmp_path / "cache"))
    assert not kernels.compiled()
    wl = str(write_workload(tmp_path))
    first = invoke("run", "--soc", "sd865", wl)
    assert first.exit_code == 0, first.output
    assert MESSAGE in first.output and "socsim warmup" in first.output
    assert kernels.compiled() and kernels.marker().parent == tmp_path / "cache"
    second = invoke("run", "--soc", "sd865", wl)
    assert second.exit_code == 0 and MESSAGE not in second.output, second.output


def test_quiet_runs_say_nothing_but_still_mark(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCSIM_CACHE_DIR", str(tmp_path / "cache"))
    r = invoke("run", "--soc", "sd865", str(write_workload(tmp_path)), "--quiet")
    assert r.exit_code == 0 and r.output == "", r.output
    assert kernels.compiled()


def test_warmup_compiles_and_marks(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCSIM_CACHE_DIR", str(tmp_path / "cache"))
    r = invoke("warmup")
    assert r.exit_code == 0, r.output
    assert "kernels compiled" in r.output and kernels.compiled()
    # nothing is left behind but the marker (and the profile store the run filled)
    assert kernels.marker().is_file()


def test_the_marker_follows_the_numba_cache_location(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCSIM_CACHE_DIR", str(tmp_path / "cache"))
    kernels.mark_compiled()
    assert kernels.compiled()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert not kernels.compiled()


def test_an_unwritable_cache_directory_is_no_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SOCSIM_CACHE_DIR", str(blocker / "cache"))
    kernels.mark_compiled()
    assert not kernels.compiled()


def test_bad_input_is_not_told_of_compiling(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCSIM_CACHE_DIR", str(tmp_path / "cache"))
    r = invoke("run", "--soc", "sd865", str(write_workload(tmp_path, batch_size=0)))
    assert r.exit_code == 2 and MESSAGE not in r.output, r.output
    assert not kernels.compiled()


def test_the_marker_is_keyed_by_every_kernel_module():
    """A new numba kernel module must join kernels.KERNEL_MODULES, or a change to it would not
    make the next run say it compiles."""
    from pathlib import Path

    pkg = Path(kernels.__file__).parent
    using = {str(p.relative_to(pkg)) for p in pkg.rglob("*.py")
             if "njit" in p.read_text() and p.name != "kernels.py"}
    assert using == set(kernels.KERNEL_MODULES)
