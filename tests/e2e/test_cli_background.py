"""``environment.background`` end to end: a bad value exits 2 naming file, field and value; a
quiet phone runs the threads in ideal lockstep; one thread never pays the background."""
from __future__ import annotations

import json

import pytest

from socsim.hw import forkjoin
from tests.e2e.cli_helpers import invoke, write_workload


def _per_batch_s(tmp_path, name, **env):
    changes = {"cpu": {"cores": env.pop("cores", "big4"), "governor": "performance"}, "mode": "inference"}
    if env:
        changes["environment"] = {"background": env}
    p = write_workload(tmp_path, **changes)
    out = tmp_path / name
    r = invoke("run", "--soc", "sd855", str(p), "--out", str(out), "--quiet")
    assert r.exit_code == 0, r.output
    return json.loads((out / "summary.json").read_text())["per_batch"]["time_s"]


@pytest.mark.parametrize("field, value", [("big", 1.5), ("little", -0.1)])
def test_a_share_outside_0_1_exits_2_naming_file_field_and_value(tmp_path, field, value):
    p = write_workload(tmp_path, environment={"background": {field: value}})
    out = tmp_path / "o"
    r = invoke("run", "--soc", "sd855", str(p), "--out", str(out))
    assert r.exit_code == 2, r.output
    assert "internal error" not in r.output
    for needle in (str(p), f"field 'environment.background.{field}'", f"value {value}"):
        assert needle in r.output, (needle, r.output)
    assert not out.exists()


def test_set_override_is_checked_too(tmp_path):
    r = invoke("run", "--soc", "sd855", str(write_workload(tmp_path)), "--set", "environment.background.big=2",
               "--out", str(tmp_path / "o"))
    assert r.exit_code == 2 and "environment.background.big" in r.output and "(from --set)" in r.output


def test_a_quiet_phone_runs_four_big_cores_in_ideal_lockstep(tmp_path):
    """sd855's four big cores fill its big domain: at the fitted background (0.20 of a core) every
    op there waits 1 / (1 - 0.2) = 1.25x as long; stated as 0 the wait is gone."""
    fitted = _per_batch_s(tmp_path, "fitted")
    stated = _per_batch_s(tmp_path, "stated", little=forkjoin.BACKGROUND_UTIL_TOP["little"],
                          big=forkjoin.BACKGROUND_UTIL_TOP["big"])
    quiet = _per_batch_s(tmp_path, "quiet", little=0.0, big=0.0)
    assert stated == fitted                      # stating the default changes nothing
    assert quiet < fitted
    # every op of the batch runs on the four cores: the whole batch stretches by 1 / (1 - U)
    assert fitted / quiet == pytest.approx(1.0 / (1.0 - forkjoin.BACKGROUND_UTIL_TOP["big"]), rel=1e-5)


def test_one_thread_pays_no_background(tmp_path):
    assert _per_batch_s(tmp_path, "a", cores="big1") == _per_batch_s(tmp_path, "b", cores="big1", big=0.9,
                                                                       little=0.9)
