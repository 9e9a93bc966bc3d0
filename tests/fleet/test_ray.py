"""Ray for real: a local Ray instance runs a small fleet with results identical to the local
pool's; without Ray installed, --backend ray is a clear input error."""
from __future__ import annotations

import builtins

import pytest

from socsim.errors import InputError
from socsim.fleet import run_fleet
from socsim.fleet.backends import backend

from fleet_helpers import write_fleet


def test_ray_gives_the_local_results(tmp_path) -> None:
    ray = pytest.importorskip("ray")
    p = write_fleet(tmp_path)
    local = run_fleet(p, out=tmp_path / "local")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR",
             runtime_env={"env_vars": {"PYTHONPATH": str(__import__("socsim.fleet.backends", fromlist=["x"])
                                                          ._source_root())}})
    try:
        seen = []
        remote = run_fleet(p, backend="ray", jobs=2, out=tmp_path / "ray",
                           progress=lambda r, d, t: seen.append((r, d, t)))
    finally:
        ray.shutdown()
    assert remote.clients == local.clients
    for name in ("fleet.json", "rounds.csv", "clients.csv", "report.html"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert seen and all(d <= t for _, d, t in seen) and seen[-1][1] == seen[-1][2]


def test_without_ray_the_backend_is_an_input_error(monkeypatch) -> None:
    real = builtins.__import__

    def no_ray(name, *a, **kw):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(InputError) as e:
        backend("ray", 2)
    assert e.value.field == "--backend" and "not installed" in e.value.message


def test_address_needs_ray() -> None:
    with pytest.raises(InputError) as e:
        backend("local", 1, "auto")
    assert e.value.field == "--address"
