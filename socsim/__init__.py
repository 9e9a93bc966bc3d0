"""socsim: a cycle-approximate simulator of mobile SoCs for on-device DNN training."""
from __future__ import annotations

__version__ = "0.1.0"


def run(*args, **kwargs):
    """Simulate a workload on a SoC; see :func:`socsim.api.run`."""
    from socsim.api import run as _run
    return _run(*args, **kwargs)


def compare(*args, **kwargs):
    """Run a workload under several schedulers; see :func:`socsim.api.compare`."""
    from socsim.api import compare as _compare
    return _compare(*args, **kwargs)


__all__ = ["run", "compare", "__version__"]
