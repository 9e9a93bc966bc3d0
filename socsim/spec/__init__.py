"""SoC specs and workloads: pydantic models and YAML loading with precise errors."""
from __future__ import annotations

import copy
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from socsim.errors import InputError
from socsim.spec.loader import Origins, load_yaml, require_mapping, validate, validation_to_input_error
from socsim.spec.soc import SocSpec
from socsim.spec.workload import Workload

__all__ = ["SocSpec", "Workload", "load_soc", "load_workload", "list_socs", "soc_specs_dir",
           "apply_overrides", "prepare_workload_data", "workloads_dir", "resolve_workload", "Origins"]


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


def resolve_workload(name_or_path: str | Path) -> Path:
    """The workload file a command names: the path when it exists, else, for a bare file name,
    the built-in workload of that name with or without ``.yaml`` (``quickstart``,
    ``quickstart.yaml``, as ``socsim list workloads`` shows them).  Raises InputError if none."""
    if not str(name_or_path).strip():
        raise InputError("no workload file given (an empty name); give a workload YAML, or a built-in "
                         "workload's name ('socsim list workloads')", field="WORKLOAD", value=str(name_or_path))
    p = Path(name_or_path)
    if p.is_dir():
        raise InputError("is a directory; give a workload YAML file", field="WORKLOAD", value=str(name_or_path))
    if p.exists():
        return p
    if p.name == str(name_or_path) and p.name not in ("", ".", ".."):
        for cand in (workloads_dir() / p.name, workloads_dir() / f"{p.name}.yaml"):
            if cand.is_file():
                return cand
    raise InputError("file not found; 'socsim list workloads' lists the built-in workloads (a bare name "
                     "such as quickstart finds one)", file=str(name_or_path))


@lru_cache(maxsize=64)
def _load_soc_path(path: str) -> SocSpec:
    data, lines = load_yaml(path)
    if isinstance(data, dict) and "model" in data and "thermal" not in data:
        raise InputError("this file looks like a workload (it has 'model:'), not a SoC spec; give --soc a SoC "
                         "name (socsim list socs) or a SoC spec YAML, and the workload as the argument",
                         file=path, field="--soc", value=path)
    return validate(SocSpec, data, path, lines)


def load_soc(name_or_path: str | Path) -> SocSpec:
    """Load a SoC spec by name (``sd865``) or path.  Raises InputError naming what is wrong."""
    if not str(name_or_path).strip():
        raise InputError(f"no SoC given (an empty name); known SoCs: {', '.join(list_socs())}", field="--soc",
                         value=str(name_or_path))
    p = Path(name_or_path)
    if p.is_dir():
        raise InputError("is a directory; give a SoC name (socsim list socs) or a SoC spec YAML", field="--soc",
                         value=str(name_or_path))
    if p.suffix in (".yaml", ".yml") or p.exists():
        return _load_soc_path(str(p))
    cand = soc_specs_dir() / f"{name_or_path}.yaml"
    if not cand.exists():
        raise InputError(f"unknown SoC; known SoCs: {', '.join(list_socs())}", field="--soc",
                         value=str(name_or_path))
    return _load_soc_path(str(cand))


