"""socsim sweep runs on the fleet's backends: this process, a local pool and a local Ray instance
give the same points in the same order; a point's InputError stops it on each alike; the points
travel as content (a worker without the workload file runs its shipped text)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from socsim.errors import InputError
from socsim.sweep import PointJob, _workload_file, points, sweep

QUICK = Path(__file__).resolve().parents[2] / "workloads" / "quickstart.yaml"
GRID = {"batch_size": [16, 32], "batches": [2]}


def _dump(rows) -> str:
    return json.dumps(rows, sort_keys=True)


def test_local_pool_gives_the_serial_results() -> None:
    serial = sweep(QUICK, ["sd865"], grid=GRID, deterministic=True)
    pool = sweep(QUICK, ["sd865"], grid=GRID, deterministic=True, jobs=2)
    assert [r["point"]["set"]["batch_size"] for r in serial] == [16, 32]
    assert _dump(pool) == _dump(serial)


def test_ray_gives_the_local_results() -> None:
    ray = pytest.importorskip("ray")
    from socsim.fleet.backends import _source_root

    local = sweep(QUICK, ["sd865"], grid=GRID, deterministic=True)
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR",
             runtime_env={"env_vars": {"PYTHONPATH": str(_source_root())}})
    try:
        seen: list[tuple[int, int]] = []
        remote = sweep(QUICK, ["sd865"], grid=GRID, deterministic=True, backend="ray", jobs=2,
                       progress=lambda d, t: seen.append((d, t)))
        with pytest.raises(InputError) as e:   # a bad point stops the sweep on Ray as locally
            sweep(QUICK, ["sd865"], grid={"batches": [2], "cpu.cores": ["big4", "nosuch"]}, backend="ray", jobs=2)
    finally:
        ray.shutdown()
    assert _dump(remote) == _dump(local)
    assert seen[-1] == (2, 2) and len(seen) == 2
    assert "sweep point" in e.value.message and e.value.field is not None


def test_a_bad_point_stops_the_pool_with_its_input_error() -> None:
    with pytest.raises(InputError) as e:
        sweep(QUICK, ["sd865"], grid={"batches": [2], "cpu.cores": ["big4", "nosuch"]}, jobs=2)
    assert "sweep point: sd865" in e.value.message and "nosuch" in e.value.message


def test_a_point_without_its_file_runs_the_shipped_text(tmp_path) -> None:
    w = tmp_path / "w.yaml"
    w.write_text(QUICK.read_text())
    job = PointJob(points(["sd865"], [None], {})[0], None, str(w), w.read_text(), True, False)
    with _workload_file(job) as p:
        assert p == str(w)                     # this machine has the file: used as it is
    w.write_text("changed")
    with _workload_file(job) as p:
        assert p != str(w) and Path(p).name == "w.yaml" and Path(p).read_text() == QUICK.read_text()
    assert not Path(p).exists()                # the temporary copy is removed after the run


def test_address_needs_the_ray_backend() -> None:
    with pytest.raises(InputError) as e:
        sweep(QUICK, ["sd865"], grid={"batches": [2]}, address="auto")
    assert e.value.field == "--address"
