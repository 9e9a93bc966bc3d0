"""Finding schedulers: entry points in the ``socsim.schedulers`` group.

A plugin that fails to import, does not name a usable class, has Options defaults its own model
rejects, or takes a name a built-in scheduler already has is reported with its problem
(``socsim list schedulers`` still lists the others); selecting it is an input error (exit 2).

A third-party scheduler (one that does not come with socsim) runs guarded: an exception its
``plan`` or a hook raises is the plugin's fault, reported as a ScheduleError (exit 2) that names
the scheduler, the method and the exception; the same from a built-in is socsim's own bug
(an internal error, exit 1).  A class that only follows the protocol (``name``, ``Options``,
``plan``) without subclassing :class:`~socsim.contract.BaseScheduler` gets its no-op hooks.
"""
from __future__ import annotations

import contextlib
import inspect
import sys
import re
import traceback
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from pydantic import ValidationError

from socsim.contract import HOOK_SPECS, HOOKS, BaseScheduler, check_plan
from socsim.errors import InputError, PluginError, ScheduleError
from socsim.jsonio import strict_json_error

GROUP = "socsim.schedulers"


@dataclass(frozen=True)
class Entry:
    name: str
    target: str
    cls: type | None
    error: str | None
    description: str = ""
    builtin: bool = False  # registered by socsim itself (its exceptions are socsim's bugs)
    # the exception that broke the plugin's import (SOCSIM_DEBUG prints its traceback)
    cause: BaseException | None = field(default=None, compare=False, repr=False)


def _is_builtin(ep) -> bool:
    """Whether entry point ``ep`` comes with socsim: socsim's own distribution, naming a class in
    the ``socsim`` package."""
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    module = ep.value.split(":", 1)[0].strip()
    in_pkg = module == "socsim" or module.startswith("socsim.")
    if name is None:
        return in_pkg
    return re.sub(r"[-_.]+", "-", name).lower() == "socsim" and in_pkg


def discover() -> dict[str, Entry]:
    """All registered schedulers by name, loaded or with the error that stopped them.

    Built-ins are registered first: a plugin registering a built-in's name does not replace it,
    and is listed under ``"<name> (<its distribution>)"`` as broken.  Of two plugins with the
    same name the first (by distribution name) keeps it and the other is listed the same way.
    Inside :func:`socsim.reuse.reusing` the first discovery serves every later run."""
    from socsim import reuse

    if reuse.enabled():
        memo = reuse.table("schedulers", GROUP)
        if "entries" not in memo:
            memo["entries"] = _discover()
        return dict(memo["entries"])
    return _discover()


def _discover() -> dict[str, Entry]:
    eps = [(ep, _is_builtin(ep)) for ep in entry_points(group=GROUP)]
    eps.sort(key=lambda x: (not x[1], x[0].name, _dist_name(x[0]), x[0].value))
    out: dict[str, Entry] = {}
    for ep, builtin in eps:
        if ep.name in out:
            taken = out[ep.name]
            if taken.target == ep.value and taken.builtin == builtin:
                continue  # the same registration seen twice
            why = "name taken by a built-in scheduler" if taken.builtin else \
                f"name taken by another plugin ({taken.target})"
            key = f"{ep.name} ({_dist_name(ep) or ep.value})"
            if key not in out:
                out[key] = Entry(key, ep.value, None, f"{why}; rename the entry point", builtin=builtin)
            continue
        try:
            cls = _load(ep)
            problem = _check(cls)
            if problem:
                out[ep.name] = Entry(ep.name, ep.value, None, problem, builtin=builtin)
            else:
                out[ep.name] = Entry(ep.name, ep.value, cls, None, str(getattr(cls, "description", "") or ""),
                                     builtin=builtin)
        except _LoadError as e:  # a broken plugin must not stop the others
            out[ep.name] = Entry(ep.name, ep.value, None, str(e), builtin=builtin, cause=e.__cause__)
        except Exception as e:
            out[ep.name] = Entry(ep.name, ep.value, None, f"{type(e).__name__}: {e}", builtin=builtin)
    return dict(sorted(out.items()))


def name_clash(entries: dict[str, Entry], name: str) -> str | None:
    """Why plugin ``name`` cannot be selected although it loads: two plugins registering one
    name (which of them would run is an accident of their distribution names, so neither
    does); None when the name is the plugin's alone."""
    entry = entries.get(name)
    if entry is None or entry.builtin:
        return None
    others = [e.target for k, e in entries.items() if k.startswith(f"{name} (") and not e.builtin]
    if not others:
        return None
    return (f"name registered by more than one plugin: {entry.target}, {', '.join(others)}; "
            "uninstall one or rename its entry point")


class _LoadError(Exception):
    pass


