"""socsim: a cycle-approximate simulator of mobile SoCs for on-device DNN training.

``socsim.run(soc, workload, ...)`` returns a :class:`socsim.api.RunResult` (``.summary``, the
summary JSON as a dict; ``.timeseries()`` with ``out=``); ``socsim.compare(soc, workload,
schedulers, ...)`` returns the runs' summaries, a list of dicts in the order given.  Both are
:mod:`socsim.api`'s, imported on first use so that ``import socsim`` stays light.
"""
from __future__ import annotations

from typing import Any

from socsim.version import __version__


def __getattr__(name: str) -> Any:
    # PEP 562: socsim.run / socsim.compare are socsim.api's own functions (their signatures and
    # docstrings), loaded when first asked for
    if name in ("run", "compare"):
        from socsim import api
        return getattr(api, name)
    raise AttributeError(f"module 'socsim' has no attribute {name!r}")


__all__ = ["run", "compare", "__version__"]
