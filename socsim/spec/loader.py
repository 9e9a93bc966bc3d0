"""YAML loading with line numbers, and pydantic validation errors turned into InputErrors.

Errors name the file, the dotted field path, the offending value and the line where the
value (or, for a missing key, its parent mapping) appears; a value given by a ``--set`` override
has no line in the file, so its error says "(from --set)" instead.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from socsim.errors import InputError

M = TypeVar("M", bound=BaseModel)


class _Lines:
    """Maps a dotted path (tuple of keys/indices) to the 1-based line of its YAML node."""

    def __init__(self) -> None:
        self.lines: dict[tuple, int] = {}

    def nearest(self, path: tuple) -> int | None:
        for i in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:i]))
            if line is not None:
                return line
        return None


MAX_DEPTH = 64  # no socsim file nests deeper; a recursive alias would nest forever
# values one file may hold once its aliases are expanded: the built-in files hold a few hundred,
# and aliases of aliases grow exponentially ("billion laughs": 8 lines, 10^8 values)
MAX_VALUES = 200_000


def _construct(node: yaml.Node, path: tuple, lines: _Lines, loader: yaml.SafeLoader,
               depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels (a recursive alias?)",
                         field=".".join(map(str, path[:8])) or None, line=node.start_mark.line + 1)
    if len(lines.lines) >= MAX_VALUES and path not in lines.lines:
        raise InputError(f"more than {MAX_VALUES:,} values once its aliases are expanded (aliases of "
                         "aliases grow exponentially); a workload or SoC spec holds a few hundred",
                         field=".".join(map(str, path[:8])) or None, line=node.start_mark.line + 1)
    lines.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict = {}
        for k_node, v_node in node.value:
            if not isinstance(k_node, yaml.ScalarNode):
                raise InputError("a mapping key must be a plain value, not a list or mapping",
                                 field=".".join(map(str, path)) or None, line=k_node.start_mark.line + 1)
            key = loader.construct_object(k_node, deep=True)
            if key in out:
                raise InputError("duplicate key", field=".".join(map(str, path + (key,))),
                                 line=k_node.start_mark.line + 1)
            out[key] = _construct(v_node, path + (key,), lines, loader, depth + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(v, path + (i,), lines, loader, depth + 1) for i, v in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


#: the largest workload or SoC spec read (the built-in ones are 1-10 KB)
MAX_YAML_BYTES = 16 * 2**20


def load_yaml(path: str | Path) -> tuple[Any, _Lines]:
    """Parse a YAML file; returns the data and a line map.  Raises InputError on bad YAML."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_YAML_BYTES + 1)   # bounded: /dev/zero or a wrong file must not eat the memory
        if len(raw) > MAX_YAML_BYTES:
            raise InputError(f"larger than {MAX_YAML_BYTES // 2**20} MiB; a workload or SoC spec is a few KB "
                             "(is this the right file?)", file=str(path))
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise InputError("file not found", file=str(path)) from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read file: {e}", file=str(path)) from None
    return parse_yaml(text, str(path))


def parse_yaml(text: str, name: str = "<string>") -> tuple[Any, _Lines]:
    lines = _Lines()
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            data = None if node is None else _construct(node, (), lines, loader)
        finally:
            loader.dispose()
    except yaml.reader.ReaderError as e:
        # the reader reports a character position, not a line: count the lines up to it
        line = text.count("\n", 0, max(0, e.position)) + 1
        raise InputError(f"malformed YAML: unacceptable character #x{e.character:04x}"
                         if isinstance(e.character, int) else f"malformed YAML: {e.reason}",
                         file=name, line=line) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or str(e)
        if "tag:yaml.org,2002:merge" in problem:    # our line-tracking constructor does not take '<<'
            problem = "merge keys ('<<') are not supported: write the fields out, or use an anchor for a whole value"
        raise InputError(f"malformed YAML: {problem}", file=name,
                         line=(mark.line + 1) if mark else None) from None
    except InputError as e:
        e.file = name
        raise InputError(e.message, file=name, field=e.field, line=e.line) from None
    except RecursionError:   # PyYAML's parser recurses per level, before our depth check sees it
        raise InputError(f"malformed YAML: nesting far deeper than {MAX_DEPTH} levels", file=name) from None
    return data, lines


_MISSING = object()


def _value_at(data: Any, loc: tuple, default: Any = None) -> Any:
    """The value at ``loc`` (keys and list indexes) in ``data``, or ``default`` when there is none."""
    cur = data
    for k in loc:
        try:
            cur = cur[k]
        except (KeyError, IndexError, TypeError):
            return default
    return cur


