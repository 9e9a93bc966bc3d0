"""Per-process reuse of pure results across engine runs: a fleet's thousands of clients run the
same phone, model and scheduler configurations over and over (docs/fleets.md, Caching).

Inside :func:`reusing`, the cost oracle's per-op memo is shared by every run on the same SoC
spec (by content), the scheduler registry is discovered once, and Min-Energy's DP result is
memoised on its inputs.  Each of these is a pure function of its key, so a run gives the same
result with or without reuse, only sooner.  Outside it (the default: ``socsim run``, the tests,
anything that may patch a cost model between runs) every run starts from empty memos.
"""
from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Iterator

#: distinct tables kept (a table per SoC spec for the cost memo, one per DP key ...); the least
#: recently used is dropped beyond this, so a long-lived worker's memory stays bounded
MAX_TABLES = 64

_depth = 0
_tables: OrderedDict[tuple, dict] = OrderedDict()
_spec_keys: dict[int, tuple[Any, str]] = {}


def enabled() -> bool:
    """Whether the calling run may reuse results of earlier runs in this process."""
    return _depth > 0


@contextmanager
def reusing() -> Iterator[None]:
    """Runs inside share memos (nestable); the memos outlive the block, for the next one."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1


def table(kind: str, key: Any) -> dict:
    """The shared dict for ``(kind, key)``, created empty on first use."""
    k = (kind, key)
    t = _tables.get(k)
    if t is None:
        t = _tables[k] = {}
        while len(_tables) > MAX_TABLES:
            _tables.popitem(last=False)
    else:
        _tables.move_to_end(k)
    return t


def spec_key(spec: Any) -> str:
    """A pydantic spec's content as a key (its JSON), remembered per object: a run's many
    look-ups serialise its SoC spec once."""
    k = _spec_keys.get(id(spec))
    if k is None or k[0] is not spec:
        k = _spec_keys[id(spec)] = (spec, spec.model_dump_json())
        while len(_spec_keys) > MAX_TABLES:
            _spec_keys.pop(next(iter(_spec_keys)))
    return k[1]


def clear() -> None:
    """Forget every shared memo (tests)."""
    _tables.clear()
    _spec_keys.clear()