def _load(ep) -> Any:
    """``ep.load()``, with what the plugin prints while it is imported kept off socsim's own
    stdout and stderr (a module-level print would corrupt ``--json -``), and an exception or a
    ``sys.exit`` in its import (an ``argparse`` at module level) turned into a _LoadError that
    says what it was, with the last line it printed."""
    import contextlib
    import io

    if getattr(ep, "pattern", None) is not None and ep.pattern.match(ep.value) is None:
        raise _LoadError(f"entry point value {ep.value!r} is not 'module:Class' (a quoted or misspelt "
                         "value in the plugin's pyproject.toml?)")
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            return ep.load()
    except SystemExit as e:
        said = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
        tail = f" after printing {said[-1].strip()!r}" if said else ""
        raise _LoadError(f"the plugin called sys.exit({e.code!r}) while being imported{tail}") from None
    except Exception as e:
        raise _LoadError(f"{type(e).__name__}: {e}{_where(e)}") from e


def _where(e: BaseException) -> str:
    """Where in the plugin's own code an import failed: the innermost frame outside the import
    machinery (the plugin's line that raised, or its ``import`` of what is missing), as
    " (at FILE, line N)"; "" when the exception says it itself (a SyntaxError) or has no frame."""
    if isinstance(e, SyntaxError):
        return ""
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if "importlib" not in f.filename and not f.filename.startswith("<")
              and f.filename != __file__]
    return f" (at {frames[-1].filename}, line {frames[-1].lineno})" if frames else ""


def _dist_name(ep) -> str:
    dist = getattr(ep, "dist", None)
    return (getattr(dist, "name", None) or "") if dist is not None else ""


def _check(cls: Any) -> str | None:
    if not isinstance(cls, type):
        return f"entry point does not name a class (got {type(cls).__name__})"
    if not callable(getattr(cls, "plan", None)):
        return "class has no plan(ctx) method"
    if getattr(getattr(cls, "plan", None), "__isabstractmethod__", False):
        return "class does not implement plan(ctx)"
    from socsim.workload.precision import PRECISIONS
    prec = getattr(cls, "precision", None)
    if prec is not None and prec not in PRECISIONS:
        return f"class attribute precision is {prec!r}; expected None (the workload's) or one of {', '.join(PRECISIONS)}"
    opts = getattr(cls, "Options", None)
    if not isinstance(opts, type) or not hasattr(opts, "model_validate") or not hasattr(opts, "model_fields"):
        return "class has no pydantic Options model"
    return _check_defaults(opts)


def _check_defaults(opts: type) -> str | None:
    """An option whose own default the model rejects (``Field(0, ge=1)``): what is wrong, or None.
    Only the defaults given count: fields without one (required options) are left out, and so
    is a default a factory cannot build alone.  A model validator's complaint about the options
    as a whole (``give a or b``) is left to selection time, where the user's options are known."""
    data: dict[str, Any] = {}
    for name, f in opts.model_fields.items():
        if f.is_required():
            continue
        try:
            value = f.get_default(call_default_factory=True)
        except Exception:
            continue
        data[f.validation_alias if isinstance(f.validation_alias, str) else (f.alias or name)] = value
    try:
        opts.model_validate(data)
    except ValidationError as e:
        for err in e.errors():
            if err["type"] == "missing" or not err["loc"]:
                continue
            loc = ".".join(str(x) for x in err["loc"])
            return (f"invalid default in Options: option {loc!r}, default {data.get(err['loc'][0])!r}: "
                    f"{err['msg']}")
    except Exception as e:  # a validator that fails on its own defaults
        return f"Options defaults fail validation: {type(e).__name__}: {e}"
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
        raise PluginError(f"scheduler plugin {entry.target!r} is broken: {entry.error}", file=file,
                          field="scheduler.name", value=name) from entry.cause
    clash = name_clash(entries, name)
    if clash:
        raise PluginError(f"scheduler {clash}", file=file, field="scheduler.name", value=name)
    _no_bool_numbers(entry.cls.Options, options or {}, name, file)
    try:
        opts = entry.cls.Options.model_validate(options or {})
    except ValidationError as e:
        err = e.errors()[0]
        msg = "unknown option" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden" and tuple(err["loc"]) == ("base",):
            takers = [n for n, en in entries.items()
                      if en.cls is not None and "base" in getattr(en.cls.Options, "model_fields", {})]
            msg = (f"{name} does not compose with a base scheduler (base+scheduler); "
                   f"{', '.join(takers) or 'no scheduler'} does")
        field, value = _error_field(err, options or {})
        raise InputError(f"{msg} (scheduler {name!r})", file=file, field=field, value=value) from None
    try:
        if entry.builtin:
            return entry.cls(opts)
        # what a plugin prints while it starts goes to stderr, as in its hooks (``--json -``)
        with contextlib.redirect_stdout(sys.stderr):
            return guarded(entry.cls, name)(opts)
    except InputError as e:
        raise type(e)(e.message, file=e.file or file, field=e.field, value=e.value, line=e.line,
                      origin=e.origin) from None
    except Exception as e:
        raise PluginError(f"scheduler plugin failed to start: {type(e).__name__}: {e}", file=file,
                          field="scheduler.name", value=name) from None


