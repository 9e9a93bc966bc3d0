"""Finding schedulers: entry points in the ``socsim.schedulers`` group.

A plugin that fails to import is reported with its error (``socsim list schedulers`` still
lists the others); selecting it is an input error (exit 2).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from pydantic import ValidationError

from socsim.errors import InputError

GROUP = "socsim.schedulers"


@dataclass(frozen=True)
class Entry:
    name: str
    target: str
    cls: type | None
    error: str | None
    description: str = ""


def discover() -> dict[str, Entry]:
    """All registered schedulers by name, loaded or with the error that stopped them."""
    out: dict[str, Entry] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        if ep.name in out:
            continue
        try:
            cls = ep.load()
            problem = _check(cls)
            if problem:
                out[ep.name] = Entry(ep.name, ep.value, None, problem)
            else:
                out[ep.name] = Entry(ep.name, ep.value, cls, None, getattr(cls, "description", ""))
        except Exception as e:  # a broken plugin must not stop the others
            out[ep.name] = Entry(ep.name, ep.value, None, f"{type(e).__name__}: {e}")
    return out


def _check(cls: Any) -> str | None:
    if not isinstance(cls, type):
        return f"entry point does not name a class (got {type(cls).__name__})"
    if not callable(getattr(cls, "plan", None)):
        return "class has no plan(ctx) method"
    opts = getattr(cls, "Options", None)
    if opts is None or not hasattr(opts, "model_validate"):
        return "class has no pydantic Options model"
    return None


def create(name: str, options: dict | None = None, *, file: str | None = None):
    """Instantiate scheduler ``name`` with validated ``options``."""
    entries = discover()
    entry = entries.get(name)
    if entry is None:
        known = ", ".join(n for n, e in entries.items() if e.cls is not None)
        raise InputError(f"unknown scheduler; known: {known}", file=file, field="scheduler.name",
                         value=name)
    if entry.cls is None:
        raise InputError(f"scheduler plugin {entry.target!r} is broken: {entry.error}", file=file,
                         field="scheduler.name", value=name)
    try:
        opts = entry.cls.Options.model_validate(options or {})
    except ValidationError as e:
        err = e.errors()[0]
        msg = "unknown option" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        field, value = _error_field(err, options or {})
        raise InputError(f"{msg} (scheduler {name!r})", file=file, field=field, value=value) from None
    try:
        return entry.cls(opts)
    except Exception as e:
        raise InputError(f"scheduler plugin failed to start: {type(e).__name__}: {e}", file=file,
                         field="scheduler.name", value=name) from None


def _error_field(err: dict, options: dict) -> tuple[str, Any]:
    """The field and value a pydantic error of a scheduler's options points at.  A model
    validator's error has no location: it is the given option its message names (the first
    named, as a word), else the options as a whole."""
    loc = err["loc"]
    if loc:
        # follow the location into the value; pydantic's union-member tags ("str",
        # "list[int]") name no part of it and are left out of the field
        parts, value = [loc[0]], options.get(loc[0])
        for part in loc[1:]:
            if isinstance(value, dict):
                parts.append(part)
                value = value.get(part)
            elif isinstance(value, list) and isinstance(part, int):
                parts.append(part)
                value = value[part] if 0 <= part < len(value) else None
        return "scheduler.options." + ".".join(str(x) for x in parts), value
    msg = str(err.get("msg", ""))
    named = {}
    for k in options:
        m = re.search(rf"(?<![\w.]){re.escape(str(k))}(?![\w])", msg) if isinstance(k, str) else None
        if m:
            named[k] = m.start()
    if named:
        key = min(named, key=named.get)
        return f"scheduler.options.{key}", options[key]
    return "scheduler.options", dict(options)
