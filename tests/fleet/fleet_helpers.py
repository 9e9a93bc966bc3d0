"""Shared by the fleet tests: a tiny fleet (a handful of LeNet clients, a few batches each)."""
from __future__ import annotations

import copy
from pathlib import Path

import yaml

SMALL = {
    "name": "tiny-fleet",
    "seed": 3,
    "workload": {"model": "lenet", "input": [1, 28, 28], "num_classes": 10, "batch_size": 32},
    "population": {
        "clients": 6,
        "scheduler": {"name": "mnn-fp32", "options": {}},
        "phones": [{"soc": "sd865", "share": 0.5},
                   {"soc": "sd865", "share": 0.5, "link": "lte",
                    "scheduler": {"name": "min-energy", "options": {"core_sets": ["big4", "little4"],
                                                                    "levels": ["high", "low"]}}}],
        "samples": [64, 128],
        "initial_soc": [0.1, 1.0],
    },
    "plan": {"rounds": 2, "clients_per_round": 4, "local_epochs": 1, "deadline_s": 30},
    "baselines": [{"name": "mnn-fp32", "options": {}}],
}


def fleet_dict(**plan) -> dict:
    """``SMALL`` with ``plan`` fields changed."""
    d = copy.deepcopy(SMALL)
    d["plan"].update(plan)
    return d


def write_fleet(tmp_path: Path, data: dict | None = None, name: str = "fleet.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data if data is not None else SMALL, sort_keys=False))
    return p