def _no_bool_numbers(model: type, options: dict, name: str, file: str | None) -> None:
    """true/false given for a numeric option is an error, as for the workload's own fields
    (pydantic would read it as 1/0: ``cores=true`` would run on one core)."""
    from socsim.spec.workload import _bool_for_number

    if not isinstance(options, dict):
        return
    by_key: dict[str, Any] = {}
    for fname, f in getattr(model, "model_fields", {}).items():
        by_key[fname] = f.annotation
        if isinstance(f.alias, str):
            by_key[f.alias] = f.annotation
    for key, value in options.items():
        if key in by_key and _bool_for_number(by_key[key], value):
            raise InputError(f"expected a number, got true/false (scheduler {name!r})", file=file,
                             field=f"scheduler.options.{key}", value=value)


_GUARDED: dict[tuple[type, str], type] = {}


def guarded(cls: type, name: str) -> type:
    """``cls`` as a third-party scheduler named ``name`` runs: a subclass (of ``cls`` and, for a
    protocol-only class, of BaseScheduler, for its no-op hooks and ``options``) whose ``plan``
    and hooks turn an exception into a ScheduleError naming the scheduler and the method, and
    whose ``plan`` checks the plan it returns against the SoC.  InputErrors pass as they are."""
    key = (cls, name)
    sub = _GUARDED.get(key)
    if sub is not None:
        return sub
    ns: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                          "__doc__": cls.__doc__, "_plugin_name": name, "_plugin_class": cls}
    # runs are reported under the name users select (the entry point's), whatever the class
    # calls itself: two entry points of one class, or a class named like a built-in, would
    # otherwise give rows no one can tell apart
    ns["name"] = name
    holder: list[type] = []
    for hook in HOOKS:
        ns[hook] = _guard(hook, name, holder)
    if not issubclass(cls, BaseScheduler):
        ns["__init__"] = _protocol_init(cls)
        bases: tuple[type, ...] = (cls, BaseScheduler)
    else:
        bases = (cls,)
    sub = type(cls.__name__, bases, ns)
    holder.append(sub)
    _GUARDED[key] = sub
    return sub


def _protocol_init(cls: type):
    """Construction of a protocol-only class: ``self.options`` is the validated options, and its
    own ``__init__`` (if any) gets them when it takes an argument, else nothing."""
    init = cls.__init__

    def __init__(self, options=None):
        self.options = options if options is not None else self.Options()
        if init is object.__init__:
            return
        try:
            inspect.signature(init).bind(self, self.options)
        except (TypeError, ValueError):
            init(self)
        else:
            init(self, self.options)

    return __init__


def _guard(hook: str, name: str, holder: list[type]):
    def method(self, *args, **kwargs):
        parent = getattr(super(holder[0], self), hook)
        try:
            # what a plugin prints goes to stderr: on stdout it would corrupt `--json -`
            with contextlib.redirect_stdout(sys.stderr):
                result = parent(*args, **kwargs)
        except InputError as e:
            if e.field:
                raise  # it names what was wrong (an option, a workload field)
            # the plugin's own verdict ("cannot fit anything"): say whose, and where
            raise ScheduleError(f"scheduler plugin {name!r} in {hook}(): {e.message}",
                                field="scheduler.name", value=name) from e
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # SystemExit, GeneratorExit and the like are the plugin's too
            what = f"called sys.exit({e.code!r})" if isinstance(e, SystemExit) else f"{type(e).__name__}: {e}"
            raise PluginError(f"scheduler plugin {name!r} failed in {hook}(){_when(hook, args, kwargs)}: {what}",
                              field="scheduler.name", value=name) from e
        if hook == "summary_extra":
            if not isinstance(result, dict):
                raise ScheduleError(f"scheduler plugin {name!r} returned {type(result).__name__} from "
                                    "summary_extra(); expected a dict (the summary's scheduler_info)",
                                    field="scheduler.name", value=name)
            problem = strict_json_error(result)
            if problem is not None:
                raise ScheduleError(f"scheduler plugin {name!r} returned from summary_extra() what the summary "
                                    f"cannot carry as JSON: {problem}", field="scheduler.name", value=name)
        if hook == "plan":
            ctx = args[0] if args else kwargs.get("ctx")
            soc = getattr(ctx, "soc", None)
            if soc is not None:
                batch = getattr(getattr(ctx, "workload", None), "batch_size", None)
                check_plan(result, soc, scheduler=name, hook="plan()", batch_size=batch)
        return result

    method.__name__ = hook
    return method


def _when(hook: str, args: tuple, kwargs: dict) -> str:
    """" at batch B (t = T s)" for a runtime hook, from its RunContext; "" for plan() and
    summary_extra(), which run before and after the batches."""
    spec = HOOK_SPECS[hook]
    if not spec.runtime:
        return ""
    ctx = args[0] if args else kwargs.get("ctx")
    batch, now = getattr(ctx, "batch", None), getattr(ctx, "now_s", None)
    if spec.batch_arg:   # the batch the hook was called for
        batch = args[1] if len(args) > 1 else kwargs.get("batch", batch)
    if not isinstance(batch, int) or not isinstance(now, (int, float)):
        return ""
    return f" at batch {batch} (t = {now:.3f} s)"


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
