"""SoC specs and workloads: pydantic models and YAML loading with precise errors."""
from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from socsim.errors import InputError
from socsim.spec.loader import load_yaml, validate, validation_to_input_error
from socsim.spec.soc import SocSpec
from socsim.spec.workload import Workload

__all__ = ["SocSpec", "Workload", "load_soc", "load_workload", "list_socs", "soc_specs_dir",
           "apply_overrides", "workloads_dir"]


def _repo_dir(name: str) -> Path:
    # soc_specs/ and workloads/ sit at the top of the source tree; an installed wheel ships them
    # inside the package as socsim/_data/<name> (see pyproject package-data).
    here = Path(__file__).resolve().parent.parent
    for cand in (here.parent / name, here / "_data" / name):
        if cand.is_dir():
            return cand
    return here.parent / name


def soc_specs_dir() -> Path:
    return _repo_dir("soc_specs")


def workloads_dir() -> Path:
    return _repo_dir("workloads")


def list_socs() -> list[str]:
    return sorted(p.stem for p in soc_specs_dir().glob("*.yaml"))


@lru_cache(maxsize=64)
def _load_soc_path(path: str) -> SocSpec:
    data, lines = load_yaml(path)
    return validate(SocSpec, data, path, lines)


def load_soc(name_or_path: str | Path) -> SocSpec:
    """Load a SoC spec by name (``sd865``) or path.  Raises InputError naming what is wrong."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return _load_soc_path(str(p))
    cand = soc_specs_dir() / f"{name_or_path}.yaml"
    if not cand.exists():
        raise InputError(f"unknown SoC; known SoCs: {', '.join(list_socs())}", field="--soc",
                         value=str(name_or_path))
    return _load_soc_path(str(cand))


def _parse_scalar(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def apply_overrides(data: dict, overrides: list[str] | dict[str, Any], file: str = "--set") -> dict:
    """Apply ``key.path=value`` overrides to a workload dict; unknown paths are errors.

    A path must name a field of the workload schema (``batch_size``, ``cpu.cores``,
    ``scheduler.options.x``); values are parsed as YAML scalars.
    """
    data = copy.deepcopy(data)
    items = overrides.items() if isinstance(overrides, dict) else [_split(o) for o in overrides]
    for key, value in items:
        if isinstance(value, str):
            value = _parse_scalar(value)
        parts = key.split(".")
        _check_path(parts, key)
        cur = data
        for part in parts[:-1]:
            nxt = cur.get(part)
            if nxt is None:
                nxt = cur[part] = {}
            if not isinstance(nxt, dict):
                raise InputError(f"cannot set a sub-field of a {type(nxt).__name__}", field=key, file=file)
            cur = nxt
        cur[parts[-1]] = value
    return data


def _split(item: str) -> tuple[str, str]:
    if "=" not in item:
        raise InputError("expected key=value", field="--set", value=item)
    k, v = item.split("=", 1)
    if not k.strip():
        raise InputError("empty key", field="--set", value=item)
    return k.strip(), v


def _check_path(parts: list[str], key: str) -> None:
    """Reject override paths that do not exist in the schema (options dicts are free-form)."""
    from pydantic import BaseModel

    model: Any = Workload
    for i, part in enumerate(parts):
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return  # inside a free-form mapping (scheduler.options, cpu.freq per cluster)
        fields = model.model_fields
        if part not in fields:
            raise InputError(f"no such workload field; fields here: {', '.join(fields)}",
                             field="--set", value=key)
        ann = fields[part].annotation
        model = _model_in(ann)
        if model is None and i < len(parts) - 1 and not _is_mapping(ann):
            raise InputError(f"'{'.'.join(parts[:i + 1])}' has no sub-fields", field="--set", value=key)


def _model_in(ann: Any):
    from typing import get_args

    from pydantic import BaseModel

    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for a in get_args(ann):
        m = _model_in(a)
        if m is not None:
            return m
    return None


def _is_mapping(ann: Any) -> bool:
    from typing import get_args, get_origin

    if get_origin(ann) is dict:
        return True
    return any(_is_mapping(a) for a in get_args(ann))


def load_workload(path: str | Path, overrides: list[str] | dict | None = None) -> Workload:
    """Load and validate a workload YAML, applying ``--set`` overrides first."""
    path = str(path)
    data, lines = load_yaml(path)
    if not isinstance(data, dict):
        raise InputError("expected a mapping at the top level", file=path, line=1)
    if overrides:
        data = apply_overrides(data, overrides)
    return validate(Workload, data, path, lines)


def workload_from_dict(data: dict, name: str = "<workload>") -> Workload:
    from pydantic import ValidationError

    try:
        return Workload.model_validate(data)
    except ValidationError as e:
        raise validation_to_input_error(e, data, name, None) from None
