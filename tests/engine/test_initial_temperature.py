"""environment.initial_temp_c: a phone that starts warm (the fleet carries temperature between
rounds) starts every thermal node there and cools toward ambient."""
from __future__ import annotations

import socsim

WL = dict(name="warm", model="lenet", input=[1, 28, 28], num_classes=10, batch_size=16, batches=4,
          environment={"ambient_c": 25, "charging": False})


def _thermal(start_c):
    env = {**WL["environment"], "initial_temp_c": start_c}
    return socsim.run("sd865", {**WL, "environment": env}, deterministic=True).summary["thermal"]


def test_warm_start_is_warmer_than_ambient_start() -> None:
    cold, warm = _thermal(None), _thermal(40.0)
    assert cold["peak_c"] < 30
    assert warm["peak_c"] >= 40.0 - 1e-6
    # a short LeNet run cannot hold 40 C against a 25 C room: it cools, but stays warm
    assert cold["final_c"] < warm["final_c"] <= 40.0 + 1.0


def test_initial_temp_at_ambient_changes_nothing() -> None:
    assert _thermal(25.0) == _thermal(None)
