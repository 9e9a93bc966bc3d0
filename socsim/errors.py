"""Errors socsim reports to users.

:class:`InputError` is bad input (exit code 2): it names the file, the field (dotted path), the
value and, where the YAML has one, the line (a value from ``--set`` is marked "(from --set)").
Anything else escaping the CLI is an internal error (exit 1).
"""
from __future__ import annotations


class InputError(ValueError):
    """Bad input from the user: a file, a field, a value, and what is wrong with it."""

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None,
                 value: object = None, line: int | None = None, origin: str | None = None) -> None:
        self.message = message
        self.origin = origin  # "--set" when the field's value came from a --set override
        self.file = file
        self.field = field
        self.value = value
        self.line = line
        super().__init__(self.render())

    def render(self) -> str:
        where = []
        if self.file:
            where.append(f"{self.file}" + (f":{self.line}" if self.line else ""))
        if self.field:
            where.append(f"field '{self.field}'" + (f" (from {self.origin})" if self.origin else ""))
        if self.value is not None:
            v = repr(self.value)
            limit = 400 if isinstance(self.value, str) else 80  # a path is shown whole, a big list is cut
            where.append(f"value {v if len(v) < limit else v[:limit - 3] + '...'}")
        head = ", ".join(where)
        return f"{head}: {self.message}" if head else self.message


class ScheduleError(InputError):
    """A scheduler cannot produce a feasible plan for the given workload (bad input, exit 2)."""


class PluginError(ScheduleError):
    """A third-party scheduler plugin is broken: it fails to import or start, or a hook raises.
    Bad input all the same (exit 2), but not a property of the phone or the workload: a sweep's
    ``--skip-infeasible`` does not skip it."""


class OutputError(RuntimeError):
    """The environment refused an output (a full disk, no permission, a directory that
    vanished): exit 1, naming the path, the cause and what was kept.  ``result`` is the run's
    result when the simulation itself finished (its summary is still printed)."""

    def __init__(self, message: str, *, path: str, kept: list[str] | None = None, result: object = None) -> None:
        self.path = path
        self.kept = list(kept or [])
        self.result = result
        kept_text = (f"; kept: {', '.join(self.kept)}" if self.kept else "; nothing was kept (the output "
                     "directory is as it was)")
        super().__init__(f"cannot write {path}: {message}{kept_text}")
