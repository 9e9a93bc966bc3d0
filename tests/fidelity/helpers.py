"""Shared by the fidelity tests: a small measurement file in socsim's format (LeNet on sd865,
two absolute rows and a ratio table), written to a temporary directory."""
from __future__ import annotations

from pathlib import Path

import yaml

SMALL = {
    "format": "socsim-fidelity/1",
    "source": "a test's made-up figures",
    "tables": [
        {"name": "lenet-train",
         "defaults": {"soc": "sd865", "model": "lenet", "input": [1, 28, 28], "num_classes": 10, "batch": 16},
         "rows": [{"id": "big4", "cores": "big4", "time_s": 0.004, "energy_j": 0.01},
                  {"id": "little1", "cores": "little1", "freq": "min", "time_s": 0.05, "energy_j": 0.006},
                  {"id": "big1", "cores": "big1", "time_s": 0.01}]},
        {"name": "lenet-inference", "compare": "ratios",
         "defaults": {"soc": "sd865", "model": "lenet", "input": [1, 28, 28], "num_classes": 10,
                      "mode": "inference"},
         "rows": [{"id": "1t", "cores": "big1", "threads": 1, "time_s": 0.002},
                  {"id": "4t", "cores": "big4", "threads": 4, "time_s": 0.001}],
         "ratios": [{"name": "1->4 threads", "kind": "threads", "num": "1t", "den": "4t"}]},
    ],
}


def write(tmp_path: Path, data: object = None, name: str = "m.yaml") -> Path:
    """``data`` (default :data:`SMALL`) as YAML in ``tmp_path``; a string is written as it is."""
    p = tmp_path / name
    data = SMALL if data is None else data
    p.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return p
