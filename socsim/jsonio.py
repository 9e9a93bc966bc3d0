"""Strict, deterministic JSON for summaries, plan notes and ``summary_extra()`` (a foundation
module: the contract, the engine, the registry and the API all write or check it)."""
from __future__ import annotations

import json
from typing import Any


def json_default(obj: Any) -> Any:
    """What ``json.dumps`` cannot write itself but a scheduler may well return: numpy scalars
    and arrays (as Python numbers and lists), sets and frozensets (sorted lists)."""
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def dump_json(obj: Any) -> str:
    """Deterministic JSON (sorted keys, repr floats)."""
    # allow_nan=False: a NaN or an infinity in a summary is a bug to report (exit 1), not a
    # file that strict JSON readers reject
    return json.dumps(obj, indent=2, sort_keys=True, default=json_default, allow_nan=False) + "\n"


def strict_json_error(obj: Any) -> str | None:
    """Why ``obj`` cannot be written as strict JSON (NaN, infinity, an unknown type), or None."""
    try:
        json.dumps(obj, default=json_default, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as e:
        return str(e)
    return None