_EXPONENT_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _parse_scalar(text: str) -> Any:
    """A ``--set``/``--grid`` value as YAML reads it, except that ``1e9`` is a number (YAML 1.1,
    which PyYAML follows, wants ``1.0e+9``; a person typing a number does not)."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if isinstance(value, str) and _EXPONENT_NUMBER.fullmatch(value.strip()):
        return float(value)
    return value


def apply_overrides(data: dict, overrides: list[str] | dict[str, Any], file: str = "--set") -> dict:
    """Apply ``key.path=value`` overrides to a workload dict; unknown paths are errors.

    A path must name a field of the workload schema (``batch_size``, ``cpu.cores``,
    ``scheduler.options.x``); values are parsed as YAML scalars.
    """
    return _apply(data, _items(overrides), file)[0]


def _items(overrides: list[str] | dict[str, Any] | None) -> list[tuple[str, Any]]:
    """``--set`` strings or a {dotted path: value} dict as (path, parsed value) pairs."""
    if not overrides:
        return []
    items = overrides.items() if isinstance(overrides, dict) else [_split(o) for o in overrides]
    return [(k, _parse_scalar(v) if isinstance(v, str) else v) for k, v in items]


def _apply(data: dict, items: list[tuple[str, Any]], file: str = "--set",
           labels: dict[str, str] | None = None) -> tuple[dict, dict[tuple, str]]:
    """Apply parsed overrides; returns the new data and {path set: where it came from}.

    A path part that is a number indexes a list already in the data
    (``environment.memory_budget_mb.0.mb``); a list cannot grow this way (set the whole list).
    """
    data = copy.deepcopy(data)
    paths: dict[tuple, str] = {}
    for key, value in items:
        label = (labels or {}).get(key, file)
        parts = key.split(".")
        _check_path(parts, key, label)
        cur: Any = data
        loc: list = []
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if isinstance(cur, list):
                idx = _index(cur, part, key, label, ".".join(parts[:i]))
                loc.append(idx)
                if last:
                    cur[idx] = value
                    break
                nxt = cur[idx]
            else:
                loc.append(part)
                if last:
                    cur[part] = value
                    break
                nxt = cur.get(part)
                if nxt is None:
                    if parts[i + 1].isascii() and parts[i + 1].isdigit():
                        raise InputError(f"'{'.'.join(parts[:i + 1])}' holds no list to index; set the whole "
                                         f"list ({'.'.join(parts[:i + 1])}=[...]) first", field=label, value=key)
                    nxt = cur[part] = {}
            if not isinstance(nxt, (dict, list)):
                where = ".".join(parts[:i + 1])
                raise InputError(f"'{where}' is {nxt!r} (a {type(nxt).__name__}), which has no field "
                                 f"'{parts[i + 1]}': set '{where}' as a whole ({where}={{{parts[i + 1]}: ...}})",
                                 field=key, file=label)
            cur = nxt
        paths[tuple(loc)] = label
    return data, paths


def _index(items: list, part: str, key: str, label: str, where: str) -> int:
    """``part`` as an index of the existing list ``items`` (at ``where``)."""
    if not (part.isascii() and part.isdigit()):
        raise InputError(f"'{where}' is a list: address an item by its index ({where}.0...) or set the "
                         "whole list", field=label, value=key)
    idx = int(part)
    if idx >= len(items):
        raise InputError(f"'{where}' has {len(items)} item{'s' if len(items) != 1 else ''} (indices from 0); "
                         "an item cannot be added this way: set the whole list", field=label, value=key)
    return idx


DEFAULT_SCHEDULER = "mnn-fp32"


def _scheduler_name(data: Any) -> Any:
    """The scheduler name a workload mapping selects (the schema default when it names none)."""
    ref = data.get("scheduler") if isinstance(data, dict) else None
    if ref is None:
        return DEFAULT_SCHEDULER
    return ref.get("name", DEFAULT_SCHEDULER) if isinstance(ref, dict) else None


def prepare_workload_data(data: dict, overrides: list[str] | dict[str, Any] | None = None,
                          scheduler: str | None = None, *, set_label: str | None = None,
                          scheduler_label: str = "--scheduler") -> tuple[dict, dict[tuple, str]]:
    """Apply ``--set`` overrides and a ``--scheduler`` choice to a workload mapping.

    The file's ``scheduler.options`` belong to the file's ``scheduler.name``: when the scheduler
    that will run (``scheduler``, else a ``--set scheduler.name=...``) is a different one, the
    file's options are dropped and that scheduler starts from its defaults.  Options given with
    ``--set scheduler.options.k=v`` always apply to the scheduler that runs.  Returns the data and
    {path: option that set it} for the overridden paths (their errors say "from --set").
    """
    # what errors call the overrides: the command line's "--set KEY=VALUE" strings, or the
    # Python API's ``overrides={...}`` mapping
    set_label = set_label or ("overrides" if isinstance(overrides, dict) else "--set")
    items = _items(overrides)
    labels: dict[str, str] = {}
    if scheduler is not None and not scheduler.strip():
        raise InputError("empty scheduler name; 'socsim list schedulers' lists them", field=scheduler_label,
                         value=scheduler)
    if scheduler:
        # ``base+top`` (mandheling+min-energy): scheduler ``top`` composed on ``base``, i.e.
        # scheduler.options.base = {name: base}; set before the overrides, which may refine it
        chosen = [("scheduler.name", scheduler)]
        if "+" in scheduler:
            base_name, _, top = scheduler.rpartition("+")
            if not base_name or not top:
                raise InputError("a composition is base+scheduler, e.g. mandheling+min-energy",
                                 field=scheduler_label, value=scheduler)
            chosen = [("scheduler.name", top), ("scheduler.options.base", {"name": base_name})]
            labels["scheduler.options.base"] = scheduler_label
        items = chosen + [(k, v) for k, v in items if k != "scheduler.name"]
        labels["scheduler.name"] = scheduler_label
    out, paths = _apply(data, items, set_label, labels)
    file_name = _scheduler_name(data)
    ref = data.get("scheduler") if isinstance(data, dict) else None
    if (file_name is not None and _scheduler_name(out) != file_name and isinstance(ref, dict)
            and "options" in ref):
        base = copy.deepcopy(data)
        del base["scheduler"]["options"]
        out, paths = _apply(base, items, set_label, labels)
    if scheduler and _scheduler_name(out) != file_name:
        # the options of a scheduler chosen on the command line are its defaults, not the
        # file's: an error in them (a required option not given) is the choice's
        paths.setdefault(("scheduler", "options"), scheduler_label)
    return out, paths


def _split(item: str) -> tuple[str, str]:
    try:
        item.encode("utf-8")
    except UnicodeEncodeError:  # bytes the shell passed that are not UTF-8 (Python keeps them as surrogates)
        raise InputError("not valid UTF-8", field="--set",
                         value=item.encode("utf-8", "surrogateescape").decode("utf-8", "replace")) from None
    if "=" not in item:
        raise InputError("expected key=value", field="--set", value=item)
    k, v = item.split("=", 1)
    if not k.strip():
        raise InputError("empty key", field="--set", value=item)
    return k.strip(), v


def _check_path(parts: list[str], key: str, label: str = "--set") -> None:
    """Reject override paths that do not exist in the schema (options dicts are free-form).

    A number after a list field indexes the list (``environment.memory_budget_mb.0.mb``,
    ``input.0``); ``label`` names the option the path came from (``--set``, ``--grid``)."""
    ann: Any = Workload
    for i, part in enumerate(parts):
        here = ".".join(parts[:i])
        item = _list_item(ann)
        if part.isascii() and part.isdigit() and item is not None:
            ann = item
            continue
        model = _model_in(ann)
        if model is None:
            if _is_mapping(ann) or ann is Any:
                return  # inside a free-form mapping (scheduler.options, cpu.freq per cluster)
            if item is not None:
                raise InputError(f"'{here}' has no sub-fields: address an item of its list by index "
                                 f"({here}.0{'.' + part if _model_in(item) is not None else ''}=...) or set "
                                 f"the whole value ({here}=...)", field=label, value=key)
            raise InputError(f"'{here}' has no sub-fields", field=label, value=key)
        fields = model.model_fields
        if part not in fields:
            if part.isascii() and part.isdigit():
                raise InputError(f"'{here}' is not a list; its fields: {', '.join(fields)}", field=label,
                                 value=key)
            raise InputError(f"no such workload field{' in ' + repr(here) if here else ''}; fields here: "
                             f"{', '.join(fields)}", field=label, value=key)
        ann = fields[part].annotation


def _model_in(ann: Any):
    """The pydantic model ``ann`` is, or one member of its union is (not inside a list)."""
    from typing import Annotated, Union, get_args, get_origin
    import types

    from pydantic import BaseModel

    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    if get_origin(ann) in (Union, types.UnionType, Annotated):
        for a in get_args(ann):
            m = _model_in(a)
            if m is not None:
                return m
    return None


def _list_item(ann: Any):
    """The item type when ``ann`` is a list, or one member of its union is; else None."""
    from typing import Annotated, Union, get_args, get_origin
    import types

    if get_origin(ann) is list:
        args = get_args(ann)
        return args[0] if args else Any
    if get_origin(ann) in (Union, types.UnionType, Annotated):
        for a in get_args(ann):
            it = _list_item(a)
            if it is not None:
                return it
    return None


def _is_mapping(ann: Any) -> bool:
    from typing import get_args, get_origin

    if get_origin(ann) is dict:
        return True
    return any(_is_mapping(a) for a in get_args(ann))


#: top-level keys of a SoC spec; a file with two of them and no ``model`` is a spec, not a workload
SOC_SPEC_KEYS = frozenset({"marketing_name", "cpu", "thermal", "battery", "dram", "platform"})


def looks_like_soc_spec(data: Any) -> bool:
    return isinstance(data, dict) and "model" not in data and len(SOC_SPEC_KEYS & set(data)) >= 2


def load_workload(path: str | Path, overrides: list[str] | dict | None = None, *,
                  scheduler: str | None = None) -> Workload:
    """Load and validate a workload YAML, applying ``--set`` overrides first.

    ``scheduler``: run this scheduler instead of the file's (see :func:`prepare_workload_data`
    for what happens to the file's ``scheduler.options``).
    """
    return load_workload_located(path, overrides, scheduler=scheduler)[0]


def load_workload_located(path: str | Path, overrides: list[str] | dict | None = None, *,
                          scheduler: str | None = None, **labels: str) -> tuple[Workload, Origins]:
    """:func:`load_workload`, plus where each field came from (file line or ``--set``)."""
    path = str(path)
    data, lines = load_yaml(path)
    require_mapping(data, path)
    if looks_like_soc_spec(data):
        raise InputError("this file looks like a SoC spec (it has 'cpu:' and 'thermal:'), not a workload; give it "
                         "to --soc, and a workload YAML (socsim list workloads) as the argument", file=path,
                         field="WORKLOAD", value=path)
    data, set_paths = prepare_workload_data(data, overrides, scheduler, **labels)
    origins = Origins(path, lines, set_paths)
    return validate(Workload, data, path, lines, origins=origins), origins


def workload_from_dict(data: dict, name: str = "<workload>", *, overrides: list[str] | dict | None = None,
                       scheduler: str | None = None) -> Workload:
    return workload_from_dict_located(data, name, overrides=overrides, scheduler=scheduler)[0]


def workload_from_dict_located(data: dict, name: str = "<workload>", *,
                               overrides: list[str] | dict | None = None,
                               scheduler: str | None = None, **labels: str) -> tuple[Workload, Origins]:
    from pydantic import ValidationError

    if not isinstance(data, dict):
        raise InputError(f"expected a mapping, got {type(data).__name__}", file=name)
    data, set_paths = prepare_workload_data(data, overrides, scheduler, **labels)
    origins = Origins(name, None, set_paths)
    try:
        return Workload.model_validate(data), origins
    except ValidationError as e:
        raise validation_to_input_error(e, data, name, None, origins=origins) from None