class Origins:
    """Where the fields of a loaded workload came from: the file's lines, or the command-line
    option (``--set``, ``--scheduler``) that set them."""

    def __init__(self, file: str, lines: _Lines | None, set_paths: dict[tuple, str] | None = None) -> None:
        self.file = file
        self.lines = lines
        self.set_paths = dict(set_paths or {})

    def origin(self, loc: tuple) -> str | None:
        """The option that gave (or created) the value at ``loc``; None when it is the file's."""
        loc = tuple(loc)
        # the longest path set above ``loc``: a --set inside options a --scheduler chose is --set's
        found = max((p for p in self.set_paths if loc[:len(p)] == p), key=len, default=None)
        if found is not None:
            return self.set_paths[found]
        # a mapping that exists only because an override created a key inside it
        if loc and self.lines is not None and loc not in self.lines.lines:
            for p, label in self.set_paths.items():
                if p[:len(loc)] == loc:
                    return label
        return None

    def line(self, loc: tuple) -> int | None:
        """The file's line for ``loc`` (or its nearest parent below the top level)."""
        if self.lines is None or self.origin(loc):
            return None
        for i in range(len(loc), 0, -1):
            line = self.lines.lines.get(tuple(loc[:i]))
            if line is not None:
                return line
        return None

    def locate(self, e: InputError) -> InputError:
        """``e`` with the line of its field, or with the option its value came from."""
        if not e.field or e.line is not None or e.origin or e.file not in (None, self.file):
            return e
        loc = parse_field(e.field)
        if not loc:
            return e
        origin = self.origin(loc)
        line = None if origin else self.line(loc)
        if origin is None and line is None:
            return e
        return type(e)(e.message, file=e.file, field=e.field, value=e.value, line=line, origin=origin)


def parse_field(field: str) -> tuple | None:
    """``"environment.foreground_load[1].cores"`` or ``"a.1.b"`` -> ("environment", ..., 1, "cores")."""
    import re

    out: list = []
    for part in field.split("."):
        m = re.fullmatch(r"([^\[\]]*)((?:\[\d+\])*)", part)
        if m is None:
            return None
        name, idx = m.group(1), m.group(2)
        if name:
            out.append(int(name) if name.isdigit() else name)
        out.extend(int(i) for i in re.findall(r"\d+", idx))
    return tuple(out)


def require_mapping(data: Any, file: str) -> None:
    """An InputError unless a file's top level is a mapping (what it is instead, in words)."""
    if not isinstance(data, dict):
        what = "an empty file" if data is None else \
            {list: "a list", str: "a single string"}.get(type(data), f"a single value ({data!r})")
        raise InputError(f"expected a mapping of fields (key: value lines) at the top level, got {what}",
                         file=file, line=1)


def validate(model: type[M], data: Any, file: str, lines: _Lines | None = None,
             prefix: tuple = (), origins: Origins | None = None) -> M:
    """Validate ``data`` against ``model``; the first error becomes an InputError."""
    require_mapping(data, file)
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise validation_to_input_error(e, data, file, lines, prefix, origins=origins, model=model) from None


_BOUND_ERRORS = ("less_than_equal", "less_than", "greater_than_equal", "greater_than")


def _field_info(model: type[BaseModel], loc: tuple):
    """The pydantic FieldInfo of the field at ``loc`` (keys and list indexes) below ``model``,
    or None where the path leaves the models (a dict's values, a union of models)."""
    import typing

    info, ann = None, model
    for x in loc:
        if isinstance(x, int):
            args = [a for a in typing.get_args(ann) if a is not type(None)]
            if typing.get_origin(ann) is not list or not args:
                return None
            ann = args[0]
            continue
        while typing.get_origin(ann) is not None and typing.get_origin(ann) is not list:
            args = [a for a in typing.get_args(ann) if a is not type(None)]
            if len(args) != 1:
                return None
            ann = args[0]
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)) or x not in ann.model_fields:
            return None
        info = ann.model_fields[x]
        ann = info.annotation
    return info


def allowed_range(model: type[BaseModel], loc: tuple) -> str | None:
    """'from 0 to 5000 (inclusive)'-style text of the bounds declared on the field at ``loc``
    (docs/socs.md lists them with their sources), or None when it declares none."""
    info = _field_info(model, loc)
    if info is None:
        return None
    lo = hi = None
    for m in info.metadata:
        for attr, side in (("ge", "lo"), ("gt", "lo"), ("le", "hi"), ("lt", "hi")):
            v = getattr(m, attr, None)
            if v is not None:
                text = f"{v:g}" if isinstance(v, float) else f"{v:,}"
                if side == "lo":
                    lo = (">" if attr == "gt" else ">=") + " " + text
                else:
                    hi = ("<" if attr == "lt" else "<=") + " " + text
    if lo is None and hi is None:
        return None
    return " and ".join(x for x in (lo, hi) if x)


def _clean_loc(err: dict, data: Any) -> tuple:
    """The error's location as data keys: pydantic puts union member type names into loc."""
    loc = tuple(x for x in err["loc"] if not (isinstance(x, str) and x.startswith(("function-", "tagged-union"))))
    clean: list = []
    cur = data
    for x in loc:
        if isinstance(cur, dict) and x in cur:
            clean.append(x)
            cur = cur[x]
        elif isinstance(cur, list) and isinstance(x, int) and x < len(cur):
            clean.append(x)
            cur = cur[x]
        elif err["type"] in ("missing", "extra_forbidden") and x == loc[-1]:
            clean.append(x)
    return tuple(clean)


def _has_path(data: Any, loc: tuple) -> bool:
    """Whether ``loc`` (keys and list indexes) leads to a value in ``data``."""
    return _value_at(data, loc, _MISSING) is not _MISSING


def _named_field(err: dict, loc: tuple, data: Any, origins: Origins | None) -> tuple | None:
    """For an error about several fields (their names in ``ctx["fields"]``, a key or a tuple of
    keys and list indexes below the model): the location of the one an override set, else of the
    first one the data gives; None when it gives none."""
    names = (err.get("ctx") or {}).get("fields") or ()
    given = [loc + (n if isinstance(n, tuple) else (n,)) for n in names]
    given = [g for g in given if _has_path(data, g)]
    if origins is not None:
        for cand in given:
            if origins.origin(cand):
                return cand
    return given[0] if given else None


def validation_to_input_error(e: ValidationError, data: Any, file: str,
                              lines: _Lines | None, prefix: tuple = (),
                              origins: Origins | None = None, model: type[BaseModel] | None = None) -> InputError:
    errors = e.errors()
    # a required key missing beside an unknown one in the same mapping is most likely that key
    # misspelt (Batch_Size for batch_size): report the unknown key, which says what to fix
    if errors[0]["type"] == "missing":
        parent = tuple(errors[0]["loc"][:-1])
        extra = [x for x in errors if x["type"] == "extra_forbidden" and tuple(x["loc"][:-1]) == parent]
        if extra:
            errors = extra + [x for x in errors if x not in extra]
    err, loc = errors[0], _clean_loc(errors[0], data)
    # A value that fits no member of a union (``memory_budget_mb: float | list[...]``) gives one
    # error per member; the deepest one inside the same field names what is actually wrong (the
    # list element ``memory_budget_mb.1.mb``, not "Input should be a valid number" for the list).
    for other in errors[1:]:
        oloc = _clean_loc(other, data)
        if len(oloc) > len(loc) and oloc[:len(loc)] == loc and loc:
            err, loc = other, oloc
    kind = err["type"]
    if kind == "extra_forbidden":
        msg = "unknown key"
        missing = [str(x["loc"][-1]) for x in errors if x["type"] == "missing"
                   and tuple(x["loc"][:-1]) == tuple(err["loc"][:-1])]
        close = difflib.get_close_matches(str(err["loc"][-1]).lower(), missing, n=1, cutoff=0.6)
        if close:
            msg = f"unknown key (did you mean {close[0]!r}? it is required and not given)"
    elif kind == "missing":
        msg = "required field is missing"
    else:
        msg = err["msg"].removeprefix("Value error, ")  # a validator's own message, as it wrote it
        bounds = allowed_range(model, loc) if model is not None and kind in _BOUND_ERRORS else None
        if bounds:
            doc = "docs/socs.md, Plausible ranges" if model.__name__ == "SocSpec" else "docs/guide.md, Limits and errors"
            msg = f"{msg}; the allowed range is {bounds} ({doc})"
    named = _named_field(err, loc, data, origins)
    if named is not None:
        # a check across fields (Workload's batches/epochs) names the one given, an override's first
        loc = named
        if _value_at(data, loc) is None:
            msg = f"empty value; {msg}"
    field = ".".join(str(x) for x in prefix + loc) or "(top level)"
    value = None if kind == "missing" else _value_at(data, loc)
    if value is None and kind != "missing" and _has_path(data, loc) and not msg.startswith("empty value"):
        msg = f"empty value (null); {msg}"   # `key:` or `key: null` in the YAML: the error shows no value
    origin = origins.origin(loc) if origins is not None else None
    if origin:
        return InputError(msg, file=file, field=field, value=value, origin=origin)
    line = lines.nearest(loc) if lines else None
    return InputError(msg, file=file, field=field, value=value, line=line)
